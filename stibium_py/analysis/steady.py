"""Steady state of a figure tracked round after round (docs/methods.md, "Steady state").

SNIA's Solid State Storage Performance Test Specification (PTS) calls a measurement window of the last
`window` rounds steady when the range of the figure in it is within 20 % of its mean (the data excursion)
and the least-squares line through it moves by at most 10 % of the mean across the window (the slope
excursion). Neither says how sure one is. Here the slope is also the Theil-Sen slope over the window with
Sen's interval (exact: Kendall's distribution under no trend, nonparametric.py's), and a window is steady
only where the whole interval's excursion lies within the bound: a window whose point passes but whose interval reaches past the
bound is not steady yet, and says why.

Pure: numbers in, a `SteadyVerdict` out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .nonparametric import _kendall_p_exact

PTS_WINDOW = 5
PTS_MAX_RANGE = 0.20          # of the window's mean
PTS_MAX_EXCURSION = 0.10      # of the window's mean, across the window
# stibium's window: at PTS's five rounds a drift of 2 % a round moves 8 % across the window, inside PTS's
# 10 %, so no rule can tell it from a flat figure (92 % of such series were called steady within 25 rounds at
# 1 % noise, the interval rule included: tests/test_steady.py); across ten rounds it moves 18 %
STEADY_WINDOW = 10


def sen_interval(y: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """The Theil-Sen slope of y against 0, 1, 2, ... (per round) with Sen's interval: the k-th smallest and
    k-th largest of the pairwise slopes, k as large as the exact distribution of Kendall's S allows at this
    confidence (with five rounds the interval is the smallest to the largest slope, 98.3 %)."""
    y = np.asarray(y, float)
    n = len(y)
    i, j = np.triu_indices(n, 1)
    slopes = np.sort((y[j] - y[i]) / (j - i))
    # k - 1: the most pairs out of order that the two-sided test of no trend still rejects at this confidence
    k = 1
    while 2 * k <= len(slopes) and _kendall_p_exact(n, k - 1) <= 1 - confidence:
        k += 1
    k = max(k - 1, 1)
    return float(np.median(slopes)), float(slopes[k - 1]), float(slopes[len(slopes) - k])


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
