"""Steady state of a figure tracked round after round (docs/methods.md, "Steady state").

SNIA's Solid State Storage Performance Test Specification (PTS) calls a measurement window of the last
`window` rounds steady when the range of the figure in it is within 20 % of its mean (the data excursion)
and the least-squares line through it moves by at most 10 % of the mean across the window (the slope
excursion). Neither says how sure one is. Here the slope is also the Theil-Sen slope over the window with
Sen's interval (exact: Kendall's distribution under no trend, stats.kendall_p_exact), and a window is steady
only where the whole interval's excursion lies within the bound: a window whose point passes but whose interval reaches past the
bound is not steady yet, and says why.

A test asked to run rounds until steady (the plan's `steady`) measures every point once a round (a round is a
trial); `steadiness` judges its rows: the first round that ends a window in which every point is steady stops
the rounds (the runner asks it before each round, the report asks it again of the same rows: the same verdict),
and `window_rows` keeps only that window's rounds for the rates (the last window where none was steady).

Pure: numbers or measurements in, verdicts out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import fills
from ...rundir.table import Table
from ...analysis.stats.theil_sen import sen_interval
from ...analysis.rates import SHAPE_FIELDS, PointKey, label

PTS_WINDOW = 5
PTS_MAX_RANGE = 0.20          # of the window's mean
PTS_MAX_EXCURSION = 0.10      # of the window's mean, across the window
# stibium's window: at PTS's five rounds a drift of 2 % a round moves 8 % across the window, inside PTS's
# 10 %, so no rule can tell it from a flat figure (92 % of such series were called steady within 25 rounds at
# 1 % noise, the interval rule included: tests/test_steady.py); across ten rounds it moves 18 %
STEADY_WINDOW = 10


@dataclass(frozen=True)
class SteadyVerdict:
    """The verdict on one window of rounds: its place (rounds first..last, from 1), the PTS figures (the
    range and the least-squares excursion, each as a share of the window's mean), the Theil-Sen slope per
    round with its interval and the interval's excursions, and whether it is steady, with why not."""

    steady: bool
    first_round: int
    last_round: int
    mean: float
    range_fraction: float
    excursion_fraction: float           # least squares: |slope| x (window - 1) / mean
    slope_per_round: float              # Theil-Sen, in the figure's unit per round
    slope_low: float
    slope_high: float
    confidence: float
    why: str                            # "" where steady

    @property
    def excursion_interval(self) -> tuple[float, float]:
        """The Theil-Sen interval's excursion across the window, as a share of the mean."""
        span = self.last_round - self.first_round
        return self.slope_low * span / self.mean, self.slope_high * span / self.mean

    def to_json(self) -> dict[str, Any]:
        low, high = self.excursion_interval
        return {"steady": self.steady, "first_round": self.first_round, "last_round": self.last_round,
                "mean": self.mean, "range_fraction": self.range_fraction,
                "excursion_fraction": self.excursion_fraction,
                "slope_per_round": {"estimate": self.slope_per_round, "low": self.slope_low, "high": self.slope_high,
                                    "method": f"theil-sen with Sen's interval ({self.confidence:.0%})"},
                "excursion_interval": [low, high], "why": self.why}


def judge(values: Any, first_round: int = 1, max_range: float = PTS_MAX_RANGE,
          max_excursion: float = PTS_MAX_EXCURSION, confidence: float = 0.95) -> SteadyVerdict:
    """The verdict on a window of rounds (values in round order, the first being round `first_round`)."""
    y = np.asarray(values, float)
    n = len(y)
    if n < 3 or not np.all(np.isfinite(y)) or y.mean() <= 0:
        raise ValueError("a window needs three or more rounds of positive, finite values")
    mean = float(y.mean())
    x = np.arange(n)
    ls_slope = float(np.polyfit(x, y, 1)[0])
    rng = float(y.max() - y.min()) / mean
    excursion = abs(ls_slope) * (n - 1) / mean
    slope, low, high = sen_interval(y, confidence)
    worst = max(abs(low), abs(high)) * (n - 1) / mean
    why = ""
    if rng > max_range:
        why = f"the range is {rng:.1%} of the mean, above {max_range:.0%}"
    elif excursion > max_excursion:
        why = f"the least-squares line moves {excursion:.1%} of the mean across the window, above {max_excursion:.0%}"
    elif worst > max_excursion:
        why = (f"the slope's {confidence:.0%} interval reaches {worst:.1%} of the mean across the window, above "
               f"{max_excursion:.0%}: the figure may still be moving")
    return SteadyVerdict(not why, first_round, first_round + n - 1, mean, rng, excursion, slope, low, high,
                         confidence, why)


def first_steady(values: Any, window: int = STEADY_WINDOW, **bounds: Any) -> SteadyVerdict | None:
    """The first window of `window` rounds that is steady, scanning as the rounds came; None before `window`
    rounds; where none is, the verdict on the last window (steady False, with why)."""
    y = np.asarray(values, float)
    if len(y) < window:
        return None
    last = None
    for end in range(window, len(y) + 1):
        last = judge(y[end - window:end], first_round=end - window + 1, **bounds)
        if last.steady:
            return last
    return last


# what a point of a test is, as its measurements name it
POINT_FIELDS = (*SHAPE_FIELDS, "instrument", "fill", "rate_per_s")


@dataclass(frozen=True)
class PointRounds:
    """One point of a test by rounds: its rate in each complete round (bytes/s, round 1 first) and the verdict
    on the test's window (None before a window's worth of rounds)."""

    point: tuple                       # its POINT_FIELDS' values
    rates_bytes_per_s: tuple[float, ...]
    verdict: SteadyVerdict | None

    @property
    def fields(self) -> dict[str, Any]:
        return dict(zip(POINT_FIELDS, self.point))

    def key(self, test: str) -> PointKey:
        op, access, gran, stride, depth, threads, mix, instrument, fill, rate = self.point
        return PointKey(test, op, "pattern", access, int(gran), int(stride), int(depth), int(threads), mix,
                        instrument, fill or fills.RANDOM, float(rate) if rate else None)

    def label(self, test: str) -> str:
        """A point for people: steady write random 4 KiB Q32T1."""
        return label(self.key(test))

    def to_json(self) -> dict[str, Any]:
        return {**self.fields, "rates_bytes_per_s": list(self.rates_bytes_per_s),
                "verdict": self.verdict.to_json() if self.verdict is not None else None}


@dataclass(frozen=True)
class Steadiness:
    """A test by rounds: the window and the most rounds the plan allows, the complete rounds measured, the last
    round of the first window in which every point was steady (None: not steady), and each point's rounds."""

    test: str
    window: int
    max_rounds: int
    rounds: int
    steady_round: int | None
    points: tuple[PointRounds, ...]

    @property
    def steady(self) -> bool:
        return self.steady_round is not None

    @property
    def window_rounds(self) -> tuple[int, int]:
        """The rounds (from 1) the rates are of: the steady window, else the last window (every round where
        there are fewer than a window's)."""
        last = self.steady_round or self.rounds
        return max(1, last - self.window + 1), last

    @property
    def unsteady(self) -> list[PointRounds]:
        """Points not steady in the window (with why), where the test is not."""
        return [p for p in self.points if p.verdict is None or not p.verdict.steady]

    def for_op(self, op: str) -> "Steadiness":
        return Steadiness(self.test, self.window, self.max_rounds, self.rounds, self.steady_round,
                          tuple(p for p in self.points if p.fields["op"] == op))

    def to_json(self) -> dict[str, Any]:
        first, last = self.window_rounds
        return {"window": self.window, "max_rounds": self.max_rounds, "rounds": self.rounds, "steady": self.steady,
                "steady_round": self.steady_round, "window_rounds": [first, last],
                "points": [p.to_json() for p in self.points]}


def _verdict(values: np.ndarray, first_round: int) -> SteadyVerdict | None:
    """The verdict on a window; None where a round has no positive rate (it cannot be judged)."""
    if not (np.all(np.isfinite(values)) and np.all(values > 0)):
        return None
    return judge(values, first_round=first_round)


def _point_order(point: tuple) -> tuple:
    """Points as the report lists them: by op and access, then by the numbers (granularity, stride, queue depth,
    threads, read share), a point's bench after its road test."""
    op, access, *numbers, instrument, fill, rate = point
    return (str(op), str(access), *(float(x) if x is not None else -1.0 for x in numbers), instrument != "helper",
            str(instrument), (fill or fills.RANDOM) != fills.RANDOM, str(fill or ""), float(rate or 0.0))


def steadiness(rows: Table) -> Steadiness | None:
    """The verdict on one test's valid measurements (many clients: their aggregate); None for a test of
    trials. Rounds count while every point has its measurement, from the first round on."""
    asked = rows.col("steady_window").astype(float) if len(rows) else np.array([])
    if not np.isfinite(asked).any():
        return None
    window = int(np.nanmax(asked))
    max_rounds = int(np.nanmax(rows.col("steady_max_rounds").astype(float)))
    trial = rows.col("trial").astype(np.int64)
    rate = rows.col("bytes").astype(float) / rows.col("seconds").astype(float)
    by_point = {}
    for key, idx in rows.groups(*POINT_FIELDS).items():
        per_round = np.full(max_rounds, np.nan)
        per_round[trial[idx]] = rate[idx]
        by_point[key] = per_round
    have = np.all([np.isfinite(v) for v in by_point.values()], axis=0)
    rounds = int(np.argmin(have)) if not have.all() else len(have)
    steady_round = None
    for end in range(window, rounds + 1):
        found = [_verdict(v[end - window:end], end - window + 1) for v in by_point.values()]
        if all(f is not None and f.steady for f in found):
            steady_round = end
            break
    last = steady_round or rounds
    points = tuple(PointRounds(key, tuple(float(x) for x in v[:rounds]),
                               _verdict(v[last - window:last], last - window + 1) if last >= window else None)
                   for key, v in sorted(by_point.items(), key=lambda kv: _point_order(kv[0])))
    return Steadiness(str(rows.test[0]), window, max_rounds, rounds, steady_round, points)


def judge_tests(rows: Table) -> dict[str, Steadiness]:
    """The verdict on every test by rounds among valid measurements, by test name."""
    if not len(rows) or not np.isfinite(rows.col("steady_window").astype(float)).any():
        return {}
    out = {}
    for (test,), idx in rows.groups("test").items():
        found = steadiness(rows.take(idx))
        if found is not None:
            out[test] = found
    return out


def rated(rows: Table) -> tuple[Table, dict[str, Steadiness]]:
    """Valid measurements as every view rates them (the summary, compare, series): the tests by rounds judged
    and kept to their window's rounds, with the verdicts."""
    judged = judge_tests(rows)
    return window_rows(rows, judged), judged


def window_rows(rows: Table, judged: dict[str, Steadiness]) -> Table:
    """The measurements the rates are of: a test by rounds keeps its window's rounds (Steadiness.window_rounds),
    every other measurement stays."""
    if not judged:
        return rows
    keep = np.ones(len(rows), bool)
    test, trial = rows.test, rows.col("trial").astype(np.int64)
    for name, s in judged.items():
        first, last = s.window_rounds
        mine = test == name
        keep &= ~mine | ((trial >= first - 1) & (trial <= last - 1))
    return rows.take(keep)
