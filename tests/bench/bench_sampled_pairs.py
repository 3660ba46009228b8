"""The sampled-pair bootstrap of a large files fit (analysis/stats/bootstrap.py, bootstrap_lines above 150 points):
what compare's draws are (10,000 resamples a run and op) and a large run's files intervals. Times one fit of a
synthetic files test (14 sizes, 5 % noise) alone, and two at once on two threads (as compare runs them), for each
--tree in turn, alternating, with the spread and the 2.5/50/97.5 percentiles of the slopes so that trees whose
draws should agree can be seen to.

    python3 tests/bench/bench_sampled_pairs.py [--tree DIR ...] [--points 5000] [--resamples 10000] [--repeat 5]

Each tree runs in a fresh interpreter of its own, in the tree (its stibium_py first on the path: `python -c` puts
the working folder there)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ONE_TREE = """
import json, sys, threading, time
import numpy as np
from stibium_py.analysis.stats import bootstrap
points, resamples = {points}, {resamples}
rng = np.random.default_rng(1)
x = np.repeat(np.arange(1, 15) * 65536.0, points // 14 + 1)[:points]
y = 1e-4 + x / 2e8 * (1 + 0.05 * rng.standard_normal(points))
bootstrap.bootstrap_lines(x, y, 100, 7)          # numpy's and the module's first use, outside the times
t = time.perf_counter()
slopes, _ = bootstrap.bootstrap_lines(x, y, resamples, 7)
alone = time.perf_counter() - t
t = time.perf_counter()
threads = [threading.Thread(target=bootstrap.bootstrap_lines, args=(x, y, resamples, 8 + k)) for k in range(2)]
[th.start() for th in threads]
[th.join() for th in threads]
print(json.dumps([alone, time.perf_counter() - t, float(np.std(slopes)),
                  [float(v) for v in np.percentile(slopes, [2.5, 50, 97.5])]]))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", help="a source tree (default: this checkout)")
    ap.add_argument("--points", type=int, default=5000)
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    trees = [Path(t).resolve() for t in (a.tree or [Path(__file__).resolve().parents[2]])]
    code = ONE_TREE.format(points=a.points, resamples=a.resamples)
    found: dict[Path, list[list]] = {t: [] for t in trees}
    for i in range(a.repeat):
        for tree in (trees if i % 2 == 0 else trees[::-1]):
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tree,
                                 env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
            found[tree].append(json.loads(out.stdout))
    print(f"{a.points} points, {a.resamples} resamples; medians of {a.repeat} (every run's times in brackets)")
    for tree, runs in found.items():
        alone, two = [r[0] for r in runs], [r[1] for r in runs]
        print(f"{tree}: alone {statistics.median(alone):.2f} s ({', '.join(f'{v:.2f}' for v in alone)}); "
              f"two on two threads {statistics.median(two):.2f} s ({', '.join(f'{v:.2f}' for v in two)}); "
              f"slopes' spread {runs[0][2]:.4g}, percentiles {', '.join(f'{v:.6g}' for v in runs[0][3])}")


if __name__ == "__main__":
    main()
