"""Every Theil-Sen line stibium draws, in one place, each variant where it is measurably better on stibium's data
than the one scipy gives (scipy.stats.theilslopes forms every pair in an n x n matrix), with the measured reason
beside it (docs/methods.md, docs/performance.md):

- theil_sen_joint: a files test's line, the median pairwise slope computed size by size (a few sizes and many
  points each: the same floats as scipy's, without the n x n matrices); the joint intercept median(y - b x);
- fast_theil_sen_slope: the same slope above EXACT_THEIL_SEN_MAX_POINTS points, O(n log n) a step (a search on
  the sign of Kendall's tau); theil_sen picks between the two;
- row_slopes: the slopes of many resamples at once (a sustained test's bootstrap of 400), one median over many
  rows instead of a Python loop;
- sen_interval: Sen's interval of a slope from the exact distribution of Kendall's S (rounds until steady).

The bootstraps that resample these lines are in bootstrap.py."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .imports import library
from .trend import kendall_p_exact


# above this many distinct x the pairwise slopes are taken from the whole n x n difference, below it group by
# group (a files test has a few sizes and many points each: half the pairs, none of the n x n matrices)
DENSE_ABOVE_GROUPS = 64


def theil_sen_joint(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The median of the pairwise slopes (pairs of distinct x) and the joint intercept median(y - b x), as
    scipy.stats.theilslopes(method="joint"). The slopes are the same numbers scipy divides out, and their median
    does not depend on their order, so they are neither sorted nor kept in an n x n matrix where x has few
    distinct values; where there are many of them, the median is selected among the few near it
    (_median_slope_of_groups)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    values, groups = sorted_groups(x, y)
    if len(values) > DENSE_ABOVE_GROUPS:
        deltax = x[:, np.newaxis] - x
        deltay = y[:, np.newaxis] - y
        slope = float(np.median(deltay[deltax > 0] / deltax[deltax > 0]))
    else:
        pairs = pair_count(groups)
        if pairs > SELECT_ABOVE_PAIRS and np.isfinite(y).all():
            slope = _median_slope_of_groups(groups, values, pairs)
        else:
            slopes = np.concatenate([((groups[b][np.newaxis, :] - groups[a][:, np.newaxis])
                                      / (values[b] - values[a])).ravel()
                                     for a in range(len(values)) for b in range(a + 1, len(values))] or [np.empty(0)])
            slope = float(np.median(slopes))
    return slope, float(np.median(y - slope * x))


def sorted_groups(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct x in order, and the y of each, sorted: a files test's sizes and their times, which both
    exact Theil-Sen methods for a few sizes work on (here and _concordance). The points are put in order of x
    alone and each group's y sorted on its own: a sort of all n by two keys (np.lexsort) took 4.5 times as long at
    500,000 points of 14 sizes, 13 times where x is in order already, as in _concordance (docs/performance.md)."""
    order = np.argsort(x)
    xs = x[order]
    if len(xs) and not np.isnan(xs[-1]):
        first = np.concatenate([[0], np.flatnonzero(xs[1:] != xs[:-1]) + 1])
        values = xs[first]
    else:       # NaN x (sorted last): one group of them, as np.unique makes it
        values, first = np.unique(xs, return_index=True)
    bounds = [*first, len(x)]
    ys = y[order]
    return values, [np.sort(ys[bounds[k]:bounds[k + 1]]) for k in range(len(values))]


def pair_count(groups: list[np.ndarray]) -> int:
    """How many pairs of points of different x the groups hold."""
    sizes = [len(g) for g in groups]
    return (sum(sizes) ** 2 - sum(m * m for m in sizes)) // 2


# above this many pairs of a few distinct x the median slope is selected, not taken from every slope
SELECT_ABOVE_PAIRS = 200_000
SELECT_SAMPLE = 100_000


def _median_slope_of_groups(groups: list[np.ndarray], values: np.ndarray, pairs: int) -> float:
    """What np.median of every slope (y_b - y_a) / (x_b - x_a), x_a < x_b, gives, without computing them all.

    With each group's y sorted, a row of a block (one y_a against every y_b of a larger x) is a
    nondecreasing sequence of floats (a rounded subtraction and a division by a positive number keep the
    order), so how many of its slopes are <= t is found by bisection on the row, computing the slopes it
    looks at exactly as they would be computed. The middle ranks are bracketed by quantiles of sampled
    slopes (checked by counting, widened where they miss), and only the slopes between the two ends are
    computed and the middle ones selected (docs/performance.md has its time against every slope's)."""
    # every row of every block: its y_a, its x step and where its y_b lie in one array of the groups
    offsets = np.concatenate([[0], np.cumsum([len(g) for g in groups])])
    ys = np.concatenate(groups)
    ya, dx, start, length = [], [], [], []
    for a in range(len(groups)):
        for b in range(a + 1, len(groups)):
            ya.append(groups[a])
            dx.append(np.full(len(groups[a]), values[b] - values[a]))
            start.append(np.full(len(groups[a]), offsets[b]))
            length.append(np.full(len(groups[a]), len(groups[b])))
    row_y, row_dx = np.concatenate(ya), np.concatenate(dx)
    row_start, row_len = np.concatenate(start), np.concatenate(length)

    def count_at_most(t: float) -> np.ndarray:
        """Per row, how many of its slopes are <= t (bisection on each row at once)."""
        lo, hi = np.zeros(len(row_y), np.int64), row_len.copy()
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = (lo + hi) // 2
            at = np.minimum(mid, row_len - 1)
            below = (ys[row_start + at] - row_y) / row_dx <= t
            lo = np.where(active & below, mid + 1, lo)
            hi = np.where(active & ~below, mid, hi)

    # the ranks np.median takes: the middle one, or the two middle ones whose mean it gives
    ranks = (pairs // 2,) if pairs % 2 else (pairs // 2 - 1, pairs // 2)
    # sampled slopes, uniform over all pairs: a row at random in proportion to its length, then a y_b
    rng = np.random.default_rng(0)
    weights = np.cumsum(row_len)
    rows = np.searchsorted(weights, rng.integers(0, pairs, SELECT_SAMPLE), side="right")
    cols = (rng.random(SELECT_SAMPLE) * row_len[rows]).astype(np.int64)
    sample = np.sort((ys[row_start[rows] + cols] - row_y[rows]) / row_dx[rows])
    q_lo, q_hi = ranks[0] / pairs, (ranks[-1] + 1) / pairs
    half = 5 * 0.5 / math.sqrt(SELECT_SAMPLE) + 1 / SELECT_SAMPLE
    while True:     # widened until bracketed; at the latest when both ends are infinite (every slope)
        t_lo = sample[int(max(0.0, q_lo - half) * (SELECT_SAMPLE - 1))] if q_lo - half > 0 else -math.inf
        t_hi = sample[int(math.ceil(min(1.0, q_hi + half) * (SELECT_SAMPLE - 1)))] if q_hi + half < 1 else math.inf
        c_lo = count_at_most(t_lo) if t_lo > -math.inf else np.zeros(len(row_y), np.int64)
        c_hi = count_at_most(t_hi) if t_hi < math.inf else row_len
        below_lo, up_to_hi = int(c_lo.sum()), int(c_hi.sum())
        if below_lo <= ranks[0] and up_to_hi > ranks[-1]:
            break
        half *= 4
    # the slopes in (t_lo, t_hi]: in each row, its columns c_lo to c_hi
    take = c_hi - c_lo
    row_of = np.repeat(np.arange(len(row_y)), take)
    col = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take) + c_lo[row_of]
    between = (ys[row_start[row_of] + col] - row_y[row_of]) / row_dx[row_of]
    chosen = np.partition(between, [r - below_lo for r in ranks])[[r - below_lo for r in ranks]]
    return float(np.mean(chosen))


# up to this many points the Theil-Sen slope is theil_sen_joint's (every pairwise slope, as scipy's theilslopes
# gives it); above, fast_theil_sen_slope's search (the same slope, O(n log n) a step)
EXACT_THEIL_SEN_MAX_POINTS = 5000


def fast_theil_sen_slope(x: np.ndarray, y: np.ndarray, iterations: int = 200) -> float:
    """Exact Theil-Sen slope in O(n log n) per step: the median pairwise slope b is
    where Kendall's tau of (x, y - b x) changes sign (Sen 1968). The root is bracketed by quantiles of
    sampled pairwise slopes (checked, widened where they miss it) and found by the Illinois variant of
    false position to SLOPE_TOLERANCE: at 1e-12, about 10 steps against bisection's 40 from the data's range;
    at 1e-9, 8 on untied times, 16-24 where they tie (docs/methods.md)."""
    order = np.argsort(x, kind="stable")
    x = x[order]
    y = y[order]
    tau = _concordance(x, y)
    lo, hi, f_lo, f_hi = _bracket(x, y, tau)
    side = 0
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if hi - lo <= SLOPE_TOLERANCE * max(abs(mid), 1e-300):
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


# the steps stop when the bracket is this narrow, relative to the slope: nine digits of a rate printed to three,
# whose interval is about 1e-2 wide. At 1e-12 a fit of 250,000 points took 14-17 steps of tau, 27-35 where the
# times tie; at 1e-9 8, and 16-24 where they tie; the slopes 2e-10 apart at most (docs/performance.md)
SLOPE_TOLERANCE = 1e-9
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

    last = len(groups) - 1

    def concordance(b: float) -> float:
        # pairs (smaller size, larger size) whose residual does not rise (slopes <= b): each size's
        # residuals searched in the sorted residuals of every smaller size, which grow by a merge of two
        # sorted runs (2.4 times as fast at 500,000 points as a search size against size). The merge puts each
        # residual where the search found its place, rather than sorting the two runs again, and the largest
        # size is searched but not merged: 0.71-0.74 of the time a step at 500,000 points (docs/performance.md)
        smaller = groups[0] - b * values[0]
        falls = 0
        for k in range(1, len(groups)):
            residuals = groups[k] - b * values[k]
            places = np.searchsorted(smaller, residuals, "left")
            falls += len(smaller) * len(residuals) - int(places.sum())
            if k < last:
                smaller = _merged(smaller, residuals, places)
        return (pairs - 2 * falls) / pairs

    return concordance


def _merged(sorted_values: np.ndarray, more: np.ndarray, places: np.ndarray) -> np.ndarray:
    """sorted_values and more (sorted too) in one sorted array, each of more put at its place in sorted_values
    (np.searchsorted's, "left"), shifted by the ones of more before it."""
    out = np.empty(len(sorted_values) + len(more))
    at = places + np.arange(len(more))
    rest = np.ones(len(out), bool)
    rest[at] = False
    out[at] = more
    out[rest] = sorted_values
    return out


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


def theil_sen(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Theil-Sen slope with the joint intercept median(y - b x): theil_sen_joint up to EXACT_THEIL_SEN_MAX_POINTS
    points, fast_theil_sen_slope above; (nan, median y) where x has fewer than two values."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if len(np.unique(x)) < 2:
        return math.nan, float(np.median(y)) if len(y) else math.nan
    if len(x) <= EXACT_THEIL_SEN_MAX_POINTS:
        return theil_sen_joint(x, y)
    slope = fast_theil_sen_slope(x, y)
    return slope, float(np.median(y - slope * x))


def slope_of(t: np.ndarray, b: np.ndarray, max_points: int) -> float:
    """Theil-Sen slope of b against t: the median of all pairwise slopes, as theil_sen's (scipy's
    theilslopes) but without the intervals scipy computes beside it, which a bootstrap of 400 resamples
    does not use (the same slope; through theil_sen_joint the sustained tests took far longer:
    docs/performance.md). Above max_points points every k-th is used."""
    if len(t) < 2:
        return math.nan
    return float(row_slopes(t[None, :], b[None, :], max_points)[0])


PASS_ELEMENTS = 250_000       # pairwise slopes computed at once (2 MB an array): resamples a pass = this / pairs


def row_slopes(t: np.ndarray, b: np.ndarray, max_points: int) -> np.ndarray:
    """slope_of each row of b against the same row of t (one resample a row), the rows a pass at a time:
    one median over many rows instead of a Python loop over them (docs/performance.md)."""
    step = max(1, t.shape[1] // max_points)
    t, b = t[:, ::step], b[:, ::step]
    i, j = np.triu_indices(t.shape[1], 1)
    rows = max(1, PASS_ELEMENTS // len(i))
    out = np.empty(len(t))
    for first in range(0, len(t), rows):
        dt = t[first:first + rows, j] - t[first:first + rows, i]
        db = b[first:first + rows, j] - b[first:first + rows, i]
        ok = dt > 0
        if ok.all():
            out[first:first + rows] = np.median(db / dt, axis=1)
        else:       # a chunk timed at zero seconds: its pairs have no slope
            out[first:first + rows] = [np.median(r[k] / d[k]) if k.any() else math.nan
                                       for r, d, k in zip(db, dt, ok)]
    return out


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
    while 2 * k <= len(slopes) and kendall_p_exact(n, k - 1) <= 1 - confidence:
        k += 1
    k = max(k - 1, 1)
    return float(np.median(slopes)), float(slopes[k - 1]), float(slopes[len(slopes) - k])
