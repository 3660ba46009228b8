"""Throughput against granularity, sequential reads and writes 4 KiB-512 MiB (direct, 1 GiB per trial),
with two helpers side by side in one go, alternating run by run: --before HELPER (e.g. one built from an
older commit) and the installed one. Prints the median throughput per granularity of each and their
ratio, and the system calls per request the new rows record. Use a low-noise device (--dir on a zram
ext4 mount): the point is the shape above 16 MiB, where an older helper cut requests into 16 MiB reads
and 64 MiB writes."""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from common import scratch

PLAN = """name: granularity-bench
description: sequential reads and writes 4 KiB to 512 MiB
target: {target}
defaults:
  engine: direct
tests:
  - name: seq
    kind: pattern
    op: [read, write]
    access: sequential
    granularities: {{from: 4KiB, to: 512MiB, factor: 4}}
    bytes: 1GiB
    span: 1GiB
    trials: 3
"""


def run(d: Path, helper: str | None, out: Path) -> dict[tuple[str, int], list[float]]:
    env = dict(os.environ)
    if helper:
        env["STIBIUM_HELPER"] = helper
    plan = d / "plan.yaml"
    plan.write_text(PLAN.format(target=d / "t"))
    proc = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--out", str(out)], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    run_dir = sorted(out.iterdir())[-1]
    rates: dict[tuple[str, int], list[float]] = defaultdict(list)
    calls: dict[tuple[str, int], str] = {}
    with open(run_dir / "measurements.csv", newline="") as f:
        for r in csv.DictReader(f):
            key = (r["op"], int(r["granularity_bytes"]))
            rates[key].append(int(r["bytes"]) / float(r["seconds"]))
            if r.get("syscalls"):
                calls[key] = f"{int(r['syscalls']) / int(r['requests']):.0f}"
    shutil.rmtree(run_dir)
    return rates, calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--before", required=True, help="path of the older helper")
    ap.add_argument("--dir", help="folder on the device to measure (default /var/tmp)")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    d = scratch(a.dir)
    before: dict = defaultdict(list)
    after: dict = defaultdict(list)
    calls: dict = {}
    try:
        for _ in range(a.rounds):
            for target, helper in ((before, a.before), (after, None)):
                rates, c = run(d, helper, d / "r")
                for k, v in rates.items():
                    target[k].extend(v)
                if helper is None:
                    calls = c
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{'op':6} {'granularity':>12} {'before MB/s':>12} {'after MB/s':>11} {'ratio':>6} {'calls/request':>14}")
    for key in sorted(after):
        b, n = statistics.median(before[key]) / 1e6, statistics.median(after[key]) / 1e6
        print(f"{key[0]:6} {key[1]:>12,} {b:>12.0f} {n:>11.0f} {n / b:>6.2f} {calls.get(key, '?'):>14}")


if __name__ == "__main__":
    main()
