"""The few rank statistics and quantiles the summary of an ordinary run needs, in numpy alone: importing
scipy.stats (which ruptures imports too) took 0.9 s of every report and every run on the project's machines,
longer than the analysis of a quick run itself. Each function computes what its scipy or ruptures namesake
computes, the same operations on the same floats, and tests/test_nonparametric.py holds each to it on
random data (ties, repeats and both tails included). A fit of more than EXACT_SCIPY_MAX_POINTS points and
more than DENSE_ABOVE_GROUPS distinct sizes still uses scipy.stats' tau (regression.fast_theil_sen_slope):
there the import is small beside the work.

- kendall_tau: scipy.stats.kendalltau (tau-b; the exact p-value without ties up to 33 points, else the
  normal approximation with the tie corrections), for the short series of the drift test (at most 1000).
- theil_sen_joint: scipy.stats.theilslopes(method="joint"): the median pairwise slope and median(y - b x).
- siegel: scipy.stats.siegelslopes (repeated medians, the hierarchical intercept).
- binseg_l1: ruptures.Binseg(model="l1", jump=1).fit(signal).predict(pen=...).
- tukey_biweight_line: statsmodels' RLM with TukeyBiweight() and its defaults (IRLS, MAD scale, convergence on
  the deviance), from given start parameters; statsmodels imports pandas and scipy.stats (1.7 s).
- norm_ppf, t_ppf, binom_cdf: the quantiles and the binomial sums, from the standard library (scipy.special
  alone took 0.3 s of a quick run's report)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np


# ------------------------------------------------------------------ quantiles

def norm_ppf(p: float) -> float:
    """The standard normal quantile (scipy.stats.norm.ppf)."""
    return NormalDist().inv_cdf(p)


def t_ppf(p: float, df: float) -> float:
    """Student's t quantile (scipy.stats.t.ppf), df > 0 and not necessarily whole: from 2000 degrees of
    freedom the Cornish-Fisher series in 1 / df (its terms to 1 / df^4, Abramowitz and Stegun 26.7.5),
    below by Newton's steps on the tail probability (_t_tail) from the normal quantile."""
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1 - p, df)
    z = norm_ppf(p)
    if df >= 2000:
        z2 = z * z
        g1 = (z2 + 1) * z / 4
        g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
        g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
        g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
        return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df
    t = z
    for _ in range(200):
        step = (_t_tail(t, df) - (1 - p)) / _t_density(t, df)
        t += step
        if abs(step) <= 1e-15 * abs(t):
            break
    return t


def _log_gamma_half(a: float) -> float:
    """ln(Gamma(a + 1/2) / Gamma(a)); from a = 20 by its asymptotic series, where the difference of two
    log-gammas would lose digits."""
    if a < 20:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    return 0.5 * math.log(a) - 1 / (8 * a) + 1 / (192 * a ** 3) - 1 / (640 * a ** 5) + 17 / (14336 * a ** 7)


def _t_density(t: float, df: float) -> float:
    return math.exp(_log_gamma_half(df / 2) - 0.5 * math.log(df * math.pi) - (df + 1) / 2 * math.log1p(t * t / df))


def _t_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0: half the regularised incomplete beta I_x(df / 2, 1 / 2), x = df / (df + t^2),
    by its continued fraction (on the side where it converges fast)."""
    a, b = df / 2, 0.5
    x, y = df / (df + t * t), t * t / (df + t * t)
    front = math.exp(_log_gamma_half(a) - 0.5 * math.log(math.pi) - a * math.log1p(t * t / df) + b * math.log(y))
    if x < (a + 1) / (a + b + 2):
        return 0.5 * front * _beta_fraction(a, b, x) / a
    return 0.5 * (1 - front * _beta_fraction(b, a, y) / b)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The incomplete beta function's continued fraction, by the modified Lentz method."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return h


def binom_cdf(k: np.ndarray, n: int, p: float) -> np.ndarray:
    """P(X <= k) for X ~ Binomial(n, p), k whole numbers (scipy.stats.binom.cdf); 0 below 0, 1 from n. The
    probabilities from log-gammas, summed from below.

    For p = 1/2 only the middle is computed: a probability 20 sqrt(n) or more from n / 2 is below
    exp(-800) (Hoeffding: P(X = k) <= exp(-2 (k - n/2)^2 / n)), which exp gives as 0.0, so the sums below
    the middle are 0.0 and above it the middle's last, the very floats the whole sum gives (tested): 0.01 s
    for the sums of 500,000 points against 0.13 s (a report of a million measurements made 56 of them)."""
    k = np.asarray(k)
    half = n if p != 0.5 else min(n, int(20 * math.sqrt(n)) + 2)
    lo, hi = max(0, n // 2 - half), min(n, n - n // 2 + half) if p == 0.5 else n
    i = np.arange(lo, hi + 1)
    lg = np.array([math.lgamma(v + 1) for v in range(lo, hi + 1)])     # lgamma(i + 1) for i = lo .. hi
    # lgamma(n - i + 1): the same list backwards where the middle is symmetric (lo = n - hi)
    lg_rest = lg[::-1] if lo == n - hi else np.array([math.lgamma(n - v + 1) for v in range(lo, hi + 1)])
    cdf = np.cumsum(np.exp(math.lgamma(n + 1) - lg - lg_rest + i * math.log(p) + (n - i) * math.log1p(-p)))
    return np.where(k < lo, 0.0, np.where(k >= n, 1.0, cdf[np.clip(k, lo, hi) - lo]))


# ------------------------------------------------------------------ Kendall's tau

def _dense_ranks(v: np.ndarray) -> np.ndarray:
    return np.r_[True, v[1:] != v[:-1]].cumsum(dtype=np.intp)


def _tie_counts(ranks: np.ndarray) -> tuple[int, int, int]:
    cnt = np.bincount(ranks).astype("int64", copy=False)
    cnt = cnt[cnt > 1]
    return (int((cnt * (cnt - 1) // 2).sum()), int((cnt * (cnt - 1.) * (cnt - 2)).sum()),
            int((cnt * (cnt - 1.) * (2 * cnt + 5)).sum()))


def _discordant(x: np.ndarray, y: np.ndarray) -> int:
    """Pairs ordered one way by x and the other by y (x sorted, ties in x ordered by y: pairs tied in x
    are then never counted)."""
    n = len(x)
    total = 0
    for i in range(n - 1):
        total += int(np.count_nonzero((y[i + 1:] < y[i]) & (x[i + 1:] > x[i])))
    return total


def _kendall_p_exact(n: int, c: int) -> float:
    """The two-sided exact p-value of c concordant pairs among n points without ties (Kendall 1970), as
    scipy.stats._mstats_basic._kendall_p_exact. kendall_tau asks for it up to 33 points, or with at most one
    pair out of order (c 0 or 1 after the fold), so scipy's scaled branch for 171 points or more is not
    needed; the two closed forms keep its guard against factorials too large for a float."""
    c = int(min(c, (n * (n - 1)) // 2 - c))
    if n <= 2:
        return 1.0
    if c == 0:
        prob = 2.0 / math.factorial(n) if n < 171 else 0.0
    elif c == 1:
        prob = 2.0 / math.factorial(n - 1) if n < 172 else 0.0
    elif 4 * c == n * (n - 1):
        prob = 1.0
    else:
        new = np.zeros(c + 1)
        new[0:2] = 1.0
        for j in range(3, n + 1):
            new = np.cumsum(new)
            if j <= c:
                new[j:] -= new[:c + 1 - j]
        prob = 2.0 * np.sum(new) / math.factorial(n)
    return float(np.clip(prob, 0, 1))


def kendall_tau(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b and its two-sided p-value, as scipy.stats.kendalltau(x, y) with its defaults."""
    x = np.asarray(x).ravel()
    y = np.asarray(y).ravel()
    size = x.size
    if size == 0:
        return math.nan, math.nan
    perm = np.argsort(y)
    x, y = x[perm], y[perm]
    y = _dense_ranks(y)
    perm = np.argsort(x, kind="mergesort")
    x, y = x[perm], y[perm]
    x = _dense_ranks(x)
    dis = _discordant(x, y)
    obs = np.r_[True, (x[1:] != x[:-1]) | (y[1:] != y[:-1]), True]
    cnt = np.diff(np.nonzero(obs)[0]).astype("int64", copy=False)
    ntie = int((cnt * (cnt - 1) // 2).sum())
    xtie, x0, x1 = _tie_counts(x)
    ytie, y0, y1 = _tie_counts(y)
    tot = (size * (size - 1)) // 2
    if xtie == tot or ytie == tot:
        return math.nan, math.nan
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = float(min(1., max(-1., con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie))))
    if xtie == 0 and ytie == 0 and (size <= 33 or min(dis, tot - dis) <= 1):
        return tau, _kendall_p_exact(size, tot - dis)
    m = size * (size - 1.)
    var = ((m * (2 * size + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (size - 2)))
    z = con_minus_dis / np.sqrt(var)
    return tau, float(np.clip(math.erfc(abs(z) / math.sqrt(2)), 0, 1))


# ------------------------------------------------------------------ lines

# above this many distinct x the pairwise slopes are taken from the whole n x n difference, below it group by
# group (a files test has a few sizes and many points each: half the pairs, none of the n x n matrices)
DENSE_ABOVE_GROUPS = 64


def theil_sen_joint(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The median of the pairwise slopes (pairs of distinct x) and the joint intercept median(y - b x). The
    slopes are the same numbers scipy's theilslopes divides out, and their median does not depend on their
    order, so they are neither sorted nor kept in an n x n matrix where x has few distinct values; where
    there are many of them, the median is selected among the few near it (_median_slope_of_groups)."""
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
    computed and the middle ones selected: 12.5 million slopes of 5000 points take 26 ms, against 0.22 s
    for every slope and its median."""
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
    """Siegel's repeated medians: for each point the median slope to every point of another x, the median of
    those; the intercept median(y - b x). Points of one x share their partners, so each x's rows are one
    block (a files test has a few sizes and many points each)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    per_point = np.empty(len(x))
    for value in np.unique(x):
        rows = np.flatnonzero(x == value)
        cols = np.flatnonzero(x != value)
        if not len(cols):
            per_point[rows] = math.nan
            continue
        slopes = (y[rows, None] - y[cols]) / (x[rows, None] - x[cols])
        per_point[rows] = np.median(slopes, axis=1)
    slope = float(np.median(per_point))
    return slope, float(np.median(y - slope * x))


# ------------------------------------------------------------------ change points

def _l1_cost(signal: np.ndarray, start: int, end: int) -> float:
    sub = signal[start:end]
    return float(abs(sub - np.median(sub, axis=0)).sum())


def binseg_l1(signal: np.ndarray, min_size: int, pen: float) -> list[int]:
    """Binary segmentation with the l1 cost, every index admissible: split the segment whose best split
    gains the most while that gain exceeds pen. The breakpoints (the ends of the segments, the signal's
    length last), as ruptures.Binseg(model="l1", min_size=min_size, jump=1).fit(signal).predict(pen=pen)."""
    signal = np.asarray(signal, dtype=float)
    if signal.ndim == 1:
        signal = signal.reshape(-1, 1)
    n = signal.shape[0]
    min_size = max(min_size, 2)
    if min_size > n:
        raise ValueError(f"a signal of {n} points cannot hold a segment of {min_size}")
    best: dict[tuple[int, int], tuple[int | None, float]] = {}

    def single(start: int, end: int) -> tuple[int | None, float]:
        if (start, end) not in best:
            whole = _l1_cost(signal, start, end)
            gains = [(whole - _l1_cost(signal, start, b) - _l1_cost(signal, b, end), b)
                     for b in range(start, end) if b - start >= min_size and end - b >= min_size]
            if gains:
                gain, b = max(gains)
                best[(start, end)] = (b, gain)
            else:
                best[(start, end)] = (None, 0)
        return best[(start, end)]

    bkps = [n]
    while True:
        starts = [0] + bkps[:-1]
        bkp, gain = max((single(s, e) for s, e in zip(starts, bkps)), key=lambda t: t[1])
        if bkp is None or not gain > pen:
            break
        bkps.append(bkp)
        bkps.sort()
    return bkps


# ------------------------------------------------------------------ robust regression

BIWEIGHT_C = 4.685            # statsmodels' TukeyBiweight() default: 95 % efficiency at the normal
MAD_NORMAL = NormalDist().inv_cdf(0.75)    # statsmodels.robust.scale.mad's c


def _biweight_rho(z: np.ndarray) -> np.ndarray:
    inside = np.less_equal(np.abs(z), BIWEIGHT_C)
    factor = BIWEIGHT_C ** 2 / 6.
    return -(1 - (z / BIWEIGHT_C) ** 2) ** 3 * inside * factor + factor


def _biweight_weights(z: np.ndarray) -> np.ndarray:
    return (1 - (z / BIWEIGHT_C) ** 2) ** 2 * np.less_equal(np.abs(z), BIWEIGHT_C)


def tukey_biweight_line(x: np.ndarray, y: np.ndarray, intercept: float, slope: float,
                        tol: float = 1e-8, maxiter: int = 50) -> tuple[float, float]:
    """(intercept, slope) of y = a + b x by iteratively reweighted least squares with Tukey's biweight,
    started from (intercept, slope): the steps of statsmodels' RLM(y, [1, x], M=TukeyBiweight()).fit(
    start_params=...) with its defaults (the scale the MAD of the residuals about 0 after each fit; stop when
    the deviance, the sum of rho of the residuals over the fit's residual variance, changes by at most tol,
    or after maxiter fits). Raises ValueError for weights that are not finite and ZeroDivisionError for two
    points (no residual degrees of freedom), as statsmodels does."""
    y = np.asarray(y, dtype=float)
    X = np.column_stack([np.ones(len(y)), np.asarray(x, dtype=float)])
    df = X.shape[0] - X.shape[1]
    if df <= 0:
        raise ZeroDivisionError("no residual degrees of freedom")

    def results(params: np.ndarray, w_half: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, float]:
        resid = y - X.dot(params)
        wresid = w_half * y - (w_half[:, None] * X if isinstance(w_half, np.ndarray) else w_half * X).dot(params)
        return params, resid, float(np.dot(wresid, wresid) / df)

    def deviance(resid: np.ndarray, fit_scale: float) -> float:
        # a line through every point has no residual variance: 0/0 here, a NaN deviance that ends the loop
        # (as in statsmodels), without numpy's warning about it
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(_biweight_rho(resid / fit_scale).sum())

    params, resid, fit_scale = results(np.array([intercept, slope], dtype=float), 1.0)
    scale = float(np.median(np.abs(resid - 0.0) / MAD_NORMAL))
    history = [np.inf, deviance(resid, fit_scale)]
    iteration = 1
    while True:
        if scale == 0.0:        # a perfect fit of the weighted data
            break
        weights = _biweight_weights(resid / scale)
        w_half = np.sqrt(weights)
        if not np.all(np.isfinite(w_half)):
            raise ValueError("weights are not finite")
        wexog = w_half[:, None] * X
        params = np.linalg.pinv(wexog).dot(w_half * y)
        params, resid, fit_scale = results(params, w_half)
        scale = float(np.median(np.abs(resid - 0.0) / MAD_NORMAL))
        history.append(deviance(resid, fit_scale))
        iteration += 1
        if not (abs(history[iteration] - history[iteration - 1]) > tol and iteration < maxiter):
            break
    return float(params[0]), float(params[1])
