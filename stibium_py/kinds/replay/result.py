"""A replay test's result: the replay's elapsed time and its time in calls, each the median over trials with its
interval; by kind of call its count, bytes, time in calls (its share of all of it) and latency percentiles from
every trial's histogram together; what spaced the calls (think time, waits on other threads, lateness); the calls
whose outcome differed from the recording's; the slowest calls (docs/methods.md, "Replays")."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...analysis.estimate import Estimate, median_estimate
from ...analysis.histogram import HistogramError, LatencyHistogram
from ...rundir.table import Table

QUANTILES = {"lat_p50_s": 0.5, "lat_p99_s": 0.99, "lat_p999_s": 0.999}
# the kinds of call in the groups a reader thinks in: what moves data, what makes it durable, what the cache is
# told, what names files
GROUPS = {"read": "reads", "write": "writes", "copy": "writes", "fsync": "syncs", "fdatasync": "syncs",
          "sync_range": "syncs", "syncfs": "syncs", "fullsync": "syncs",
          **{f"advise_{a}": "cache advice" for a in ("normal", "random", "sequential", "willneed", "dontneed",
                                                     "noreuse")}}
SLOWEST_SHOWN = 10


@dataclass(frozen=True)
class CallKind:
    """One kind of call over the trials: its count and bytes a trial (medians), its time in calls a trial (median
    with its interval) and share of every call's time, its latency from every trial's calls together."""

    call: str
    count: int
    bytes: int
    in_calls_s: Estimate
    share: float                     # of the time in calls, medians' ratio
    latency_s: dict[str, float | None]
    mismatched: int                  # over every trial

    @property
    def group(self) -> str:
        return GROUPS.get(self.call, "metadata")

    def to_json(self) -> dict[str, Any]:
        return {"call": self.call, "group": self.group, "count": self.count, "bytes": self.bytes,
                "in_calls_s": self.in_calls_s.as_dict(), "share": self.share, **self.latency_s,
                "mismatched": self.mismatched}


@dataclass(frozen=True)
class ReplayResult:
    name: str
    measurements: Table
    elapsed_s: Estimate              # the replay, its threads' release to the last one's end
    in_calls_s: Estimate             # every thread's time in calls, summed
    think_s: float                   # medians over trials
    waited_s: float
    calls: int                       # replayed a trial
    threads: int
    timing: str                      # as-fast, as-fast-think, as-recorded
    kinds: list[CallKind]            # by time in calls, the most first
    late_calls: int                  # as-recorded: the most late calls of a trial
    late_max_s: float | None
    mismatched: int                  # over every trial
    first_mismatch: int | None       # its index in the trace's calls
    slowest: list[tuple[int, float]]     # (index in the trace, seconds), every trial's, the slowest first
    layout_bytes: int                # the files the program met, laid out before each trial
    clients: int = 1                 # many clients: each replayed its own copy; a trial's elapsed is the slowest's
    op: str = "replay"
    kind: str = "replay"

    @property
    def n(self) -> int:
        return len(self.measurements)

    @property
    def by_group(self) -> list[tuple[str, float]]:
        """The share of the time in calls by group (reads, writes, syncs, cache advice, metadata), the most first."""
        shares: dict[str, float] = {}
        for k in self.kinds:
            shares[k.group] = shares.get(k.group, 0.0) + k.share
        return sorted(shares.items(), key=lambda kv: -kv[1])

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.elapsed_s.estimate if self.elapsed_s.estimate > 0 else math.nan

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "kind": "replay", "n": self.n, "rate_bytes_per_s": None,
                "latency_s": None, "outliers": [], "cache_suspects": [], "fast_outliers": [],
                "drift": {"detected": False}, "elapsed_s": self.elapsed_s.as_dict(),
                "in_calls_s": self.in_calls_s.as_dict(), "think_s": self.think_s, "waited_s": self.waited_s,
                "calls": self.calls, "threads": self.threads, "timing": self.timing,
                "kinds": [k.to_json() for k in self.kinds], "late_calls": self.late_calls,
                "late_max_s": self.late_max_s, "mismatched": self.mismatched, "first_mismatch": self.first_mismatch,
                "slowest": [list(s) for s in self.slowest], "layout_bytes": self.layout_bytes,
                "clients": self.clients}


def replay_result(name: str, rows: Table, resamples: int, seed: int, confidence: float) -> ReplayResult | None:
    """A replay test from its valid rows: its trials' rows (access empty) and each kind's; None where no trial's
    row is among them. With many clients each trial's rows of every client are taken together first (_together)."""
    rank = rows.col("rank").astype(float)
    clients = len(set(rank[np.isfinite(rank)].astype(int)))
    if clients > 1:
        rows = _together(rows, clients)
    access = np.asarray(rows.access).astype(str)
    trials = rows.take(np.flatnonzero(access == ""))
    if len(trials) == 0:
        return None
    elapsed = median_estimate(trials.seconds.astype(float), resamples, seed, confidence, "the replay's elapsed time")
    in_calls_all = trials.col("in_calls_s").astype(float)
    in_calls = median_estimate(in_calls_all, resamples, seed, confidence, "the time in calls")
    kept = set(int(t) for t in trials.trial)           # a kind's rows of a trial whose own row is valid
    kinds = []
    for call in dict.fromkeys(str(a) for a in access if a):
        idx = np.flatnonzero((access == call) & np.isin(rows.trial.astype(int), list(kept)))
        if not len(idx):
            continue
        rs = rows.take(idx)
        spent = rs.seconds.astype(float)
        kinds.append(CallKind(
            call=call, count=int(np.median(rs.requests.astype(float))), bytes=int(np.median(rs.bytes.astype(float))),
            in_calls_s=median_estimate(spent, resamples, seed, confidence, f"{call} time in calls"),
            share=float(np.median(spent)) / in_calls.estimate if in_calls.estimate > 0 else 0.0,
            latency_s=_latency(rs), mismatched=int(np.nansum(rs.col("mismatched_calls").astype(float)))))
    kinds.sort(key=lambda k: -k.in_calls_s.estimate)
    late = trials.col("late_calls").astype(float)
    late_max = trials.col("late_max_s").astype(float)
    mismatched = trials.col("mismatched_calls").astype(float)
    firsts = trials.col("first_mismatch").astype(float)
    return ReplayResult(
        name=name, measurements=trials, elapsed_s=elapsed, in_calls_s=in_calls,
        think_s=_median(trials.col("think_s")), waited_s=_median(trials.col("waited_s")),
        calls=int(np.median(trials.requests.astype(float))), threads=int(trials.threads[0]),
        timing=str(trials.col("replay_timing")[0] or ""), kinds=kinds,
        late_calls=int(np.nanmax(late)) if np.isfinite(late).any() else 0,
        late_max_s=float(np.nanmax(late_max)) if np.isfinite(late_max).any() else None,
        mismatched=int(np.nansum(mismatched)),
        first_mismatch=int(np.nanmin(firsts)) if np.isfinite(firsts).any() else None,
        slowest=_slowest(trials.col("slowest_calls")), layout_bytes=int(trials.size_bytes[0]), clients=max(1, clients))


def _together(rows: Table, clients: int) -> Table:
    """Each trial's rows of every client as one (a trial's row, and a row for each kind of call): what every client
    replayed together, of a trial that every client finished. A trial's elapsed time is the slowest client's; calls,
    bytes and times in calls are summed, as are the waits and mismatches; the latest call's lateness is the latest of
    any; a kind's latencies are every client's calls in one histogram."""
    out = []
    for (_, call), idx in rows.groups("trial", "access").items():
        step = rows.take(idx)
        if len(step) < clients:
            continue
        kind = bool(str(call))

        def summed(name: str) -> float | None:
            values = step.col(name).astype(float)
            return float(values.sum()) if np.isfinite(values).all() else None

        def most(name: str) -> float | None:
            values = step.col(name).astype(float)
            return float(np.nanmax(values)) if np.isfinite(values).any() else None

        merged = None
        if kind:
            try:
                merged = LatencyHistogram.merged(step.col("lat_hist_ns").tolist())
            except HistogramError:
                merged = None
        latency: dict[str, Any] = {k: merged.quantile_s(q) for k, q in QUANTILES.items()} \
            if merged is not None and merged.n else {}
        seconds = step.seconds.astype(float)
        out.append(step.row(0)._replace(
            seconds=float(seconds.sum()) if kind else float(seconds.max()),
            bytes=int(step.bytes.astype(float).sum()), requests=int(step.requests.astype(float).sum()),
            in_calls_s=summed("in_calls_s"), think_s=summed("think_s"), waited_s=summed("waited_s"),
            late_calls=None if kind else int(np.nansum(step.col("late_calls").astype(float))),
            late_max_s=most("late_max_s"), lat_max_s=most("lat_max_s"),
            mismatched_calls=int(np.nansum(step.col("mismatched_calls").astype(float))),
            lat_hist_ns=merged.to_text() if merged is not None and merged.n else None,
            rank=None, host=None, **latency))
    return Table.from_rows(out)


def _median(values: Any) -> float:
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if len(v) else 0.0


def _latency(rs: Table) -> dict[str, float | None]:
    """Every trial's calls of a kind in one histogram; the helper's percentiles (medians) where one is missing."""
    try:
        hist = LatencyHistogram.merged(rs.col("lat_hist_ns"))
    except HistogramError:
        hist = None
    slowest = rs.col("lat_max_s").astype(float)
    top = float(slowest[np.isfinite(slowest)].max()) if np.isfinite(slowest).any() else None
    if hist is None or hist.n == 0:
        medians = {k: rs.col(k).astype(float) for k in QUANTILES}
        return {**{k: float(np.median(v[np.isfinite(v)])) if np.isfinite(v).any() else None
                   for k, v in medians.items()}, "lat_max_s": top}
    return {**{k: hist.quantile_s(q) for k, q in QUANTILES.items()}, "lat_max_s": top}


def _slowest(cells: Any) -> list[tuple[int, float]]:
    """The slowest calls of every trial, held to their form (a stranger's file may hold anything): the slowest
    SLOWEST_SHOWN, each call once (its slowest trial)."""
    found: dict[int, float] = {}
    for cell in cells:
        try:
            pairs = json.loads(cell) if isinstance(cell, str) and len(cell) < 4096 else []
        except ValueError:
            continue
        for pair in pairs if isinstance(pairs, list) else []:
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and pair[0] >= 0 \
                    and isinstance(pair[1], (int, float)) and math.isfinite(pair[1]) and pair[1] >= 0:
                found[pair[0]] = max(found.get(pair[0], 0.0), float(pair[1]))
    return sorted(found.items(), key=lambda kv: -kv[1])[:SLOWEST_SHOWN]
