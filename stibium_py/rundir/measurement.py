"""One measurement: the typed record every later stage reads (docs/run-directory.md, measurements.csv).

A `Measurement` is built in one place, `from_answer`, from the operation the plan asked for and the
helper's answer; an answer that disagrees with its operation (another op, access, granularity, engine,
sync, seed or byte count) is refused, so a helper and a package that drifted apart cannot write a
plausible row. Every key of the helper's answer is either a field here or listed in `DROPPED_KEYS`
with why; an unknown key is refused too. A kind's own columns are a typed part of the record (PARTS: a
tree's TreeCounts, a stream's FrameFacts, a verify's BlockCounts); the CSV columns are the fields in order with
each part's columns flat in its place (COLUMNS); `from_row` reads rows of any earlier column set back (a column
a file lacks reads as None).

A NamedTuple rather than a frozen dataclass: it is as immutable and as typed, and builds about ten times
faster (docs/performance.md), which counts at a million measurements.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, get_type_hints

from .. import fills
from ..errors import MeasurementError
from .op import Op


class TreeCounts(NamedTuple):
    """A tree test's own part of a row: what its phase handled."""

    entries: Optional[int] = None          # the files the phase handled (list: the names its folders held)
    dirs_made: Optional[int] = None        # create: the folders made on the way
    caches_dropped: Optional[bool] = None  # the kernel's caches dropped just before the phase
    cloned: Optional[int] = None           # copy: the copies that share their source's blocks (clones)


class FrameFacts(NamedTuple):
    """A stream test's own part of a row: the stream it belongs to."""

    fps: Optional[float] = None            # frames a second, as the plan asked (each row a frame)
    streams: Optional[int] = None          # the streams that ran at once
    stream: Optional[int] = None           # which of them, from 0
    buffer_frames: Optional[int] = None    # the frames the player or recorder holds


class BlockCounts(NamedTuple):
    """A verify test's own part of a row: its signed blocks, and on a file read back what they read back as."""

    block_bytes: Optional[int] = None      # the signed block (the file system's, at least 4 KiB)
    first_block: Optional[int] = None      # the index in the fill of the file's first block
    ok_blocks: Optional[int] = None        # a file read back: its blocks that read back as written
    moved_blocks: Optional[int] = None     # ... that hold another block of the fill
    corrupt_blocks: Optional[int] = None   # ... that came back changed
    unreadable_blocks: Optional[int] = None  # ... that could not be read
    period_blocks: Optional[int] = None    # ... the gcd of the distances of the moved ones to the blocks they hold
    bad_blocks: Optional[str] = None       # ... the first 64 bad blocks, as JSON (see DESCRIPTIONS)


# A kind's own part of a row, by its field: a CSV column of a part is named as the part's field (flat).
PARTS: dict[str, Any] = {"tree": TreeCounts, "frames": FrameFacts, "blocks": BlockCounts}
_PART_OF = {column: part for part, record in PARTS.items() for column in record._fields}


class _Row(NamedTuple):
    # what the plan asked for (from the Op)
    seq: int
    test: str
    op: str                                # read | write | mixed; a tree's phase (create, stat, list, ...)
    kind: str                              # one of registry.names()
    access: str                            # sequential | random | strided
    size_bytes: int                        # the file's size (files) or the span (pattern)
    granularity_bytes: int                 # bytes per request
    stride_bytes: int
    trial: int                             # repeat (files) or trial (pattern), from 0
    file: str                              # relative to the run's test folder
    # what the helper measured
    bytes: int = 0                         # bytes moved
    seconds: Optional[float] = None        # the timed interval (open to close, sync included)
    started_s: Optional[float] = None      # when the runner sent it, seconds since the run began
    resident_before: Optional[float] = None  # fraction of the file in the page cache just before a read
    engine: str = ""
    lat_p50_s: Optional[float] = None
    lat_p99_s: Optional[float] = None
    lat_max_s: Optional[float] = None
    error: Optional[str] = None
    requests: Optional[int] = None
    io_seconds: Optional[float] = None
    sync_seconds: Optional[float] = None
    open_seconds: Optional[float] = None
    close_seconds: Optional[float] = None
    lat_p90_s: Optional[float] = None
    lat_p999_s: Optional[float] = None
    lat_mean_s: Optional[float] = None
    direct_honoured: Optional[bool] = None
    tail_bytes_buffered: Optional[int] = None
    start_ns: Optional[int] = None         # the helper's raw monotonic clock
    end_ns: Optional[int] = None
    # columns added after the first format: an older file lacks them and reads None there
    syscalls: Optional[int] = None
    largest_syscall_bytes: Optional[int] = None
    cached_bytes: Optional[int] = None
    cached_reason: Optional[str] = None
    sync_used: Optional[str] = None
    lat_min_s: Optional[float] = None
    span_bytes: Optional[int] = None
    engine_requested: Optional[str] = None
    errno: Optional[int] = None            # of a failed measurement, with the platform's text for it
    strerror: Optional[str] = None
    removed_partial_file: Optional[bool] = None
    lat_hist_ns: Optional[str] = None      # the per-request latency histogram (see DESCRIPTIONS)
    queue_depth: int = 1                   # requests in flight per thread (older files: 1)
    threads: int = 1
    io_method: Optional[str] = None        # sync | io_uring | threads
    io_method_reason: Optional[str] = None
    chunk: Optional[int] = None            # sustained: the chunk's number in its file, from 0; empty on the file's row
    bytes_done: Optional[int] = None       # sustained: bytes of the file written (or read) when the chunk ended
    chunk_gap_s: Optional[float] = None    # sustained: the time before the chunk began, the last row's writing out
    temperature_c: Optional[float] = None  # sustained: the drive's temperature when the chunk's row arrived
    run_start_s: Optional[float] = None    # sustained: the chunk's start and end on the run's clock
    run_end_s: Optional[float] = None
    offset_bytes: Optional[int] = None     # many clients, a shared file: where the client's segment begins
    rank: Optional[int] = None             # many clients: the MPI rank that measured it (empty with one client)
    host: Optional[str] = None             # many clients: that rank's machine
    written_by: Optional[int] = None       # many clients, reads: the rank whose writes the read met
    read_fraction: Optional[float] = None  # mixed: the share of requests that read, as the plan asked
    read_bytes: Optional[int] = None       # mixed: the bytes of its reads and of its writes
    write_bytes: Optional[int] = None
    read_requests: Optional[int] = None
    write_requests: Optional[int] = None
    read_lat_p50_s: Optional[float] = None
    read_lat_p99_s: Optional[float] = None
    write_lat_p50_s: Optional[float] = None
    write_lat_p99_s: Optional[float] = None
    read_lat_hist_ns: Optional[str] = None
    write_lat_hist_ns: Optional[str] = None
    duration_s: Optional[float] = None     # by time: how long it ran after the warm-up, as the plan asked
    warmup_s: Optional[float] = None
    warmup_bytes: Optional[int] = None     # by time: what the warm-up moved, kept out of bytes and seconds
    warmup_requests: Optional[int] = None
    steady_window: Optional[int] = None    # rounds until steady: the window judged, as the plan asked
    steady_max_rounds: Optional[int] = None
    stonewall_s: Optional[float] = None    # a stonewall: the time after which no request started, as the plan asked
    stonewall_requests: Optional[int] = None  # requests done by the stonewall (the rest is the wear-out's)
    stonewall_seconds: Optional[float] = None  # their time: the first request's start to the last one's end
    wearout_requests: Optional[int] = None  # many clients: requests done after the stonewall to reach the furthest
    pass_requests: Optional[int] = None    # a stonewall: the requests of the whole pass, had it not stopped it
    instrument: str = "helper"             # what measured it: helper (stibium's own) or fio (the bench beside it)
    instrument_version: Optional[str] = None  # fio's version (fio-3.33); empty for the helper (run.json has it)
    slat_mean_s: Optional[float] = None    # fio: the mean submission latency (its lat_* columns are completion's)
    tree: Optional[TreeCounts] = None      # a tree's own part (its columns: entries, dirs_made, caches_dropped, cloned)
    fill: Optional[str] = None             # what the writes put on the disk (fills.py); older files: run.json's plan
    frames: Optional[FrameFacts] = None    # a stream's own part (fps, streams, stream, buffer_frames)
    blocks: Optional[BlockCounts] = None   # a verify's own part (block_bytes, first_block, the counts, bad_blocks)
    # a playback's stream: how long it waited for the drive to go quiet, and whether it did (False: the wait's bound
    # came first); last, as every new column is, so that a file written before them still reads
    quiet_wait_s: Optional[float] = None
    quiet: Optional[bool] = None

    @property
    def ok(self) -> bool:
        """A measurement that counts: no error and a positive time (the one definition of valid; Table.ok
        applies it to many at once)."""
        return not self.error and self.seconds is not None and self.seconds > 0

    @property
    def rate_bytes_per_s(self) -> float:
        return self.bytes / self.seconds if self.seconds else math.nan


class Measurement(_Row):
    """The record: a kind's own columns in its typed part (PARTS), every other column a field. Built with the
    columns' names, flat, as the CSV has them (Measurement(fps=25.0, ...) makes the frames part); read as
    `m.frames.fps`. A part none of whose columns is set is None."""

    __slots__ = ()

    def __new__(cls, *args: Any, **columns: Any) -> "Measurement":
        return super().__new__(cls, *args, **_grouped(columns))

    def _replace(self, **columns: Any) -> "Measurement":
        return super()._replace(**_grouped(columns, self))

    def flat(self) -> tuple[Any, ...]:
        """Its values in the order of COLUMNS (the CSV's and the table's), each part's columns in its place."""
        out: tuple[Any, ...] = ()
        for start, end, part in _LAYOUT:        # runs of plain fields, and the parts between them
            if part is None:
                out += self[start:end]
            else:
                value = self[start]
                out += value if value is not None else _NONE[part]
        return out

    @classmethod
    def from_flat(cls, values: Any) -> "Measurement":
        """The record from its values in the order of COLUMNS."""
        flat = tuple(values)
        out: tuple[Any, ...] = ()
        for (_, _, part), (at, to) in zip(_LAYOUT, _FLAT_LAYOUT):
            if part is None:
                out += flat[at:to]
            else:
                mine = flat[at:to]
                out += (PARTS[part]._make(mine) if mine != _NONE[part] else None,)
        return cls._make(out)

    def to_row(self) -> dict[str, Any]:
        """The CSV cells: None is empty, booleans are true/false, floats keep every digit."""
        return {k: _cell(v) for k, v in zip(COLUMNS, self.flat())}

    @classmethod
    def from_row(cls, row: dict[str, str], header: frozenset[str]) -> "Measurement | None":
        """A row read back; None for a row that is cut short or does not parse. Columns the file's
        format did not have yet read as None."""
        values: list[Any] = []
        try:
            for key, parse in _PARSERS:
                if key not in header:
                    values.append(COLUMN_DEFAULTS.get(key))
                    continue
                text = row.get(key)
                if text is None:
                    return None
                values.append(parse(text))
        except ValueError:
            return None
        if values[0] is None:
            return None
        return cls.from_flat(values)


_NONE = {name: (None,) * len(record._fields) for name, record in PARTS.items()}


def _layouts() -> tuple[list[tuple[int, int, str | None]], list[tuple[int, int]]]:
    """The record's fields as runs of plain fields and single parts (start, end, the part's name or None), and
    where each run lies among the flat columns."""
    layout: list[tuple[int, int, str | None]] = []
    flat: list[tuple[int, int]] = []
    at = 0
    for i, name in enumerate(_Row._fields):
        if name in PARTS:
            layout.append((i, i + 1, name))
            flat.append((at, at + len(PARTS[name]._fields)))
            at += len(PARTS[name]._fields)
        elif layout and layout[-1][2] is None:
            layout[-1] = (layout[-1][0], i + 1, None)
            flat[-1] = (flat[-1][0], at + 1)
            at += 1
        else:
            layout.append((i, i + 1, None))
            flat.append((at, at + 1))
            at += 1
    return layout, flat


_LAYOUT, _FLAT_LAYOUT = _layouts()


def _grouped(columns: dict[str, Any], base: Any = None) -> dict[str, Any]:
    """Columns by name with a part's columns gathered into its part (over `base`'s part, where replacing); a part
    none of whose columns is set is None."""
    if _PART_OF.keys().isdisjoint(columns):
        return columns
    out, found = {}, {}
    for name, value in columns.items():
        part = _PART_OF.get(name)
        if part is None:
            out[name] = value
        else:
            found.setdefault(part, {})[name] = value
    for part, values in found.items():
        before = out.get(part, getattr(base, part, None) if base is not None else None)
        merged = (before or PARTS[part]())._replace(**values)
        out[part] = merged if any(v is not None for v in merged) else None
    return out


COLUMNS: tuple[str, ...] = tuple(c for name in Measurement._fields
                                 for c in (PARTS[name]._fields if name in PARTS else (name,)))

# Each column's kind, from the record's field types: what the CSV reader parses and how a Table stores it.
COLUMN_TYPES = {**get_type_hints(_Row),
                **{c: t for record in PARTS.values() for c, t in get_type_hints(record).items()}}
INT_COLUMNS = tuple(c for c in COLUMNS if COLUMN_TYPES[c] is int)                       # always there
NUMBER_COLUMNS = tuple(c for c in COLUMNS if COLUMN_TYPES[c] in (Optional[int], Optional[float], float))
OPTIONAL_INT_COLUMNS = frozenset(c for c in COLUMNS if COLUMN_TYPES[c] is Optional[int])
BOOL_COLUMNS = tuple(c for c in COLUMNS if COLUMN_TYPES[c] is Optional[bool])
TEXT_COLUMNS = tuple(c for c in COLUMNS if COLUMN_TYPES[c] is str)                      # "" where empty
# What a file made before a column existed reads there, where that is not "missing": a whole number with a
# default in the record (queue depth and threads were 1 before they could be set), or a text with one (every row
# was the helper's before another instrument could measure).
COLUMN_DEFAULTS: dict[str, Any] = {c: v for c, v in _Row._field_defaults.items()
                                   if c in INT_COLUMNS or (c in TEXT_COLUMNS and v)}
OPTIONAL_TEXT_COLUMNS = tuple(c for c in COLUMNS if COLUMN_TYPES[c] is Optional[str])   # None where empty

# What each column holds (docs/measurements.md is generated from this).
DESCRIPTIONS = {
    "seq": "the operation's place in the run, from 0 (its key: a resumed run skips the seqs it has)",
    "test": "the test's name in the plan",
    "op": "read, write or mixed (each request a read or a write: read_fraction); tree tests: the phase (create, "
          "stat, list, read, rename or delete)",
    "kind": "files (whole files of many sizes), pattern (requests inside one file), sustained (a long write "
            "without pauses, a row per chunk), tree (a folder tree of many files, a row per phase) or stream "
            "(video streams of frames with deadlines, a row per frame)",
    "access": "sequential, strided or random",
    "size_bytes": "the file's size (files tests), the span the requests fall in (pattern tests) or the bytes of "
                  "the whole tree (tree tests)",
    "granularity_bytes": "bytes per request, as the plan asked (0 for tree tests, whose files are read and "
                         "written whole in requests of at most 1 MiB)",
    "stride_bytes": "bytes skipped after each request (strided access), else 0",
    "trial": "the repeat (files) or trial (pattern, tree), from 0",
    "file": "the test file, relative to the run's test folder (tree tests: the tree's folder)",
    "bytes": "bytes moved by the measurement (0 for a failed one)",
    "seconds": "the timed interval: open to close, the requests and, for writes, the sync; empty when it failed",
    "started_s": "when the runner sent the operation, seconds since the run began",
    "resident_before": "fraction of the file in the page cache just before a read (cachestat, or mincore where the kernel lacks it); empty where unknown",
    "engine": "the engine that ran: direct, buffered or foundation (app runs as one of them); tree tests: posix or "
              "foundation",
    "lat_p50_s": "median per-request latency (the helper's bounded histogram)",
    "lat_p99_s": "99th percentile per-request latency",
    "lat_max_s": "the slowest request",
    "error": "why the measurement failed; empty when it did not",
    "requests": "requests issued (tree tests: the phase's operations, one per file; list: one per folder read)",
    "io_seconds": "time in the requests alone",
    "sync_seconds": "time in the sync (fsync or F_FULLFSYNC) after a write",
    "open_seconds": "time to open the file",
    "close_seconds": "time to close it",
    "lat_p90_s": "90th percentile per-request latency",
    "lat_p999_s": "99.9th percentile per-request latency",
    "lat_mean_s": "mean per-request latency",
    "direct_honoured": "true where every request of a direct measurement bypassed the page cache, false where "
                       "some went through it, empty for the other engines",
    "tail_bytes_buffered": "bytes of an unaligned tail written or read through the cache (Linux direct I/O)",
    "start_ns": "the helper's raw monotonic clock at the start (CLOCK_MONOTONIC_RAW, or Mach absolute time "
                "scaled to ns)",
    "end_ns": "the same clock at the end",
    "syscalls": "read or write calls made (more than requests where the platform splits a request); tree tests: "
                "every call the phase made inside its interval (open, write, fsync, close, stat, opendir, readdir, "
                "rename, unlink, mkdir, the copy's; the foundation engine: its Foundation calls)",
    "largest_syscall_bytes": "the largest single call",
    "cached_bytes": "bytes that went through the page cache",
    "cached_reason": "why they did (the platform's rule), empty where none did",
    "sync_used": "the sync that ran: fsync, fdatasync, O_DSYNC (every write synchronous), F_FULLFSYNC, "
                 "F_BARRIERFSYNC, O_SYNC (macOS's dsync) or none; fsync (F_FULLFSYNC refused) where the file system "
                 "does not have it (tree tests, create: each, end or none, each file's sync an fsync)",
    "lat_min_s": "the fastest request",
    "span_bytes": "the span the helper used (pattern tests)",
    "engine_requested": "the engine the plan asked for",
    "errno": "the platform's error number of a failed measurement (numbers differ between platforms)",
    "strerror": "the platform's text for that error number",
    "removed_partial_file": "true where a failed write removed the file it had begun",
    "lat_hist_ns": "every request's latency as a histogram: 'lo-hi:count' per non-empty bin [lo, hi) in ns, "
                   "separated by spaces, 16 bins per octave (1/16 relative); empty for a single request",
    "queue_depth": "requests in flight per thread, as the plan asked (1 in files made before it existed)",
    "threads": "threads, each moving its own part of the requests in order, as the plan asked",
    "io_method": "how the requests moved: sync (one at a time on one thread), io_uring (Linux: one ring per "
                 "thread), threads (one thread per request in flight); tree tests, copy: what copied the files that "
                 "did not clone (copy_file_range, read/write, copyfile), empty where every one cloned",
    "io_method_reason": "why the method is not io_uring where it could have been (macOS, no liburing, the "
                        "kernel refused, an unaligned direct tail), else empty",
    "chunk": "sustained tests: the chunk's number within its file, from 0, on a row of its own per chunk (bytes, "
             "seconds, start_ns, end_ns and the latencies are the chunk's); empty on the row of the whole file. "
             "Stream tests: the frame's number in its stream (a frame is a chunk; chunk_gap_s holds the wait for "
             "its time)",
    "bytes_done": "sustained tests: bytes of the file moved when the chunk ended",
    "chunk_gap_s": "sustained tests: the time between the previous chunk's end and this chunk's start (the "
                   "helper writing out the previous row); 0 for a file's first chunk, and with requests in flight "
                   "(the others went on while the row was written: each chunk begins where the last ended)",
    "temperature_c": "sustained tests: the drive's temperature in degrees Celsius when the chunk's row arrived; "
                     "empty where the machine cannot tell",
    "run_start_s": "sustained tests: the chunk's start on the run's clock (seconds since the run began, as "
                   "started_s): its start_ns placed by the helper's clock read beside the run's clock as the row "
                   "arrived; empty where the package cannot read the helper's clock. Many clients: every row's "
                   "start on rank 0's clock (seconds since the clients joined), its start_ns placed by its rank's "
                   "measured offset",
    "run_end_s": "sustained tests: the chunk's end on the run's clock, as run_start_s",
    "offset_bytes": "many clients with a shared file: where this client's segment begins (its requests are the "
                    "pattern's, moved this far into the file); empty otherwise",
    "rank": "many clients (mpiexec): the rank that measured it, from 0; its start_ns and end_ns are its own "
            "machine's clock, run_start_s and run_end_s the same placed on rank 0's (run.json's clients keeps "
            "the offsets); empty with one client",
    "host": "many clients: the machine of that rank",
    "written_by": "many clients, reads: the rank whose writes (or laid-out file) the read met; differs from rank "
                  "with read_from: other",
    "read_fraction": "mixed: the share of the requests that read, as the plan asked (exactly that many of each "
                     "pass over the requests, rounded to whole requests; which ones drawn from the seed); empty for "
                     "a read or a write",
    "read_bytes": "mixed: bytes of the requests that read (bytes is reads and writes together, all in one interval)",
    "write_bytes": "mixed: bytes of the requests that wrote",
    "read_requests": "mixed: requests that read",
    "write_requests": "mixed: requests that wrote",
    "read_lat_p50_s": "mixed: the median latency of its reads",
    "read_lat_p99_s": "mixed: the 99th percentile latency of its reads",
    "write_lat_p50_s": "mixed: the median latency of its writes",
    "write_lat_p99_s": "mixed: the 99th percentile latency of its writes",
    "read_lat_hist_ns": "mixed: its reads' latencies as a histogram (as lat_hist_ns, which holds every request)",
    "write_lat_hist_ns": "mixed: its writes' latencies as a histogram",
    "duration_s": "by time: how long the requests went on after the warm-up, as the plan asked (seconds and "
                  "io_seconds are what they took: the last requests end after it, a write's sync is in seconds); "
                  "empty for a measurement of its bytes",
    "warmup_s": "by time: the warm-up before the measured interval, as the plan asked (0: none)",
    "warmup_bytes": "by time: the bytes of the requests that completed in the warm-up; kept out of bytes, "
                    "seconds and the latencies, so out of the rate",
    "warmup_requests": "by time: the requests that completed in the warm-up",
    "steady_window": "rounds until steady: the rounds judged together, as the plan asked (trial is the round, from "
                     "0); empty for a test of trials",
    "steady_max_rounds": "rounds until steady: the most rounds the plan allows",
    "stonewall_s": "a stonewall: the time after the measurement's start after which it started no request, as the "
                   "plan asked (bytes and requests are what it moved; empty without a stonewall)",
    "stonewall_requests": "a stonewall: the requests done by then (all of them where the stonewall did not stop it)",
    "stonewall_seconds": "a stonewall: the time of those requests, from the first one's start to the last one's end",
    "wearout_requests": "a stonewall with many clients: the requests done after it so that every client did as "
                        "many as the furthest client had (wear-out, IOR's stoneWallingWearOut); their time, and the "
                        "wait for the other clients' counts, are in seconds; 0 with one client",
    "pass_requests": "a stonewall: the requests of the measurement's whole pass (its bytes as the plan asked), of "
                     "which stonewall_requests were done by the stonewall",
    "instrument": "what measured the row: helper (stibium's own engines; every row of a file made before the "
                  "column existed) or fio (the bench beside the road test: a pattern test's bench: fio, or a fio "
                  "result imported with stibium import fio; docs/fio.md)",
    "instrument_version": "fio rows: fio's version as it states it (fio-3.33); empty for the helper's rows, whose "
                          "version run.json keeps",
    "slat_mean_s": "fio rows: the mean submission latency (fio's slat; 0 for its synchronous engines); their "
                   "lat_* columns and lat_hist_ns are fio's completion latency (clat)",
    "entries": "tree tests: the files the phase handled (list: the names the folders it read held), what its "
               "files per second count; requests is the helper's operations (list: the folders read)",
    "dirs_made": "tree tests, create: the folders made on the way to the files (inside the timed phase)",
    "caches_dropped": "tree tests: true where the kernel's caches (folder entries, inodes, data) were dropped just "
                      "before the phase (between: drop-caches), false where the phase met what the phases before "
                      "left in memory",
    "cloned": "tree tests, copy: the copies the file system made as clones (FICLONE on Linux, clonefile on macOS: "
              "they share their source's blocks, no bytes moved); the rest were copied byte by byte (io_method says "
              "how: copy_file_range, read/write or copyfile)",
    "fill": "what the writes put on the disk, as the plan said it: random, a byte (0x41), or data of stated ratios "
            "(compressible=50%,dedupe=25%: the share of each 4 KiB block a compressor removes, the share of blocks "
            "that repeat another); a read's is the fill its data were written with. Empty in files made before the "
            "column: the test's fill in run.json's plan",
    "fps": "stream tests: frames a second, as the plan asked; each row with a chunk is one frame",
    "streams": "stream tests: how many streams ran at once (each a file of its own)",
    "stream": "stream tests: which of them the row is, from 0",
    "buffer_frames": "stream tests: the frames the player or recorder holds; a frame done later than they cover is "
                     "dropped",
    "block_bytes": "verify tests: the signed block, the file system's (at least 4 KiB): each carries the run's id, "
                   "its index in the fill, a checksum and a payload drawn from the seed and the index",
    "first_block": "verify tests: the index in the fill of the file's first block (its byte in the fill is this "
                   "times block_bytes)",
    "ok_blocks": "verify tests, a file read back (the row without a chunk): its blocks that read back as written",
    "moved_blocks": "verify tests, a file read back: its blocks that hold another block of the fill (a drive that "
                    "writes over what it holds: a capacity it does not have)",
    "corrupt_blocks": "verify tests, a file read back: its blocks that came back changed",
    "unreadable_blocks": "verify tests, a file read back: its blocks that could not be read (each failing chunk is "
                         "read again block by block)",
    "period_blocks": "verify tests, a file read back: the greatest common divisor of the distances between a moved "
                     "block and the block it holds (a drive that wraps at N blocks: N); 0 where none moved",
    "bad_blocks": "verify tests, a file read back: its first 64 bad blocks as a JSON list of objects: block (its index "
                  "in the fill), kind (moved, corrupt or unreadable), holds (moved: the block it holds), bits and "
                  "copy_of (corrupt: the bits that differ, and the block it is a damaged copy of where it is nearer "
                  "another block than its own), errno and error (unreadable)",
    "quiet_wait_s": "stream tests, a playback's stream (the row without a chunk): the seconds from its files' "
                    "eviction until the target's disk was quiet (nothing in flight or written for 150 ms; at most "
                    "STIBIUM_QUIET_WAIT_S, 10 s by default), when its frames began; empty where the disk's counters "
                    "cannot be read or no wait was asked",
    "quiet": "stream tests, a playback's stream: whether the disk went quiet before it (false: the wait's bound "
             "came first); empty where no wait was made",
}
# The file of a row that holds a step of many clients together (analysis/clients.py's aggregate).
ALL_CLIENTS = "(all clients)"
OP_FIELDS = ("seq", "test", "op", "kind", "access", "size_bytes", "granularity_bytes", "stride_bytes", "trial", "file",
             "queue_depth", "threads", "read_fraction", "fill")

# Keys of the helper's answer that are not columns, each with why. `from_answer` checks the echoed
# request against the operation before dropping it.
DROPPED_KEYS = {
    "path": "an absolute path of the measuring machine; the row keeps the file relative to the test folder",
    "sync": "the request echoed (checked); what was used is the column sync_used",
    "seed": "the request echoed (checked); the plan in run.json has it",
    "usage": "set on a usage error only, which the runner reports as a failure of its own",
    "verified_requests": "only with --verify, a check of the helper itself that runs never ask for",
    "chunks": "sustained tests: how many chunk rows came before the answer (each is a row of its own)",
    "chunk_gaps_seconds": "sustained tests: the sum of the chunk rows' chunk_gap_s, and the last row's",
}
# Echoed request keys: the answer's value must equal the operation's.
_ECHOED = {"op": "op", "access": "access", "granularity_bytes": "granularity_bytes",
           "stride_bytes": "stride_bytes", "engine_requested": "engine", "seed": "seed", "fill": "fill",
           "queue_depth": "queue_depth", "threads": "threads", "read_fraction": "read_fraction",
           "duration_s": "duration_s", "warmup_s": "warmup_s", "stonewall_s": "stonewall_s"}


def from_answer(op: Op, ok: bool, answer: dict[str, Any], started_s: float | None) -> Measurement:
    """The row of one operation: the operation's fields, then the helper's measurements. Refuses an
    answer that disagrees with the operation, or that carries a key nobody decided about."""
    unknown = sorted(set(answer) - set(COLUMNS) - set(DROPPED_KEYS))
    if unknown:
        raise MeasurementError(f"the helper answered keys this stibium does not know ({', '.join(unknown)}); "
                               f"reinstall stibium so that the helper and the package match")
    if ok:
        expected = {key: getattr(op, field) for key, field in _ECHOED.items()}
        if not op.duration_s and not op.stonewall_s:
            expected["bytes"] = op.bytes           # by time or to a stonewall, the bytes are what the time allowed
        if op.writes:
            expected["sync"] = op.sync
        if op.span_bytes is not None:
            expected["span_bytes"] = op.span_bytes
        expected["offset_bytes"] = op.offset_bytes
        for key, want in expected.items():
            if key in answer and answer[key] != want and not (key == "fill" and fills.same(answer[key], want)) \
                    and not (key in ("duration_s", "warmup_s", "stonewall_s") and _same_seconds(answer[key], want)):
                raise MeasurementError(f"operation {op.seq}: the helper measured {key}={answer[key]!r} where the "
                                       f"plan asked for {want!r}; reinstall stibium so that the helper and the "
                                       f"package match")
    measured = {k: v for k, v in answer.items() if k in _MEASURED}
    if not ok:
        measured["seconds"] = None
        measured["error"] = str(answer.get("error") or "failed")
    fields = {f: getattr(op, f) for f in OP_FIELDS}
    asked = {"duration_s": op.duration_s, "warmup_s": op.warmup_s} if op.duration_s else {}
    if op.steady_window:
        asked.update(steady_window=op.steady_window, steady_max_rounds=op.steady_max_rounds)
    return Measurement(**fields, **stream_fields(op), **{"bytes": op.bytes, **asked, **measured,
                                                         "started_s": started_s})


# A chunk row's keys (the helper's --chunk), each to its column: the chunk's own bytes, time and latencies.
_CHUNK_KEYS = {"chunk": "chunk", "chunk_bytes": "bytes", "bytes_done": "bytes_done", "requests": "requests",
               "start_ns": "start_ns", "end_ns": "end_ns", "seconds": "seconds", "lat_p50_s": "lat_p50_s",
               "lat_p99_s": "lat_p99_s", "lat_max_s": "lat_max_s"}


def from_chunk(op: Op, row: dict[str, Any], started_s: float | None, temperature_c: float | None,
               run_clock_offset_s: float | None) -> Measurement:
    """The row of one chunk of a streamed (sustained) measurement; started_s is the measurement's, so that the
    chunks of one attempt at a file are told from an interrupted earlier one by it; run_clock_offset_s is
    the run's clock minus the helper's (in seconds), where known."""
    missing = sorted((set(_CHUNK_KEYS) | {"gap_ns"}) - set(row))
    if missing:
        raise MeasurementError(f"operation {op.seq}: a chunk row lacks {', '.join(missing)}; reinstall stibium so "
                               f"that the helper and the package match")
    fields = {f: getattr(op, f) for f in OP_FIELDS}
    return Measurement(**fields, **stream_fields(op), **{column: row[key] for key, column in _CHUNK_KEYS.items()},
                       chunk_gap_s=row["gap_ns"] / 1e9, started_s=started_s, engine=op.engine,
                       temperature_c=temperature_c,
                       **({} if run_clock_offset_s is None else
                          {"run_start_s": row["start_ns"] / 1e9 + run_clock_offset_s,
                           "run_end_s": row["end_ns"] / 1e9 + run_clock_offset_s}))


def failed(op: Op, error: str, started_s: float | None) -> Measurement:
    """The row of an operation that got no answer (a hung helper)."""
    return Measurement(**{f: getattr(op, f) for f in OP_FIELDS}, **stream_fields(op), bytes=0, started_s=started_s,
                       engine=op.engine, error=error)


def stream_fields(op: Op) -> dict[str, Any]:
    """A stream test's frame rate, streams, stream and buffer on each of its rows (none on other kinds' rows)."""
    f = op.frames
    return {"fps": f.fps, "streams": f.streams, "stream": f.stream, "buffer_frames": f.buffer_frames} if f else {}


def _same_seconds(answered: Any, planned: float) -> bool:
    """The helper keeps a time in whole nanoseconds."""
    return isinstance(answered, (int, float)) and abs(answered - planned) <= 1e-9 * max(1.0, planned)


_MEASURED = frozenset(COLUMNS) - set(OP_FIELDS) - {"started_s"}


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(float(value)) if math.isfinite(value) else ""
    return value


INT64_DIGITS = 19          # a count of more digits is past a 64-bit integer (the table's columns, SQLite's)


def _int64(text: str) -> int:
    """A whole number of the CSV within a 64-bit integer (the table's columns are int64): a larger one is a
    damaged row (ValueError), not an overflow further on."""
    if len(text.lstrip("+-")) > INT64_DIGITS:
        raise ValueError(f"{text[:24]}...: more digits than a count has")
    value = int(text)
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"{text}: past a 64-bit integer")
    return value


def _parser(name: str) -> Any:
    if name in INT_COLUMNS or name in OPTIONAL_INT_COLUMNS:
        return lambda t: _int64(t) if t != "" else None
    if name in NUMBER_COLUMNS:
        return lambda t: float(t) if t != "" else None
    if name in BOOL_COLUMNS:
        return lambda t: {"true": True, "false": False}.get(t)
    if name in TEXT_COLUMNS:
        return lambda t: t
    return lambda t: t if t != "" else None


_PARSERS = tuple((name, _parser(name)) for name in COLUMNS)
