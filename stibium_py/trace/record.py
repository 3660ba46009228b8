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
from .parsed import files_of
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


def record(command: list[str], folder: Path) -> Recorded:
    """Run `command` in `folder` under strace; its trace of calls on files inside the folder."""
    system = platform.system()
    if system not in ("Linux", "Darwin"):
        raise TraceError(f"record: recording is built for Linux (strace) and macOS (fs_usage), not {system}; record "
                         f"the program on one of those")
    tracer = shutil.which("strace" if system == "Linux" else "fs_usage")
    if tracer is None:
        raise TraceError("record: strace is not installed; install it (Debian: apt-get install strace)"
                         if system == "Linux" else
                         "record: fs_usage is not on the PATH (it is part of macOS: /usr/bin/fs_usage)")
    if system == "Darwin" and os.geteuid() != 0:
        raise TraceError("record: on macOS the system's tracer (fs_usage) needs root; run it as: sudo stibium "
                         "record ...")
    if not command:
        raise TraceError("record: no program given; name it after --, as in: stibium record -- make")
    if shutil.which(command[0], path=os.environ.get("PATH")) is None and not Path(folder, command[0]).is_file():
        raise TraceError(f"record: {command[0]}: no such program; give a program on the PATH or its path")
    if system == "Darwin":
        return record_darwin(command, folder, tracer)
    strace = tracer
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
    if len(parsed.calls) > MAX_CALLS:
        raise TraceError(f"record: the program made {len(parsed.calls):,} calls on the folder's files, more "
                         f"than a trace holds ({MAX_CALLS:,}); record a shorter run of it")
    files, _ = files_of(parsed, sizes)
    status = done.returncode if done.returncode >= 0 else 128 - done.returncode
    version = _strace_version(strace)
    program = "".join(c if c.isprintable() else "?" for c in os.path.basename(command[0]))[:200] or "?"
    trace = Trace(files, tuple(parsed.calls), version, platform.system(), program,
                  elapsed, parsed.outside)
    return Recorded(trace, status, counted.n)


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
        os.mkfifo(gate)
        started = time.monotonic_ns()
        try:
            # the shell waits for a line on the gate (a FIFO outside the folder), then becomes the program: one
            # process, whose id fs_usage follows from its first call
            program = subprocess.Popen(["/bin/sh", "-c", 'read _ < "$0"; exec "$@"', str(gate), *command], cwd=root)
        except OSError as e:
            raise TraceError(f"record: the program could not start ({e.strerror})") from None
        with open(log, "w", encoding="utf-8") as out:
            tracer = subprocess.Popen([fs_usage, "-w", "-f", "filesys", str(program.pid)], stdout=out,
                                      stderr=subprocess.DEVNULL)
        time.sleep(FS_USAGE_START_S)
        with open(gate, "w") as opened:
            opened.write("go\n")
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
    parsed = read.parsed
    if len(parsed.calls) > MAX_CALLS:
        raise TraceError(f"record: the program made {len(parsed.calls):,} calls on the folder's files, more "
                         f"than a trace holds ({MAX_CALLS:,}); record a shorter run of it")
    files, _ = files_of(parsed, sizes)
    program_name = "".join(c if c.isprintable() else "?" for c in os.path.basename(command[0]))[:200] or "?"
    trace = Trace(files, tuple(parsed.calls), "fs_usage", "Darwin", program_name, elapsed, parsed.outside)
    return Recorded(trace, status if status >= 0 else 128 - status, counted.n)
