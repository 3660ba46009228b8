"""A stream test's analysis: for each stream count, its frames on time, late and dropped, a frame's time, and the
most streams that ran without a drop in every trial, beside the count a sequential rate alone would promise.

The deadline model (docs/methods.md, "Streams and deadlines"): a stream starts at t0 (its first frame's start);
frame k is issued at t0 + k / fps and no earlier (the helper waits), or at once when the frame before ended later.
It is on time when done by t0 + (k + 1) / fps, late when done after that but within the buffer (buffer_frames
frame times more), and dropped when later still: a player showing it then would have shown nothing. A late frame
makes the next one start late, so a disk slower than the stream needs drops more and more frames as it runs."""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...analysis.summary import Pending, SummaryContext
from ...rundir.table import Table
from . import formats
from .burst import Burst, burst_of, carried_by_burst, wrong_way
from .expand import FRAME_ALIGN_BYTES
from .model import MAX_STREAMS

QUANTILES = {"p50": 0.5, "p99": 0.99, "p999": 0.999}


@dataclass(frozen=True)
class StreamPoint:
    """Every whole trial of one stream count, its frames together."""

    streams: int
    trials: int                     # whole trials (every stream of it ran to its last frame)
    frames: int
    on_time: int
    late: int                       # after their frame time, within the buffer
    dropped: int                    # later than the buffer covers
    dropped_by_trial: list[int]
    frame_s: dict[str, float]       # a frame's I/O: p50, p99, p999 and max, seconds
    latest_s: float                 # the latest frame: how long after its frame time it was done (< 0: none late)
    # the stream of the first whole trial with the most drops (else the latest frame): each frame's time since the
    # start, its lateness and whether it was dropped, for the page's figure
    trace_s: list[float] = field(default_factory=list)
    trace_late_s: list[float] = field(default_factory=list)
    trace_dropped: list[bool] = field(default_factory=list)
    frames_sorted_s: list[float] = field(default_factory=list)     # every frame's time, for its distribution
    dropped_by_client: dict[int, int] = field(default_factory=dict)     # many clients: each client's drops
    stragglers: list[int] = field(default_factory=list)     # clients that dropped where another dropped none

    @property
    def dropped_share(self) -> float:
        return self.dropped / self.frames if self.frames else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"streams": self.streams, "trials": self.trials, "frames": self.frames, "on_time": self.on_time,
                "late": self.late, "dropped": self.dropped, "dropped_by_trial": self.dropped_by_trial,
                "frame_s": self.frame_s, "latest_s": self.latest_s,
                "dropped_by_client": {str(c): d for c, d in self.dropped_by_client.items()},
                "stragglers": self.stragglers}


@dataclass(frozen=True)
class StreamResult:
    """One stream test's capture (write) or playback (read)."""

    name: str
    op: str
    measurements: Table
    frame_bytes: int
    fps: float
    buffer_frames: int
    points: list[StreamPoint]
    most_by_trial: list[int]        # per trial, the most streams that ran without a drop, every count below them too
                                    # (0: not even the fewest)
    sequential_bytes_per_s: float | None    # one stream's frames' median rate: what a sequential test would say
    format_title: str               # the table's format(s) of this frame and rate, in words ("" for a plan's own)
    cut: list[tuple[int, int]]      # (streams, trial) begun but not every stream ran to its last frame
    clients: int                    # 1, or the ranks of a run of many clients (a count is each client's streams)
    hosts: dict[int, str]           # many clients: each rank's host
    # frames not counted: of a stream that did not run to its last frame (a measurement cut by an interruption,
    # done again on resume, or a trial left out)
    left_out: int = 0
    burst: Burst | None = None      # the smallest count that dropped: the drive's rate after its burst (burst.py)
    wrong_way: list[tuple[int, int, int]] = field(default_factory=list)   # (trial, dropped, a larger clean count)
    # playbacks: each group's wait for a quiet drive before it, (streams, trial, seconds, went quiet) (run/quiet.py)
    quiet_waits: list[tuple[int, int, float, bool]] = field(default_factory=list)
    kind: str = "stream"

    @property
    def carried_by_burst(self) -> list[int]:
        """The counts that ran without a drop in every trial though they need more than the drive sustained."""
        clean = [p.streams for p in self.points if not p.dropped]
        return carried_by_burst(clean, self.stream_bytes_per_s * self.clients, self.burst)

    @property
    def n(self) -> int:
        """The frames counted: every stream's last attempt, in the groups that ran whole."""
        return sum(p.frames for p in self.points)

    @property
    def stream_bytes_per_s(self) -> float:
        return self.frame_bytes * self.fps

    @property
    def most(self) -> int:
        """The most streams that ran without a drop in every trial."""
        return min(self.most_by_trial) if self.most_by_trial else 0

    @property
    def promised(self) -> int | None:
        """The streams a sequential rate alone would promise: that rate over one stream's."""
        if self.sequential_bytes_per_s is None:
            return None
        return int(self.sequential_bytes_per_s // self.stream_bytes_per_s)

    @property
    def action(self) -> str:
        return "capture" if self.op == "write" else "playback"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "kind": self.kind, "n": self.n, "rate_bytes_per_s": None,
                "latency_s": None, "outliers": [], "cache_suspects": [], "fast_outliers": [],
                "drift": {"detected": False}, "frame_bytes": self.frame_bytes, "fps": self.fps,
                "buffer_frames": self.buffer_frames, "format": self.format_title,
                "stream_bytes_per_s": self.stream_bytes_per_s,
                "most_streams": self.most, "most_streams_by_trial": self.most_by_trial, "clients": self.clients,
                "sequential_bytes_per_s": self.sequential_bytes_per_s, "promised_streams": self.promised,
                "burst": self.burst.to_json() if self.burst is not None else None,
                "carried_by_burst": self.carried_by_burst,
                "wrong_way": [{"trial": t, "dropped": a, "clean": b} for t, a, b in self.wrong_way],
                "points": [p.to_json() for p in self.points]}


@dataclass(frozen=True)
class _Stream:
    """One stream's frames in its last attempt: when each began and ended (ns), its bytes."""

    start_ns: np.ndarray
    end_ns: np.ndarray
    seconds: np.ndarray


def frames_by_stream(rows: Table) -> dict[tuple[int, int, int, int], _Stream]:
    """Per (streams, trial, client, stream), the frames of its last attempt (a resumed run measured a group again)
    that ran to its last frame; streams cut short are left out. The client is the rank (0 for a run of one)."""
    frames = rows.take(np.flatnonzero(_frames(rows)))
    out: dict[tuple[int, int, int, int], _Stream] = {}
    for (n, trial, rank, stream), idx in frames.groups("streams", "trial", "rank", "stream").items():
        part = frames.take(idx)
        started = np.array(part.col("started_s"), dtype=float)
        last = part.take(np.flatnonzero(started == np.nanmax(started))) if np.isfinite(started).any() else part
        chunk = np.array(last.col("chunk"), dtype=np.int64)
        order = np.argsort(chunk, kind="stable")
        frame = int(last.value(0, "granularity_bytes"))
        expected = int(last.value(0, "size_bytes")) // frame if frame > 0 else -1
        if len(np.unique(chunk)) != expected or len(chunk) != expected:
            continue
        out[(int(n), int(trial), int(rank or 0), int(stream))] = _Stream(
            np.array(last.col("start_ns"), dtype=np.int64)[order], np.array(last.col("end_ns"), dtype=np.int64)[order],
            np.array(last.col("seconds"), dtype=float)[order])
    return out


def clients_of(rows: Table) -> list[int]:
    """The clients whose rows these are: the ranks, or [0] for a run of one client."""
    rank = _number(rows, "rank")
    return sorted({int(r) for r in rank[np.isfinite(rank)]}) or [0]


def _number(rows: Table, name: str) -> np.ndarray:
    """A column as floats, NaN where it is empty."""
    return np.array([np.nan if v is None else v for v in rows.col(name)], dtype=float)


def _quiet_waits(rows: Table) -> list[tuple[int, int, float, bool]]:
    """Each group's wait for a quiet drive (its streams' own rows, the longest of them), where one was made. The
    own rows are picked by column, not row by row: a playback's frames are most of a large run's rows."""
    out: dict[tuple[int, int], tuple[float, bool]] = {}
    wait = _number(rows, "quiet_wait_s")
    # a stream's own row (no chunk); a received file's wait that is no time (negative, NaN, endless) is not one
    with np.errstate(invalid="ignore"):
        own = np.isnan(_number(rows, "chunk")) & np.isfinite(wait) & (wait >= 0) & np.isfinite(_number(rows, "streams"))
    for k in np.flatnonzero(own):
        m = rows.row(int(k))
        assert m.frames is not None and m.frames.streams is not None
        key = (int(m.frames.streams), int(m.trial))
        seconds, quiet = out.get(key, (0.0, True))
        out[key] = (max(seconds, float(wait[k])), quiet and m.quiet is not False)
    return [(n, t, s, q) for (n, t), (s, q) in sorted(out.items())]


def _frames(rows: Table) -> np.ndarray:
    """The rows that are frames of a stream: a chunk, with its rate, stream count, stream and buffer; a count of
    streams a plan can ask for (1 to MAX_STREAMS) and a stream among them (a received file's row claiming 10^9
    streams or none is no frame: the points and tables are laid out stream by stream)."""
    streams, stream = _number(rows, "streams"), _number(rows, "stream")
    with np.errstate(invalid="ignore"):
        counted = (streams >= 1) & (streams <= MAX_STREAMS) & (stream >= 0) & (stream < streams)
    return counted & np.all([np.isfinite(_number(rows, c)) for c in ("chunk", "fps", "buffer_frames", "start_ns",
                                                                     "end_ns")], axis=0)


DISTRIBUTION_POINTS = 2000


def _spread(seconds: np.ndarray) -> list[float]:
    """Frame times sorted, as at most DISTRIBUTION_POINTS evenly spaced quantiles (a long stream has 100,000)."""
    ordered = np.sort(seconds)
    if len(ordered) > DISTRIBUTION_POINTS:
        ordered = np.quantile(ordered, np.linspace(0, 1, DISTRIBUTION_POINTS))
    return [float(v) for v in ordered]


def lateness_s(stream: _Stream, fps: float) -> np.ndarray:
    """Each frame's end after its frame time (t0 + (k + 1) / fps), in seconds; negative where it was early."""
    k = np.arange(len(stream.end_ns))
    due_ns = stream.start_ns[0] + (k + 1) * (1e9 / fps)
    return (stream.end_ns - due_ns) / 1e9


def group_dropped(rows: Table, streams: int, trial: int, clients: list[int]) -> int | None:
    """The frames one group (a stream count's trial, of one op, every client's streams) dropped; None where a
    stream of it, of any of the clients, did not run to its last frame. What a search for the most streams asks
    after each group it runs."""
    rows = rows.take(np.flatnonzero(_frames(rows) & (_number(rows, "fps") > 0) & (_number(rows, "streams") == streams)
                                    & (_number(rows, "trial") == trial)))
    if not len(rows):
        return None
    fps, allowed_s = float(rows.value(0, "fps")), int(rows.value(0, "buffer_frames")) / float(rows.value(0, "fps"))
    found = frames_by_stream(rows)
    keys = [(streams, trial, c, s) for c in clients for s in range(streams)]
    if any(k not in found for k in keys):
        return None
    return int(sum((lateness_s(found[k], fps) > allowed_s).sum() for k in keys))


def next_count(tried: dict[int, bool], most: int) -> int | None:
    """A search's next stream count, from the counts tried so far (count -> it dropped): double from 1 while a
    count runs clean, then halve the gap between the largest clean count and the smallest that dropped; None when
    they are neighbours (or the most allowed ran clean, or even 1 dropped)."""
    clean = max((n for n, dropped in tried.items() if not dropped), default=0)
    bad = min((n for n, dropped in tried.items() if dropped), default=most + 1)
    if bad - clean <= 1:
        return None
    return min(2 * clean, most) if bad > most and clean else (clean + bad) // 2 if clean else 1


def results_of_run(rows: Table) -> dict[tuple[str, str], StreamResult | None]:
    """Each (test, op) of one run's stream tests: its result, or None where no trial of it ran whole (what a
    series and a comparison of runs read of a run)."""
    streams = rows.take(np.flatnonzero(rows.col("kind") == "stream")).valid()
    out: dict[tuple[str, str], StreamResult | None] = {}
    for (name, op), idx in streams.groups("test", "op").items():
        out[(str(name), str(op))] = stream_result(str(name), str(op), streams.take(idx))
    return out


def stream_result(name: str, op: str, rows: Table) -> StreamResult | None:
    """The result of one test's capture or playback; None before any group of streams is whole. With many
    clients, a count is each client's streams, every client's at once: a group is whole when every client's
    streams ran to their last frame, and its frames are all of theirs."""
    waits = _quiet_waits(rows)
    rows = rows.take(np.flatnonzero(_frames(rows) & (_number(rows, "fps") > 0)))
    streams = frames_by_stream(rows)
    if not streams:
        return None
    fps, buffer = float(rows.value(0, "fps")), int(rows.value(0, "buffer_frames"))
    frame_bytes = int(rows.value(0, "granularity_bytes"))
    allowed_s = buffer / fps
    clients = clients_of(rows)
    counts = sorted({n for n, _, _, _ in streams})
    trials = sorted({t for _, t, _, _ in streams})
    whole = {(n, t) for n in counts for t in trials
             if all((n, t, c, s) in streams for c in clients for s in range(n))}
    points, trials_of, burst = [], [], None
    for n in counts:
        mine = sorted(t for m, t in whole if m == n)
        if not mine:
            continue
        trials_of.append(mine)
        late = {(t, c, s): lateness_s(streams[(n, t, c, s)], fps) for t in mine for c in clients for s in range(n)}
        every = np.concatenate(list(late.values()))
        seconds = np.concatenate([streams[(n, *k)].seconds for k in late])
        dropped = {k: int((x > allowed_s).sum()) for k, x in late.items()}
        if burst is None and any(dropped.values()):      # the smallest count that dropped shows the drive's rate
            keys = [(c, s) for c in clients for s in range(n)]
            burst = burst_of(n, [(np.concatenate([streams[(n, t, *k)].start_ns for k in keys]),
                                  np.concatenate([streams[(n, t, *k)].end_ns for k in keys]),
                                  np.concatenate([late[(t, *k)] for k in keys])) for t in mine], frame_bytes)
        dropped_by_trial = [sum(d for (t, _, _), d in dropped.items() if t == trial) for trial in mine]
        by_client = {c: sum(d for (_, cc, _), d in dropped.items() if cc == c) for c in clients}
        # a straggler drops where another client drops nothing: the client, not the store, is short
        stragglers = [c for c in clients if by_client[c]] if len(clients) > 1 and min(by_client.values()) == 0 \
            else []
        worst = max(late, key=lambda k: (dropped[k], late[k].max(), -k[0]))
        trace, trace_late = streams[(n, *worst)], late[worst]
        points.append(StreamPoint(
            streams=n, trials=len(mine), frames=len(every), on_time=int((every <= 0).sum()),
            late=int(((every > 0) & (every <= allowed_s)).sum()), dropped=int((every > allowed_s).sum()),
            dropped_by_trial=dropped_by_trial,
            frame_s={**{q: float(np.quantile(seconds, p)) for q, p in QUANTILES.items()}, "max": float(seconds.max())},
            latest_s=float(every.max()), frames_sorted_s=_spread(seconds),
            trace_s=[float(v) for v in (trace.start_ns - trace.start_ns[0]) / 1e9],
            trace_late_s=[float(v) for v in trace_late], trace_dropped=[bool(v) for v in trace_late > allowed_s],
            dropped_by_client=by_client, stragglers=stragglers))
    if not points:      # a stream ran to its end, but no group of them whole (a run cut in its first group)
        return None
    # per trial in which the fewest streams ran whole: the most streams such that that count and every count below
    # it that ran in the trial ran whole without a drop (a count that dropped ends it, though a larger one may have
    # been lucky; a search runs only the counts it asks for)
    drops = {(p.streams, t): d for p, ts in zip(points, trials_of) for t, d in zip(ts, p.dropped_by_trial)}
    most_by_trial = []
    for t in trials:
        if (points[0].streams, t) not in drops:
            continue
        most = 0
        for p in points:
            if (p.streams, t) not in drops:
                continue
            if drops[(p.streams, t)]:
                break
            most = p.streams
        most_by_trial.append(most)
    begun = {(int(n), int(t)) for n, t in rows.groups("streams", "trial")}
    # what a sequential rate alone promises: one stream's frames alone (one client, one stream)
    one = [streams[(1, t, clients[0], 0)] for t in trials if (1, t) in whole] if len(clients) == 1 else []
    with np.errstate(divide="ignore"):     # a frame of no time is no rate (read as none below)
        rates = np.concatenate([frame_bytes / s.seconds for s in one]) if one else None
    sequential = float(np.median(rates)) if rates is not None and np.isfinite(rates).all() else None
    hosts = {}
    for (rank, host), _ in rows.groups("rank", "host").items():
        if rank is not None and host:
            hosts[int(rank)] = str(host)
    return StreamResult(name, op, rows, frame_bytes, fps, buffer, points, most_by_trial, sequential,
                        formats.named(frame_bytes, fps, FRAME_ALIGN_BYTES), sorted(begun - whole), len(clients),
                        hosts, left_out=len(rows) - sum(p.frames for p in points), burst=burst,
                        wrong_way=wrong_way(drops), quiet_waits=waits)


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    result = stream_result(name, op, rows)
    return lambda: [result] if result is not None else []

