"""Recipe A against the kernel's own record: the accuracy test's plan (tests/truth/test_truth.py) run on a loop
device throttled to 52428800 B/s reads and 31457280 B/s writes, while a thread reads the loop device's counters
(/sys/dev/block/MAJ:MIN/stat, sectors read and written) every 2 ms on the same raw monotonic clock as the helper's.
For each file: the seconds stibium measured, the seconds from the first to the last of its bytes at the device
(counters), and the bytes the device saw over the file's own; then the rate each set of times gives (Theil-Sen,
scipy) against the rate set, beside stibium's estimate. Needs root.

    python3 tests/bench/bench_recipe_a_counters.py
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "truth"))
import devices
from test_truth import RECIPE_A_PLAN

R, W = 52428800, 31457280
work = Path(tempfile.mkdtemp(dir="/var/tmp"))
(work / "dev").mkdir()
with devices.recipe_a(work / "dev", R, W, size_bytes=2 << 30) as dev:
    source = subprocess.run(["findmnt", "-no", "SOURCE", str(dev.mount)], capture_output=True, text=True).stdout.strip()
    rdev = os.stat(source).st_rdev
    stat = Path(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/stat")
    samples, stop = [], threading.Event()

    def poll() -> None:
        while not stop.is_set():
            fields = stat.read_text().split()
            samples.append((time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW), int(fields[2]) * 512, int(fields[6]) * 512))
            time.sleep(0.002)

    sampler = threading.Thread(target=poll)
    sampler.start()
    plan = work / "plan.yaml"
    plan.write_text(RECIPE_A_PLAN.format(repeats=3))
    subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", str(dev.mount / "t"),
                    "--out", str(work / "reports"), "--no-history"], capture_output=True, check=True)
    stop.set()
    sampler.join()
run = next((work / "reports").iterdir())
summary = json.loads((run / "summary.json").read_text())
a = np.array(samples, dtype=float)
for op, column, truth in (("write", 2, W), ("read", 1, R)):
    sizes, ours, kernels = [], [], []
    for row in csv.DictReader(open(run / "measurements.csv")):
        if row["op"] != op or row["kind"] != "files" or not row["start_ns"]:
            continue
        t0, t1 = float(row["start_ns"]), float(row["end_ns"])
        seg = a[(a[:, 0] >= t0) & (a[:, 0] <= t1 + 5e6)]
        base, final = seg[0, column], seg[-1, column]
        first, last = seg[np.argmax(seg[:, column] > base), 0], seg[np.argmax(seg[:, column] >= final), 0]
        sizes.append(int(row["bytes"]))
        ours.append(float(row["seconds"]))
        kernels.append((last - first) / 1e9)
        print(op, row["bytes"], f"stibium {ours[-1]:.4f} s, counters {kernels[-1]:.4f} s,"
              f" bytes at the device {(final - base) / sizes[-1]:.4f} x the file's")
    est = next(e for e in summary["tests"] if e["op"] == op)["rate_bytes_per_s"]
    fits = {way: 1 / stats.theilslopes(times, sizes).slope for way, times in (("stibium's times", ours),
                                                                          ("the counters' times", kernels))}
    print(op, f"stibium's estimate {est['estimate'] / truth - 1:+.2%} [{est['low'] / truth - 1:+.2%},"
              f" {est['high'] / truth - 1:+.2%}];", "; ".join(f"Theil-Sen of {w}: {r / truth - 1:+.2%}" for w, r in fits.items()))
shutil.rmtree(work)
