"""Time outside the helper's timed intervals (start-up, spawns, data generation,
eviction, bookkeeping) as a share of `stibium run`'s wall time, analysis and
report excluded: 1 - sum(seconds) / (ended - started) from run.json and
measurements.csv. Target: at most 10 % for quick and access-patterns."""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys

from common import scratch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("plans", nargs="*", default=["quick"])
    ap.add_argument("--dir")
    a = ap.parse_args()
    for plan in a.plans:
        d = scratch(a.dir)
        try:
            proc = subprocess.run([sys.executable, "-m", "stibium_py", "run", plan, "--target", str(d / "t"),
                                   "--out", str(d / "r")], capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr)
            run_dir = next((d / "r").iterdir())
            run = json.loads((run_dir / "run.json").read_text())
            with open(run_dir / "measurements.csv", newline="") as f:
                rows = list(csv.DictReader(f))
            timed = sum(float(r["seconds"]) for r in rows)
            wall = run["ended_epoch_s"] - run["started_epoch_s"]
            print(f"{plan}: {len(rows)} measurements, wall {wall:.2f} s, timed {timed:.2f} s, "
                  f"outside the timed intervals {1 - timed / wall:.1%}")
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
