"""Where a quick run's wall time goes, step by step, from the run's own records (run.json's start and end,
each row's start_ns and end_ns on the helper's clock, started_s on the run's), for one source tree or several
side by side (--tree, each with its own helper by --helper in the same order, as bench_user_waits.py):

  start-up          the command's start to run.json's start: the interpreter, imports, the plan, the checks
  memory probe      run.json's start to the first measurement (memory.py: the yardstick's reads)
  layouts           the gaps before each test's first measurement (a pattern test's file written and synced)
  between           the other gaps between measurements (an eviction, the row written, the next call)
  timed             the measurements' own intervals
  rest of the run   what is left of run.json's start to end (the helper's start and stop, the files' removal
                    where it is not beside the report)
  after the run     run.json's end to the command's end (the report, and the removal beside it)

Medians of --repeat runs; the trees take turns, their order alternating repeat by repeat.

    PYTHONPATH=tests/bench python3 tests/bench/bench_quick_steps.py [--tree DIR ...] [--helper PATH ...]
        [--repeat 5] [--dir DIR]"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import scratch
from stibium_py.run.helper import find_helper

STEPS = ("start-up", "memory probe", "layouts", "between", "timed", "rest of the run", "after the run")


def steps_of(run_dir: Path, began: float, ended: float) -> dict[str, float]:
    """A finished run's wall time in STEPS (seconds), from its records and the command's start and end."""
    run = json.loads((run_dir / "run.json").read_text())
    with open(run_dir / "measurements.csv", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["start_ns"]))
    gaps = [((int(b["start_ns"]) - int(a["end_ns"])) / 1e9, a["test"] != b["test"]) for a, b in zip(rows, rows[1:])]
    out = {"start-up": run["started_epoch_s"] - began,
           "memory probe": min(float(r["started_s"]) for r in rows),
           "layouts": sum(g for g, new_test in gaps if new_test),
           "between": sum(g for g, new_test in gaps if not new_test),
           "timed": sum(float(r["seconds"]) for r in rows),
           "after the run": ended - run["ended_epoch_s"]}
    phase = run["ended_epoch_s"] - run["started_epoch_s"]
    out["rest of the run"] = phase - sum(out[s] for s in ("memory probe", "layouts", "between", "timed"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", help="a source tree to run (default: this checkout)")
    ap.add_argument("--helper", action="append", help="the helper each tree runs, in the order of --tree")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", help="where the runs and test files go (default /var/tmp)")
    a = ap.parse_args()
    trees = [Path(t).resolve() for t in (a.tree or [Path(__file__).resolve().parents[2]])]
    helpers = dict(zip(trees, a.helper or [str(find_helper())] * len(trees), strict=True))
    d = scratch(a.dir)
    found: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    try:
        for tree in trees:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "stibium_py")], check=True,
                           stdout=subprocess.DEVNULL)
        for i in range(a.repeat):
            for tree in (trees if i % 2 == 0 else trees[::-1]):
                out = d / f"q-{i}"
                env = {**os.environ, "PYTHONPATH": str(tree), "STIBIUM_HELPER": helpers[tree]}
                began = time.time()
                subprocess.run([sys.executable, "-m", "stibium_py", "run", "quick", "--target", str(d / "t"),
                                "--out", str(out), "--quiet"], env=env, cwd=d, check=True, stdout=subprocess.DEVNULL)
                found[tree].append(steps_of(next(out.iterdir()), began, time.time()))
                shutil.rmtree(out)
        print(f"a quick run, medians of {a.repeat}: seconds (share of the wall time)" +
              "".join(f" | {t}" for t in trees))
        for step in (*STEPS, "wall"):
            cells = []
            for tree in trees:
                runs = found[tree]
                value = statistics.median(sum(r.values()) if step == "wall" else r[step] for r in runs)
                wall = statistics.median(sum(r.values()) for r in runs)
                cells.append(f"{value:6.3f} s ({value / wall:5.1%})")
            print(f"{step:16}" + "".join(f" | {c}" for c in cells))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
