"""Coverage of the files test's 95 % intervals (rate and latency) at many points per size, where the
bootstrap runs on rescaled 500-point resamples (m-out-of-n): simulated runs of 14 sizes (10 kB-2 GB)
with a known rate (500 MB/s) and latency (100 us), one fit each, seeds 1000, 1001, ...

    python3 tests/bench/bench_large_n_coverage.py MODEL PER_SIZE RUNS

MODEL: normal (5 % multiplicative noise), t3 (Student t(3), scaled to the same spread), or
hetero-additive (additive noise growing with the square root of the size). Example:
`python3 tests/bench/bench_large_n_coverage.py normal 1430 200` (20,020 points a run; about 90 s on 2 cores).
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from stibium_py.analysis import regression

RATE_BYTES_PER_S, LATENCY_S = 5e8, 1e-4


def one_run(model: str, per_size: int, seed: int) -> tuple[bool, bool, float]:
    """(rate covered, latency covered, the rate interval's relative width) of one simulated run."""
    rng = np.random.default_rng(seed)
    x = np.repeat(np.geomspace(1e4, 2e9, 14), per_size)
    if model == "normal":
        y = LATENCY_S + x / RATE_BYTES_PER_S * (1 + 0.05 * rng.standard_normal(len(x)))
    elif model == "t3":
        y = LATENCY_S + x / RATE_BYTES_PER_S * (1 + 0.05 * rng.standard_t(3, len(x)) / np.sqrt(3))
    elif model == "hetero-additive":
        y = LATENCY_S + x / RATE_BYTES_PER_S + 1e-3 * rng.standard_normal(len(x)) * np.sqrt(x / 1e9)
    else:
        raise SystemExit(f"unknown model {model!r}: normal, t3 or hetero-additive")
    fit = regression.fit_rate(x, y, 2000, seed)
    rate, latency = fit.rate_bytes_per_s, fit.latency_s
    return (rate.low <= RATE_BYTES_PER_S <= rate.high, latency.low <= LATENCY_S <= latency.high,
            (rate.high - rate.low) / rate.estimate)


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    model, per_size, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with ProcessPoolExecutor() as pool:
        results = list(pool.map(one_run, [model] * runs, [per_size] * runs, range(1000, 1000 + runs)))
    print(f"{model}, {14 * per_size} points, {runs} runs: rate covered {np.mean([r[0] for r in results]):.3f}, "
          f"latency covered {np.mean([r[1] for r in results]):.3f}, median width of the rate's interval "
          f"{100 * np.median([r[2] for r in results]):.3f} %")


if __name__ == "__main__":
    main()
