"""`stibium record`: run a person's program under strace and keep what it did to the files of one folder as a trace.

The person names the program (this is their command, run as they would run it; a plan never reaches here). Before
it runs, the folder's files and their sizes are listed (at most SNAPSHOT_ENTRIES, which is also the most a trace
holds): a trace's files carry their size at the start, so that a replay can lay them out first. strace writes its
lines to a file in a temporary folder outside the recorded one; they are read into the trace (strace.py) and
removed. Linux only: on macOS the system's own tracer (fs_usage) needs root and is not read yet."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import TraceError
from .model import MAX_CALLS, MAX_FILES, Trace
from .strace import TRACED, files_of, parse

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
    if platform.system() != "Linux":
        raise TraceError("record: recording is built for Linux (strace) only so far; record the program on a "
                         "Linux machine")
    strace = shutil.which("strace")
    if strace is None:
        raise TraceError("record: strace is not installed; install it (Debian: apt-get install strace)")
    if not command:
        raise TraceError("record: no program given; name it after --, as in: stibium record -- make")
    if shutil.which(command[0], path=os.environ.get("PATH")) is None and not Path(folder, command[0]).is_file():
        raise TraceError(f"record: {command[0]}: no such program; give a program on the PATH or its path")
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
