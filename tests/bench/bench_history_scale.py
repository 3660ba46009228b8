"""The history at a lab's scale, for docs/performance.md: a history file of DRIVES drives with RUNS runs each
(POINTS points a run, the noise of tests/fixtures/history_noise.json, one step of -20 % in the middle of each
drive's runs), then `stibium history check` and `stibium history` (the table and a page per drive) on it, each
timed as a command with its peak memory (the largest resident set of the command's process). With --tree DIR...
the commands run from other source trees as well (a worktree of an earlier commit), taking turns round by round.

    PYTHONPATH=tests:. python3 tests/bench/bench_history_scale.py --drives 1 --runs 10000 [--tree /tmp/old]
    PYTHONPATH=tests:. python3 tests/bench/bench_history_scale.py --drives 100 --runs 100

Each tree meets a lab's evening: `history check` with no step tests kept (history/step_tests.py), `stibium history`
after it, the check again, and the check of the next night's history (one run more a drive)."""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from history_simulation import noise


def make(path: Path, drives: int, runs: int, points: int, seed: int, step_at: int | None = None) -> None:
    """A history of `runs` runs a drive, the step at run `step_at` (default: the middle); each drive's runs drawn
    from a generator of its own, so that a history of one run more holds the same runs before it."""
    from stibium_py.history.db import History
    from stibium_py.history.entry import Drive, PointEntry, RunEntry
    deviations, own = noise()
    at = runs // 2 if step_at is None else step_at
    with History(path) as history:
        for d in range(drives):
            rng = np.random.default_rng([seed, d])
            drive = Drive(f"serial:M:S{d}", f"M (serial S{d})", "M", f"S{d}", "F1")
            entries = []
            for i in range(runs):
                started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1.7e9 + 3600 * i))
                step = math.log(0.8) if i >= at else 0.0
                pts = []
                for p in range(points):
                    rate = 1e8 * (1 + p) * math.exp(float(rng.choice(deviations)) + step)
                    half = 1.96 * float(rng.choice(own))
                    pts.append(PointEntry(f"point {p}", {"p": p}, "bytes", rate, rate * math.exp(-half),
                                          rate * math.exp(half), 8))
                entries.append(RunEntry(f"h{d}/{started}/run-{i}", f"/runs/{d}/run-{i}", f"run-{i}", None, started,
                                        started, "complete", None, f"host{d % 3}", "Linux", "quick", None, None, "0.1",
                                        "0.1", "ext4", None, 1, drive, tuple(pts)))
            history.add_many(entries)


def timed(tree: str, args: list[str], home: str) -> tuple[float, float, int]:
    """Seconds, peak resident GB and exit status of `python -m stibium_py ARGS` from the source tree, with
    STIBIUM_HOME at `home` (where a tree that keeps its step tests keeps them)."""
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)")
    env = {**os.environ, "PYTHONPATH": tree, "STIBIUM_HOME": home}
    # run from the tree: `python -m` puts the working folder first on the path, before PYTHONPATH
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "stibium_py", *args], env=env, cwd=tree,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024 / 1024, int(out[2])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--drives", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--points", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tree", action="append", default=[])
    args = ap.parse_args()
    trees = [str(Path.cwd()), *args.tree]
    with tempfile.TemporaryDirectory(prefix="stibium-scale-") as tmp:
        db, night = Path(tmp) / "h.sqlite", Path(tmp) / "h-next.sqlite"
        t = time.perf_counter()
        make(db, args.drives, args.runs, args.points, 1)
        make(night, args.drives, args.runs + 1, args.points, 1, args.runs // 2)
        print(f"made {args.drives} drives x {args.runs} runs x {args.points} points in {time.perf_counter() - t:.1f} s")
        results: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
        # a lab's evening: a check with nothing kept, its pages, the check again, then the next night's check with
        # one run more a drive (what a nightly job meets); each tree's kept tests in a folder of its own
        steps = (("check, nothing kept", db, ["check"]), ("history, after the check", db, ["--out", f"{tmp}/pages", "-q"]),
                 ("check again", db, ["check"]), ("check, one run more a drive", night, ["check"]))
        for _ in range(args.rounds):
            for tree in trees:
                home = Path(tmp) / f"home-{trees.index(tree)}"
                shutil.rmtree(home, ignore_errors=True)
                home.mkdir()
                for name, where, cmd in steps:
                    results.setdefault((tree, name), []).append(
                        timed(tree, ["history", "--history", str(where), *cmd], str(home)))
        for (tree, name), rs in results.items():
            print(f"{tree}: {name}: median {statistics.median(r[0] for r in rs):.1f} s, peak "
                  f"{max(r[1] for r in rs):.2f} GB, exit {rs[0][2]} ({len(rs)} rounds)")


if __name__ == "__main__":
    main()
