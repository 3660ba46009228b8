"""Pattern tests: throughput per (op, access, granularity, stride, queue depth, threads) with an
interval of the median over trials, IOPS, latency percentiles (the helper's), the granularity knee
(the smallest granularity whose throughput reaches 90 % of the plateau, the median of the top three
granularities) and the queue-depth knee (the depth beyond which throughput stops growing within its
interval) (docs/methods.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import fills
from ...rundir.table import Table
from ...units import format_size, in_flight_label
from ...analysis import below
from ...analysis.estimate import Estimate
from ...analysis import rates
from ...analysis.fill_rates import FillRate, fill_rates
from .bench import BenchAlone, BenchPair, alone, pairs, road_rows
from ...analysis.histogram import HistogramError, LatencyHistogram
from .load import Load, SloAnswer, load_of, slo_answers
from .steady import Steadiness
from ...analysis.stonewall import Stonewall, stonewall

KNEE_FRACTION = 0.9


def knee(granularities: list[int], throughputs: list[float]) -> int | None:
    if len(granularities) < 2:
        return None
    order = np.argsort(granularities)
    g = np.asarray(granularities)[order]
    t = np.asarray(throughputs, float)[order]
    plateau = float(np.median(np.sort(t)[-3:]))
    for gi, ti in zip(g, t):
        if ti >= KNEE_FRACTION * plateau:
            return int(gi)
    return None


def queue_depth_knee(depths: list[int], throughputs: list[Estimate]) -> int | None:
    """The queue depth beyond which throughput stops growing within its interval: the smallest depth d
    such that no deeper queue's interval lies wholly above d's. None with fewer than two depths."""
    if len(depths) < 2:
        return None
    order = np.argsort(depths)
    d = [int(depths[i]) for i in order]
    t = [throughputs[i] for i in order]
    for k in range(len(d)):
        if all(t[j].low <= t[k].high for j in range(k + 1, len(d))):
            return d[k]
    return d[-1]


@dataclass(frozen=True)
class PatternPoint:
    """One (access, granularity, stride, queue depth, threads) of a pattern test: the median over its
    trials."""

    access: str
    granularity_bytes: int
    stride_bytes: int
    call_bytes: int            # the calls actually made (smaller than the granularity where a request was split)
    throughput: Estimate
    iops: float
    latency_s: dict[str, float | None]   # the helper's per-request percentiles (lat_p50_s ...), medians over trials
    trials: int
    resident_before_max: float
    latency_hist: LatencyHistogram | None = None   # every request of every trial, where the helper gave one
    queue_depth: int = 1
    threads: int = 1
    io_method: str = ""         # how its requests moved (the first trial's; "" in older files)
    memory_share: float | None = None   # reads: the trials' share of memory speed (below.point_share)
    mix: "Mix | None" = None    # mixed: its reads and writes apart
    fill: str = fills.RANDOM    # what its writes put on the disk (a test may measure its points with several)
    load: Load | None = None    # an open loop (a rate): offered against achieved, response beside service times

    @property
    def below_cache(self) -> bool:
        """Served by a cache below the file system: at memory speed with the page cache measured empty."""
        return self.memory_share is not None and self.memory_share >= below.BELOW_SHARE

    @property
    def read_fraction(self) -> float | None:
        return self.mix.read_fraction if self.mix is not None else None

    @property
    def rate_per_s(self) -> float | None:
        """An open loop's offered rate, requests a second each client; None for a closed loop."""
        return self.load.offered_per_s if self.load is not None else None

    @property
    def lat_p50_s(self) -> float | None:
        return self.latency_s.get("lat_p50_s")

    @property
    def in_flight(self) -> int:
        return self.queue_depth * self.threads

    @property
    def iops_estimate(self) -> Estimate:
        return iops_of(self.throughput, self.iops)

    def to_json(self) -> dict[str, Any]:
        return {"access": self.access, "granularity_bytes": self.granularity_bytes, "stride_bytes": self.stride_bytes,
                "queue_depth": self.queue_depth, "threads": self.threads, "io_method": self.io_method,
                "call_bytes": self.call_bytes, "throughput_bytes_per_s": self.throughput.as_dict(), "iops": self.iops,
                "iops_estimate": self.iops_estimate.as_dict(),
                **self.latency_s, "trials": self.trials, "resident_before_max": self.resident_before_max,
                "lat_hist_ns": self.latency_hist.to_text() if self.latency_hist is not None else None,
                "memory_share": self.memory_share, "below_cache": self.below_cache,
                **({"mix": self.mix.to_json()} if self.mix is not None else {}),
                **({"fill": self.fill} if self.fill != fills.RANDOM else {}),
                **({"load": self.load.to_json()} if self.load is not None else {})}


@dataclass(frozen=True)
class Mix:
    """A mixed point's reads and writes: each one's rate over the same intervals as the whole (the median over
    trials of its bytes over the trial's seconds, with its interval), its share of the bytes, and its
    latencies (the helper's percentiles, medians over trials)."""

    read_fraction: float              # as the plan asked, of the requests
    read_rate: Estimate
    write_rate: Estimate
    read_share_bytes: float           # of every trial's bytes together, what its reads moved
    latency_s: dict[str, float | None]

    def to_json(self) -> dict[str, Any]:
        return {"read_fraction": self.read_fraction, "read_bytes_per_s": self.read_rate.as_dict(),
                "write_bytes_per_s": self.write_rate.as_dict(), "read_share_bytes": self.read_share_bytes,
                **self.latency_s}


MIX_LATENCY_KEYS = ("read_lat_p50_s", "read_lat_p99_s", "write_lat_p50_s", "write_lat_p99_s")


def iops_of(throughput: Estimate, iops: float) -> Estimate:
    """A point's IOPS with its interval, from its throughput's: every request of a point moves its granularity, so a
    trial's requests a second are its bytes a second over the same number, and the median over trials and its
    interval scale with it (an open loop's achieved rate, computed apart from the requests before, came to the same
    numbers, named "median of throughput"). iops: the median of the trials' requests a second."""
    factor = iops / throughput.estimate if throughput.estimate else math.nan
    return throughput.scaled(factor, throughput.method.replace("throughput", "IOPS"))


def _mix(rs: Table, fraction: float | None, resamples: int, seed: int, confidence: float) -> Mix | None:
    """The reads and writes of a mixed point's trials (None for a read or a write)."""
    if fraction is None:
        return None
    read, written, seconds = rs.read_bytes, rs.write_bytes, rs.seconds
    rate = (lambda moved: rates.median_rate(np.nan_to_num(moved), seconds, resamples, seed, confidence,
                                             with_draws=False).rate)
    total = float(np.nansum(read) + np.nansum(written))
    return Mix(read_fraction=float(fraction), read_rate=rate(read), write_rate=rate(written),
               read_share_bytes=float(np.nansum(read)) / total if total else math.nan,
               latency_s={k: _median(rs, k) for k in MIX_LATENCY_KEYS})


def _median(rs: Table, key: str) -> float | None:
    vals = rs.col(key)
    vals = vals[np.isfinite(vals)]
    return float(np.median(vals)) if len(vals) else None


LATENCY_KEYS = ("lat_p50_s", "lat_p90_s", "lat_p99_s", "lat_p999_s", "lat_max_s")


def points(rows: Table, resamples: int, seed: int, confidence: float,
           shares: np.ndarray | None = None) -> list[PatternPoint]:
    """The points of one test and op; shares: each measurement's rate as a share of memory's (below.py)."""
    groups = rows.groups("access", "granularity_bytes", "stride_bytes", "queue_depth", "threads", "read_fraction",
                         "fill", "rate_per_s")
    out = []
    for (access, gran, stride, depth, threads, fraction, fill, rate), idx in sorted(
            groups.items(), key=lambda kv: (kv[0][:5], kv[0][5] or 0, (kv[0][6] or fills.RANDOM) != fills.RANDOM,
                                            kv[0][6] or "", kv[0][7] or 0.0)):
        rs = rows.take(idx)
        seconds = rs.seconds
        requests = rs.requests
        iops = np.where(requests > 0, requests, 1.0) / seconds
        calls = rs.largest_syscall_bytes
        calls = calls[calls > 0]
        resident = np.nan_to_num(rs.resident_before, nan=0.0)
        throughput = rates.median_rate(rs.bytes, seconds, resamples, seed, confidence, with_draws=False).rate
        service = _merged_histogram(rs.col("lat_hist_ns"))
        out.append(PatternPoint(access=access, granularity_bytes=int(gran), stride_bytes=int(stride),
                                # rows of an older format lack the call size
                                call_bytes=int(calls.min()) if len(calls) else int(gran),
                                throughput=throughput,
                                iops=float(np.median(iops)), latency_s={k: _median(rs, k) for k in LATENCY_KEYS},
                                trials=len(rs), resident_before_max=float(resident.max()),
                                latency_hist=service, queue_depth=int(depth),
                                threads=int(threads), io_method=rs.io_method[0] or "",
                                memory_share=below.point_share(shares[idx], rs.resident_before.astype(float))
                                if shares is not None else None,
                                mix=_mix(rs, fraction, resamples, seed, confidence), fill=fill or fills.RANDOM,
                                load=load_of(rs, rate, iops_of(throughput, float(np.median(iops))), service)))
    return out


def _merged_histogram(texts: np.ndarray) -> LatencyHistogram | None:
    """The trials' histograms in one; a damaged one leaves the point without (its numbers stand)."""
    try:
        return LatencyHistogram.merged(texts)
    except HistogramError:
        return None


@dataclass(frozen=True)
class Timing:
    """A test by time: what each trial was asked to run, what its warm-ups moved (kept out of the rates), and
    how far past its duration the last request of a trial ended (the requests in flight at the deadline)."""

    duration_s: float
    warmup_s: float
    warmup_bytes: int
    warmup_requests: int
    overrun_max_s: float

    def to_json(self) -> dict[str, Any]:
        return {"duration_s": self.duration_s, "warmup_s": self.warmup_s, "warmup_bytes": self.warmup_bytes,
                "warmup_requests": self.warmup_requests, "overrun_max_s": self.overrun_max_s}


def timing(rows: Table) -> Timing | None:
    """The timing of a test's measurements by time; None for a test of bytes."""
    asked = rows.duration_s
    if not len(rows) or not np.isfinite(asked).any():
        return None
    timed = np.isfinite(asked)
    return Timing(duration_s=float(np.nanmax(asked)), warmup_s=float(np.nanmax(rows.warmup_s)),
                  warmup_bytes=int(np.nansum(rows.warmup_bytes)), warmup_requests=int(np.nansum(rows.warmup_requests)),
                  overrun_max_s=float(np.nanmax(rows.io_seconds[timed] - asked[timed])))


@dataclass(frozen=True)
class PatternResult:
    name: str
    op: str
    measurements: Table
    points: list[PatternPoint]
    knees_bytes: dict[str, int | None]     # per access
    # per (access, granularity, stride, threads, read share) with two or more queue depths: the queue-depth knee
    depth_knees: dict[tuple[str, int, int, int, float | None], int | None] = field(default_factory=dict)
    kind: str = "pattern"
    timing: Timing | None = None        # a test by time
    steady: Steadiness | None = None    # a test by rounds (its points of this op): the rates are of its window
    stonewall: Stonewall | None = None  # a test with a stonewall: what it stopped
    bench: list[BenchPair] = field(default_factory=list)   # bench: fio: each point's bench against its road test
    bench_alone: list[BenchAlone] = field(default_factory=list)   # a job file's points no road-test point matches
    instrument: str = "helper"          # what measured the points (fio for an imported fio result)
    main_fill: str = fills.RANDOM       # the fill of its knees (random data where measured, else its first)
    fill_rates: list[FillRate] = field(default_factory=list)   # a list of fills: each beside the main fill's point
    slo: list[SloAnswer] = field(default_factory=list)   # a target's search: each point shape's answer

    @property
    def n(self) -> int:
        return len(self.measurements)

    @property
    def knee_bytes(self) -> int | None:
        first = "sequential" if "sequential" in self.knees_bytes else next(iter(self.knees_bytes), None)
        return self.knees_bytes.get(first) if first else None

    @property
    def below_cache(self) -> list[PatternPoint]:
        return [p for p in self.points if p.below_cache]

    @property
    def best(self) -> PatternPoint:
        """The fastest point of the main fill (another fill's is set beside it in fill_rates, not in its place)."""
        return max((p for p in self.points if p.fill == self.main_fill), key=lambda p: p.throughput.estimate)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "kind": "pattern", "n": self.n, "rate_bytes_per_s": None,
                "latency_s": None, "outliers": [], "cache_suspects": [], "fast_outliers": [],
                "drift": {"detected": False}, "points": [p.to_json() for p in self.points],
                "knee_bytes": self.knee_bytes, "knees_bytes": self.knees_bytes,
                "queue_depth_knees": [{"access": a, "granularity_bytes": g, "stride_bytes": st, "threads": t,
                                       "queue_depth": d, **({} if f is None else {"read_fraction": f})}
                                      for (a, g, st, t, f), d in self.depth_knees.items()],
                **({"timing": self.timing.to_json()} if self.timing is not None else {}),
                **({"stonewall": self.stonewall.to_json()} if self.stonewall is not None else {}),
                **({"steady": self.steady.to_json()} if self.steady is not None else {}),
                **({"bench": [b.to_json() for b in self.bench]} if self.bench else {}),
                **({"bench_alone": [b.to_json() for b in self.bench_alone]} if self.bench_alone else {}),
                **({"fill_rates": [f.to_json() for f in self.fill_rates]} if self.fill_rates else {}),
                **({"slo": [a.to_json() for a in self.slo]} if self.slo else {}),
                "instrument": self.instrument}


def pattern_result(name: str, op: str, rows: Table, resamples: int, seed: int,
                   confidence: float, shares: np.ndarray | None = None,
                   steady: Steadiness | None = None, band: float = 0.02) -> PatternResult:
    """rows: a test by rounds gives its window's rounds only (steady.window_rows), the verdict beside; a test
    with a bench: its points are the road test's (the helper's), the bench's set beside them (bench.py)."""
    road = road_rows(rows)
    benched = rows.take(np.flatnonzero(~road))
    rows = rows.take(np.flatnonzero(road))
    shares = shares[road] if shares is not None else None
    every = points(rows, resamples, seed, confidence, shares)
    # the knees are of one fill: random data where the test measured it, else its first (analysis/fills.py sets the
    # fills side by side)
    main = fills.RANDOM if any(p.fill == fills.RANDOM for p in every) or not every else every[0].fill
    pts = [p for p in every if p.fill == main and p.load is None]    # an open loop's points have no knee of these
    knees: dict[str, int | None] = {}
    for access in sorted({p.access for p in pts}):
        # strided access: the knee over all strides together (the heatmap shows them apart); the
        # granularity knee at the fewest requests in flight the test has, and a mixed test's at its
        # largest read share
        fewest = min(p.in_flight for p in pts if p.access == access)
        share = max((p.read_fraction for p in pts if p.read_fraction is not None), default=None)
        sel = [p for p in pts if p.access == access and (p.stride_bytes == 0 or access == "strided")
               and p.in_flight == fewest and p.read_fraction == share]
        by_g: dict[int, list[float]] = {}
        for p in sel:
            # the knee is a property of the calls the device saw: their real size, not the plan's
            by_g.setdefault(p.call_bytes or p.granularity_bytes, []).append(p.throughput.estimate)
        knees[access] = knee(list(by_g), [float(np.median(v)) for v in by_g.values()])
    by_depth: dict[tuple[str, int, int, int, float | None], list[PatternPoint]] = {}
    for p in pts:
        by_depth.setdefault((p.access, p.granularity_bytes, p.stride_bytes, p.threads, p.read_fraction), []).append(p)
    depth_knees = {key: queue_depth_knee([p.queue_depth for p in ps], [p.throughput for p in ps])
                   for key, ps in by_depth.items() if len(ps) > 1}
    return PatternResult(name, op, rows, every, knees, depth_knees, timing=timing(rows), steady=steady,
                         stonewall=stonewall(rows), bench=pairs(rows, benched, resamples, seed, confidence, band),
                         bench_alone=alone(rows, benched, resamples, seed, confidence),
                         instrument=str(rows.instrument[0]) if len(rows) else "helper", main_fill=main,
                         fill_rates=fill_rates(every, main, _where), slo=slo_answers(rows, confidence))


def _where(p: PatternPoint) -> str:
    """A point's shape without its fill, for people: "sequential 128 KiB Q1T1"."""
    return " ".join(v for v in (p.access, format_size(p.granularity_bytes),
                                f"+{format_size(p.stride_bytes)}" if p.stride_bytes else "",
                                in_flight_label(p.queue_depth, p.threads) or "Q1T1") if v)
