"""Devices whose true rate and latency are set by us (docs/truth-devices.md):

Recipe B: an nbdkit RAM disk behind the rate and delay filters, exposed as a file
by nbdfuse, with a loop device (direct I/O) and ext4 on top. `rate` is in bits/s
with binary suffixes (400M = 50 MiB/s = 52.43 MB/s); reads and writes share one
bucket; `rate-file` changes the rate while it runs.

Recipe C: every request takes a set delay, up to a set number of them at once (parallel_disk.c, a
FUSE file system in C), with a loop device and ext4 on top: at N requests in flight it answers
min(N, parallel) / delay requests a second.

Recipe A: a loop device over an image file, throttled for that device only, with separate read and
write rates: by the root blkio cgroup's rule (cgroup v1), or where the machine has cgroup v2 only, by the
io.max of a cgroup of its own that the test's process joins for the while (its helpers are its children).
Where neither hierarchy is mounted (a chroot, a container) the test mounts one itself in a temporary folder.

Recipe D: a file system whose metadata operations take a set delay (tree_disk.c, FUSE in C): one kind of
operation (create, getattr, opendir, open, rename, unlink) sleeps the delay, the others answer at once, so a
tree test's phase that makes that call once a file runs at threads / delay files a second.

Each needs root; every step is undone in reverse order, also when a test fails or
is interrupted."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

BLKIO = Path("/sys/fs/cgroup/blkio")


@dataclass(frozen=True)
class Device:
    mount: Path                         # an ext4 file system on the device: the target for stibium
    read_bytes_per_s: float
    write_bytes_per_s: float
    delay_s: float = 0.0
    rate_file: Path | None = None       # Recipe B: write a new rate (bits/s) here to change it
    burst_bytes: float = 0.0            # Recipe B: bytes that pass free after idling (burstiness x rate)
    parallel: int = 1                   # Recipe C: requests the device runs at once

    def set_rate_bits_per_s(self, bits_per_s: int) -> None:
        assert self.rate_file is not None
        tmp = self.rate_file.with_suffix(".tmp")
        tmp.write_text(f"{bits_per_s}\n")
        os.replace(tmp, self.rate_file)


def _missing_for_fuse(tools: tuple[str, ...], packages: str) -> str | None:
    """What a FUSE-backed device with a loop device and ext4 lacks here: root, a tool, /dev/fuse."""
    if os.geteuid() != 0:
        return "needs root (FUSE mount, losetup)"
    for tool in (*tools, "fusermount3", "losetup", "mkfs.ext4"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian: {packages})"
    if not Path("/dev/fuse").exists():
        return "no /dev/fuse"
    return None


def missing_for_recipe_b() -> str | None:
    return _missing_for_fuse(("nbdkit", "nbdfuse"), "nbdkit libnbd-bin fuse3")


def cgroup2_with_io() -> Path | None:
    """The mount of the cgroup v2 hierarchy where the io controller can be used (on a machine with v1 blkio
    mounted the controller is bound there, and v2 does not offer it), or None."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in mounts:
        fields = line.split()
        if len(fields) > 2 and fields[2] == "cgroup2":
            root = Path(fields[1])
            try:
                if "io" in (root / "cgroup.controllers").read_text().split():
                    return root
            except OSError:
                continue
    return None


@contextlib.contextmanager
def block_throttle() -> Iterator[tuple[str, Path]]:
    """Where block I/O can be throttled: ("v1", the blkio hierarchy) or ("v2", a cgroup v2 root with the io
    controller). The machine's own mounts where it has them; else (a chroot, a container without
    /sys/fs/cgroup) a mount of the test's own in a temporary folder, unmounted at the end: cgroup v2 where
    the io controller is free, else v1 blkio (the kernel hands back the hierarchy the host already has)."""
    if (BLKIO / "blkio.throttle.read_bps_device").exists():
        yield "v1", BLKIO
        return
    root = cgroup2_with_io()
    if root is not None:
        yield "v2", root
        return
    with tempfile.TemporaryDirectory(prefix="stibium-cgroup-") as d:
        for version, args in (("v2", ["-t", "cgroup2"]), ("v1", ["-t", "cgroup", "-o", "blkio"])):
            if subprocess.run(["mount", *args, "none", d], capture_output=True).returncode != 0:
                continue
            try:
                usable = ("io" in (Path(d) / "cgroup.controllers").read_text().split() if version == "v2"
                          else (Path(d) / "blkio.throttle.read_bps_device").exists())
                if usable:
                    yield version, Path(d)
                    return
            finally:
                subprocess.run(["umount", d], capture_output=True)
        raise OSError("no block I/O throttle: cgroup v2's io controller and v1's blkio could not be mounted")


def missing_for_recipe_a() -> str | None:
    if os.geteuid() != 0:
        return "needs root (losetup, cgroup writes)"
    try:
        with block_throttle():
            return None
    except OSError as e:
        return f"{e} (a container without the right to mount)"


def _run(*args: str) -> str:
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:     # with the tool's own words, which CalledProcessError's message leaves out
        raise OSError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _dead(path: str) -> bool:
    """A path whose file system no longer answers: a FUSE mount whose server was killed (ENOTCONN)."""
    try:
        os.stat(path)
    except OSError as e:
        return e.errno in (errno.ENOTCONN, errno.EIO)
    return False


def sweep_left_behind(root: Path) -> list[str]:
    """Undo what an earlier test session under root (pytest's folder of sessions) could not undo because it was
    killed: its FUSE servers died with it, leaving FUSE mounts that answer ENOTCONN, loop devices over files on
    them and file systems mounted from those loops. mkfs.btrfs stats every mounted loop device's backing file and
    refuses to run while one answers ENOTCONN ("cannot check mount status"), so one killed session broke the btrfs
    tests of every session after it. Only dead things under root are touched: a live session's devices answer.
    Returns what it undid."""
    undone: list[str] = []
    mounts = [line.split()[:2] for line in Path("/proc/mounts").read_text().splitlines()]
    under = str(root) + "/"
    for loop in sorted(Path("/sys/block").glob("loop*")):
        try:
            backing = (loop / "loop" / "backing_file").read_text().strip().removesuffix(" (deleted)")
        except OSError:
            continue
        if not backing.startswith(under) or not _dead(str(Path(backing).parent)):
            continue
        device = f"/dev/{loop.name}"
        for source, point in mounts:
            if source == device:
                subprocess.run(["umount", "-l", point], capture_output=True)
                undone.append(point)
        subprocess.run(["losetup", "-d", device], capture_output=True)
        undone.append(device)
    for source, point in mounts:
        if point.startswith(under) and _dead(point):
            subprocess.run(["umount", "-l", point], capture_output=True)
            undone.append(point)
    return undone


def _wait_for(path: Path, timeout_s: float = 20) -> None:
    deadline = time.time() + timeout_s
    while True:
        try:
            if path.exists():
                return
        except OSError:         # a FUSE mount that is still coming up
            pass
        if time.time() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.05)


def _unmount_on_exit(proc: subprocess.Popen, fuse_dir: Path, stack: contextlib.ExitStack) -> None:
    """At the end: unmount the FUSE folder, and wait for (or kill) the process that served it."""
    def stop() -> None:
        subprocess.run(["fusermount3", "-u", str(fuse_dir)], check=False, capture_output=True)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    stack.callback(stop)


def _ext4_on(device: str, mount: Path, stack: contextlib.ExitStack, *options: str) -> None:
    _run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", *options, device)
    mount.mkdir()
    _run("mount", device, str(mount))
    stack.callback(subprocess.run, ["umount", "-l", str(mount)], check=False)


def _btrfs_on(device: str, mount: Path, stack: contextlib.ExitStack, options: str) -> None:
    _run("mkfs.btrfs", "-q", "-f", device)
    mount.mkdir()
    _run("mount", "-o", options, device, str(mount))
    stack.callback(subprocess.run, ["umount", "-l", str(mount)], check=False)


def missing_for_btrfs() -> str | None:
    """What a compressing file system on Recipe B needs beyond it: btrfs-progs, and btrfs in the kernel."""
    why = missing_for_recipe_b()
    if why:
        return why
    if shutil.which("mkfs.btrfs") is None:
        return "needs mkfs.btrfs (Debian: apt-get install btrfs-progs; ./install.sh --test installs it)"
    filesystems = Path("/proc/filesystems").read_text()
    if "btrfs" not in filesystems.split():
        return "needs btrfs in the kernel (/proc/filesystems does not list it)"
    return None


def _loop(backing: Path, stack: contextlib.ExitStack) -> str:
    loop = _run("losetup", "-f", "--show", "--direct-io=on", str(backing))
    stack.callback(subprocess.run, ["losetup", "-d", loop], check=False)
    return loop


@contextlib.contextmanager
def recipe_b(work: Path, rate: str = "400M", delay: str = "1ms", size: str = "1G",
             burstiness: str = "0.1", btrfs_options: str | None = None) -> Iterator[Device]:
    """nbdkit (rate + delay filters, memory plugin) over nbdfuse, loop + ext4 on top (btrfs_options: btrfs
    mounted with them instead, such as compress-force=zstd)."""
    bits = {"K": 1024, "M": 1024**2, "G": 1024**3}
    rate_bits = int(rate[:-1]) * bits[rate[-1]] if rate[-1] in bits else int(rate)
    delay_s = float(delay.removesuffix("ms")) / 1000 if delay.endswith("ms") else float(delay)
    fuse_dir = work / "nbd"
    fuse_dir.mkdir(parents=True)
    rate_file = work / "rate"
    rate_file.write_text(f"{rate_bits}\n")
    with contextlib.ExitStack() as stack:
        proc = subprocess.Popen(
            ["nbdfuse", "-P", str(work / "nbdfuse.pid"), str(fuse_dir / "disk"), "[", "nbdkit", "--exit-with-parent",
             "--filter=rate", "--filter=delay", "memory", size, f"rate={rate_bits}", f"rate-file={rate_file}",
             f"burstiness={burstiness}", f"rdelay={delay}", f"wdelay={delay}", "]"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _unmount_on_exit(proc, fuse_dir, stack)
        _wait_for(work / "nbdfuse.pid")
        _wait_for(fuse_dir / "disk")
        loop = _loop(fuse_dir / "disk", stack)
        if btrfs_options is None:
            _ext4_on(loop, work / "mnt", stack)
        else:
            _btrfs_on(loop, work / "mnt", stack, btrfs_options)
        device = Device(work / "mnt", rate_bits / 8, rate_bits / 8, delay_s, rate_file, float(burstiness) * rate_bits / 8)
        drain_burst(device)
        yield device


def missing_for_dirty_cap() -> str | None:
    """What a cap of one device's dirty bytes (dirty_held_to) lacks here: Linux 6.2's max_bytes of a backing device."""
    if not any(Path("/sys/class/bdi").glob("*/max_bytes")):
        return "needs Linux 6.2 or later (a backing device's max_bytes in /sys/class/bdi)"
    return None


@contextlib.contextmanager
def dirty_held_to(device: Device, limit_bytes: int) -> Iterator[None]:
    """The device's own cap on the page cache's dirty bytes (its backing device's strict limit, Linux 6.2's
    max_bytes), put back as it was after: above it the kernel writes back at once and a writer waits, so the device
    is busy from a writer's first bytes rather than from its flush. The machine's other devices are untouched."""
    source = _run("findmnt", "-n", "-o", "SOURCE", str(device.mount)).strip()
    rdev = os.stat(source).st_rdev
    bdi = Path(f"/sys/class/bdi/{os.major(rdev)}:{os.minor(rdev)}")
    # max_bytes reads back as bytes worked out from the share it sets, which it may refuse to be given again:
    # the share (in millionths) is what is put back
    before = {name: (bdi / name).read_text().strip() for name in ("strict_limit", "max_ratio_fine")}
    try:
        (bdi / "max_bytes").write_text(f"{limit_bytes}\n")
        (bdi / "strict_limit").write_text("1\n")
        yield
    finally:
        for name in ("strict_limit", "max_ratio_fine"):
            (bdi / name).write_text(before[name] + "\n")


PARALLEL_DISK_SRC = Path(__file__).resolve().parent / "parallel_disk.c"


def missing_for_recipe_c() -> str | None:
    why = _missing_for_fuse(("cc", "pkg-config"), "gcc pkg-config libfuse3-dev fuse3")
    if why is None and subprocess.run(["pkg-config", "--exists", "fuse3"]).returncode != 0:
        return "libfuse 3's headers are not installed (Debian: libfuse3-dev)"
    return why


def build_parallel_disk(folder: Path) -> Path:
    """Compile parallel_disk.c (a second, C FUSE file system: Python's would add about half a millisecond
    a request and lose its timers' precision)."""
    exe = folder / "parallel_disk"
    flags = _run("pkg-config", "--cflags", "--libs", "fuse3").split()
    _run("cc", "-O2", "-Wall", str(PARALLEL_DISK_SRC), *flags, "-o", str(exe))
    return exe


@contextlib.contextmanager
def recipe_c(work: Path, delay_s: float = 0.02, parallel: int = 64, size_bytes: int = 256 << 20,
             flush_s: float = 0.0, keep_bytes: int = 0, faults: str = "-") -> Iterator[Device]:
    """Requests in parallel: parallel_disk (every request takes delay_s, up to `parallel` at once; a flush
    flush_s, or nothing at all with 0: a drive that does not flush) as a FUSE file, loop (direct I/O, which
    submits asynchronously) and ext4 on top. keep_bytes: a fake drive that keeps only that many bytes (its
    first 4 MiB its own, the rest written around), with ext4's tables all in those 4 MiB (4 KiB blocks, 1,024
    inodes, no journal). faults: bytes that read back flipped and ranges that fail with EIO (parallel_disk.c)."""
    work.mkdir(parents=True, exist_ok=True)
    exe = build_parallel_disk(work)
    fuse_dir = work / "fuse"
    fuse_dir.mkdir()
    with contextlib.ExitStack() as stack:
        proc = subprocess.Popen([str(exe), str(fuse_dir), str(size_bytes), str(round(delay_s * 1e9)), str(parallel),
                                 str(round(flush_s * 1e9)), str(keep_bytes), faults],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _unmount_on_exit(proc, fuse_dir, stack)
        _wait_for(fuse_dir / "disk")
        loop = _loop(fuse_dir / "disk", stack)
        small_tables = ("-b", "4096", "-N", "1024", "-O", "^has_journal")
        _ext4_on(loop, work / "mnt", stack, *(small_tables if keep_bytes or faults != "-" else ()))
        yield Device(work / "mnt", float("inf"), float("inf"), delay_s, parallel=parallel)


TREE_DISK_SRC = Path(__file__).resolve().parent / "tree_disk.c"


def build_tree_disk(folder: Path) -> Path:
    """Compile tree_disk.c (Recipe D's file system)."""
    exe = folder / "tree_disk"
    flags = _run("pkg-config", "--cflags", "--libs", "fuse3").split()
    _run("cc", "-O2", "-Wall", str(TREE_DISK_SRC), *flags, "-o", str(exe))
    return exe


@contextlib.contextmanager
def recipe_d(work: Path, delay_s: float, delayed: str) -> Iterator[Device]:
    """Metadata with a set delay: tree_disk as a FUSE file system, one kind of operation (create, getattr,
    opendir, open, rename or unlink) taking delay_s, the others answered at once; the target is a folder in it.
    After it is unmounted, served_delay_s(work) is the time the delayed calls took."""
    work.mkdir(parents=True, exist_ok=True)
    exe = build_tree_disk(work)
    fuse_dir = work / "fuse"
    fuse_dir.mkdir()
    with contextlib.ExitStack() as stack:
        proc = subprocess.Popen([str(exe), str(fuse_dir), str(round(delay_s * 1e9)), delayed, str(work / "served")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _unmount_on_exit(proc, fuse_dir, stack)
        deadline = time.time() + 20
        while not os.path.ismount(fuse_dir):
            if time.time() > deadline or proc.poll() is not None:
                raise TimeoutError(f"tree_disk did not mount on {fuse_dir}")
            time.sleep(0.05)
        yield Device(fuse_dir, float("inf"), float("inf"), delay_s)


def served_delay_s(work: Path) -> float:
    """The mean time, arrival to wake-up, of the delayed calls a Recipe D file system in `work` served: its delay
    and how late the machine woke it."""
    count, total_ns = (int(word) for word in (work / "served").read_text().split())
    return total_ns / count / 1e9


@contextlib.contextmanager
def recipe_a(work: Path, read_bytes_per_s: int, write_bytes_per_s: int, size_bytes: int = 1 << 30) -> Iterator[Device]:
    """A loop device over an image, throttled by the root blkio cgroup rule for that device alone. The image is in
    memory (/dev/shm, removed after), so that a flush of the device (an fsync's journal commit) costs nothing: on
    the machine's disk each flush became a flush of that disk, for a time that changed with the file's size, and
    every file's write took it (docs/truth-devices.md)."""
    with contextlib.ExitStack() as stack:
        shm = Path("/dev/shm")
        folder = Path(tempfile.mkdtemp(prefix="stibium-recipe-a-", dir=shm)) if shm.is_dir() else work
        if folder != work:
            stack.callback(shutil.rmtree, folder, True)
        image = folder / "disk.img"
        with open(image, "wb") as f:
            f.truncate(size_bytes)
        loop = _loop(image, stack)
        majmin = Path(f"/sys/block/{Path(loop).name}/dev").read_text().strip()
        _ext4_on(loop, work / "mnt", stack)
        version, hierarchy = stack.enter_context(block_throttle())
        if version == "v1":
            for kind, bps in (("read", read_bytes_per_s), ("write", write_bytes_per_s)):
                rule = hierarchy / f"blkio.throttle.{kind}_bps_device"
                rule.write_text(f"{majmin} {bps}\n")
                stack.callback(rule.write_text, f"{majmin} 0\n")
        else:
            _throttle_v2(hierarchy, majmin, read_bytes_per_s, write_bytes_per_s, stack)
        yield Device(work / "mnt", read_bytes_per_s, write_bytes_per_s)


class Counted:
    """The device's own counters (/sys/dev/block/MAJ:MIN/stat: sectors read and written) read every 2 ms by a
    thread, each sample on the raw monotonic clock the helper times with: the kernel's record of when each byte
    reached the device, to check the instrument's times against. A sample is (ns after the read, bytes read, bytes
    written, ns before the read): the counters held those values at some instant between its two times."""

    READ, WRITE = 1, 2          # a sample's columns
    BEFORE = 3

    def __init__(self, device: Device) -> None:
        rdev = os.stat(_run("findmnt", "-n", "-o", "SOURCE", str(device.mount)).strip()).st_rdev
        self._stat = Path(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/stat")
        self.samples: list[tuple[int, int, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            before_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            fields = self._stat.read_text().split()
            self.samples.append((time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW), int(fields[2]) * 512,
                                 int(fields[6]) * 512, before_ns))
            time.sleep(0.002)

    def __enter__(self) -> "Counted":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _base(self, start_ns: int, column: int) -> int:
        """The counter read wholly before a measurement's start: at most what it was at the start."""
        return [s for s in self.samples if s[0] <= start_ns][-1][column]

    def moved(self, start_ns: int, nbytes: int, column: int) -> tuple[float, int]:
        """A measurement's bytes at the device: the seconds from the first of them to the sample by which all had
        reached it (from the counter before its start), and when that was (ns): each within a sample (2 ms) when
        the thread is not kept waiting."""
        base = self._base(start_ns, column)
        after = [s for s in self.samples if s[0] > start_ns]
        first = next(s[0] for s in after if s[column] > base)
        last = next(s[0] for s in after if s[column] >= base + nbytes)
        return (last - first) / 1e9, last

    def short_after(self, start_ns: int, nbytes: int, column: int, from_ns: int) -> list[int]:
        """The samples read wholly after from_ns (their ns before the read) that show fewer of a measurement's bytes
        at the device than it moved: each a proof that some had not reached it by then. A thread kept from
        sampling gives fewer samples, never a false one."""
        base = self._base(start_ns, column)
        return [s[self.BEFORE] for s in self.samples if s[self.BEFORE] >= from_ns and s[column] < base + nbytes]

    def read_within(self, from_ns: int, to_ns: int) -> bool:
        """Whether a sample was read wholly between the two times: what makes short_after's silence mean something."""
        return any(from_ns <= s[self.BEFORE] and s[0] <= to_ns for s in self.samples)


def _throttle_v2(root: Path, majmin: str, read_bytes_per_s: int, write_bytes_per_s: int,
                 stack: contextlib.ExitStack) -> None:
    """cgroup v2: io.max of a cgroup of its own, which this process joins (and the helpers it starts with it);
    undone in reverse: the process back where it was, the cgroup removed, the io controller as it was."""
    subtree = root / "cgroup.subtree_control"
    if "io" not in subtree.read_text().split():
        subtree.write_text("+io\n")
        stack.callback(subtree.write_text, "-io\n")
    group = root / f"stibium-truth-{os.getpid()}"
    group.mkdir()
    stack.callback(group.rmdir)
    (group / "io.max").write_text(f"{majmin} rbps={read_bytes_per_s} wbps={write_bytes_per_s}\n")
    here = next(line.split(":", 2)[2] for line in Path("/proc/self/cgroup").read_text().splitlines()
                if line.startswith("0::"))
    (group / "cgroup.procs").write_text(f"{os.getpid()}\n")
    stack.callback((root / here.lstrip("/") / "cgroup.procs").write_text, f"{os.getpid()}\n")


def drain_burst(device: Device) -> None:
    """Spend the rate filter's burst allowance (burstiness x rate) before anything is measured."""
    path = device.mount / ".drain"
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", "count=16", "oflag=direct", "status=none"], check=True)
    path.unlink()
