"""Rate and latency of files tests: `seconds = latency + bytes / rate`.

Theil-Sen with the joint intercept (scipy.stats.theilslopes(method="joint");
never the default "separate" intercept, which gave -5.3 ms for a true +0.2 ms
when 5 % of reads hit the cache). Above 5000 points an exact O(n log n)
Theil-Sen: bisect the slope b on the sign of Kendall's tau of (x, y - b x).
Intervals: percentile bootstrap over (size, time) pairs, stratified by size
(B = 2000, seeded); the slope of a resample is the weighted median of the
pairwise slopes, sorted once (ANALYSIS.md). Above 1500 points a resample's slope
is the median of 20000 of its pairwise slopes drawn at random, and B is lowered so
that B x n stays under 2e7 (at least 200): 100k points in seconds, not hours. The
method string records the B used. Least squares (statsmodels OLS) and a
Tukey-biweight RLM started from Theil-Sen are references only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .estimate import Estimate, percentile_interval

EXACT_SCIPY_MAX_POINTS = 5000
PAIRWISE_BOOTSTRAP_MAX_POINTS = 1500
SAMPLED_PAIRS = 20000
LARGE_BOOTSTRAP_BUDGET = 2e7     # resamples x points above which B is lowered (never below 200)
MIN_LARGE_RESAMPLES = 200


@dataclass(frozen=True)
class Line:
    slope_s_per_byte: float
    intercept_s: float

    def predict(self, x_bytes: np.ndarray) -> np.ndarray:
        return self.intercept_s + self.slope_s_per_byte * x_bytes


def theil_sen(x: np.ndarray, y: np.ndarray) -> Line:
    """Theil-Sen slope with the joint intercept median(y - b x)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if len(np.unique(x)) < 2:
        return Line(math.nan, float(np.median(y)) if len(y) else math.nan)
    if len(x) <= EXACT_SCIPY_MAX_POINTS:
        res = stats.theilslopes(y, x, method="joint")
        return Line(float(res.slope), float(res.intercept))
    slope = fast_theil_sen_slope(x, y)
    return Line(slope, float(np.median(y - slope * x)))


def fast_theil_sen_slope(x: np.ndarray, y: np.ndarray, iterations: int = 200) -> float:
    """Exact Theil-Sen slope in O(n log n) per step: the median pairwise slope b is
    where Kendall's tau of (x, y - b x) changes sign (Sen 1968)."""
    order = np.argsort(x, kind="stable")
    x = x[order]
    y = y[order]

    def tau(b: float) -> float:
        return float(stats.kendalltau(x, y - b * x).statistic)

    spread = np.ptp(y) / max(np.min(np.diff(np.unique(x))), 1e-300)
    lo, hi = -spread, spread
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if tau(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(abs(mid), 1e-300):
            break
    return (lo + hi) / 2


def _strata(x: np.ndarray) -> list[np.ndarray]:
    return [np.flatnonzero(x == v) for v in np.unique(x)]


def _resample_counts(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Counts (resamples x n) of a bootstrap stratified by size."""
    counts = np.zeros((resamples, len(x)), dtype=np.float64)
    for idx in _strata(x):
        counts[:, idx] = rng.multinomial(len(idx), np.full(len(idx), 1.0 / len(idx)), size=resamples)
    return counts


def bootstrap_slopes(x: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Theil-Sen slopes of stratified bootstrap resamples."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    rng = np.random.default_rng(seed)
    n = len(x)
    if n <= PAIRWISE_BOOTSTRAP_MAX_POINTS:
        i, j = np.triu_indices(n, k=1)
        keep = x[i] != x[j]
        i, j = i[keep], j[keep]
        slopes = (y[j] - y[i]) / (x[j] - x[i])
        order = np.argsort(slopes)
        slopes, i, j = slopes[order], i[order], j[order]
        counts = _resample_counts(x, rng, resamples)
        out = np.empty(resamples)
        chunk = max(1, int(2e7 // max(len(slopes), 1)))
        for start in range(0, resamples, chunk):
            c = counts[start:start + chunk]
            w = c[:, i] * c[:, j]
            cw = np.cumsum(w, axis=1)
            half = cw[:, -1] / 2
            pos = np.array([np.searchsorted(cw[k], half[k]) for k in range(len(c))])
            out[start:start + chunk] = slopes[np.minimum(pos, len(slopes) - 1)]
        return out
    # Many points: the median of a random sample of pairwise slopes of each resample.
    strata = _strata(x)
    out = np.empty(resamples)
    for b in range(resamples):
        pick = np.concatenate([idx[rng.integers(0, len(idx), len(idx))] for idx in strata])
        a = pick[rng.integers(0, n, SAMPLED_PAIRS)]
        c = pick[rng.integers(0, n, SAMPLED_PAIRS)]
        ok = x[a] != x[c]
        out[b] = np.median((y[c[ok]] - y[a[ok]]) / (x[c[ok]] - x[a[ok]]))
    return out


@dataclass(frozen=True)
class Fit:
    line: Line
    rate_bytes_per_s: Estimate
    latency_s: Estimate
    slopes: np.ndarray


def fit_rate(x_bytes: np.ndarray, y_s: np.ndarray, resamples: int, seed: int, confidence: float = 0.95) -> Fit:
    """Theil-Sen rate and latency with stratified bootstrap intervals."""
    x = np.asarray(x_bytes, float)
    y = np.asarray(y_s, float)
    n = len(x)
    line = theil_sen(x, y)
    if not math.isfinite(line.slope_s_per_byte):
        nan = Estimate(math.nan, math.nan, math.nan, "theil-sen (needs two sizes)", n)
        return Fit(line, nan, nan, np.array([]))
    if n > PAIRWISE_BOOTSTRAP_MAX_POINTS:
        resamples = min(resamples, max(MIN_LARGE_RESAMPLES, int(LARGE_BOOTSTRAP_BUDGET / n)))
    slopes = bootstrap_slopes(x, y, resamples, seed)
    boot_intercepts = np.array([np.median(y - s * x) for s in slopes]) if n <= 2000 else \
        np.array([np.median(y - s * x) for s in slopes[: min(resamples, 200)]])
    lo, hi = percentile_interval(slopes, confidence)
    method = f"theil-sen joint, stratified bootstrap B={resamples} seed={seed}"
    slope = Estimate(line.slope_s_per_byte, lo, hi, method, n)
    ilo, ihi = percentile_interval(boot_intercepts, confidence)
    return Fit(line, slope.inverted(method), Estimate(line.intercept_s, ilo, ihi, method, n), slopes)


def ols(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> dict:
    """Least squares, as a reference: one outlier drags it, which is why it is not the headline."""
    import statsmodels.api as sm

    X = sm.add_constant(np.asarray(x, float))
    res = sm.OLS(np.asarray(y, float), X).fit()
    (a_lo, a_hi), (b_lo, b_hi) = np.asarray(res.conf_int(1 - confidence))
    a, b = res.params
    method = "ols (statsmodels)"
    return {"slope_s_per_byte": float(b), "intercept_s": float(a),
            "rate_bytes_per_s": Estimate(float(b), float(b_lo), float(b_hi), method, len(x)).inverted(method).as_dict(),
            "latency_s": Estimate(float(a), float(a_lo), float(a_hi), method, len(x)).as_dict()}


def biweight(x: np.ndarray, y: np.ndarray, start: Line) -> dict:
    """Tukey-biweight robust regression (statsmodels RLM), started from Theil-Sen."""
    import statsmodels.api as sm

    X = sm.add_constant(np.asarray(x, float))
    try:
        res = sm.RLM(np.asarray(y, float), X, M=sm.robust.norms.TukeyBiweight()).fit(
            start_params=np.array([start.intercept_s, start.slope_s_per_byte]))
        a, b = (float(v) for v in res.params)
    except (ValueError, np.linalg.LinAlgError, ZeroDivisionError):
        a, b = math.nan, math.nan
    return {"slope_s_per_byte": b, "intercept_s": a,
            "rate_bytes_per_s": 1 / b if b and b > 0 else None, "latency_s": a if math.isfinite(a) else None,
            "method": "tukey-biweight rlm (statsmodels), started from theil-sen"}
