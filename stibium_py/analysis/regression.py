"""Rate and latency of files tests: `seconds = latency + bytes / rate`.

Theil-Sen with the joint intercept (what scipy.stats.theilslopes(method="joint") gives, computed by
stats.theil_sen_joint;
never the default "separate" intercept, which gave -5.3 ms for a true +0.2 ms
when 5 % of reads hit the cache). Above 5000 points an exact O(n log n)
Theil-Sen: bisect the slope b on the sign of Kendall's tau of (x, y - b x) (_concordance).
Intervals: percentile bootstrap over (size, time) pairs, stratified by size
(B = 2000, seeded); the slope of a resample is the weighted median of the
pairwise slopes, sorted once (docs/methods.md), up to 150 points (11k pairs). Above,
a resample's slope is the median of 5000 of its pairwise slopes drawn at random
(see _sampled_pair_slopes): the cost no longer grows with n. Above 500 points the
resamples have 500 points (m-out-of-n) and their spread is scaled by sqrt(m / n),
so that the pair sampling's noise stays small beside the resampling's own: measured
at 20,020 points, the resamples spread as those of a bootstrap with every
resample's exact slope (1.08e-12 against 1.09e-12). Least squares (what statsmodels' OLS gives) and a
Tukey-biweight RLM started from Theil-Sen (what statsmodels' RLM gives) are references only.
"""

from __future__ import annotations

import math
from typing import Any
from dataclasses import dataclass

import numpy as np

from ..heap import give_back
from .estimate import Estimate, percentile_interval
from .stats import t_ppf, tukey_biweight_line
from .stats.bootstrap import (PAIRWISE_BOOTSTRAP_MAX_POINTS, SAMPLED_PAIRS, SUBSAMPLE_POINTS, bootstrap_lines,
                              small_sample_widening)
from .stats.theil_sen import theil_sen as theil_sen_pair

# Fewer repeats per size than this and the bootstrap interval cannot be calibrated (simulation:
# tests/bench/bench_interval_coverage.py covered 84-91 % with 1 or 2 repeats): no interval is given.
MIN_REPEATS_FOR_INTERVAL = 3


@dataclass(frozen=True)
class Line:
    slope_s_per_byte: float
    intercept_s: float

    def predict(self, x_bytes: np.ndarray) -> np.ndarray:
        return self.intercept_s + self.slope_s_per_byte * x_bytes


def theil_sen(x: np.ndarray, y: np.ndarray) -> Line:
    """Theil-Sen slope with the joint intercept median(y - b x) (stats.theil_sen) as a Line."""
    return Line(*theil_sen_pair(x, y))


@dataclass(frozen=True)
class Fit:
    line: Line
    rate_bytes_per_s: Estimate
    latency_s: Estimate
    slopes: np.ndarray


# a fit of at least this many points hands the memory it freed back to the system as it ends (heap.give_back): a
# million-row report fits up to four lines of 250,000-500,000 points at once on threads, and the freed memory of
# each added up to its peak (755-767 MiB without, 705-707 MiB with, in the same time: docs/performance.md)
GIVE_BACK_FROM_POINTS = 100_000


def fit_rate(x_bytes: np.ndarray, y_s: np.ndarray, resamples: int, seed: int, confidence: float = 0.95,
             latency_interval: bool = True) -> Fit:
    """Theil-Sen rate and latency with stratified bootstrap intervals (the latency's left out where the
    caller needs the rate's only: it costs a median per resample)."""
    fit = _fit_rate(x_bytes, y_s, resamples, seed, confidence, latency_interval)
    if len(x_bytes) >= GIVE_BACK_FROM_POINTS:
        give_back()
    return fit


def _fit_rate(x_bytes: np.ndarray, y_s: np.ndarray, resamples: int, seed: int, confidence: float,
              latency_interval: bool) -> Fit:
    x = np.asarray(x_bytes, float)
    y = np.asarray(y_s, float)
    n = len(x)
    line = theil_sen(x, y)
    if not math.isfinite(line.slope_s_per_byte):
        nan = Estimate(math.nan, math.nan, math.nan, "theil-sen (needs two sizes)", n)
        return Fit(line, nan, nan, np.array([]))
    slopes, boot_intercepts = bootstrap_lines(x, y, resamples, seed, intercepts=latency_interval,
                                             line=(line.slope_s_per_byte, line.intercept_s))
    intercept_interval = percentile_interval(boot_intercepts, confidence) if boot_intercepts is not None \
        else (math.nan, math.nan)
    repeats = min(int(c) for c in np.unique(x, return_counts=True)[1])
    if repeats < MIN_REPEATS_FOR_INTERVAL:
        method = (f"theil-sen joint; no interval: {repeats} repeat{'s' if repeats > 1 else ''} per size cannot give "
                  f"a calibrated {confidence:.0%} interval (at least {MIN_REPEATS_FOR_INTERVAL} are needed)")
        return Fit(line, Estimate(line.slope_s_per_byte, math.nan, math.nan, method, n).inverted(method),
                   Estimate(line.intercept_s, math.nan, math.nan, method, n), slopes)
    widen, widen_latency = small_sample_widening(x, confidence)
    lo, hi = _widened(line.slope_s_per_byte, percentile_interval(slopes, confidence), widen)
    how = "" if n <= PAIRWISE_BOOTSTRAP_MAX_POINTS else f", {SAMPLED_PAIRS} sampled pairs per resample" + (
        f" of {SUBSAMPLE_POINTS} points, spread scaled by sqrt({SUBSAMPLE_POINTS} / n)" if n > SUBSAMPLE_POINTS else "")
    method = (f"theil-sen joint, stratified bootstrap B={resamples} seed={seed}{how}, widened for small strata "
              f"(rate x{widen:.3f}, latency x{widen_latency:.3f})")
    slope = Estimate(line.slope_s_per_byte, lo, hi, method, n)
    ilo, ihi = _widened(line.intercept_s, intercept_interval, widen_latency)
    return Fit(line, slope.inverted(method), Estimate(line.intercept_s, ilo, ihi, method, n).at_least(0.0), slopes)


def _widened(point: float, interval: tuple[float, float], factor: float) -> tuple[float, float]:
    lo, hi = interval
    return point + (lo - point) * factor, point + (hi - point) * factor


@dataclass(frozen=True)
class ReferenceLine:
    """A line beside Theil-Sen, as a reference (least squares, biweight, Siegel): the time-against-size
    figure draws it and summary.json keeps it. Least squares has intervals (rate, latency); the robust
    references have their point values only, and Siegel no latency."""

    slope_s_per_byte: float
    intercept_s: float
    method: str
    rate: Estimate | None = None        # with its interval, least squares only
    latency: Estimate | None = None
    latency_given: bool = True          # Siegel's intercept is not reported as a latency

    def to_json(self) -> dict[str, Any]:
        b, a = self.slope_s_per_byte, self.intercept_s
        if self.rate is not None and self.latency is not None:
            return {"slope_s_per_byte": b, "intercept_s": a, "rate_bytes_per_s": self.rate.as_dict(),
                    "latency_s": self.latency.as_dict()}
        out: dict[str, Any] = {"slope_s_per_byte": b, "intercept_s": a,
                               "rate_bytes_per_s": 1 / b if b and b > 0 else None}
        if self.latency_given:
            out["latency_s"] = a if math.isfinite(a) else None
        return {**out, "method": self.method}


def ols(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> ReferenceLine:
    """Least squares, as a reference: one outlier drags it, which is why it is not the headline. The closed form
    with t(n-2) intervals: the numbers statsmodels' OLS gives (tests/test_stats.py holds its slope, intercept and
    intervals to statsmodels' to 1e-9), in a few lines of numpy rather than a model and a results object per fit.
    It spares no import: the robust line fitted in the same call (biweight) imports statsmodels anyway."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    n = len(x)
    mx, my = x.mean(), y.mean()
    sxx = float(np.sum((x - mx) ** 2))
    b = float(np.sum((x - mx) * (y - my)) / sxx)
    a = float(my - b * mx)
    s2 = float(np.sum((y - a - b * x) ** 2) / (n - 2)) if n > 2 else math.nan
    t = t_ppf(0.5 + confidence / 2, n - 2) if n > 2 else math.nan
    se_b = math.sqrt(s2 / sxx)
    se_a = math.sqrt(s2 * (1 / n + mx * mx / sxx))
    method = "ols (closed form, t intervals)"
    return ReferenceLine(b, a, method, Estimate(b, b - t * se_b, b + t * se_b, method, n).inverted(method),
                         Estimate(a, a - t * se_a, a + t * se_a, method, n).at_least(0.0))


BIWEIGHT_MAX_POINTS = 20_000


def biweight(x: np.ndarray, y: np.ndarray, start: Line) -> ReferenceLine | None:
    """Tukey-biweight robust regression (statsmodels' RLM: stats.tukey_biweight_line),
    started from Theil-Sen; a reference line, left out above BIWEIGHT_MAX_POINTS points, where its
    iterations would cost seconds (like Siegel's above 5000)."""
    if len(x) > BIWEIGHT_MAX_POINTS:
        return None
    try:
        a, b = tukey_biweight_line(x, y, start.intercept_s, start.slope_s_per_byte)
    except (ValueError, np.linalg.LinAlgError, ZeroDivisionError):
        a, b = math.nan, math.nan
    return ReferenceLine(b, a, "tukey-biweight rlm, started from theil-sen")
