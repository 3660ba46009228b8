"""How much wider the sampled-pair bootstrap interval of the rate is than the bootstrap's own, on a
synthetic files test of 14 sizes with 5 % noise: stibium's interval (B = 2000, 5000 sampled pairs per
resample) against a bootstrap whose every resample gets its exact Theil-Sen slope (B = 200, the exact
O(n log n) slope; about 40 s at 50,400 points).

    python3 tests/bench/bench_interval_width.py [--per-size 3600]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from stibium_py.analysis import regression
from stibium_py.analysis.stats import bootstrap, theil_sen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--per-size", type=int, default=3600)
    ap.add_argument("--exact-resamples", type=int, default=200)
    a = ap.parse_args()
    rng = np.random.default_rng(5)
    x = np.repeat(np.geomspace(1e4, 2e9, 14), a.per_size)
    y = 1e-4 + x / 5e8 * (1 + 0.05 * rng.standard_normal(len(x))) + rng.exponential(2e-5, len(x))
    t0 = time.perf_counter()
    fit = regression.fit_rate(x, y, 2000, 12345)
    rate = fit.rate_bytes_per_s
    print(f"{len(x)} points: stibium's interval [{rate.low:.6g}, {rate.high:.6g}], "
          f"{100 * (rate.high - rate.low) / rate.estimate:.3f} % wide ({time.perf_counter() - t0:.1f} s)")
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    strata = bootstrap.strata_of(xs)
    t0 = time.perf_counter()
    exact = np.array([theil_sen.fast_theil_sen_slope(xs[idx], ys[idx]) for idx in (
        np.concatenate([g[rng.integers(0, len(g), len(g))] for g in strata]) for _ in range(a.exact_resamples))])
    lo, hi = np.quantile(1 / exact, [0.025, 0.975])
    print(f"exact-slope bootstrap B={a.exact_resamples}: [{lo:.6g}, {hi:.6g}], "
          f"{100 * (hi - lo) / rate.estimate:.3f} % wide ({time.perf_counter() - t0:.1f} s)")
    print(f"spread of stibium's resample slopes / the exact ones: {np.std(fit.slopes) / np.std(exact):.2f}")


if __name__ == "__main__":
    main()
