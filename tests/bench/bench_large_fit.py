"""The steps of one Theil-Sen fit of many points (a million-row files test's op: 500,000 points of 14 sizes), for
the source tree on PYTHONPATH: its groups (sorted_groups) with x shuffled and with x in order, one step of the
concordance the slope's search evaluates, the whole slope (theil_sen), and the slopes' digest, which two trees
share where their numbers are the same. Medians of --repeat calls; run it with each tree in turn to compare.

    PYTHONPATH=tests/bench:TREE python3 tests/bench/bench_large_fit.py [--points 500000] [--repeat 7]"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

from common import timed

from stibium_py.analysis.stats import theil_sen as lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    sizes = np.sort(rng.uniform(1e3, 3e8, 14)).round()
    x = sizes[rng.integers(0, len(sizes), args.points)]
    y = np.round(x / 2e8 * rng.lognormal(0, 0.3, len(x)), 7)     # rounded: ties, as timed seconds have
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    tau = lines._concordance(xs, ys)
    slope = lines.theil_sen(x, y)
    rows = [("groups, x shuffled", lambda: lines.sorted_groups(x, y)),
            ("groups, x in order", lambda: lines.sorted_groups(xs, ys)),
            ("one concordance step", lambda: tau(slope[0])),
            ("the slope (theil_sen)", lambda: lines.theil_sen(x, y))]
    for name, call in rows:
        print(f"{name:24} {timed(call, args.repeat) * 1e3:8.1f} ms")
    digest = hashlib.sha256(repr((slope, [tau(slope[0] * f) for f in (0.9, 0.999, 1.0, 1.001, 1.1)])).encode())
    print(f"{len(x)} points of {len(sizes)} sizes; slope {slope[0]!r}; digest {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
