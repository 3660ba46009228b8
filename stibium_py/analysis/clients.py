"""Many clients (a run under mpiexec): the store's aggregate and each client's share.

- The aggregate of a step (one operation every rank did together, between two barriers; a sustained test's
  chunk) is IOR's: all bytes over the time from the first client's start to the last client's end, on rank
  0's clock (each row's run_start_s and run_end_s, placed there by the runner). `aggregate` turns each step
  into one measurement of all clients together, so that the summary's one estimator per number, the report,
  compare and series read the aggregate exactly as they read one client's run (intervals across trials,
  sizes or steps as for any run).
- Each client's own rate per point is the same estimator on that rank's rows (`client_rates`).
- A straggler is a client whose rate is low among the clients by Tukey's fences on log(rate / median rate),
  the machinery that flags outliers (outliers.py); it is flagged, never dropped: the aggregate counts it.
- First and last done: per step, when the first and the last client finished, from the step's first start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import registry
from ..rundir.measurement import ALL_CLIENTS
from ..rundir.table import Table
from . import outliers
from .histogram import HistogramError, LatencyHistogram
from .rates import PointKey, by_point, draw_inputs, key_json, label, point_rate
from .settings import Settings
from .warnings import Notice


def ranks_of(rows: Table) -> list[int]:
    """The ranks that measured, in order; empty for a run of one client."""
    rank = rows.col("rank").astype(float)
    return sorted({int(r) for r in rank[np.isfinite(rank)]})


def aggregate(rows: Table, ranks: int) -> Table:
    """Each step that every rank finished, as one measurement of all clients together (see the module's
    doc); a step some rank did not finish is left out (its rows carry an error). The rows of a kind whose
    analysis reads each client's rows (KindSpec.aggregated false: a stream's frames) follow, as they are."""
    ok = rows.valid()
    if not len(ok):
        return Table.empty()
    kinds = ok.col("kind").astype(str)
    apart = np.isin(kinds, [k for k in np.unique(kinds) if not _aggregated(k)])
    if apart.any():
        steps = aggregate(ok.take(np.flatnonzero(~apart)), ranks)        # of no rows: none
        return Table.concat([steps, ok.take(np.flatnonzero(apart))])
    seq = ok.col("seq").astype(np.int64)
    chunk = np.nan_to_num(ok.col("chunk").astype(float), nan=-1.0).astype(np.int64)
    _, first, inverse = np.unique(np.stack([seq, chunk]), axis=1, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    # each step's rows at once (a sort, not a scan of every row per step)
    members = np.split(np.argsort(inverse, kind="stable"), np.cumsum(np.bincount(inverse))[:-1])
    start, end = ok.col("run_start_s").astype(float), ok.col("run_end_s").astype(float)
    out = []
    for g in np.argsort(first):                       # steps in the order they were measured
        idx = members[g]
        if len(idx) < ranks or not (np.isfinite(start[idx]).all() and np.isfinite(end[idx]).all()):
            continue
        out.append(_together(ok.take(idx), float(start[idx].min()), float(end[idx].max())))
    return Table.from_rows(out)


def _together(step: Table, first_start_s: float, last_end_s: float) -> Any:
    """One step's rows as one measurement: bytes and counts summed, the time from the first start to the last
    end, the page cache's evidence kept at its worst (any cached byte, the most resident file), the
    requests' latencies merged."""
    row = step.row(0)

    def total(name: str) -> Any:
        values = step.col(name).astype(float)
        return int(values.sum()) if np.isfinite(values).all() else None

    honoured = step.col("direct_honoured").astype(float)
    resident = step.col("resident_before").astype(float)
    latency = _merged_latencies(step, "lat")
    if row.load is not None:        # an open loop: the response times merged as the service times are
        requests = step.col("requests").astype(float)
        means = step.col("resp_mean_s").astype(float)
        latency.update(_merged_latencies(step, "resp"), resp_max_s=_extreme(step, "resp_max_s", np.nanmax),
                       resp_mean_s=float((means * requests).sum() / requests.sum())
                       if np.isfinite(means).all() and requests.sum() > 0 else None,
                       # lateness percentiles do not merge (the helper gives no histogram of them): the worst
                       issue_late_p50_s=None, issue_late_p99_s=_extreme(step, "issue_late_p99_s", np.nanmax),
                       issue_late_max_s=_extreme(step, "issue_late_max_s", np.nanmax),
                       late_issues=total("late_issues"), unscheduled=total("unscheduled"))
    moved = int(step.col("bytes").sum())
    return row._replace(
        # a rate fitted against the size (a files test's): the step's size is every client's file together
        size_bytes=moved if _fitted_on_size(str(row.kind)) else row.size_bytes,
        bytes=moved, seconds=last_end_s - first_start_s,
        started_s=float(np.nanmin(step.col("started_s").astype(float))), file=ALL_CLIENTS,
        requests=total("requests"), syscalls=total("syscalls"), cached_bytes=total("cached_bytes"),
        entries=total("entries"), dirs_made=total("dirs_made"), cloned=total("cloned"),   # a tree's phase
        direct_honoured=None if not np.isfinite(honoured).all() else bool(honoured.min() > 0),
        resident_before=None if not np.isfinite(resident).any() else float(np.nanmax(resident)),
        lat_min_s=_extreme(step, "lat_min_s", np.nanmin), lat_max_s=_extreme(step, "lat_max_s", np.nanmax),
        lat_mean_s=None, io_seconds=None, sync_seconds=None, open_seconds=None, close_seconds=None,
        start_ns=None, end_ns=None, run_start_s=first_start_s, run_end_s=last_end_s,
        rank=None, host=None, written_by=None, offset_bytes=None, **latency,
        # a stonewall: the least any client had done by it, the most any added after it (the wear-out brought
        # every client to the same count), and the longest any took to reach it (none without a stonewall)
        stonewall_requests=_whole(step, "stonewall_requests", np.nanmin),
        wearout_requests=_whole(step, "wearout_requests", np.nanmax),
        stonewall_seconds=_extreme(step, "stonewall_seconds", np.nanmax))


def _merged_latencies(step: Table, prefix: str) -> dict[str, Any]:
    """The step's clients' histograms of one kind of latency (lat: service, resp: response) merged bin by bin, and
    its percentiles from them (exactly those of every client's requests pooled, to a bin's width)."""
    try:
        merged = LatencyHistogram.merged(step.col(f"{prefix}_hist_ns").tolist())
    except HistogramError:
        merged = None
    whole = merged is not None and merged.n > 0
    out: dict[str, Any] = {f"{prefix}_{name}_s": merged.quantile_s(q) if merged is not None and whole else None
                           for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))}
    out[f"{prefix}_hist_ns"] = merged.to_text() if merged is not None and whole else None
    return out


def _aggregated(kind: str) -> bool:
    spec = registry.find(kind)
    return spec is None or spec.aggregated


def _fitted_on_size(kind: str) -> bool:
    """A kind whose points' rate is fitted against the file's size (PointRule.x_column)."""
    spec = registry.find(kind)
    return spec is not None and spec.points is not None and spec.points.x_column == "size_bytes"


def _extreme(step: Table, name: str, pick: Any) -> float | None:
    values = step.col(name).astype(float)
    return float(pick(values)) if np.isfinite(values).any() else None


def _whole(step: Table, name: str, pick: Any) -> int | None:
    value = _extreme(step, name, pick)
    return None if value is None else int(value)


@dataclass(frozen=True)
class ClientRate:
    """One client's rate of one point, with its interval (the summary's estimator on that rank's rows)."""

    rank: int
    host: str
    rate: float
    low: float
    high: float
    n: int
    straggler: str          # '' or Tukey's 'low mild' / 'low severe'

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "host": self.host, "rate_bytes_per_s": _num(self.rate), "low": _num(self.low),
                "high": _num(self.high), "n": self.n, "straggler": self.straggler or None}


@dataclass(frozen=True)
class ClientPoint:
    """A point's clients: each one's rate, and when the first and the last finished (median over the
    point's steps, seconds after the step's first start)."""

    key: PointKey
    clients: list[ClientRate]
    first_done_s: float
    last_done_s: float

    @property
    def slowest(self) -> ClientRate | None:
        finite = [c for c in self.clients if math.isfinite(c.rate)]
        return min(finite, key=lambda c: c.rate) if finite else None

    def to_json(self) -> dict[str, Any]:
        return {**key_json(self.key), "label": label(self.key), "first_done_s": _num(self.first_done_s),
                "last_done_s": _num(self.last_done_s), "clients": [c.to_json() for c in self.clients]}


@dataclass(frozen=True)
class ClientsSummary:
    """What the clients of a run did: how many, on which hosts, the clock offsets, every point's clients."""

    ranks: int
    hosts: list[str]
    read_shift: int
    clocks: list[dict[str, Any]]
    points: list[ClientPoint] = field(default_factory=list)
    # each client's steps, for the timeline: (rank, test, op, start_s, end_s) on rank 0's clock, the first
    # TIMELINE_STEPS steps of the run (every row is in measurements.csv)
    timeline: list[tuple[int, str, str, float, float]] = field(default_factory=list)

    @property
    def stragglers(self) -> list[tuple[ClientPoint, ClientRate]]:
        return [(p, c) for p in self.points for c in p.clients if c.straggler]

    def to_json(self) -> dict[str, Any]:
        return {"ranks": self.ranks, "hosts": self.hosts, "read_shift": self.read_shift, "clocks": self.clocks,
                "points": [p.to_json() for p in self.points],
                "stragglers": [{"point": label(p.key), "rank": c.rank, "host": c.host} for p, c in self.stragglers]}


# Clients of one store seldom agree better than this (log units, about 10 %): the fences' IQR is floored there,
# so that a client 5 % below three even ones is not a straggler. Simulated (tests/test_clients.py, seed 5, 5 %
# noise): a client at half the rate is flagged in 98.2 % of draws among four clients and 100 % among eight;
# among even clients, 0 % and 0.2 % of draws flag one.
STRAGGLER_IQR_FLOOR = 0.1


def stragglers(rates: np.ndarray) -> np.ndarray:
    """Per client '' or 'low mild' / 'low severe': Tukey's fences on log(rate / the clients' median rate)
    (outliers.py), the IQR floored at STRAGGLER_IQR_FLOOR. Two clients cannot tell which is the odd one:
    none is flagged."""
    rates = np.asarray(rates, float)
    flags = np.full(len(rates), "", dtype=object)
    finite = np.isfinite(rates) & (rates > 0)
    if finite.sum() < 3:
        return flags
    r = np.full(len(rates), np.nan)
    r[finite] = np.log(rates[finite] / np.median(rates[finite]))
    found = outliers.classify(r, outliers.fences(r, STRAGGLER_IQR_FLOOR))
    slow = np.char.startswith(found.astype(str), "low")
    flags[slow] = found[slow]
    return flags


def client_points(rows: Table, s: Settings) -> list[ClientPoint]:
    """Every point's clients (kinds measured as points; a sustained test's clients are in its rows), of the kinds
    whose steps are all clients' together (a replay's clients are taken together in its own result)."""
    valid = rows.valid()
    out = []
    for key, point in by_point(valid).items():
        if not _aggregated(key.kind):
            continue
        per_rank = point.groups("rank")
        rates = []
        for (rank,), idx in sorted(per_rank.items(), key=lambda kv: kv[0][0]):
            mine = point.take(idx)
            kind, x, y = draw_inputs(mine)
            r = point_rate(kind, x, y, 0, s.seed + int(rank), s.confidence).rate
            rates.append((int(rank), str(mine.value(0, "host") or ""), r.estimate, r.low, r.high, len(mine)))
        flags = stragglers(np.array([r[2] for r in rates]))
        first, last = _done_spread(point)
        out.append(ClientPoint(key, [ClientRate(*r, str(f)) for r, f in zip(rates, flags)], first, last))
    return out


def _done_spread(point: Table) -> tuple[float, float]:
    """The median over the point's steps of when its first and its last client finished, from the step's
    first start."""
    firsts, lasts = [], []
    for _, idx in point.groups("seq").items():
        step = point.take(idx)
        start, end = step.col("run_start_s").astype(float), step.col("run_end_s").astype(float)
        if np.isfinite(start).all() and np.isfinite(end).all():
            firsts.append(end.min() - start.min())
            lasts.append(end.max() - start.min())
    return (float(np.median(firsts)), float(np.median(lasts))) if firsts else (math.nan, math.nan)


TIMELINE_STEPS = 400


def timeline(rows: Table) -> list[tuple[int, str, str, float, float]]:
    """Each client's measurements of the first TIMELINE_STEPS steps (a sustained test's file rows, not its
    chunks), in the order measured."""
    valid = rows.valid()
    whole = valid.take(np.flatnonzero(np.isnan(valid.col("chunk").astype(float))))
    seqs = np.unique(whole.col("seq"))[:TIMELINE_STEPS]
    keep = whole.take(np.flatnonzero(np.isin(whole.col("seq"), seqs)))
    start, end = keep.col("run_start_s").astype(float), keep.col("run_end_s").astype(float)
    return [(int(r), str(t), str(o), float(a), float(b)) for r, t, o, a, b in
            zip(keep.col("rank"), keep.col("test"), keep.col("op"), start, end) if math.isfinite(a + b)]


def summarize_clients(rows: Table, clients: dict[str, Any], s: Settings) -> ClientsSummary:
    launches = clients.get("launches") or [{}]
    return ClientsSummary(ranks=int(clients.get("ranks", 1)), hosts=list(clients.get("hosts", [])),
                          read_shift=int(clients.get("read_shift", 1)), clocks=list(launches[-1].get("clocks", [])),
                          points=client_points(rows, s), timeline=timeline(rows))


def straggler_notices(c: ClientsSummary) -> list[Notice]:
    """A warning per straggler (in the report and under the terminal's table alike)."""
    out = []
    for p, cl in c.stragglers:
        others = [x.rate for x in p.clients if x.rank != cl.rank and math.isfinite(x.rate)]
        median = float(np.median(others)) if others else math.nan
        out.append(Notice("warning", f"{p.key.test} ({p.key.op})",
                          f"{label(p.key)}: rank {cl.rank} ({cl.host}) is a straggler ({cl.straggler}): "
                          f"{cl.rate / 1e6:.3g} MB/s against the other clients' median of {median / 1e6:.3g} MB/s; "
                          f"it counts in the aggregate",
                          f"look at rank {cl.rank}'s machine and its path to the store (its link, its mount "
                          f"options, other load on it)"))
    return out


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None
