"""Lines through (x, y): the Theil-Sen slope computed size by size (own code: a files test has a few sizes and many
points each, where scipy.stats.theilslopes forms every pair in an n x n matrix; the same floats, docs/methods.md),
Siegel's repeated medians (scipy.stats.siegelslopes) and the Tukey-biweight robust line (statsmodels' RLM)."""

from __future__ import annotations

import math

import numpy as np

from .imports import library


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
    exact Theil-Sen methods for a few sizes work on (here and regression._concordance)."""
    order = np.lexsort((y, x))
    values, first = np.unique(x[order], return_index=True)
    bounds = [*first, len(x)]
    return values, [y[order[bounds[k]:bounds[k + 1]]] for k in range(len(values))]


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


def siegel(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Siegel's repeated medians (slope, intercept): for each point the median slope to every point of another x,
    the median of those; the intercept median(y - b x) (scipy.stats.siegelslopes, method "hierarchical")."""
    stats = library("scipy.stats")
    result = stats.siegelslopes(np.asarray(y, dtype=float).ravel(), np.asarray(x, dtype=float).ravel(),
                                method="hierarchical")
    return float(result.slope), float(result.intercept)


def tukey_biweight_line(x: np.ndarray, y: np.ndarray, intercept: float, slope: float) -> tuple[float, float]:
    """(intercept, slope) of y = a + b x by statsmodels' RLM with Tukey's biweight and its defaults (iteratively
    reweighted least squares, the MAD scale, convergence on the deviance), started from (intercept, slope).
    Raises ValueError where the weights are not finite and ZeroDivisionError for two points (no residual degrees
    of freedom), as statsmodels does."""
    import warnings

    TukeyBiweight = library("statsmodels.robust.norms").TukeyBiweight
    RLM = library("statsmodels.robust.robust_linear_model").RLM
    ConvergenceWarning = library("statsmodels.tools.sm_exceptions").ConvergenceWarning
    # a scale of 0 is a weighted fit through every point, where the iterations end with that line: not a
    # failure to report (one filter, not catch_warnings, which is not safe in the summary's threads)
    warnings.filterwarnings("ignore", message="Estimated scale is 0.0", category=ConvergenceWarning)
    y = np.asarray(y, dtype=float)
    X = np.column_stack([np.ones(len(y)), np.asarray(x, dtype=float)])
    if X.shape[0] <= X.shape[1]:
        raise ZeroDivisionError("no residual degrees of freedom")
    with np.errstate(divide="ignore", invalid="ignore"):      # a line through every point: 0/0 ends the loop
        params = RLM(y, X, M=TukeyBiweight()).fit(start_params=np.array([intercept, slope], dtype=float)).params
    return float(params[0]), float(params[1])
