"""The bench beside the road test (pure): a pattern test with `bench: fio` measured every point twice, by the
helper (the road test: stibium's engines, as apps move bytes) and by the equivalent fio job (the bench), their
trials interleaved on the same file. Each point's bench rate against its road rate: the ratio of the two medians
with a percentile interval from independent bootstraps of each side's trials, the verdict in compare's words,
and what differs between the two ways (engine, cache state, sync, latency's definition), from the rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...rundir.table import Table
from ...analysis.comparison import verdict
from ...analysis.estimate import Estimate, percentile_interval
from ...analysis.rates import SHAPE_FIELDS, median_rate

ROAD = "helper"
ROUNDING_FREE_S = 0.5            # a fio trial this long or longer: its millisecond runtime is within 0.1 %
# a point's fields that pair its bench with its road test: its shape (the rows are of one test and op)
PAIRED_BY = SHAPE_FIELDS[1:]


@dataclass(frozen=True)
class BenchPair:
    """One point measured by both: the road test's and the bench's rate (medians over trials, with their
    intervals), bench / road with its interval, the verdict, and what differs."""

    point: dict[str, Any]            # the PAIRED_BY fields
    instrument: str                  # fio
    version: str                     # fio-3.33
    road: Estimate
    bench: Estimate
    ratio: Estimate                  # bench / road
    verdict: str                     # faster | slower | same within noise | inconclusive (the bench against the road)
    differs: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {**self.point, "instrument": self.instrument, "instrument_version": self.version,
                "road_bytes_per_s": self.road.as_dict(), "bench_bytes_per_s": self.bench.as_dict(),
                "ratio": self.ratio.as_dict(), "verdict": self.verdict, "differs": list(self.differs)}


@dataclass(frozen=True)
class BenchAlone:
    """A point only the bench measured (a job of the plan's own job file whose shape no road-test point has): its
    rate, the median over trials with its interval."""

    point: dict[str, Any]            # the PAIRED_BY fields
    instrument: str
    version: str
    bench: Estimate

    def to_json(self) -> dict[str, Any]:
        return {**self.point, "instrument": self.instrument, "instrument_version": self.version,
                "bench_bytes_per_s": self.bench.as_dict()}


def road_rows(rows: Table) -> np.ndarray:
    """Which of a test's rows are the road test's (the helper's); a run that has only another instrument's rows (a
    fio result imported) has them as its road: there is nothing to set them beside."""
    mine = rows.instrument == ROAD
    return mine if mine.any() else np.ones(len(rows), dtype=bool)


def pairs(road: Table, bench: Table, resamples: int, seed: int, confidence: float, band: float) -> list[BenchPair]:
    """Every point the bench measured that the road test measured too, in the road test's order."""
    benched: dict[tuple, list[tuple[str, np.ndarray]]] = {}
    for (*point, instrument), bidx in bench.groups(*PAIRED_BY, "instrument").items():
        benched.setdefault(tuple(point), []).append((instrument, bidx))
    out = []
    for n, (key, ridx) in enumerate(road.groups(*PAIRED_BY).items()):
        for instrument, bidx in benched.get(key, []):
            r, b = road.take(ridx), bench.take(bidx)
            road_rate = _median(r, resamples, seed + 2 * n, confidence)
            bench_rate = _median(b, resamples, seed + 2 * n + 1, confidence)
            ratio = _ratio(road_rate, bench_rate, confidence)
            word, _hint = verdict(ratio, band)
            out.append(BenchPair(dict(zip(PAIRED_BY, key)), instrument, str(b.instrument_version[0] or ""),
                                 road_rate[0], bench_rate[0], ratio, word, differences(r, b)))
    return out


def alone(road: Table, bench: Table, resamples: int, seed: int, confidence: float) -> list[BenchAlone]:
    """Every point the bench measured that the road test did not, in the bench's order."""
    measured = set(road.groups(*PAIRED_BY))
    out = []
    for n, ((*point, instrument), bidx) in enumerate(bench.groups(*PAIRED_BY, "instrument").items()):
        if tuple(point) in measured:
            continue
        b = bench.take(bidx)
        out.append(BenchAlone(dict(zip(PAIRED_BY, point)), instrument, str(b.instrument_version[0] or ""),
                              _median(b, resamples, seed - 1 - n, confidence)[0]))
    return out


def _median(rows: Table, resamples: int, seed: int, confidence: float) -> tuple[Estimate, np.ndarray]:
    rate = median_rate(rows.bytes, rows.seconds, resamples, seed, confidence)
    return rate.rate, rate.draws


def _ratio(road: tuple[Estimate, np.ndarray], bench: tuple[Estimate, np.ndarray], confidence: float) -> Estimate:
    """bench / road: the ratio of the medians, its interval the percentiles of the ratio of independent
    bootstrap medians; none where a side has a single trial."""
    (r, rd), (b, bd) = road, bench
    point = b.estimate / r.estimate if r.estimate else math.nan
    n = r.n + b.n
    m = min(len(rd), len(bd))
    if m == 0:
        return Estimate(point, math.nan, math.nan, "ratio of medians; no interval: one trial", n)
    lo, hi = percentile_interval(bd[:m] / rd[:m], confidence)
    return Estimate(point, lo, hi, f"ratio of medians, independent bootstraps B={m}, percentile interval", n)


def differences(road: Table, bench: Table) -> tuple[str, ...]:
    """What differs between the road test's way and the bench's, read from their rows."""
    out = [f"engine: the helper's {_first(road.engine)} I/O by {_first(road.io_method) or 'its method'}, fio's "
           f"{'direct' if _first(bench.engine) == 'direct' else 'buffered'} I/O by its {_first(bench.io_method)} "
           f"engine"]
    road_cached = np.nan_to_num(road.resident_before.astype(float), nan=0.0).max()
    bench_cached = np.nan_to_num(bench.resident_before.astype(float), nan=0.0).max()
    if road_cached or bench_cached:
        out.append(f"cache: up to {road_cached:.0%} of the file in the page cache before the road test's reads, "
                   f"{bench_cached:.0%} before the bench's")
    synced = {str(v) for v in road.sync_used if v}
    if synced - {"none"}:
        out.append(f"sync: the helper's {'/'.join(sorted(synced - {'none'}))} after the writes, fio's end_fsync "
                   f"(an fsync), both inside the time")
    took_s = float(np.median(bench.seconds)) if len(bench) else math.nan
    rounding = f": its trials took a median of {took_s * 1000:.0f} ms, so the rounding alone is up to " \
               f"{0.0005 / took_s:.1%} of a rate (raise bytes or use duration for trials of a second or more)" \
        if 0 < took_s < ROUNDING_FREE_S else ""
    out.append("time: the helper's clock from the first request to the last completion (ns); fio's runtime, in "
               "whole milliseconds" + rounding)
    out.append("latency: the helper's from submission to completion; fio's completion latency (clat), its "
               "submission (slat) apart")
    out.append("idle before: each fio job is a process of its own, which starts and ends in about a quarter of a "
               "second, where the helper goes from one measurement to the next in about a millisecond; a device that "
               "gathers a burst while idle (a rate limiter's bucket, a drive's cache writing itself out) gives more "
               "of it to the bench's trials")
    return tuple(out)


def _first(values: np.ndarray) -> str:
    return str(values[0]) if len(values) and values[0] else ""
