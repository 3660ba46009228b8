"""What a user waits for, as the user meets it: whole commands, wall clock and peak memory, medians of
--repeat runs, for one source tree or several side by side (--tree DIR, e.g. a worktree of an older commit
beside this checkout). Rows:

  click-floor                   a bare interpreter importing click: what `--version`, `--help` and a completion
                                cannot do without (issue #72: within 0.06 s, as this floor)
  version, help, plans, plan-show  `stibium --version`, `stibium --help`, `stibium plans`, `stibium plan show quick`
  plan-show-floor               the interpreter importing what `plan show` cannot do without: click (the
                                command line), rich (its tables), ruamel.yaml (the plan's text) and the plan's
                                pydantic models (its validation), and nothing else: the floor of plan-show
  completion                    one shell-completion TAB (`stibium run qu<TAB>`)
  run-quick                     `stibium run quick`: its wall time against the seconds it measured, the
                                share of the run phase (run.json's start to end) outside the timed intervals,
                                and the seconds after it (the report, and the removal of the test files where
                                it goes on beside the report)
  report-quick                  `stibium report` of that quick run
  verify-refused                `stibium verify` of 100 TB on a folder without that much room: the one-line refusal
                                of a fill that does not fit (its plan expanded into some 190,000 operations first)
  report-100k, report-1m        `stibium report` of synthetic runs of 100k and 1M measurements (writes and
                                reads of 14 sizes, bench_analysis.make_run), with the page's size
  compare-10k                   `stibium compare` of two synthetic runs of 10k measurements each

Every tree runs `python -m stibium_py` with PYTHONPATH set to it (its modules compiled first) and the
installed helper (STIBIUM_HELPER), so only the Python differs, unless --helper gives each tree its own (in
the order of the trees: an older build kept aside, to measure a change of the helper too); the trees take turns, repeat by repeat, in an order that alternates. Goals (issue #30): the first four at most 0.3 s; run-quick at most 1.5x and 5 %;
report-quick 1 s; report-100k 4 s; report-1m 10 s and 1 GB and 8 MB; compare-10k 5 s.

    PYTHONPATH=tests/bench python3 tests/bench/bench_user_waits.py [--tree DIR ...] [--repeat 5]
        [--rows version,plans,...] [--dir DIR] [--helper PATH ...]"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench_analysis import make_run
from common import run_measured, scratch
from stibium_py.run.helper import find_helper

ROWS = ("click-floor", "version", "help", "plans", "plan-show", "plan-show-floor", "completion", "run-quick", "report-quick", "report-100k", "report-1m",
        "compare-10k", "verify-refused")


def _turns(trees: list[Path], i: int) -> list[Path]:
    """The trees' order in repeat i: forwards, then backwards (A B B A ...), so that no tree always runs first
    (measured: whichever ran first in every repeat was 5-30 % slower at the start-up rows)."""
    return trees if i % 2 == 0 else trees[::-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", help="a source tree to run (default: this checkout)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--dir", help="where the runs and test files go (default /var/tmp)")
    ap.add_argument("--helper", action="append", help="the helper each tree runs, in the order of --tree "
                    "(default: the installed one for every tree)")
    a = ap.parse_args()
    trees = [Path(t).resolve() for t in (a.tree or [Path(__file__).resolve().parents[2]])]
    rows = a.rows.split(",")
    d = scratch(a.dir)
    helpers = dict(zip(trees, a.helper or [str(find_helper())] * len(trees), strict=True))
    results: dict[str, dict[str, tuple[float, float, str]]] = {r: {} for r in rows}
    try:
        (d / "vt").mkdir()          # verify-refused's target, left empty
        if any(r.startswith("report-1") or r == "compare-10k" for r in rows):
            (d / "r100k").mkdir()
            make_run(d / "r100k", 100_000, False, seed=2)
            if "report-1m" in rows:
                (d / "r1m").mkdir()
                make_run(d / "r1m", 1_000_000, False, seed=3)
            for side, seed, rate in (("ca", 1, 2e8), ("cb", 2, 3e8)):
                (d / side).mkdir()
                make_run(d / side, 10_000, False, seed=seed, rate_bytes_per_s=rate)
        envs, commands = {}, {}
        for tree in trees:
            # compiled first, as an installed package is: a tree's modules would otherwise be compiled by
            # every command where the environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "stibium_py")], check=True,
                           stdout=subprocess.DEVNULL)
            env = envs[tree] = {**os.environ, "PYTHONPATH": str(tree), "STIBIUM_HELPER": helpers[tree],
                                       "COLUMNS": "100"}
            # an editable install's import hook wins over PYTHONPATH: every tree would then run the installed one
            found = subprocess.run([sys.executable, "-c", "import stibium_py; print(stibium_py.__file__)"], env=env,
                                   cwd=d, capture_output=True, text=True, check=True).stdout.strip()
            if not Path(found).resolve().is_relative_to(tree.resolve()):
                sys.exit(f"{tree} imports stibium_py from {found}: pip uninstall stibium (an editable install "
                         f"takes every tree's place), and set STIBIUM_HELPER")
            py = [sys.executable, "-m", "stibium_py"]
            commands[tree] = {
                "click-floor": ([sys.executable, "-c", "import click"], env),
                "version": (py + ["--version"], env),
                "help": (py + ["--help"], env),
                "plans": (py + ["plans"], env),
                "plan-show": (py + ["plan", "show", "quick"], env),
                "plan-show-floor": ([sys.executable, "-c", "import click, rich.console, rich.table, ruamel.yaml, "
                                     "stibium_py.plan.model"], env),
                "completion": ([sys.executable, "-c", "from stibium_py.cli import main; main(prog_name='stibium')"],
                               {**env, "_STIBIUM_COMPLETE": "bash_complete", "COMP_WORDS": "stibium run qu",
                                    "COMP_CWORD": "2"}),
                "report-100k": (py + ["report", str(d / "r100k")], env),
                "report-1m": (py + ["report", str(d / "r1m")], env),
                "compare-10k": (py + ["compare", str(d / "ca"), str(d / "cb"), "--out", str(d / "c.html")], env),
                "verify-refused": (py + ["verify", str(d / "vt"), "--size", "100TB", "--out", str(d / "vr"), "--no-history"],
                                   env),
            }
        # the trees take turns, repeat by repeat, so that a drift of the machine's speed falls on both alike
        for row in rows:
            if row in ("run-quick", "report-quick"):
                continue
            measured: dict[Path, list[tuple[float, float]]] = {t: [] for t in trees}
            pages: dict[Path, float] = {}
            for i in range(a.repeat):
                for tree in _turns(trees, i):
                    measured[tree].append(run_measured(*commands[tree][row], d,
                                                       expect=2 if row == "verify-refused" else 0))
                    if row.startswith("report-1"):
                        pages[tree] = (d / ("r100k" if row == "report-100k" else "r1m") / "report.html").stat().st_size
            for tree in trees:
                times, peaks = zip(*measured[tree])
                extra = f"page {pages[tree] / 1e6:.1f} MB" if tree in pages else ""
                results[row][str(tree)] = (statistics.median(times), statistics.median(peaks) / 1e9, extra)
        if "run-quick" in rows or "report-quick" in rows:
            quick: dict[Path, dict[str, list[Any]]] = {t: {"walls": [], "ratios": [], "outside": [], "after": [],
                                                           "reports": []}
                                                       for t in trees}
            for i in range(a.repeat):
                for tree in _turns(trees, i):
                    q = quick[tree]
                    out = d / f"q-{i}"
                    t0 = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "stibium_py", "run", "quick", "--target", str(d / "t"),
                                    "--out", str(out), "--quiet"], env=envs[tree], cwd=d, check=True,
                                   stdout=subprocess.DEVNULL)
                    wall = time.perf_counter() - t0
                    ended = time.time()
                    run_dir = next(out.iterdir())
                    run = json.loads((run_dir / "run.json").read_text())
                    timed = float(np.sum(np.genfromtxt(run_dir / "measurements.csv", delimiter=",", names=True,
                                                       usecols=("seconds",), dtype=float)["seconds"]))
                    q["walls"].append(wall)
                    q["ratios"].append(wall / timed)
                    q["outside"].append(1 - timed / (run["ended_epoch_s"] - run["started_epoch_s"]))
                    q["after"].append(ended - run["ended_epoch_s"])
                    if "report-quick" in rows:
                        q["reports"].append(run_measured([sys.executable, "-m", "stibium_py", "report", str(run_dir)],
                                                         envs[tree], d))
                    shutil.rmtree(out)
            for tree in trees:
                q = quick[tree]
                if "run-quick" in rows:
                    results["run-quick"][str(tree)] = (statistics.median(q["walls"]), float("nan"),
                                                       f"{statistics.median(q['ratios']):.2f}x the timed seconds, "
                                                       f"{statistics.median(q['outside']):.1%} outside, "
                                                       f"{statistics.median(q['after']):.2f} s after")
                if q["reports"]:
                    results["report-quick"][str(tree)] = (statistics.median(t for t, _ in q["reports"]),
                                                          statistics.median(p for _, p in q["reports"]) / 1e9, "")
        print(f"medians of {a.repeat}; seconds, peak GB" + "".join(f" | {t}" for t in trees))
        for row in rows:
            cells = [results[row].get(str(t)) for t in trees]
            print(f"{row:15}" + "".join(f" | {c[0]:7.2f} s {c[1]:5.2f} GB {c[2]}" if c else " | -" for c in cells))
        if len(trees) == 2:
            print("ratios (second / first): " + ", ".join(
                f"{row} {results[row][str(trees[1])][0] / results[row][str(trees[0])][0]:.2f}"
                for row in rows if all(str(t) in results[row] for t in trees)))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
