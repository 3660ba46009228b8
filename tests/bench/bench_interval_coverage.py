"""Coverage of the 95 % intervals of a files test's rate and latency, by simulation with a fixed seed:
14 sizes from 1 MB to 2 GB, a rate drawn from 50 MB/s-3 GB/s and a latency from 50 us-5 ms (log-uniform),
noise log-normal 5 % (or Student t with 3 degrees of freedom, x 5 %), and 3 % planted outliers 2-10x slower
in one column; each row the share of simulated runs whose interval (analysis.regression.fit_rate) holds
the true value, rate/latency. With 1 or 2 repeats per size no interval is given (the share is of runs
that have one, so "-"). tests/test_analysis.py runs a small version.

    python3 tests/bench/bench_interval_coverage.py [--runs 300] [--resamples 400]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats

from stibium_py.analysis import regression

SIZES = np.geomspace(1e6, 2e9, 14)


def simulate(rng: np.random.Generator, repeats: int, noise: str, outliers: bool):
    rate = math.exp(rng.uniform(math.log(50e6), math.log(3e9)))
    latency = math.exp(rng.uniform(math.log(5e-5), math.log(5e-3)))
    x = np.repeat(SIZES, repeats)
    e = (stats.t.rvs(3, size=x.size, random_state=rng) if noise == "t3" else rng.normal(0, 1, x.size)) * 0.05
    y = (latency + x / rate) * np.exp(e)
    if outliers:
        hit = rng.random(x.size) < 0.03
        y[hit] *= rng.uniform(2, 10, hit.sum())
    return x, y, rate, latency


def coverage(repeats: int, noise: str, outliers: bool, runs: int, resamples: int = 400,
             seed: int = 20261122) -> tuple[float | None, float | None]:
    rng = np.random.default_rng(seed)
    rate_hits = latency_hits = given = 0
    for i in range(runs):
        x, y, rate, latency = simulate(rng, repeats, noise, outliers)
        fit = regression.fit_rate(x, y, resamples, seed + i)
        r, lat = fit.rate_bytes_per_s, fit.latency_s
        if not (math.isfinite(r.low) and math.isfinite(r.high)):
            continue
        given += 1
        rate_hits += r.low <= rate <= r.high
        latency_hits += lat.low <= latency <= lat.high
    return (rate_hits / given, latency_hits / given) if given else (None, None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--resamples", type=int, default=400)
    a = ap.parse_args()
    cases = [("normal", False), ("normal", True), ("t3", False)]
    print(f"{'repeats':>7}  " + "  ".join(f"{n + (' + 3 % outliers' if o else ''):>24}" for n, o in cases))
    for repeats in (1, 2, 3, 5, 10, 25):
        cells = []
        for noise, outliers in cases:
            r, lat = coverage(repeats, noise, outliers, a.runs, a.resamples)
            cells.append("no interval" if r is None else f"{r:.3f} / {lat:.3f}")
        print(f"{repeats:>7}  " + "  ".join(f"{c:>24}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
