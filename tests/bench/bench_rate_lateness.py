"""The instrument's own lateness at a stated rate (helper --rate): 4 KiB reads from a file in the page cache (so
that each takes a few microseconds and the lateness is the helper's, not the device's), at each rate for --seconds,
constant and Poisson arrivals, with --depth requests in flight at most on one thread. Prints for each: the requests
done against rate x seconds (a Poisson schedule's count inside the time is a draw around it), the rate achieved, the requests issued more than 100 us late, and the lateness at p50, p99
and its maximum. Run it on an idle machine; a busy one's scheduler is in the figures.

    python3 tests/bench/bench_rate_lateness.py [--dir DIR] [--rates 1000,10000,100000] [--seconds 5] [--depth 8]
        [--threads 1] [--helper PATH]"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from stibium_py.run.helper import find_helper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp"))
    parser.add_argument("--rates", default="1000,10000,100000")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--helper", type=Path, default=None)
    args = parser.parse_args()
    helper = str(args.helper or find_helper())
    with tempfile.TemporaryDirectory(prefix="bench-rate-", dir=args.dir) as tmp:
        path = Path(tmp) / "f"
        subprocess.run([helper, "write", "--path", str(path), "--bytes", "64MiB", "--granularity", "1MiB", "--engine",
                        "buffered"], check=True, capture_output=True)
        print(f"{'rate':>8} {'arrivals':>8} {'expected':>8} {'done':>8} {'achieved':>10} {'late':>7} {'late p50':>9} "
              f"{'late p99':>9} {'late max':>9}")
        for rate in (int(r) for r in args.rates.split(",")):
            for arrivals in ("constant", "poisson"):
                done = subprocess.run(
                    [helper, "read", "--path", str(path), "--bytes", "64MiB", "--granularity", "4KiB", "--access",
                     "random", "--engine", "buffered", "--rate", str(rate), "--arrivals", arrivals, "--duration",
                     str(args.seconds), "--queue-depth", str(args.depth), "--threads", str(args.threads)],
                    capture_output=True, text=True, check=True)
                out = json.loads(done.stdout)
                expected = round(rate * args.seconds)
                print(f"{rate:>8,} {arrivals:>8} {expected:>8,} {out['requests']:>8,} "
                      f"{out['requests'] / out['seconds']:>10,.0f} {out['late_issues']:>7,} "
                      f"{out.get('issue_late_p50_s', 0) * 1e6:>7.1f}us {out.get('issue_late_p99_s', 0) * 1e6:>7.1f}us "
                      f"{out.get('issue_late_max_s', 0) * 1e6:>7.0f}us")


if __name__ == "__main__":
    main()
