"""The rank statistics and quantiles of analysis/nonparametric.py against their scipy and ruptures
namesakes, on random data with ties, repeated sizes and both tails (fixed seeds): the summary of a run must
give the numbers it gave when it imported scipy.stats."""

from __future__ import annotations

import math

import numpy as np
import pytest
import ruptures
from scipy import stats

from stibium_py.analysis import nonparametric as npm

REL = 1e-12


def _cases(seed: int, count: int = 40):
    rng = np.random.default_rng(seed)
    for i in range(count):
        n = int(rng.integers(3, 400)) if i % 4 else int(rng.integers(3, 34))
        x = np.arange(n, dtype=float) + 0.5 * (i % 3)
        y = rng.normal(0, 1, n) + (0.02 * i - 0.4) * x / n
        if i % 5 == 0:
            y = np.round(y, 1)                      # ties in y
        if i % 7 == 0:
            x = np.floor(x / 3)                     # ties in x
        yield x, y


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kendall_tau_is_scipys(seed):
    for x, y in _cases(seed):
        ours = npm.kendall_tau(x, y)
        theirs = stats.kendalltau(x, y)
        assert ours[0] == pytest.approx(float(theirs.statistic), rel=REL, abs=1e-15)
        assert ours[1] == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-15)


def test_kendall_tau_of_a_perfect_order_and_of_constants():
    x = np.arange(10.0)
    theirs = stats.kendalltau(x, 2 * x)
    assert npm.kendall_tau(x, 2 * x) == (float(theirs.statistic), pytest.approx(float(theirs.pvalue), rel=REL))
    assert all(math.isnan(v) for v in npm.kendall_tau(x, np.ones(10)))
    long = np.arange(200.0)        # the exact p-value of a perfect order past 170 points (no float factorial)
    for y in (long, long[::-1], np.r_[1.0, 0.0, long[2:]]):
        theirs = stats.kendalltau(long, y)
        assert npm.kendall_tau(long, y) == pytest.approx((float(theirs.statistic), float(theirs.pvalue)),
                                                         rel=REL, abs=1e-300)


def _files_like(seed: int, sizes: int = 7, repeats: int = 10):
    rng = np.random.default_rng(seed)
    x = np.repeat(np.geomspace(1e4, 2e9, sizes).round(), repeats)
    y = (2e-4 + x / 5e8) * np.exp(rng.normal(0, 0.05, len(x)))
    y[rng.integers(0, len(x), 3)] *= 4            # outliers
    return x, y


@pytest.mark.parametrize("seed", range(8))
def test_theil_sen_and_siegel_are_scipys(seed):
    x, y = _files_like(seed, sizes=2 + seed, repeats=1 + 3 * seed)
    b, a = npm.theil_sen_joint(x, y)
    res = stats.theilslopes(y, x, method="joint")
    assert (b, a) == pytest.approx((float(res.slope), float(res.intercept)), rel=REL)
    b, a = npm.siegel(x, y)
    res = stats.siegelslopes(y, x)
    assert (b, a) == pytest.approx((float(res.slope), float(res.intercept)), rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_binary_segmentation_is_ruptures(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    z = rng.normal(0, 1, n)
    for cut in sorted(rng.choice(np.arange(15, n - 15), size=seed % 3, replace=False)):
        z[cut:] += rng.choice([-2.5, 2.0])
    z = np.clip(z, -5, 5)
    pen = 4 * math.log(n)
    theirs = ruptures.Binseg(model="l1", min_size=10, jump=1).fit(z.reshape(-1, 1)).predict(pen=pen)
    assert npm.binseg_l1(z, 10, pen) == theirs


@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 0.025])
def test_quantiles_are_scipys(p):
    assert npm.norm_ppf(p) == pytest.approx(float(stats.norm.ppf(p)), rel=1e-14, abs=1e-15)
    for df in (1, 2, 5, 12, 68, 1000):
        assert npm.t_ppf(p, df) == pytest.approx(float(stats.t.ppf(p, df)), rel=1e-13)


def test_binomial_sums_are_scipys():
    for n in (1, 2, 5, 9, 30, 101):
        k = np.arange(-2, n + 3)
        assert npm.binom_cdf(k, n, 0.5) == pytest.approx(stats.binom.cdf(k, n, 0.5), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_the_biweight_line_is_statsmodels(seed):
    import warnings

    import statsmodels.api as sm
    rng = np.random.default_rng(seed)
    compared = 0
    for i in range(15):
        x, y = _files_like(int(rng.integers(0, 1 << 30)), sizes=2 + i % 12, repeats=1 + i % 9)
        b, a = npm.theil_sen_joint(x, y)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = sm.RLM(y, sm.add_constant(x), M=sm.robust.norms.TukeyBiweight()).fit(
                    start_params=np.array([a, b])).params
        except ZeroDivisionError:        # two points: statsmodels has no residual degrees of freedom
            with pytest.raises(ZeroDivisionError):
                npm.tukey_biweight_line(x, y, a, b)
            continue
        assert npm.tukey_biweight_line(x, y, a, b) == pytest.approx(tuple(theirs), rel=1e-12)
        compared += 1
    assert compared >= 13


@pytest.mark.parametrize("distinct", [65, 300])
def test_theil_sen_with_many_distinct_sizes_is_scipys(distinct):
    # above 64 distinct x the slopes come from the whole difference matrix, below it group by group
    rng = np.random.default_rng(distinct)
    x = np.repeat(np.geomspace(1e4, 2e9, distinct).round(), 2)
    y = (2e-4 + x / 5e8) * np.exp(rng.normal(0, 0.05, len(x)))
    res = stats.theilslopes(y, x, method="joint")
    assert npm.theil_sen_joint(x, y) == (float(res.slope), float(res.intercept))


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
    assert len(every) > npm.SELECT_ABOVE_PAIRS
    assert npm.theil_sen_joint(x, y)[0] == float(np.median(every))


@pytest.mark.parametrize("n", [1601, 6400, 6401, 35715, 200_000])
def test_the_binomial_sums_of_the_middle_are_the_whole_sums(n):
    # p = 1/2: only the middle 20 sqrt(n) either side is summed; outside it every probability is 0.0
    i = np.arange(n + 1)
    lg = np.array([math.lgamma(v + 1) for v in range(n + 1)])
    whole = np.cumsum(np.exp(lg[n] - lg - lg[::-1] + i * math.log(0.5) + (n - i) * math.log1p(-0.5)))
    k = np.arange(-2, n + 3)
    expected = np.where(k < 0, 0.0, np.where(k >= n, 1.0, whole[np.clip(k, 0, n)]))
    assert np.array_equal(npm.binom_cdf(k, n, 0.5), expected)
