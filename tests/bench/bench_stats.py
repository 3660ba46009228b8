"""The own code of analysis/stats beside the library it stands beside, on a files test's shape (a few sizes,
many points each): the grouped Theil-Sen slope against scipy.stats.theilslopes(method="joint"), medians of
--repeat calls side by side, and whether the floats are the same (docs/methods.md quotes the figure).

    PYTHONPATH=tests/bench python3 tests/bench/bench_stats.py [--repeat 5]"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats as scipy_stats

from common import timed

from stibium_py.analysis.stats import theil_sen_joint


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    print("points  sizes  own ms  scipy ms  scipy/own  same floats")
    for points, sizes in ((300, 10), (3000, 10), (5000, 14)):
        x = np.repeat(np.geomspace(4096, 1 << 30, sizes).round(), points // sizes)
        y = (2e-4 + x / 5e8) * np.exp(rng.normal(0, 0.05, len(x)))
        own = timed(lambda: theil_sen_joint(x, y), args.repeat)
        lib = timed(lambda: scipy_stats.theilslopes(y, x, method="joint"), args.repeat)
        res = scipy_stats.theilslopes(y, x, method="joint")
        same = theil_sen_joint(x, y) == (float(res.slope), float(res.intercept))
        print(f"{len(x):6}  {sizes:5}  {own * 1e3:6.1f}  {lib * 1e3:8.1f}  {lib / own:9.1f}  {same}")


if __name__ == "__main__":
    main()
