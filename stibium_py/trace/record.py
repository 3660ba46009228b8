"""`stibium record`: run a person's program under strace and keep what it did to the files of one folder as a trace.

The person names the program (this is their command, run as they would run it; a plan never reaches here). Before
it runs, the folder's files and their sizes are listed (at most SNAPSHOT_ENTRIES, which is also the most a trace
holds): a trace's files carry their size at the start, so that a replay can lay them out first. strace writes its
lines to a file in a temporary folder outside the recorded one; they are read into the trace (strace.py) and
removed. On macOS the system's own tracer, fs_usage (as root), traces the program's process by its id: the program is
started held at a gate (a shell waiting to read a line on a pipe of its own, then exec-ing the program, so that the
process fs_usage follows is the program's), fs_usage is started on that id, and the gate opened; when the program
ends fs_usage is stopped (SIGINT) and its lines read (fs_usage.py). Its children are other processes, which
fs_usage, following one id, does not trace."""

from __future__ import annotations

import os
import platform
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import TraceError
from .model import MAX_CALLS, MAX_FILES, Trace
from .parsed import Parsed, files_of
from .strace import TRACED, parse

SNAPSHOT_ENTRIES = MAX_FILES


@dataclass(frozen=True)
class Recorded:
    trace: Trace
    exit_status: int            # the program's own (a signal: 128 + its number)
    lines: int                  # strace's lines read


def snapshot(folder: Path) -> dict[str, int]:
    """Each file and folder under `folder` (not following links) and its size (folders 0), relative to it."""
    sizes: dict[str, int] = {".": 0}
    for top, dirs, names in os.walk(folder):
        rel_top = os.path.relpath(top, folder)
        for name in dirs + names:
            rel = os.path.normpath(os.path.join(rel_top, name))
            try:
                st = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            sizes[rel] = 0 if name in dirs else st.st_size
            if len(sizes) > SNAPSHOT_ENTRIES:
                raise TraceError(f"{folder}: holds more than {SNAPSHOT_ENTRIES:,} files and folders; record a program "
                                 f"in a smaller folder (--folder)")
    return sizes


def strace_command(log: Path, command: list[str]) -> list[str]:
    """strace's command line: every thread and child (-f), wall-clock microseconds (-ttt) and each call's time
    (-T), descriptors with their paths (-y), no data (-s 0), no attach or exit lines (-qq) and no signals."""
    return ["strace", "-f", "-ttt", "-T", "-y", "-s", "0", "-qq", "-e", "signal=none",
            "-e", "trace=" + ",".join(TRACED), "-o", str(log), "--", *command]


TRACERS = ("auto", "strace", "ebpf")
TRACEFS = Path("/sys/kernel/tracing")


def ebpf_refusal() -> str | None:
    """Why the eBPF recorder cannot run here (None: it can): it needs Linux, root, bpftrace and the kernel's
    tracing folder mounted."""
    if platform.system() != "Linux":
        return "the eBPF recorder is built for Linux"
    if shutil.which("bpftrace") is None:
        return "bpftrace is not installed (Debian: apt-get install bpftrace)"
    if os.geteuid() != 0:
        return "the eBPF recorder needs root (run: sudo stibium record ...)"
    if not (TRACEFS / "events" / "syscalls").is_dir():
        return f"the kernel's tracing folder is not mounted at {TRACEFS} (mount it: mount -t tracefs nodev {TRACEFS})"
    return None


def chosen(tracer: str) -> str:
    """The recorder that runs for --tracer `tracer` on this machine: auto takes the eBPF one where it can run
    (about a tenth of strace's cost a call, docs/performance.md), strace elsewhere on Linux, fs_usage on macOS."""
    if platform.system() == "Darwin":
        if tracer == "auto":
            return "fs_usage"
        raise TraceError(f"record: --tracer {tracer} is for Linux; on macOS the recorder is fs_usage (--tracer auto)")
    if tracer == "ebpf":
        refusal = ebpf_refusal()
        if refusal:
            raise TraceError(f"record: --tracer ebpf: {refusal}; or record with --tracer strace")
        return "ebpf"
    if tracer == "auto":
        return "ebpf" if ebpf_refusal() is None else "strace"
    return "strace"


def record(command: list[str], folder: Path, tracer: str = "auto") -> Recorded:
    """Run `command` in `folder` under the recorder `tracer` chooses; its trace of calls on files inside the
    folder."""
    system = platform.system()
    if system not in ("Linux", "Darwin"):
        raise TraceError(f"record: recording is built for Linux (strace, eBPF) and macOS (fs_usage), not {system}; "
                         f"record the program on one of those")
    if not command:
        raise TraceError("record: no program given; name it after --, as in: stibium record -- make")
    which = chosen(tracer)
    if which == "ebpf":
        _check_program(command, folder)
        return record_ebpf(command, folder)
    path = shutil.which("strace" if which == "strace" else "fs_usage")
    if path is None:
        raise TraceError("record: strace is not installed; install it (Debian: apt-get install strace)"
                         if which == "strace" else
                         "record: fs_usage is not on the PATH (it is part of macOS: /usr/bin/fs_usage)")
    if which == "fs_usage" and os.geteuid() != 0:
        raise TraceError("record: on macOS the system's tracer (fs_usage) needs root; run it as: sudo stibium "
                         "record ...")
    _check_program(command, folder)
    if which == "fs_usage":
        return record_darwin(command, folder, path)
    strace = path
    root = folder.resolve()
    sizes = snapshot(root)
    with tempfile.TemporaryDirectory(prefix="stibium-record-") as tmp:
        log = Path(tmp) / "strace.log"
        started = time.monotonic_ns()
        try:
            done = subprocess.run(strace_command(log, command), cwd=root)
        except OSError as e:
            raise TraceError(f"record: strace could not start ({e.strerror})") from None
        elapsed = time.monotonic_ns() - started
        if not log.exists():
            raise TraceError("record: strace wrote nothing (it may not be allowed to trace here: a container "
                             "without ptrace); run it where strace works")
        with open(log, encoding="utf-8", errors="surrogateescape") as lines:
            counted = _Counted(lines)
            parsed = parse(counted, str(root), str(root))
    status = done.returncode if done.returncode >= 0 else 128 - done.returncode
    return _recorded(parsed, sizes, _strace_version(strace), command, elapsed, status, counted.n)


def _check_program(command: list[str], folder: Path) -> None:
    if shutil.which(command[0], path=os.environ.get("PATH")) is None and not Path(folder, command[0]).is_file():
        raise TraceError(f"record: {command[0]}: no such program; give a program on the PATH or its path")


def _recorded(parsed: Parsed, sizes: dict[str, int], recorder: str, command: list[str], elapsed_ns: int,
              status: int, lines: int) -> Recorded:
    if len(parsed.calls) > MAX_CALLS:
        raise TraceError(f"record: the program made {len(parsed.calls):,} calls on the folder's files, more "
                         f"than a trace holds ({MAX_CALLS:,}); record a shorter run of it")
    files, _ = files_of(parsed, sizes)
    program = "".join(c if c.isprintable() else "?" for c in os.path.basename(command[0]))[:200] or "?"
    trace = Trace(files, tuple(parsed.calls), recorder, platform.system(), program, elapsed_ns, parsed.outside)
    return Recorded(trace, status, lines)


def _held(command: list[str], root: Path, gate: Path) -> subprocess.Popen:
    """The program started held at `gate` (a FIFO outside the folder): a shell waits for a line on it, then
    becomes the program, one process whose id a tracer can follow from the program's first call."""
    os.mkfifo(gate)
    try:
        return subprocess.Popen(["/bin/sh", "-c", 'read _ < "$0"; exec "$@"', str(gate), *command], cwd=root)
    except OSError as e:
        raise TraceError(f"record: the program could not start ({e.strerror})") from None


def _release(gate: Path) -> None:
    with open(gate, "w") as opened:
        opened.write("go\n")


# bpftrace's start (compiling and attaching its probes: 2.5 s here), and the longest wait for its DONE once the
# program has ended (its last events read)
BPFTRACE_START_S = 60.0
BPFTRACE_STOP_S = 30.0
# its buffer a CPU, in pages: events a burst of calls may leave waiting before bpftrace reads them
BPFTRACE_PAGES = 4096


def record_ebpf(command: list[str], folder: Path) -> Recorded:
    """Run `command` in `folder` with bpftrace following its process tree (ebpf.py); its trace of calls on files
    inside the folder."""
    import resource
    from .ebpf import Seed, program, parse as parse_ebpf
    root = folder.resolve()
    sizes = snapshot(root)
    bpftrace = shutil.which("bpftrace") or "bpftrace"
    available = [p.name[len("sys_enter_"):] for p in (TRACEFS / "events" / "syscalls").iterdir()
                 if p.name.startswith("sys_enter_")]
    # the longest string under both names (0.17 knows BPFTRACE_STRLEN; 0.20 and later BPFTRACE_MAX_STRLEN)
    environment = {**os.environ, "BPFTRACE_STRLEN": "200", "BPFTRACE_MAX_STRLEN": "200",
                   "BPFTRACE_PERF_RB_PAGES": str(BPFTRACE_PAGES),
                   "BPFTRACE_MAP_KEYS_MAX": "65536"}

    def unlimited_locked_memory() -> None:
        # bpftrace asks for it; kernels since 5.11 charge BPF's memory to the cgroup instead, so a container that
        # may not raise the limit still traces
        try:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass

    with tempfile.TemporaryDirectory(prefix="stibium-record-") as tmp:
        log, gate, script = Path(tmp) / "bpftrace.log", Path(tmp) / "gate", Path(tmp) / "record.bt"
        script.write_text(program(available))
        held = _held(command, root, gate)
        try:
            seed = Seed(held.pid, os.readlink(f"/proc/{held.pid}/cwd"), _descriptors(held.pid))
            # its lines unbuffered to a file of ours (with -o, 0.17 prints BEGIN's line nowhere): READY is seen
            # as soon as every probe is attached
            with open(log, "w") as out, open(Path(tmp) / "bpftrace.err", "w") as errors:
                tracer = subprocess.Popen([bpftrace, "-B", "none", str(script), str(held.pid), str(os.getpid())],
                                          stdout=out,
                                          stderr=errors, env=environment, preexec_fn=unlimited_locked_memory)
            said = _Watched(log)
            if not said.shows("READY", BPFTRACE_START_S, tracer):
                told = (Path(tmp) / "bpftrace.err").read_text(errors="replace").strip().splitlines()
                why = next((t for t in told if t.startswith("ERROR") and "RLIMIT_MEMLOCK" not in t),
                           "it did not start")
                raise TraceError(f"record: bpftrace could not trace here ({why[:200]}); record with --tracer "
                                 f"strace")
        except BaseException:
            held.kill()
            held.wait()
            if "tracer" in locals():
                tracer.kill()
            raise
        started = time.monotonic_ns()         # the program's own time: from its release
        _release(gate)
        status = held.wait()
        elapsed = time.monotonic_ns() - started
        # a call of ours that bpftrace marks DONE: every event before it has been read once that line is
        # written. Then bpftrace is killed and not waited for: the kernel takes about 9 s here to take its ~100
        # probes away (SIGINT or SIGKILL alike), time in which nothing more is traced
        deadline = time.monotonic() + BPFTRACE_STOP_S
        while not said.shows("DONE", 0.05, tracer) and time.monotonic() < deadline:
            os.getppid()
        tracer.kill()
        with open(log, encoding="utf-8", errors="surrogateescape") as lines:
            read = parse_ebpf(lines, str(root), seed)
    return _recorded(read.parsed, sizes, _bpftrace_version(bpftrace), command, elapsed,
                     status if status >= 0 else 128 - status, read.lines)


class _Watched:
    """A log read as it grows, for one line."""

    def __init__(self, log: Path) -> None:
        self.log, self.offset, self.rest = log, 0, b""

    def shows(self, word: str, within_s: float, tracer: subprocess.Popen) -> bool:
        """Whether the line `word` appears in the log within `within_s` seconds (False at once if `tracer` ended)."""
        deadline = time.monotonic() + within_s
        wanted = word.encode()
        while True:
            with open(self.log, "rb") as f:
                f.seek(self.offset)
                new = f.read()
            self.offset += len(new)
            lines = (self.rest + new).split(b"\n")
            self.rest = lines.pop()
            if wanted in lines:
                return True
            if tracer.poll() is not None or time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def _descriptors(pid: int) -> dict[int, str]:
    """The open descriptors of process `pid` with the paths they name (a pipe's or socket's name is no path)."""
    found: dict[int, str] = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("/"):
            found[int(name)] = target
    return found


def _bpftrace_version(bpftrace: str) -> str:
    try:
        first = subprocess.run([bpftrace, "--version"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return "bpftrace"
    return f"bpftrace {first[-1].lstrip('v')}" if first else "bpftrace"


class _Counted:
    def __init__(self, lines) -> None:
        self.lines, self.n = lines, 0

    def __iter__(self):
        for line in self.lines:
            self.n += 1
            yield line


def _strace_version(strace: str) -> str:
    try:
        first = subprocess.run([strace, "-V"], capture_output=True, text=True, timeout=10).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "strace"
    words = first.split()
    return f"strace {words[-1]}" if words else "strace"


# fs_usage's own start: the time it is given to begin tracing before the program is let go (it prints nothing to
# say it has begun); and how long it is given to print what is left once stopped
FS_USAGE_START_S = 1.0
FS_USAGE_STOP_S = 10.0


def record_darwin(command: list[str], folder: Path, fs_usage: str) -> Recorded:
    """Run `command` in `folder` with fs_usage (its path) following its process; its trace of calls on files inside
    the folder."""
    from .fs_usage import parse
    root = folder.resolve()
    sizes = snapshot(root)
    with tempfile.TemporaryDirectory(prefix="stibium-record-") as tmp:
        log, gate = Path(tmp) / "fs_usage.log", Path(tmp) / "gate"
        program = _held(command, root, gate)
        with open(log, "w", encoding="utf-8") as out:
            tracer = subprocess.Popen([fs_usage, "-w", "-f", "filesys", str(program.pid)], stdout=out,
                                      stderr=subprocess.DEVNULL)
        time.sleep(FS_USAGE_START_S)
        started = time.monotonic_ns()         # the program's own time: from its release
        _release(gate)
        status = program.wait()
        elapsed = time.monotonic_ns() - started
        tracer.send_signal(signal.SIGINT)
        try:
            tracer.wait(timeout=FS_USAGE_STOP_S)
        except subprocess.TimeoutExpired:
            tracer.kill()
            tracer.wait()
        with open(log, encoding="utf-8", errors="surrogateescape") as lines:
            counted = _Counted(lines)
            read = parse(counted, str(root))
    return _recorded(read.parsed, sizes, "fs_usage", command, elapsed, status if status >= 0 else 128 - status,
                     counted.n)
