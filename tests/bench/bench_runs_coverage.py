"""Coverage of the interval of a ratio B / A between two machines whose runs vary, by simulation with a
fixed seed: machine B is 10 % faster, runs vary by 20 % (log-normal), trials within a run by 5 %. For
each number of runs per side, the share of simulated comparisons whose 95 % interval holds the true
ratio: the two-level interval of analysis/runs.py (runs resampled, then trials; widened by
t/z sqrt(K/(K-1))) against the one-level interval (all trials pooled, as an interval from inside
runs sees them). tests/test_runs.py runs the 5-run case.

    python3 tests/bench/bench_runs_coverage.py [--simulations 1000]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from stibium_py.analysis import runs
from stibium_py.analysis.stats import bootstrap

TRUE_RATIO = 1.10        # machine B is 10 % faster
BETWEEN_RUNS = 0.20      # runs vary by 20 % (log-normal sd)
WITHIN_RUN = 0.05        # trials within a run vary by 5 %
TRIALS = 5
CONFIDENCE = 0.95


def _side(rng: np.random.Generator, rate: float, n_runs: int, resamples: int) -> tuple[list[float], list[np.ndarray]]:
    """n_runs runs of one pattern point: each run's median throughput and its within-run bootstrap draws."""
    logs, draws = [], []
    for k in range(n_runs):
        run_rate = rate * math.exp(rng.normal(0, BETWEEN_RUNS))
        trials = run_rate * np.exp(rng.normal(0, WITHIN_RUN, TRIALS))
        logs.append(math.log(float(np.median(trials))))
        draws.append(bootstrap.bootstrap_medians(trials, resamples, int(rng.integers(2**31))))
    return logs, draws


def coverage(n_runs: int, simulations: int, seed: int, two_level: bool, resamples: int = 1000) -> float:
    """Share of simulated comparisons whose 95 % interval of B / A holds the true ratio. One level: all
    trials of a side pooled as if one run (what an interval from inside a run can see)."""
    rng = np.random.default_rng(seed)
    covered = 0
    for s in range(simulations):
        la, da = _side(rng, 1.0, n_runs, resamples)
        lb, db = _side(rng, TRUE_RATIO, n_runs, resamples)
        if two_level:
            a = bootstrap.two_level_draws(da, resamples, seed + 2 * s)
            b = bootstrap.two_level_draws(db, resamples, seed + 2 * s + 1)
            factor = runs.widening(CONFIDENCE, la, lb)
        else:
            a, b, factor = np.concatenate(da)[:resamples], np.concatenate(db)[:resamples], 1.0
        point = math.exp(np.mean(lb) - np.mean(la))
        lo, hi = runs.widened_interval(point, b / a, CONFIDENCE, factor)
        covered += lo <= TRUE_RATIO <= hi
    return covered / simulations



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261122)
    a = ap.parse_args()
    print(f"{'runs per side':>13} {'two-level':>10} {'one-level':>10}   ({a.simulations} simulations each)")
    for k in (1, 2, 3, 5, 10):
        two = coverage(k, a.simulations, a.seed, two_level=True)
        one = coverage(k, a.simulations, a.seed, two_level=False)
        print(f"{k:>13} {two:>10.3f} {one:>10.3f}")


if __name__ == "__main__":
    main()
