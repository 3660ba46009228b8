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
from typing import Any, Callable
from dataclasses import dataclass

import numpy as np

from .estimate import Estimate, percentile_interval
from .stats import (DENSE_ABOVE_GROUPS, library, norm_ppf, pair_count, sorted_groups, t_ppf, theil_sen_joint,
                    tukey_biweight_line)

# up to this many points the Theil-Sen slope is stats.theil_sen_joint's (every pairwise slope, as scipy's
# theilslopes gives it); above, fast_theil_sen_slope's search (the same slope, O(n log n) a step)
EXACT_THEIL_SEN_MAX_POINTS = 5000
# Fewer repeats per size than this and the bootstrap interval cannot be calibrated (simulation:
# tests/bench/bench_interval_coverage.py covered 84-91 % with 1 or 2 repeats): no interval is given.
MIN_REPEATS_FOR_INTERVAL = 3
PAIRWISE_BOOTSTRAP_MAX_POINTS = 150
# Above PAIRWISE_BOOTSTRAP_MAX_POINTS, the intercept's interval comes from this many resamples rebuilt whole.
INTERCEPT_RESAMPLES = 400
SUBSAMPLE_POINTS = 500                      # above: resamples of this many points, rescaled (m-out-of-n)
SAMPLED_PAIRS = 5000                        # even: a resample's slope is the mean of the middle two


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
    if len(x) <= EXACT_THEIL_SEN_MAX_POINTS:
        return Line(*theil_sen_joint(x, y))
    slope = fast_theil_sen_slope(x, y)
    return Line(slope, float(np.median(y - slope * x)))


def fast_theil_sen_slope(x: np.ndarray, y: np.ndarray, iterations: int = 200) -> float:
    """Exact Theil-Sen slope in O(n log n) per step: the median pairwise slope b is
    where Kendall's tau of (x, y - b x) changes sign (Sen 1968). The root is bracketed by quantiles of
    sampled pairwise slopes (checked, widened where they miss it) and found by the Illinois variant of
    false position: about 10 steps instead of bisection's 40 from the data's range, to the same
    tolerance."""
    order = np.argsort(x, kind="stable")
    x = x[order]
    y = y[order]
    tau = _concordance(x, y)
    lo, hi, f_lo, f_hi = _bracket(x, y, tau)
    side = 0
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if hi - lo <= 1e-12 * max(abs(mid), 1e-300):
            break
        c = lo + (hi - lo) * f_lo / (f_lo - f_hi) if f_lo > f_hi else mid
        if not lo < c < hi:
            c = mid
        fc = tau(c)
        if fc > 0:
            lo, f_lo = c, fc
            if side == 1:
                f_hi /= 2          # the same end kept twice: halve its weight (Illinois)
            side = 1
        else:
            hi, f_hi = c, fc
            if side == -1:
                f_lo /= 2
            side = -1
    return (lo + hi) / 2


SAMPLED_BRACKET_PAIRS = 200_000


def _concordance(x: np.ndarray, y: np.ndarray) -> Callable[[float], float]:
    """A function of b whose sign is that of Kendall's tau of (x, y - b x) (x sorted), but where a pair's
    slope is b itself: positive while b is below the median pairwise slope, negative above it. With a few
    distinct x (a files test's sizes) it is counted size by size: the residuals of one size are its sorted
    times less b x, so the pairs whose residual falls from a smaller size to a larger one are counted by a
    search of one sorted array in another, faster than scipy's tau and without its second of import; with
    many, scipy's tau-b."""
    values, groups = sorted_groups(x, y)
    if len(values) > DENSE_ABOVE_GROUPS:
        stats = library("scipy.stats")    # O(n log n) tau: a large fit's import, small beside its work

        return lambda b: float(stats.kendalltau(x, y - b * x).statistic)
    pairs = pair_count(groups)

    def concordance(b: float) -> float:
        # pairs (smaller size, larger size) whose residual does not rise (slopes <= b): each size's
        # residuals searched in the sorted residuals of every smaller size, which grow by a merge of two
        # sorted runs (2.4 times as fast at 500,000 points as a search size against size)
        smaller = groups[0] - b * values[0]
        falls = 0
        for g, v in zip(groups[1:], values[1:]):
            residuals = g - b * v
            falls += len(smaller) * len(residuals) - int(np.searchsorted(smaller, residuals, "left").sum())
            smaller = np.sort(np.concatenate([smaller, residuals]), kind="stable")
        return (pairs - 2 * falls) / pairs

    return concordance


def _bracket(x: np.ndarray, y: np.ndarray, tau: Callable[[float], float]) -> tuple[float, float, float, float]:
    """lo < hi with tau(lo) > 0 >= tau(hi), and those values."""
    rng = np.random.default_rng(0)
    i = rng.integers(0, len(x), SAMPLED_BRACKET_PAIRS)
    j = rng.integers(0, len(x), SAMPLED_BRACKET_PAIRS)
    keep = x[i] != x[j]
    slopes = np.sort((y[j[keep]] - y[i[keep]]) / (x[j[keep]] - x[i[keep]]))
    spread = np.ptp(y) / max(np.min(np.diff(np.unique(x))), 1e-300)
    if len(slopes) >= 100:
        # the sample median's 5-sigma quantiles, widened until they hold the root
        half = 5 * 0.5 / math.sqrt(len(slopes))
        for _ in range(6):
            lo = float(np.quantile(slopes, max(0.0, 0.5 - half)))
            hi = float(np.quantile(slopes, min(1.0, 0.5 + half)))
            if lo < hi:
                f_lo, f_hi = tau(lo), tau(hi)
                if f_lo > 0 >= f_hi:
                    return lo, hi, f_lo, f_hi
            half *= 4
    return -spread, spread, tau(-spread), tau(spread)


def _strata(x: np.ndarray) -> list[np.ndarray]:
    """The bootstrap's strata: the points of each size; a size with a single point (one repeat) is merged
    with its neighbours until every stratum has two points or more, since a stratum of one point is the
    same in every resample and would make the interval collapse to nothing."""
    groups = [np.flatnonzero(x == v) for v in np.unique(x)]
    merged: list[np.ndarray] = []
    for g in groups:
        if merged and len(merged[-1]) < 2:
            merged[-1] = np.concatenate([merged[-1], g])
        else:
            merged.append(g)
    if len(merged) > 1 and len(merged[-1]) < 2:
        last = merged.pop()
        merged[-1] = np.concatenate([merged[-1], last])
    return merged


def small_sample_widening(x: np.ndarray, confidence: float) -> tuple[float, float]:
    """The factors (rate, latency) that widen stratified percentile bootstrap intervals for small strata:
    resampling m points underestimates their variance by (m - 1) / m, so both get sqrt(m / (m - 1)), m the
    smallest stratum; the rate, a line through k sizes (the strata), gets t(k-2) / z, the latency, a median
    over all n points, t(n-2) / z (docs/methods.md; chosen by simulation:
    tests/bench/bench_interval_coverage.py)."""
    strata = _strata(np.asarray(x, float))
    m = min(len(g) for g in strata)
    if m < 2:
        return 1.0, 1.0
    z = norm_ppf(0.5 + confidence / 2)
    bias = math.sqrt(m / (m - 1))

    def factor(df: int) -> float:
        return float(t_ppf(0.5 + confidence / 2, df) / z * bias) if df >= 1 else 1.0

    return factor(len(strata) - 2), factor(len(x) - 2)


def _resample_counts(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Counts (resamples x n) of a bootstrap stratified by size."""
    counts = np.zeros((resamples, len(x)), dtype=np.int32)   # small integers: half the memory traffic of floats
    for idx in _strata(x):
        counts[:, idx] = rng.multinomial(len(idx), np.full(len(idx), 1.0 / len(idx)), size=resamples)
    return counts


def _weighted_medians(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row of weights (resamples x n): the weighted median of each row's values (values per row)."""
    order = np.argsort(values, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    cw = np.cumsum(np.take_along_axis(weights, order, axis=1), axis=1)
    pos = (cw < cw[:, -1:] / 2).sum(axis=1)
    return v[np.arange(len(v)), np.minimum(pos, v.shape[1] - 1)]


def bootstrap_lines(x: np.ndarray, y: np.ndarray, resamples: int, seed: int, intercepts: bool = True,
                    line: Line | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Theil-Sen slopes of stratified bootstrap resamples, and each resample's own joint intercept (the
    median over its points of y - slope x; above PAIRWISE_BOOTSTRAP_MAX_POINTS for the first
    INTERCEPT_RESAMPLES). `line`, the data's own Theil-Sen line where the caller has it, centres the
    rescaled resamples of very many points (see _sampled_pair_slopes)."""
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
        if not intercepts:
            return out, None
        return out, _weighted_medians(y[None, :] - out[:, None] * x[None, :], counts)
    slopes, own, scale = _sampled_pair_slopes(x, y, resamples, rng, intercepts)
    if scale == 1.0:
        return slopes, own
    line = line or theil_sen(x, y)      # smaller resamples: their spread around the data's line, scaled
    slopes = line.slope_s_per_byte + scale * (slopes - line.slope_s_per_byte)
    return slopes, None if own is None else line.intercept_s + scale * (own - line.intercept_s)


def _mix64(v: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on a uint64 array, in place (wrapping arithmetic), without its last
    xor-shift: that one only stirs the low 32 bits, which _below discards."""
    v ^= v >> np.uint64(30)
    v *= np.uint64(0xBF58476D1CE4E5B9)
    v ^= v >> np.uint64(27)
    v *= np.uint64(0x94D049BB133111EB)
    return v


def _below(h: np.ndarray, m: np.ndarray) -> np.ndarray:
    """A hash mapped onto 0..m-1 by multiplication (Lemire), without a slow integer division; overwrites
    h and returns it as int64."""
    h >>= np.uint64(32)
    h *= m.view(np.uint64)
    h >>= np.uint64(32)
    return h.view(np.int64)


def _member(b: np.ndarray, j: np.ndarray, first: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Which point stands at positions j of resamples b (b holds b * positions + salt): a member of j's
    stratum (first, members: its first point and its number of points) chosen by a hash of (b, j), so
    that a position drawn twice holds the same point."""
    h = j.astype(np.uint64)
    h += b
    e = _below(_mix64(h), members[j])
    e += first[j]
    return e


def _sampled_pair_slopes(x: np.ndarray, y: np.ndarray, resamples: int, rng: np.random.Generator,
                         intercepts: bool = True) -> tuple[np.ndarray, np.ndarray | None, float]:
    """Many points: each resample's slope is the median of SAMPLED_PAIRS of its pairwise slopes, and (for
    the first INTERCEPT_RESAMPLES) its own joint intercept; and the factor the caller scales their spread
    by (1 unless the resamples are smaller than the data, below).

    A resample has nv positions (grouped by size; nv = n up to SUBSAMPLE_POINTS, about SUBSAMPLE_POINTS
    above): position j of resample b holds member hash(b, j) mod m of j's stratum, so that a resample is
    the same whichever way it is built, and its pairs are positions drawn at random, so a resample costs
    O(SAMPLED_PAIRS + nv), not O(n^2). The second position of a pair is drawn outside the first one's
    stratum (pairs of equal size have no slope).

    The pair sampling adds noise to each resample's slope, and the more points a resample has the more
    that noise outweighs the resampling's own (measured: 3.2 times the spread at 50,400 points). So above
    SUBSAMPLE_POINTS the resamples have SUBSAMPLE_POINTS points, drawn from every stratum in proportion
    (the m-out-of-n bootstrap, with replacement), and their spread around the full data's line is scaled
    by sqrt(m / n): for an estimator that is asymptotically normal at the rate sqrt(n), as Theil-Sen's
    slope and the median are, the spread of m-point resamples is sqrt(n / m) times that of n-point ones."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    n = len(xs)
    strata = _strata(xs)
    start = np.array([g[0] for g in strata], dtype=np.int64)
    size = np.array([len(g) for g in strata], dtype=np.int64)
    vsize = size if n <= SUBSAMPLE_POINTS else np.minimum(size, np.maximum(2, np.round(size * SUBSAMPLE_POINTS / n)
                                                                           .astype(np.int64)))
    nv = int(vsize.sum())                      # positions of a resample
    vstart = np.concatenate([[0], np.cumsum(vsize)[:-1]])
    vfirst, vmembers = np.repeat(vstart, vsize), np.repeat(vsize, vsize)  # a position's stratum among positions
    first, members = np.repeat(start, vsize), np.repeat(size, vsize)      # ... and among the points
    salt = np.uint64(rng.integers(1, 2**62))
    out = np.empty(resamples)
    # resamples per pass: 50. A pass draws its pairs together, so the count is part of the numbers: another
    # gives other (equally valid) resamples. Fewer a pass would save little of the loop (docs/performance.md)
    # at the price of every interval's digits, so it stays at 50
    chunk = max(1, int(2.5e5 // SAMPLED_PAIRS))
    half = SAMPLED_PAIRS // 2
    positions = np.arange(nv)
    # a second position is drawn among the nv - m positions past its first one's stratum (m its members),
    # counting on from the stratum's end; the resamples are laid out twice over, so that a count past the
    # last position reads the first ones again without a wrap
    span = (nv - vmembers).astype(float)
    past = vfirst + vmembers
    for b0 in range(0, resamples, chunk):       # in place where it can be: this loop is the summary's cost
        nb = min(chunk, resamples - b0)
        b = np.arange(b0, b0 + nb, dtype=np.uint64)[:, None] * np.uint64(nv) + salt
        j1 = rng.integers(0, nv, (nb, SAMPLED_PAIRS))
        u = rng.random((nb, SAMPLED_PAIRS))
        u *= span[j1]
        j2 = u.astype(np.int64)
        j2 += past[j1]
        # the pass's resamples built whole (nb x nv points, a tenth of its pairs), each row twice: a pair's
        # two points are looked up in them, not hashed pair by pair
        e = _member(b, np.broadcast_to(positions, (nb, nv)), first, members)
        row = np.arange(0, nb * 2 * nv, 2 * nv, dtype=np.int64)[:, None]
        j1 += row
        j2 += row
        rx, ry = np.tile(xs[e], 2).ravel(), np.tile(ys[e], 2).ravel()
        d = ry[j2]
        d -= ry[j1]
        dx = rx[j2]
        dx -= rx[j1]
        d /= dx
        # the median of an even count: the upper middle selected, the lower middle the largest below it
        # (one selection, a quarter of the time of selecting both)
        d.partition(half, axis=1)
        out[b0:b0 + nb] = (d[:, :half].max(axis=1) + d[:, half]) / 2
    scale = math.sqrt(nv / n)
    if not intercepts:
        return out, None, scale
    # each of the first resamples rebuilt whole (the same hash as above): its own joint intercept
    own = np.empty(min(resamples, INTERCEPT_RESAMPLES))
    for b in range(len(own)):
        e = _member(np.uint64(b) * np.uint64(nv) + salt, positions, first, members)
        own[b] = np.median(ys[e] - out[b] * xs[e])
    return out, own, scale


@dataclass(frozen=True)
class Fit:
    line: Line
    rate_bytes_per_s: Estimate
    latency_s: Estimate
    slopes: np.ndarray


def fit_rate(x_bytes: np.ndarray, y_s: np.ndarray, resamples: int, seed: int, confidence: float = 0.95,
             latency_interval: bool = True) -> Fit:
    """Theil-Sen rate and latency with stratified bootstrap intervals (the latency's left out where the
    caller needs the rate's only: it costs a median per resample)."""
    x = np.asarray(x_bytes, float)
    y = np.asarray(y_s, float)
    n = len(x)
    line = theil_sen(x, y)
    if not math.isfinite(line.slope_s_per_byte):
        nan = Estimate(math.nan, math.nan, math.nan, "theil-sen (needs two sizes)", n)
        return Fit(line, nan, nan, np.array([]))
    slopes, boot_intercepts = bootstrap_lines(x, y, resamples, seed, intercepts=latency_interval, line=line)
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
