"""Recipe A against the kernel's own record: the accuracy test's plan (tests/truth/test_truth.py) run on a loop
device throttled to 52428800 B/s reads and 31457280 B/s writes, while a thread reads the loop device's counters
(/sys/dev/block/MAJ:MIN/stat, sectors read and written) every 2 ms on the helper's raw monotonic clock
(devices.Counted). For each file: the seconds stibium measured; the seconds from the first to the last of its bytes
at the device; when the first arrived after the measurement's start and the last against its end; the bytes the
device had taken by its end over the file's own. Then the rate each set of times gives (Theil-Sen, scipy) against
the rate set, beside stibium's estimate. Needs root.

    python3 tests/bench/bench_recipe_a_counters.py
"""
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "truth"))
import devices
from test_truth import RECIPE_A_PLAN

R, W = 52428800, 31457280
work = Path(tempfile.mkdtemp(dir="/var/tmp"))
(work / "dev").mkdir()
with devices.recipe_a(work / "dev", R, W, size_bytes=2 << 30) as dev, devices.Counted(dev) as counted:
    plan = work / "plan.yaml"
    plan.write_text(RECIPE_A_PLAN.format(repeats=3))
    subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", str(dev.mount / "t"),
                    "--out", str(work / "reports"), "--no-history"], capture_output=True, check=True)
run = next((work / "reports").iterdir())
summary = json.loads((run / "summary.json").read_text())
for op, column, truth in (("write", counted.WRITE, W), ("read", counted.READ, R)):
    sizes, ours, kernels = [], [], []
    for row in csv.DictReader(open(run / "measurements.csv")):
        if row["op"] != op or row["kind"] != "files" or row["error"]:
            continue
        start, end, nbytes = int(row["start_ns"]), int(row["end_ns"]), int(row["bytes"])
        seconds, done_ns = counted.moved(start, nbytes, column)
        first_ns = done_ns - seconds * 1e9
        sizes.append(nbytes)
        ours.append(float(row["seconds"]))
        kernels.append(seconds)
        base = [x for x in counted.samples if x[0] <= start][-1][column]
        at_end = next(x for x in counted.samples if x[counted.BEFORE] >= end)[column]
        print(op, nbytes, f"stibium {ours[-1]:.4f} s, counters {seconds:.4f} s: the first byte at the device"
              f" {(first_ns - start) / 1e6:.1f} ms after the start, the last {(done_ns - end) / 1e6:+.1f} ms from its end;"
              f" bytes at the device by its end {at_end - base - nbytes:+d} over the file's")
    est = next(e for e in summary["tests"] if e["op"] == op)["rate_bytes_per_s"]
    fits = {way: 1 / stats.theilslopes(times, sizes).slope for way, times in (("stibium's times", ours),
                                                                          ("the counters' times", kernels))}
    print(op, f"stibium's estimate {est['estimate'] / truth - 1:+.2%} [{est['low'] / truth - 1:+.2%},"
              f" {est['high'] / truth - 1:+.2%}];", "; ".join(f"Theil-Sen of {w}: {r / truth - 1:+.2%}" for w, r in fits.items()))
shutil.rmtree(work)
