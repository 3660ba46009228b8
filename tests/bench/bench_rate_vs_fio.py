"""stibium's open loop beside fio's rate_iops on one device of known service time (Recipe C, 2 ms a request, one
at a time; needs root): at half the device's capacity (measured kept busy), constant arrivals (fio's
rate_process=linear) and Poisson (rate_process=poisson), 4 KiB random reads with up to 8 in flight, the same seconds.
Prints the achieved rates and stibium's response times (from each due time) beside fio's completion latency (from
each submission), fio with its default reaping and with iodepth_batch_complete_min=1.

fio stamps a completion when it reaps it; between its rated submissions it sleeps until the next one's time, so a
request that completes during that sleep is stamped when fio wakes (docs/load.md has the figures).

    sudo python3 tests/bench/bench_rate_vs_fio.py [--seconds 20] [--dir /var/tmp]"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "truth"))
import devices  # noqa: E402

from stibium_py.run.helper import find_helper  # noqa: E402

READ = ["--bytes", "64MiB", "--granularity", "4KiB", "--access", "random", "--engine", "direct"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp"))
    args = parser.parse_args()
    why = devices.missing_for_recipe_c()
    if why:
        sys.exit(f"Recipe C {why}")
    helper = str(find_helper())
    with tempfile.TemporaryDirectory(dir=args.dir) as work, \
            devices.recipe_c(Path(work) / "dev", delay_s=0.002, parallel=1) as device:
        path = device.mount / "f.bin"
        subprocess.run([helper, "write", "--path", str(path), "--bytes", "64MiB", "--granularity", "1MiB"],
                       check=True, capture_output=True)

        def ours(*extra: str) -> dict:
            return json.loads(subprocess.run([helper, "read", "--path", str(path), *READ, *extra],
                                             capture_output=True, text=True, check=True).stdout)

        busy = ours("--duration", "5", "--queue-depth", "8")
        rate = round(0.5 * busy["requests"] / busy["seconds"])
        print(f"capacity kept busy {busy['requests'] / busy['seconds']:.1f}/s; offered {rate}/s, {args.seconds} s")
        for arrivals, process in (("constant", "linear"), ("poisson", "poisson")):
            o = ours("--duration", str(args.seconds), "--queue-depth", "8", "--rate", str(rate), "--arrivals",
                     arrivals, "--seed", "7")
            print(f"{arrivals:8} stibium   achieved {o['requests'] / o['seconds']:8.2f}/s  response p50 "
                  f"{o['resp_p50_s'] * 1e3:6.3f} ms  p99 {o['resp_p99_s'] * 1e3:6.3f} ms  (service p99 "
                  f"{o['lat_p99_s'] * 1e3:.3f} ms)")
            for label, extra in (("fio", []), ("fio bcm=1", ["--iodepth_batch_complete_min=1"])):
                done = subprocess.run(["fio", "--name=r", f"--filename={path}", "--rw=randread", "--bs=4k",
                                       "--direct=1", "--ioengine=libaio", "--iodepth=8", f"--rate_iops={rate}",
                                       f"--rate_process={process}", "--time_based", f"--runtime={args.seconds}",
                                       "--size=64M", "--randseed=7", "--output-format=json", *extra],
                                      capture_output=True, text=True, check=True)
                j = json.loads(done.stdout)["jobs"][0]["read"]
                pct = j["clat_ns"]["percentile"]
                print(f"{arrivals:8} {label:9} achieved {j['iops']:8.2f}/s  clat     p50 "
                      f"{pct['50.000000'] / 1e6:6.3f} ms  p99 {pct['99.000000'] / 1e6:6.3f} ms")


if __name__ == "__main__":
    main()
