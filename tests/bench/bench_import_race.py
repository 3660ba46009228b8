"""How often the analyses' libraries, imported plainly by three threads at once in a fresh interpreter, fail
(Python's module locks deadlock inside statsmodels): the reason for analysis/stats/imports.library. Prints the
failures out of --tries for the plain imports and for library(). Measured 2026-11-26 here: plain 15 of 15 on an
idle machine (1 of 3 under two test processes' load), library 0.

    python3 tests/bench/bench_import_race.py --tries 15
"""

from __future__ import annotations

import argparse
import subprocess
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from test_stats_imports import RACE  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=15)
    tries = parser.parse_args().tries
    for label, setup, imported in (("plain", "import importlib", "importlib.import_module(name)"),
                                   ("library", "from stibium_py.analysis.stats import library", "library(name)")):
        code = RACE.format(setup=setup, imported=imported)
        failed = sum(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    timeout=120).stdout.strip() != "whole" for _ in range(tries))
        print(f"{label}: {failed} of {tries} failed")


if __name__ == "__main__":
    main()
