"""A trace as data (docs/trace-format.md): its files as identities inside the recorded folder, with their sizes
at the start; its calls, one row each, by thread. Read as a stranger's file is read: a regular file, at most
TRACE_CAP_BYTES, every field held to its type and bounds, every file's name a plain relative path that stays inside
the folder a replay will use. Refusals are one line, naming what to do."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..beside import Named, read_regular
from ..errors import JsonRefused, TraceError

FORMAT = "stibium-trace"
VERSION = 1
TRACE_CAP_BYTES = 512 << 20          # a trace of MAX_CALLS calls is about 100 MB
MAX_CALLS = 2_000_000
MAX_FILES = 100_000
MAX_THREADS = 4096
MAX_DEPTH = 32                       # folders in a file's name
MAX_BYTES = 1 << 50                  # a size, offset or count of bytes: 1 PiB
MAX_NS = 10 ** 15                    # a time from the trace's start: 11 days

# what a call does, in the trace's words (the system calls behind each: docs/trace-format.md)
CALLS = ("open", "close", "read", "write", "seek", "fsync", "fdatasync", "sync_range", "syncfs", "truncate",
         "allocate", "rename", "unlink", "mkdir", "rmdir", "stat", "list", "copy", "fullsync", "mmap",
         # posix_fadvise's advices on a range of an open file: read-ahead as usual, off, doubled; read it now; drop
         # its pages from the cache; read once
         "advise_normal", "advise_random", "advise_sequential", "advise_willneed", "advise_dontneed",
         "advise_noreuse")
NOT_REPLAYED = ("mmap",)             # its reads and writes are page faults, which no call shows
COLUMNS = ("thread", "start_ns", "took_ns", "call", "file", "to_file", "handle", "offset", "bytes", "result",
           "error")
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
ERRNO = re.compile(r"E[A-Z0-9]{1,15}")


@dataclass(frozen=True)
class TraceFile:
    """A file or folder the trace touches: its name inside the recorded folder, and its size before the program
    ran (None: it did not exist then)."""

    path: str
    folder: bool
    size_bytes: int | None


@dataclass(frozen=True)
class Call:
    """One call: its thread (0 for the first), its start after the trace's first call and its time in the kernel
    (ns), the file it names (an index into the files, -1 for none) and, for a rename or a copy, the other one; the
    open it works on (-1 for none), the offset (-1: the open's own position), the bytes asked, what it returned (the
    bytes done for a read or a write), and the error's name ('' where it succeeded)."""

    thread: int
    start_ns: int
    took_ns: int
    call: str
    file: int = -1
    to_file: int = -1
    handle: int = -1
    offset: int = -1
    bytes: int = 0
    result: int = 0
    error: str = ""

    def row(self) -> list[Any]:
        return [self.thread, self.start_ns, self.took_ns, self.call, self.file, self.to_file, self.handle,
                self.offset, self.bytes, self.result, self.error]


@dataclass(frozen=True)
class Trace:
    files: tuple[TraceFile, ...]
    calls: tuple[Call, ...]
    tool: str                        # what recorded it: "strace 6.1"
    system: str                      # the system it was recorded on: "Linux"
    program: str                     # the program's name (its first word, without its folder)
    elapsed_ns: int                  # the program's run, start to end
    outside: int = 0                 # calls on files outside the recorded folder (not in the trace)

    @property
    def threads(self) -> int:
        return len({c.thread for c in self.calls})

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION,
                "recorded": {"tool": self.tool, "system": self.system, "program": self.program,
                             "elapsed_ns": self.elapsed_ns, "outside_calls": self.outside},
                "files": [{"path": f.path, "folder": f.folder, "size_bytes": f.size_bytes} for f in self.files],
                "columns": list(COLUMNS), "calls": [c.row() for c in self.calls]}


def trace_text(trace: Trace) -> str:
    """The trace as JSON, a file and a call a line (a diff of two traces reads call by call)."""
    data = trace.to_json()

    def rows(items: list[Any]) -> str:
        return "[\n" + ",\n".join("  " + json.dumps(x, separators=(", ", ": ")) for x in items) + "\n ]" \
            if items else "[]"
    head = ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items() if k not in ("files", "calls"))
    return f'{{\n{head},\n "files": {rows(data["files"])},\n "calls": {rows(data["calls"])}\n}}\n'


def write_trace(trace: Trace, path: Path) -> None:
    """The trace written to a new file (O_EXCL, no link followed): a name that exists by the time it is written is
    refused, not overwritten."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        raise TraceError(f"{path} exists; give another --out or remove it") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(trace_text(trace))


def read_trace(path: Path) -> Trace:
    """The trace at `path` (a file the person named), held to its format; TraceError in one line otherwise."""
    return trace_from(read_capped(path, "trace"), str(path))


def trace_from(data: bytes, where: str) -> Trace:
    """A trace from a file's bytes (`where` names it in a refusal), held to its format; TraceError in one line."""
    from ..rundir.jsonread import load_json
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(f"{where}: not UTF-8 text; give a trace that stibium record wrote") from None
    try:
        doc = load_json(text, where, "give a trace that stibium record wrote")
    except JsonRefused as e:
        raise TraceError(str(e)) from None
    except ValueError:
        raise TraceError(f"{where}: not JSON; give a trace that stibium record wrote") from None
    return trace_of(doc, where)


def read_capped(path: Path, what: str) -> bytes:
    """The bytes of a file the person named (`what` it should be: "trace", "fio's I/O log"), at most TRACE_CAP_BYTES:
    a regular file, opened without waiting on a FIFO (beside.read_regular); TraceError in one line otherwise."""
    article = what if "'" in what else f"a {what}"
    return read_regular(path, str(path), TRACE_CAP_BYTES, Named(
        what, f"give the path of {article}", f"a trace holds at most {MAX_CALLS:,} calls", TraceError))


def trace_of(doc: Any, where: str) -> Trace:
    """A trace from its JSON document, every field held to its type and bounds."""
    def no(what: str) -> TraceError:
        return TraceError(f"{where}: {what}; give a trace that stibium record wrote")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise no("not a stibium trace (its format is not 'stibium-trace')")
    if doc.get("version") != VERSION:
        raise no(f"a trace of version {_shown(doc.get('version'))}, which this stibium does not read (it reads "
                 f"version {VERSION})")
    recorded = doc.get("recorded")
    if not isinstance(recorded, dict):
        raise no("no 'recorded' record")
    tool, system, program = (_text(recorded.get(k), k, no) for k in ("tool", "system", "program"))
    elapsed = _whole(recorded.get("elapsed_ns"), "recorded.elapsed_ns", MAX_NS, no)
    outside = _whole(recorded.get("outside_calls", 0), "recorded.outside_calls", MAX_CALLS, no)
    files = _files(doc.get("files"), no)
    if doc.get("columns") != list(COLUMNS):
        raise no(f"its columns are not {', '.join(COLUMNS)}")
    rows = doc.get("calls")
    if not isinstance(rows, list):
        raise no("'calls' is not a list")
    if len(rows) > MAX_CALLS:
        raise no(f"more than {MAX_CALLS:,} calls")
    calls = tuple(_call(k, row, len(files), no) for k, row in enumerate(rows))     # threads: 0 to MAX_THREADS - 1
    return Trace(files, calls, tool, system, program, elapsed, outside)


def _files(given: Any, no: Any) -> tuple[TraceFile, ...]:
    if not isinstance(given, list):
        raise no("'files' is not a list")
    if len(given) > MAX_FILES:
        raise no(f"more than {MAX_FILES:,} files")
    out, seen = [], set()
    for k, f in enumerate(given):
        if not isinstance(f, dict) or set(f) != {"path", "folder", "size_bytes"}:
            raise no(f"file {k} is not a record of path, folder and size_bytes")
        path = f["path"]
        if not isinstance(path, str) or not plain_path(path):
            raise no(f"file {k}'s path is not a plain relative path (names of letters, digits, . _ - joined by /, "
                     f"no .. and at most {MAX_DEPTH} deep)")
        if path in seen:
            raise no(f"file {k}'s path is named twice")
        seen.add(path)
        if not isinstance(f["folder"], bool):
            raise no(f"file {k}'s folder is not true or false")
        size = f["size_bytes"]
        if size is not None:
            size = _whole(size, f"file {k}'s size_bytes", MAX_BYTES, no)
        out.append(TraceFile(path, f["folder"], size))
    return tuple(out)


def plain_path(path: str) -> bool:
    """A name inside a folder that stays inside it wherever it is joined: relative, of plain names, no . or ..;
    "." is the folder itself."""
    if path == ".":
        return True
    parts = path.split("/")
    return 0 < len(parts) <= MAX_DEPTH and all(NAME.fullmatch(p) and p not in (".", "..") for p in parts)


def _call(k: int, row: Any, files: int, no: Any) -> Call:
    if not isinstance(row, list) or len(row) != len(COLUMNS):
        raise no(f"call {k} is not a row of {len(COLUMNS)} values")
    thread, start, took, call, file, to_file, handle, offset, size, result, error = row
    if call not in CALLS:
        raise no(f"call {k} is {_shown(call)}, not one of {', '.join(CALLS)}")
    if not isinstance(error, str) or (error and not ERRNO.fullmatch(error)):
        raise no(f"call {k}'s error is not an error's name (such as ENOENT)")
    for name, value, low, high in (("thread", thread, 0, MAX_THREADS - 1), ("start_ns", start, 0, MAX_NS),
                                   ("took_ns", took, 0, MAX_NS), ("file", file, -1, files - 1),
                                   ("to_file", to_file, -1, files - 1), ("handle", handle, -1, MAX_CALLS),
                                   ("offset", offset, -1, MAX_BYTES), ("bytes", size, 0, MAX_BYTES),
                                   ("result", result, -1, MAX_BYTES)):
        if type(value) is not int or not low <= value <= high:
            raise no(f"call {k}'s {name} is not a whole number from {low} to {high}")
    return Call(thread, start, took, call, file, to_file, handle, offset, size, result, error)


def _whole(value: Any, name: str, high: int, no: Any) -> int:
    if type(value) is not int or not 0 <= value <= high:
        raise no(f"{name} is not a whole number from 0 to {high}")
    return value


def _text(value: Any, name: str, no: Any) -> str:
    if not isinstance(value, str) or len(value) > 200 or not value.isprintable():
        raise no(f"recorded.{name} is not a line of text")
    return value


def _shown(value: Any) -> str:
    text = "".join(c if c.isprintable() else "?" for c in repr(value))
    return text if len(text) <= 40 else text[:37] + "..."
