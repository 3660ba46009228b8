"""A test point and its rate: the one estimator of a point's rate with its interval and its bootstrap draws,
which the summary, a series and compare all call, so that they agree on a number and on when there is
none.

A test point is what two runs can match: a files test and op (its rate from the Theil-Sen line of time
against size), or a pattern test's op, access, granularity, stride, queue depth and threads (the median
throughput over its trials). A sustained test is a curve, not a point: it is compared by its stretches
(comparison.py). Where no interval can be given (one trial, one size, too few repeats per size) the
estimate says why (`PointRate.refused`), and compare's verdict repeats it."""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import fills, registry
from ..registry import Kind
from ..rundir.table import Table
from ..units import format_exact_size, format_per_s_short, format_rate, format_size, in_flight_label, op_label
from . import regression
from .estimate import Estimate, median_estimate
from .stats.bootstrap import bootstrap_medians
from .settings import Settings


class PointKey(NamedTuple):
    """What two runs match: a files test and op has one point (its access empty, one request in flight); a
    mixed point's read share is part of it (None for a read or a write)."""

    test: str
    op: str
    kind: Kind
    access: str
    granularity_bytes: int
    stride_bytes: int
    queue_depth: int
    threads: int
    read_fraction: float | None = None
    instrument: str = "helper"      # helper, or fio (the bench beside the road test)
    fill: str = "random"            # what its writes put on the disk (fills.py)
    rate_per_s: float | None = None  # an open loop: the requests a second each client was offered (None: closed)


KEY_FIELDS = PointKey._fields


@dataclass(frozen=True)
class PointRate:
    """A point's rate with its interval, its latency (files tests: the line's intercept), its bootstrap draws
    (empty where they were not asked for, or where no interval can be given), and why there is no interval
    (None where there is one)."""

    rate: Estimate
    latency: Estimate | None
    draws: np.ndarray
    refused: str | None
    fit: regression.Fit | None = None


ONE_TRIAL = "one trial"
ONE_SIZE = "one size"
FEW_REPEATS = "few repeats"


def line_rate(x: np.ndarray, y: np.ndarray, resamples: int, seed: int, confidence: float,
              latency_interval: bool = True) -> PointRate:
    """The Theil-Sen rate of time against size with its guards (regression.fit_rate): no rate with one size,
    no interval with fewer repeats per size than a calibrated interval needs."""
    fit = regression.fit_rate(x, y, resamples, seed, confidence, latency_interval)
    if not math.isfinite(fit.line.slope_s_per_byte):
        refused: str | None = ONE_SIZE
    elif min(np.unique(x, return_counts=True)[1]) < regression.MIN_REPEATS_FOR_INTERVAL:
        refused = FEW_REPEATS      # the summary's method says how many, and how many an interval needs
    else:
        refused = None
    draws = np.array([])
    if refused is None:
        with np.errstate(divide="ignore"):
            draws = np.where(fit.slopes > 0, 1.0 / fit.slopes, np.nan)
    return PointRate(fit.rate_bytes_per_s, fit.latency_s, draws, refused, fit)


def median_rate(x: np.ndarray, y: np.ndarray, resamples: int, seed: int, confidence: float,
                with_draws: bool = True) -> PointRate:
    """The median throughput over trials (x bytes moved, y seconds) with its order-statistic interval
    (estimate.median_estimate); none from one trial."""
    tput = np.asarray(x, float) / np.asarray(y, float)
    if len(tput) < 2:
        med = float(np.median(tput)) if len(tput) else math.nan
        return PointRate(Estimate(med, math.nan, math.nan, f"median of throughput; no interval: {ONE_TRIAL}",
                                  len(tput)), None, np.array([]), ONE_TRIAL)
    rate = median_estimate(tput, resamples, seed, confidence, "throughput")
    draws = bootstrap_medians(tput, resamples, seed) if with_draws else np.array([])
    return PointRate(rate, None, draws, None)


@dataclass(frozen=True)
class PointRule:
    """How a kind's measurements become points: the key of a group of measurements (by test, op, access,
    granularity, stride, queue depth, threads), the column its rate is computed from against seconds, and
    the estimator."""

    key: Callable[[str, str, str, int, int, int, int, float | None, str, str, float | None], PointKey]
    x_column: str
    estimate: Callable[[np.ndarray, np.ndarray, int, int, float], PointRate]
    name: str                   # the estimate in words
    op_rank: Callable[[str], str]                               # where a point's op sorts among its test's
    rate_format: Callable[[str], Callable[[float | None], str]]     # how its rate is written, by op
    unit: Callable[[str], str]                                  # what its rate counts per second, by op
    flight: Callable[[int, int], str]                           # its requests in flight (queue depth, threads)


def bytes_per_s(op: str) -> Callable[[float | None], str]:
    """A rate of bytes per second (PointRule.rate_format of the kinds that move bytes)."""
    return format_rate


def rated(rows: Table) -> tuple[Table, dict[str, Any]]:
    """Valid measurements as every view rates them (the summary, compare, series): each kind that rates some of its
    rows only keeps those (KindSpec.rated: a pattern test by rounds, its steady window's), with its verdicts by
    test."""
    judged: dict[str, Any] = {}
    for spec in registry.specs():
        if spec.rated is not None:
            rows, verdicts = spec.rated(rows)
            judged.update(verdicts)
    return rows, judged


def by_point(rows: Table) -> dict[PointKey, Table]:
    """The measurements of each test point: tests in the order the run reached them, and inside a test
    by op, access, granularity, stride, queue depth and threads (not the run's shuffled order)."""
    keys: dict[PointKey, list[np.ndarray]] = {}
    for (test, op, kind, access, gran, stride, depth, threads, mix, instrument, fill, rate), idx in rows.groups(
            "test", "op", "kind", "access", "granularity_bytes", "stride_bytes", "queue_depth", "threads",
            "read_fraction", "instrument", "fill", "rate_per_s").items():
        spec = registry.find(kind)
        rule = spec.points if spec is not None else None
        if rule is None:
            continue
        keys.setdefault(rule.key(test, op, access, gran, stride, depth, threads, mix, instrument, fill or fills.RANDOM,
                                 rate), []).append(idx)
    # groups come in the order of their first measurement, so the tests in the order the run reached them; a
    # point's bench right after its road test
    reached = {test: i for i, test in enumerate(dict.fromkeys(key.test for key in keys))}
    return {key: rows.take(np.sort(np.concatenate(keys[key])))
            for key in sorted(keys, key=lambda k: (reached[k.test], _op_order(k), k[2:-4], k.read_fraction or 0.0,
                                                   k.rate_per_s or 0.0,
                                                   k.instrument != "helper", k.instrument, k.fill != fills.RANDOM,
                                                   k.fill))}


def _rule(key: PointKey) -> PointRule | None:
    """The rule of a point's kind; None for a kind this stibium does not know (a stranger's series.json)."""
    spec = registry.find(key.kind)
    return spec.points if spec is not None else None


def _op_order(key: PointKey) -> str:
    """Where a point's op sorts: by name, unless its kind says otherwise (a tree's phases in the order they run)."""
    rule = _rule(key)
    return rule.op_rank(key.op) if rule is not None else key.op


# A point's shape: what it measures, without the test's name or the instrument (a pattern test's point fields; the
# steady-state judge, the bench's pairs, the importer and compare's matching by shape all read it)
SHAPE_FIELDS = ("op", "access", "granularity_bytes", "stride_bytes", "queue_depth", "threads", "read_fraction")


def shape_matches(a: list[PointKey], b: list[PointKey]) -> dict[PointKey, PointKey]:
    """B's points that have no point of the same key in A, matched to A's by their shape (op, access, granularity,
    stride, queue depth, threads, read share) where the names differ: a fio result imported (its jobs' names)
    against a run of stibium's, or tests renamed. A point of the same instrument first, then of any; only where
    exactly one point of each side has the shape. B's key -> A's."""
    left_a = [k for k in a if k not in set(b)]
    left_b = [k for k in b if k not in set(a)]
    out: dict[PointKey, PointKey] = {}
    for same_instrument in (True, False):
        for kb in left_b:
            if kb in out:
                continue
            fits = [ka for ka in left_a if ka not in out.values() and _same_shape(ka, kb, same_instrument)]
            rivals = [k for k in left_b if k not in out and _same_shape(fits[0], k, same_instrument)] \
                if len(fits) == 1 else []
            if len(fits) == 1 and len(rivals) == 1:
                out[kb] = fits[0]
    return out


def _same_shape(a: PointKey, b: PointKey, same_instrument: bool) -> bool:
    return a.kind == b.kind and all(getattr(a, f) == getattr(b, f) for f in SHAPE_FIELDS) and a.fill == b.fill and \
        a.rate_per_s == b.rate_per_s and \
        (a.instrument == b.instrument or not same_instrument)


def key_json(key: PointKey) -> dict[str, Any]:
    """A point's key as the fields of its JSON row; random data, every point's fill unless a plan says otherwise,
    is left out, so that the key of a point is what it was before points had a fill (the history matches by it)."""
    out = key._asdict()
    if out["fill"] == fills.RANDOM:
        del out["fill"]
    if out["rate_per_s"] is None:       # a closed loop's key is what it was before rates
        del out["rate_per_s"]
    return out


def key_of(row: dict[str, Any]) -> PointKey:
    """The key of a JSON row (one made before mixed points lacks the read share: None; before instruments, it
    is the helper's)."""
    return PointKey(*(row.get(f) if f in ("read_fraction", "rate_per_s") else row.get(f, "helper") if f == "instrument"
                      else row.get(f, fills.RANDOM) if f == "fill" else row[f] for f in KEY_FIELDS))


def label(key: PointKey) -> str:
    """A point for people: "rnd-4k read random 4 KiB Q32T1", "patterns write strided 4 KiB +64 KiB"."""
    parts = [key.test, op_label(key.op, key.read_fraction), key.access,
             format_size(key.granularity_bytes) if key.granularity_bytes else "",
             f"+{format_size(key.stride_bytes)}" if key.stride_bytes else "", _flight(key), fills.short(key.fill),
             _at_rate(key), _by(key)]
    return " ".join(p for p in parts if p)


def rate_format(key: PointKey) -> Callable[[float | None], str]:
    """How a point's rate is written: bytes per second, or as its kind says (a tree's files per second)."""
    rule = _rule(key)
    return rule.rate_format(key.op) if rule is not None else format_rate


def unit_of(key: PointKey) -> str:
    """What a point's rate counts per second: bytes, or as its kind says (a tree's files, or names)."""
    rule = _rule(key)
    return rule.unit(key.op) if rule is not None else "bytes"


def _flight(key: PointKey) -> str:
    """Requests in flight (Q32T1), or as its kind says (a tree's threads: T4, nothing for one)."""
    rule = _rule(key)
    return (rule.flight if rule is not None else in_flight_label)(key.queue_depth, key.threads)


def _at_rate(key: PointKey) -> str:
    """An open loop's offered rate: "at 20k/s"; nothing for a closed loop."""
    return f"at {format_per_s_short(key.rate_per_s)}" if key.rate_per_s else ""


def _by(key: PointKey) -> str:
    """The instrument of a point measured by another than the helper: "(fio)"."""
    return "" if key.instrument == "helper" else f"({key.instrument})"


def describe(key: PointKey) -> str:
    """A point in exact numbers, in the units its sizes were given in: "rnd-4k read random 4 KiB Q32T1"."""
    flight = _flight(key)
    parts = [key.test, op_label(key.op, key.read_fraction), key.access,
             format_exact_size(key.granularity_bytes) if key.granularity_bytes else "",
             f"stride {format_exact_size(key.stride_bytes)}" if key.stride_bytes else "", flight,
             fills.short(key.fill), _at_rate(key), _by(key)]
    return " ".join(p for p in parts if p)


def draw_inputs(rows: Table) -> tuple[str, np.ndarray, np.ndarray]:
    """What a point's rate is computed from: its kind, the rule's column and the seconds. Arrays, not the
    table: a worker process gets these few megabytes, not every column."""
    kind = str(rows.kind[0])
    rule = registry.spec(kind).points
    assert rule is not None
    return kind, rows.col(rule.x_column).astype(float), rows.seconds


def point_rate(kind: str, x: np.ndarray, y: np.ndarray, resamples: int, seed: int, confidence: float) -> PointRate:
    """A point's rate, its interval and its draws, by the estimator of its kind."""
    rule = registry.spec(kind).points
    assert rule is not None
    return rule.estimate(x, y, resamples, seed, confidence)


def ready_to_draw() -> None:
    """A worker of a pool begun before its jobs are known (pool.WhenWorthIt.begin), ready for point_rate: the draws
    of a small files point import what every point's draws need, as the worker starts rather than in its first
    job."""
    x = np.repeat([1e6, 2e6, 4e6], 4)
    point_rate("files", x, 1e-4 + x / 5e8 * (1 + np.tile([0.0, 0.01, -0.01, 0.02], 3)), 20, 0, 0.95)


@dataclass(frozen=True)
class PointDraws:
    """One run's rate of one test point with its within-run bootstrap draws."""

    rate: float
    latency_s: float | None
    draws: np.ndarray
    n: int
    refused: str | None = None      # why this run's rate has no interval (PointRate.refused)


def draws_per_run(runs: list[dict[PointKey, Table]], keys: list[PointKey], s: Settings,
                  executor: Executor | None = None) -> dict[tuple[int, PointKey], PointDraws]:
    """Every run's draws of every key it has, each from its own seed (s.seed + its place in the order:
    keys, then runs). The bootstraps are independent: the caller's executor runs them in parallel, and
    without one they run here, one after another, with the same results."""
    jobs = [(i, key) for key in keys for i, points in enumerate(runs) if key in points and len(points[key])]
    args = [(*draw_inputs(runs[i][key]), s.resamples, s.seed + n, s.confidence) for n, (i, key) in enumerate(jobs)]
    if executor is None:
        results = [point_rate(*a) for a in args]
    else:
        results = list(executor.map(point_rate, *zip(*args))) if args else []
    return {job: PointDraws(r.rate.estimate, _finite_or_none(r.latency), r.draws, len(a[1]), r.refused)
            for job, a, r in zip(jobs, args, results)}


def _finite_or_none(e: Estimate | None) -> float | None:
    return e.estimate if e is not None and math.isfinite(e.estimate) else None
