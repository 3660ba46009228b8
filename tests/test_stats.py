"""analysis/stats: the own code held to the library it stands beside (the grouped Theil-Sen slope against
scipy.stats.theilslopes, Kendall's exact distribution against scipy.stats.kendalltau(method="exact")), and the
library calls held to what the analyses expect of them at their edges (constants, empty series, two points)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from stibium_py.analysis import stats
from stibium_py.analysis.stats import theil_sen as lines

REL = 1e-12


def _files_like(seed: int, sizes: int = 7, repeats: int = 10):
    rng = np.random.default_rng(seed)
    x = np.repeat(np.geomspace(1e4, 2e9, sizes).round(), repeats)
    y = (2e-4 + x / 5e8) * np.exp(rng.normal(0, 0.05, len(x)))
    y[rng.integers(0, len(x), 3)] *= 4            # outliers
    return x, y


@pytest.mark.parametrize("seed", range(8))
def test_the_grouped_theil_sen_slope_is_scipys(seed):
    x, y = _files_like(seed, sizes=2 + seed, repeats=1 + 3 * seed)
    res = scipy_stats.theilslopes(y, x, method="joint")
    assert stats.theil_sen_joint(x, y) == pytest.approx((float(res.slope), float(res.intercept)), rel=REL)


@pytest.mark.parametrize("distinct", [65, 300])
def test_theil_sen_with_many_distinct_sizes_is_scipys(distinct):
    # above 64 distinct x the slopes come from the whole difference matrix, below it group by group
    rng = np.random.default_rng(distinct)
    x = np.repeat(np.geomspace(1e4, 2e9, distinct).round(), 2)
    y = (2e-4 + x / 5e8) * np.exp(rng.normal(0, 0.05, len(x)))
    res = scipy_stats.theilslopes(y, x, method="joint")
    assert stats.theil_sen_joint(x, y) == (float(res.slope), float(res.intercept))


@pytest.mark.parametrize("seed", range(6))
def test_the_selected_median_slope_is_the_median_of_every_slope(seed):
    # above SELECT_ABOVE_PAIRS pairs the median slope is selected among the few near it: it is the very
    # number np.median of every slope gives, ties (rounded times), outliers and groups of one included
    rng = np.random.default_rng(seed)
    sizes = np.geomspace(4096, 1 << 26, int(rng.integers(2, 30))).round()
    x = np.concatenate([sizes[:1], rng.choice(sizes, int(rng.integers(1500, 5000)))])
    y = 1e-4 + x / 2e8 + rng.normal(0, 1e-4, len(x))
    if seed % 2:
        y = np.round(y, 5)
    y[rng.integers(0, len(x), len(x) // 10)] *= 30
    values = np.unique(x)
    groups = [y[x == v] for v in values]
    every = np.concatenate([((groups[b][None, :] - groups[a][:, None]) / (values[b] - values[a])).ravel()
                            for a in range(len(values)) for b in range(a + 1, len(values))])
    assert len(every) > lines.SELECT_ABOVE_PAIRS
    assert stats.theil_sen_joint(x, y)[0] == float(np.median(every))


def _with_inversions(n: int, inversions: int) -> np.ndarray:
    """A permutation of 0..n-1 with exactly that many pairs out of order (the Lehmer code, greedily)."""
    left, rest, out = inversions, list(range(n)), []
    for i in range(n):
        k = min(left, n - 1 - i)
        out.append(rest.pop(k))
        left -= k
    return np.array(out, dtype=float)


@pytest.mark.parametrize("n", [3, 4, 5, 8, 10, 25, 33])
def test_kendalls_exact_distribution_is_scipys(n):
    pairs = n * (n - 1) // 2
    for discordant in sorted({0, 1, 2, pairs // 4, pairs // 2, pairs - 1, pairs}):
        y = _with_inversions(n, discordant)
        theirs = float(scipy_stats.kendalltau(np.arange(n), y, method="exact").pvalue)
        assert stats.kendall_p_exact(n, pairs - discordant) == pytest.approx(theirs, rel=1e-12, abs=1e-300)


def test_kendall_tau_of_constants_and_of_nothing_is_nan():
    x = np.arange(10.0)
    assert all(math.isnan(v) for v in stats.kendall_tau(x, np.ones(10)))
    assert all(math.isnan(v) for v in stats.kendall_tau(np.empty(0), np.empty(0)))
    assert stats.kendall_tau(x, 2 * x)[0] == pytest.approx(1.0)


def test_change_points_refuse_a_signal_shorter_than_a_segment():
    with pytest.raises(ValueError, match="a signal of 5 points cannot hold a segment of 10"):
        stats.change_points(np.zeros(5), 10, 1.0)
    z = np.r_[np.zeros(30), np.full(30, 3.0)]
    assert stats.change_points(z, 10, 4 * math.log(60)) == [30, 60]


def test_the_quantiles_and_sums_at_their_edges():
    assert stats.norm_ppf(0.975) == pytest.approx(1.959963984540054, rel=1e-15)
    assert stats.t_ppf(0.975, 1) == pytest.approx(12.706204736174698, rel=1e-13)
    k = np.arange(-2, 8)
    assert np.array_equal(stats.binom_cdf(k, 5, 0.5)[[0, 1, 7, 8, 9]], [0.0, 0.0, 1.0, 1.0, 1.0])
    assert stats.binom_cdf(np.array([2]), 5, 0.5)[0] == pytest.approx(0.5)


def test_the_biweight_line_of_two_points_has_no_residual_degrees_of_freedom():
    with pytest.raises(ZeroDivisionError):
        stats.tukey_biweight_line(np.array([1.0, 2.0]), np.array([1.0, 2.0]), 0.0, 1.0)
    x, y = _files_like(3)
    a, b = stats.tukey_biweight_line(x, y, *reversed(stats.theil_sen_joint(x, y)))
    assert b == pytest.approx(1 / 5e8, rel=0.05) and 0 < a < 1e-3


def test_the_least_squares_reference_line_is_statsmodels_ols():
    """regression.ols's closed form against statsmodels' OLS: slope, intercept and their 95 % intervals."""
    import numpy as np
    import statsmodels.api as sm
    from stibium_py.analysis.regression import ols
    rng = np.random.default_rng(11)
    x = np.repeat([1e5, 1e6, 4e6, 16e6], 6)
    y = 2e-4 + x / 2e8 * rng.lognormal(0, 0.05, len(x))
    ours = ols(x, y)
    fit = sm.OLS(y, sm.add_constant(x)).fit()
    (a_low, a_high), (b_low, b_high) = fit.conf_int(0.05)
    assert ours.intercept_s == pytest.approx(fit.params[0], rel=1e-9)
    assert ours.slope_s_per_byte == pytest.approx(fit.params[1], rel=1e-9)
    rate, latency = ours.rate.as_dict(), ours.latency.as_dict()
    assert (rate["low"], rate["high"]) == (pytest.approx(1 / b_high, rel=1e-9), pytest.approx(1 / b_low, rel=1e-9))
    assert latency["low"] == pytest.approx(max(a_low, 0.0), rel=1e-9, abs=1e-15)
    assert latency["high"] == pytest.approx(a_high, rel=1e-9)


def test_the_biweight_is_fitted_only_where_least_squares_and_theil_sen_disagree():
    """Where least squares falls inside Theil-Sen's interval the biweight would only repeat them (and costs the
    statsmodels import): left out; where an outlier drags least squares away, it is there to say which line the
    data follow."""
    from stibium_py.analysis import regression
    from stibium_py.kinds.files.result import _references
    rng = np.random.default_rng(72)
    x = np.repeat(np.array([1e6, 4e6, 16e6, 64e6]), 6)
    y = 1e-3 + x / 2e8 * (1 + rng.normal(0, 0.01, len(x)))
    fit = regression.fit_rate(x, y, 500, 1, 0.95)
    clean = _references(x, y, fit, True, 0.95)
    assert clean.ols is not None and clean.biweight is None
    y[-1] *= 3                                   # one file of 64 MB three times as slow
    fit = regression.fit_rate(x, y, 500, 1, 0.95)
    dragged = _references(x, y, fit, True, 0.95)
    assert dragged.biweight is not None
    assert not fit.rate_bytes_per_s.low <= dragged.ols.rate.estimate <= fit.rate_bytes_per_s.high
    assert abs(1 / dragged.biweight.slope_s_per_byte / 2e8 - 1) < 0.02     # the biweight follows the data


def _groups_by_lexsort(x, y):
    """sorted_groups as it was first written: one sort of every point by (x, y)."""
    order = np.lexsort((y, x))
    values, first = np.unique(x[order], return_index=True)
    bounds = [*first, len(x)]
    return values, [y[order[bounds[k]:bounds[k + 1]]] for k in range(len(values))]


@pytest.mark.parametrize("case", ["ties", "sorted", "nan-sizes", "one-size", "empty"])
def test_the_groups_are_those_of_one_sort_by_size_then_time(case):
    # sorted_groups puts the points in order of size and sorts each size's times on its own: the same arrays as a
    # sort of every point by both keys, ties of times, x already in order and NaN sizes (one group, last) included
    rng = np.random.default_rng(21)
    x = rng.choice([4096.0, 1e6, 3e6, 64e6], 3000)
    y = np.round(1e-4 + x / 2e8 + rng.normal(0, 1e-4, len(x)), 5)
    if case == "sorted":
        x = np.sort(x)
    elif case == "nan-sizes":
        x[rng.integers(0, len(x), 40)] = np.nan
    elif case == "one-size":
        x[:] = 1e6
    elif case == "empty":
        x, y = x[:0], y[:0]
    values, groups = lines.sorted_groups(x, y)
    ref_values, ref_groups = _groups_by_lexsort(x, y)
    assert np.array_equal(values, ref_values, equal_nan=True)
    assert len(groups) == len(ref_groups)
    assert all(np.array_equal(g, r) for g, r in zip(groups, ref_groups))


def _falls_by_sorting(values, groups, b):
    """The pairs whose residual does not rise from a smaller size to a larger one, each size's residuals searched
    in the smaller sizes' residuals sorted together again (the first way of counting them)."""
    smaller = groups[0] - b * values[0]
    falls = 0
    for g, v in zip(groups[1:], values[1:]):
        residuals = g - b * v
        falls += len(smaller) * len(residuals) - int(np.searchsorted(smaller, residuals, "left").sum())
        smaller = np.sort(np.concatenate([smaller, residuals]), kind="stable")
    return falls


@pytest.mark.parametrize("seed", range(4))
def test_the_concordance_counts_every_pair_as_a_sort_of_each_merge_does(seed):
    # each size's residuals merged at the places the search found them, the largest not merged: the same count at
    # any slope, pairwise slopes themselves (ties of residuals) and the ends included
    rng = np.random.default_rng(seed)
    x = rng.choice(np.geomspace(4096, 1 << 26, 3 + 4 * seed).round(), 2000 + 500 * seed)
    y = 1e-4 + x / 2e8 + rng.normal(0, 1e-4, len(x))
    if seed % 2:
        y = np.round(y, 4)
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    values, groups = lines.sorted_groups(xs, ys)
    tau = lines._concordance(xs, ys)
    pairs = lines.pair_count(groups)
    i, j = rng.integers(0, len(x), 30), rng.integers(0, len(x), 30)
    keep = x[i] != x[j]
    slopes = (y[j[keep]] - y[i[keep]]) / (x[j[keep]] - x[i[keep]])
    for b in [*slopes, 0.0, 1 / 2e8, -1.0, 1.0]:
        assert tau(b) == (pairs - 2 * _falls_by_sorting(values, groups, b)) / pairs


def test_a_merge_at_the_searched_places_is_the_sorted_union():
    rng = np.random.default_rng(3)
    a = np.sort(np.round(rng.normal(0, 1, 500), 1))
    b = np.sort(np.round(rng.normal(0, 1, 200), 1))
    merged = lines._merged(a, b, np.searchsorted(a, b, "left"))
    assert np.array_equal(merged, np.sort(np.concatenate([a, b])))
    assert np.array_equal(lines._merged(a, b[:0], np.searchsorted(a, b[:0])), a)
    assert np.array_equal(lines._merged(a[:0], b, np.zeros(len(b), np.int64)), b)
