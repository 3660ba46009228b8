"""The error rates of the history's step finding (analysis/history.py) by simulation, for docs/history.md:
series of 30 runs with the noise of this machine's disk, without a step and with steps of 5, 10 and 20 %
(slower) at known places. With --noise-from DIR... it first measures that noise from run directories of
repeated runs of one plan (each point's log rate about its median, and the runs' own interval widths) and
writes tests/fixtures/history_noise.json.

    PYTHONPATH=tests:. python3 tests/bench/bench_history_steps.py [--noise-from DIR ...] [--series 1000]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from history_simulation import NOISE, simulate


def measure_noise(folders: list[Path]) -> None:
    from stibium_py.analysis.history import _se_from_interval
    from stibium_py.history.actions import read_runs
    read = read_runs(folders)
    by: dict[str, list] = {}
    for e in read.entries:
        for p in e.points:
            if p.estimate:
                by.setdefault(p.point, []).append((p.estimate, p.low, p.high))
    deviations, own = [], []
    for point, values in by.items():
        logs = np.log([v[0] for v in values])
        deviations += list(logs - np.median(logs))
        own += [s for s in (_se_from_interval(*v, 0.95) for v in values) if math.isfinite(s)]
        print(f"{point}: {len(values)} runs, sd of the log rate {np.std(logs, ddof=1):.3f}")
    NOISE.write_text(json.dumps({"runs": len(read.entries), "log_deviations": [round(x, 5) for x in deviations],
                                 "own_se": [round(x, 5) for x in own]}) + "\n")
    print(f"{len(read.entries)} runs; sd of all deviations {np.std(deviations):.3f}, median own se "
          f"{np.median(own):.4f} -> {NOISE}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise-from", nargs="*", type=Path)
    parser.add_argument("--series", type=int, default=1000)
    args = parser.parse_args()
    if args.noise_from:
        measure_noise(args.noise_from)
    print("| step | found within one run of its place | any step claimed | `check` flags the latest run (5 %) |")
    print("|---|---|---|---|")
    for step in (0.0, -0.05, -0.10, -0.20):
        t0 = time.perf_counter()
        r = simulate(step, args.series, seed=7)
        found = f"{r.found:.1%}" if step else "-"
        print(f"| {abs(step):.0%} | {found} | {r.claimed:.1%} | {r.check_flagged:.1%} |"
              f"  ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
