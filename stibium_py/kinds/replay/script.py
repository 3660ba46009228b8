"""A trace as the helper's replay script (docs/helper-protocol.md, "replay"): its files by index with their sizes
before the program ran, the open files it met already open, and its calls one a line, each with what the helper
cannot know from the call alone: whether an open makes its file (the trace keeps no open flags: an open that
succeeded on a file that does not exist at that point of the replay made it), the open file a copy writes to, the
recorded gap before it on its thread, and the calls of other threads on the same file or open file that must
return before it (a file's calls keep their recorded order across threads). Pure: a trace in, a Script out."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import PlanError
from ...trace.model import CALLS, NOT_REPLAYED, Call, Trace, TraceFile

# the helper's kinds of call, numbered as helper/sb_replay.h numbers them (the trace's, less what is not replayed)
KINDS = tuple(c for c in CALLS if c not in NOT_REPLAYED)
MOVED = ("read", "write", "copy")
MAX_MOVED_BYTES = 256 << 20          # a read, write or copy of one call: the helper's buffers
MAX_LIST_BYTES = 1 << 20             # a folder's read (getdents' buffer): more reads no more names
CREATES = 1                          # sb_replay.h's SB_RP_CREATE
FOLDER = 2                           # SB_RP_FOLDER


class ScriptError(PlanError):
    """A trace the helper cannot replay (a call too large for its buffers), in one line."""


@dataclass(frozen=True)
class Script:
    text: str                        # the helper's script
    calls: int                       # the calls replayed
    index: tuple[int, ...]           # each replayed call's index in the trace's calls
    left_out: int                    # the calls no replay makes (mappings: their reads and writes are page faults)
    threads: int
    kinds: tuple[str, ...]           # the kinds of call it holds, in KINDS' order
    layout_files: int                # files that existed before the program ran, laid out before each trial
    layout_bytes: int
    read_bytes: int                  # the bytes its reads and writes ask
    write_bytes: int


def script_of(trace: Trace) -> Script:
    files = trace.files
    calls = [c for c in trace.calls if c.call not in NOT_REPLAYED]
    index = tuple(k for k, c in enumerate(trace.calls) if c.call not in NOT_REPLAYED)
    threads: dict[int, int] = {}
    for c in calls:
        threads.setdefault(c.thread, len(threads))
    # a copy that asked for more than any file holds and moved less (cp asks copy_file_range for SSIZE_MAX: to
    # the end) asks, replayed, for what it moved
    calls = [replace(c, bytes=c.result) if c.call == "copy" and c.bytes > MAX_MOVED_BYTES and not c.error
             and 0 <= c.result <= MAX_MOVED_BYTES else c for c in calls]
    for k, c in zip(index, calls):
        limit = MAX_MOVED_BYTES if c.call in MOVED else None
        if limit is not None and c.bytes > limit:
            raise ScriptError(f"call {k} of the trace ({c.call}) asks {c.bytes:,} bytes; a replayed {c.call} moves "
                              f"at most {limit >> 20} MiB in one call")
    exists = {k for k, f in enumerate(files) if f.size_bytes is not None}
    opened_in_trace: set[int] = set()
    preopened: dict[int, int] = {}            # handle -> file, in the order first met
    handles = 0
    open_on: dict[int, list[int]] = {}        # file -> its open handles, the latest last
    last_on_file: dict[int, int] = {}         # file -> the last call (replayed index) that named it
    last_on_handle: dict[int, int] = {}
    thread_of: list[int] = []
    needed: set[int] = set()
    last_end: dict[int, int] = {}             # thread -> its last call's recorded end
    lines = []
    for i, c in enumerate(calls):
        t = threads[c.thread]
        thread_of.append(t)
        handles = max(handles, c.handle + 1)
        if c.handle >= 0 and c.handle not in opened_in_trace and c.handle not in preopened:
            if c.call == "open":
                opened_in_trace.add(c.handle)
            else:                               # opened before the trace began
                preopened[c.handle] = c.file
        to_handle = -1
        if c.call == "copy" and c.to_file >= 0 and open_on.get(c.to_file):
            to_handle = open_on[c.to_file][-1]
        flags = 0
        if c.call == "open":
            if c.file >= 0 and _folder(files[c.file]):
                flags |= FOLDER
            if not c.error and c.file not in exists:
                flags |= CREATES
        # the calls of other threads before it on what it works on: its file, its other file, its open files
        before = set()
        for key, last in ((c.file, last_on_file), (c.to_file, last_on_file), (c.handle, last_on_handle),
                          (to_handle, last_on_handle)):
            if key >= 0 and key in last and thread_of[last[key]] != t:
                before.add(last[key])
        after = sorted(before, reverse=True)[:4]
        needed.update(after)
        gap = c.start_ns - last_end[t] if t in last_end else c.start_ns
        last_end[t] = c.start_ns + c.took_ns
        asked = min(c.bytes, MAX_LIST_BYTES) if c.call == "list" else c.bytes
        lines.append([t, KINDS.index(c.call), c.file, c.to_file, c.handle, to_handle, c.offset, asked, flags,
                      max(0, gap), c.start_ns, *after, *[-1] * (4 - len(after)), 1 if c.error else 0])
        for key in (c.file, c.to_file):
            if key >= 0:
                last_on_file[key] = i
        for key in (c.handle, to_handle):
            if key >= 0:
                last_on_handle[key] = i
        _track(c, files, exists, open_on)
    text = [f"stibium-replay 1 {len(files)} {len(preopened)} {handles} {len(calls)} {max(1, len(threads))}"]
    text += [f"F {1 if _folder(f) else 0} {-1 if f.size_bytes is None else f.size_bytes} {f.path}" for f in files]
    text += [f"P {h} {f}" for h, f in preopened.items()]
    text += ["C " + " ".join(map(str, line + [1 if i in needed else 0])) for i, line in enumerate(lines)]
    existing = [f for f in files if f.size_bytes is not None and not _folder(f)]
    return Script(text="\n".join(text) + "\n", calls=len(calls), index=index, left_out=len(trace.calls) - len(calls),
                  threads=max(1, len(threads)), kinds=tuple(k for k in KINDS if any(c.call == k for c in calls)),
                  layout_files=len(existing), layout_bytes=sum(f.size_bytes or 0 for f in existing),
                  read_bytes=sum(c.bytes for c in calls if c.call == "read"),
                  write_bytes=sum(c.bytes for c in calls if c.call in ("write", "copy", "allocate")))


def _folder(f: TraceFile) -> bool:
    """A folder: what the program used as one, and the recorded folder itself ("."), however it was used."""
    return f.folder or f.path == "."


def _track(c: Call, files: tuple[TraceFile, ...], exists: set[int], open_on: dict[int, list[int]]) -> None:
    """What a call that succeeded changed of which files exist and which are open."""
    if c.error:
        return
    if c.call == "open" and c.file >= 0:
        exists.add(c.file)
        if c.handle >= 0:
            open_on.setdefault(c.file, []).append(c.handle)
    elif c.call == "close" and c.file >= 0 and c.handle in open_on.get(c.file, []):
        open_on[c.file].remove(c.handle)
    elif c.call in ("unlink", "rmdir"):
        exists.discard(c.file)
    elif c.call == "mkdir" or c.call == "copy":
        exists.add(c.to_file if c.call == "copy" else c.file)
    elif c.call == "rename" and c.to_file >= 0:
        moved_from = files[c.file].path
        exists.discard(c.file)
        exists.add(c.to_file)
        if _folder(files[c.file]):       # what was below the folder moved with it
            below = {k for k in exists if files[k].path.startswith(moved_from + "/")}
            exists -= below
            moved_to = files[c.to_file].path
            exists |= {k for k, f in enumerate(files) if f.path.startswith(moved_to + "/")
                       and any(files[b].path[len(moved_from):] == f.path[len(moved_to):] for b in below)}
