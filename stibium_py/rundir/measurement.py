"""One measurement: the typed record every later stage reads (docs/run-directory.md, measurements.csv).

A `Measurement` is built from a helper's answer in answers.py (`from_answer`, which refuses an answer that
disagrees with its operation), or by a kind's own rows module from its own command's answer; what each column
holds is in descriptions.py. A kind's own columns are a typed part of the record (PARTS: a
tree's PhaseCounts, a stream's FrameFacts, a verify's BlockCounts); the CSV columns are the fields in order with
each part's columns flat in its place (COLUMNS); `from_row` reads rows of any earlier column set back (a column
a file lacks reads as None).

A NamedTuple rather than a frozen dataclass: it is as immutable and as typed, and builds about ten times
faster (docs/performance.md), which counts at a million measurements.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, get_type_hints


class PhaseCounts(NamedTuple):
    """A phase's own part of a row (a tree test's, whose operations are phases, op.Phase): what it handled."""

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


class CallFacts(NamedTuple):
    """A replay test's own part of its trial's row (the row of the whole replay: its access empty; each kind of call
    has a row of its own, its access the call's kind): how its calls were spaced and what came of them."""

    replay_timing: Optional[str] = None    # as-fast, as-fast-think (think: keep) or as-recorded
    in_calls_s: Optional[float] = None     # every thread's time in calls, summed
    think_s: Optional[float] = None        # ... waiting for a call's recorded gap or its due time
    waited_s: Optional[float] = None       # ... waiting for another thread's call on the same file to return
    late_calls: Optional[int] = None       # as-recorded: the calls issued over 100 us after their due time
    late_max_s: Optional[float] = None     # ... the latest of them
    late_p99_s: Optional[float] = None
    mismatched_calls: Optional[int] = None  # calls that failed where the recorded one succeeded, or the other way
    first_mismatch: Optional[int] = None   # ... the first of them, its index in the trace's calls
    slowest_calls: Optional[str] = None    # the slowest calls, JSON [[index in the trace, seconds], ...]


class LoadFacts(NamedTuple):
    """An open loop's own part of a row (a pattern test with a rate): the rate it was offered and what came of it.
    The response time of a request runs from its due time to its completion (a wait for a free slot or a stalled
    device included), its service time (the lat_ columns) from its issue."""

    rate_per_s: Optional[float] = None     # requests a second this client was offered, as the plan asked
    arrivals: Optional[str] = None         # constant | poisson
    resp_p50_s: Optional[float] = None
    resp_p90_s: Optional[float] = None
    resp_p99_s: Optional[float] = None
    resp_p999_s: Optional[float] = None
    resp_max_s: Optional[float] = None
    resp_mean_s: Optional[float] = None
    resp_hist_ns: Optional[str] = None     # the response times' histogram (as lat_hist_ns)
    issue_late_p50_s: Optional[float] = None  # how long after its due time each request was issued
    issue_late_p99_s: Optional[float] = None
    issue_late_max_s: Optional[float] = None
    late_issues: Optional[int] = None      # the requests issued over 100 us after their due time
    unscheduled: Optional[int] = None      # requests left undone because the schedule ran out of due times
    slo: Optional[str] = None              # a search for a target's rate: the target and the grid's top (load.py)


# A kind's own part of a row, by its field: a CSV column of a part is named as the part's field (flat).
PARTS: dict[str, Any] = {"tree": PhaseCounts, "frames": FrameFacts, "blocks": BlockCounts, "calls": CallFacts,
                         "load": LoadFacts}
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
    tree: Optional[PhaseCounts] = None      # a tree's own part (its columns: entries, dirs_made, caches_dropped, cloned)
    fill: Optional[str] = None             # what the writes put on the disk (fills.py); older files: run.json's plan
    frames: Optional[FrameFacts] = None    # a stream's own part (fps, streams, stream, buffer_frames)
    blocks: Optional[BlockCounts] = None   # a verify's own part (block_bytes, first_block, the counts, bad_blocks)
    # a playback's stream: how long it waited for the drive to go quiet, and whether it did (False: the wait's bound
    # came first); last, as every new column is, so that a file written before them still reads
    quiet_wait_s: Optional[float] = None
    quiet: Optional[bool] = None
    calls: Optional[CallFacts] = None    # a replay's own part (its trial's row: timing, waits, lateness, mismatches)
    load: Optional[LoadFacts] = None     # an open loop's own part (its rate, response times, lateness)

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

# The file of a row that holds a step of many clients together (analysis/clients.py's aggregate).
ALL_CLIENTS = "(all clients)"
OP_FIELDS = ("seq", "test", "op", "kind", "access", "size_bytes", "granularity_bytes", "stride_bytes", "trial", "file",
             "queue_depth", "threads", "read_fraction", "fill")


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
