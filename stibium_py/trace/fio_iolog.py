"""fio's I/O log (`write_iolog`) read into a trace, pure: the log's files and the requests fio made on them.

The forms (fio's iolog.c writes them; its HOWTO, "Trace file format"): a first line `fio version 2 iolog` or
`fio version 3 iolog`, then a line a request or a file action. Version 2: `FILE ACTION` for a file's `add`, `open`
and `close`, `FILE DIR OFFSET LENGTH` for a request (DIR one of read, write, trim, sync, datasync,
sync_file_range, wait). Version 3 puts the time before each, in microseconds from the log's start.

What a trace can hold of it: every open, close, read, write, sync and datasync, in order, on one thread (a log is
one job's). fio's log has no time in the kernel: each call's `took_ns` is 0, and a version 2 log has no times at
all (each call starts at 0: a replay as fast as the drive allows is all it can ask). A trim, a sync_file_range
(fio logs no range) and a wait are counted and not kept. The files are named by tokens (n1, n2, ...); each is laid
out before a replay at the size its requests reach (fio replays a log on files or devices that hold its offsets)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import TraceError
from .model import MAX_BYTES, MAX_CALLS, MAX_FILES, MAX_NS, Call, Trace, TraceFile

HEADERS = {"fio version 2 iolog": 2, "fio version 3 iolog": 3}
FILE_ACTIONS = ("add", "open", "close")
KEPT = {"read": "read", "write": "write", "sync": "fsync", "datasync": "fdatasync"}
NOT_KEPT = ("trim", "sync_file_range", "wait")
_NAME = re.compile(r"\S{1,4096}")
_DIGITS = re.compile(r"[0-9]{1,20}")


@dataclass(frozen=True)
class Imported:
    trace: Trace
    not_kept: int               # trims, ranges synced and waits: no call of a trace does them


def read_iolog(text: str, where: str) -> Imported:
    """The trace of fio's log `text` (named `where` in a refusal: `where:LINE: what; what to do`)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() not in HEADERS:
        raise TraceError(f"{where}: not fio's I/O log (its first line is not 'fio version 2 iolog' or 'fio version 3 "
                         f"iolog'); give a log fio wrote with write_iolog")
    version = HEADERS[lines[0].strip()]
    if len(lines) - 1 > MAX_CALLS:
        raise TraceError(f"{where}: more than {MAX_CALLS:,} lines; a trace holds at most {MAX_CALLS:,} calls")
    tokens: dict[str, int] = {}
    ends: dict[int, int] = {}
    handles: dict[int, int] = {}         # file -> its open handle
    opened = 0                            # handles made so far
    calls: list[Call] = []
    not_kept = 0
    for number, line in enumerate(lines[1:], 2):
        words = line.split()
        if not words:
            continue
        at = f"{where}:{number}"
        start_ns = 0
        if version == 3:
            start_ns = _number(words[0], at, "time", MAX_NS // 1000) * 1000
            words = words[1:]
        if len(words) not in (2, 4) or not _NAME.fullmatch(words[0]):
            raise TraceError(f"{at}: not a line of fio's log (FILE ACTION, or FILE DIR OFFSET LENGTH"
                             f"{', after the time' if version == 3 else ''}); mend the line")
        name, action = words[0], words[1]
        if name not in tokens:
            if len(tokens) >= MAX_FILES:
                raise TraceError(f"{at}: more than {MAX_FILES:,} files; a trace holds at most {MAX_FILES:,}")
            tokens[name] = len(tokens)
        file = tokens[name]
        if len(words) == 2:
            if action not in FILE_ACTIONS:
                raise TraceError(f"{at}: {_shown(action)}: not one of fio's file actions (add, open, close); mend "
                                 f"the line")
            if action == "open":
                handles[file], opened = opened, opened + 1
                calls.append(Call(0, start_ns, 0, "open", file, handle=handles[file]))
            elif action == "close" and file in handles:
                calls.append(Call(0, start_ns, 0, "close", file, handle=handles.pop(file)))
            continue
        if action in NOT_KEPT:
            not_kept += 1
            continue
        if action not in KEPT:
            raise TraceError(f"{at}: {_shown(action)}: not one of fio's requests (read, write, trim, sync, datasync, "
                             f"sync_file_range, wait); mend the line")
        offset = _number(words[2], at, "offset", MAX_BYTES)
        length = _number(words[3], at, "length", MAX_BYTES)
        if file not in handles:          # a request on a file the log never opened: its first use opens it
            handles[file], opened = opened, opened + 1
            calls.append(Call(0, start_ns, 0, "open", file, handle=handles[file]))
        kind = KEPT[action]
        moved = kind in ("read", "write")
        if moved:
            ends[file] = max(ends.get(file, 0), offset + length)
        calls.append(Call(0, start_ns, 0, kind, file, handle=handles[file], offset=offset if moved else -1,
                          bytes=length if moved else 0, result=length if moved else 0))
    files = tuple(TraceFile(f"n{k + 1}", False, min(ends.get(k, 0), MAX_BYTES)) for k in range(len(tokens)))
    calls.sort(key=lambda c: c.start_ns)
    # the system and the job's whole run are not in the log: none is said
    trace = Trace(files, tuple(calls), f"fio write_iolog (version {version})", "", "fio", 0)
    return Imported(trace, not_kept)


def _number(text: str, at: str, what: str, high: int) -> int:
    if not _DIGITS.fullmatch(text) or int(text) > high:
        raise TraceError(f"{at}: {what} {_shown(text)} is not a whole number from 0 to {high}; mend the line")
    return int(text)


def _shown(value: str) -> str:
    text = "".join(c if c.isprintable() else "?" for c in value)
    return text if len(text) <= 40 else text[:37] + "..."
