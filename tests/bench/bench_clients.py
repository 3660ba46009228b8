"""What many clients add per measurement, outside the timed interval: a step (the barrier that starts every
phase) with no rows, and with one measurement's row from every rank carried to rank 0 (as a run's rows
travel); and how far apart the ranks leave a step (the spread of their first request's start).

    mpiexec --oversubscribe -n 4 python tests/bench/bench_clients.py [steps]

Prints the median and the 90th percentile of each, in microseconds, from rank 0; then what placing every rank's
clock on rank 0's takes (Cristian's method, as a run does it once when it starts or resumes), median of 5.
tests/bench/bench_hosts_steps.py runs it across the harness of hosts' links."""

from __future__ import annotations

import sys
import time

import numpy as np

from stibium_py.machine import sysinfo
from stibium_py.run.helper import raw_clock_ns
from stibium_py.rundir.measurement import Measurement
from stibium_py.clients.team import pickled_bytes
from stibium_py.clients.mpi import join

ROW = Measurement(seq=1, test="rnd-4k", op="read", kind="pattern", access="random", size_bytes=1 << 30,
                  granularity_bytes=4096, stride_bytes=0, trial=3, file="client-2/rnd-4k/data.bin", bytes=1 << 26,
                  seconds=0.4123456789, started_s=12.3456789, engine="direct", lat_p50_s=9.1e-05, lat_p99_s=0.00031,
                  lat_hist_ns=" ".join(f"{65536 + 4096 * i}-{69632 + 4096 * i}:{100 + i}" for i in range(40)),
                  start_ns=123456789012345, end_ns=123457201358024, rank=2, host="node-17", run_start_s=12.5,
                  run_end_s=12.9)


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    team = join()
    for rows, what in (([], "a step, no rows"), ([ROW], f"a step with each rank's row ({pickled_bytes(ROW)} B)")):
        took, leave = [], []
        for _ in range(steps):
            t0 = time.perf_counter_ns()
            team.step(rows, None, lambda batches: None)
            t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            took.append(time.perf_counter_ns() - t0)
            leave.append(t1)
        spread = team.everyone(leave)
        if team.rank == 0:
            t = np.array(took) / 1e3
            s = (np.max(spread, axis=0) - np.min(spread, axis=0)) / 1e3
            print(f"{what}: median {np.median(t):.1f} us, p90 {np.percentile(t, 90):.1f} us; ranks leave it within "
                  f"median {np.median(s):.1f} us, p90 {np.percentile(s, 90):.1f} us of each other ({team.size} ranks)")
    placing = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        clocks = team.clocks(lambda: raw_clock_ns() or 0, sysinfo.boot_id())
        placing.append(time.perf_counter_ns() - t0)
    if team.rank == 0:
        worst = max(c.uncertainty_ns for c in clocks or ())
        print(f"the clocks placed: median {np.median(placing) / 1e6:.1f} ms ({team.size} ranks), the largest "
              f"uncertainty {worst / 1e3:.1f} us")


if __name__ == "__main__":
    main()
