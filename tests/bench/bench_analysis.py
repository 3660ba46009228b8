"""Summary plus report for a synthetic run of N measurements (default 100k):
seconds, peak memory and HTML size. Target: 10 s, 2 GB and 10 MB at 100k."""

from __future__ import annotations

import argparse
import resource
import shutil
import time

import numpy as np

from common import scratch
from stibium_py.report.build import build_report
from stibium_py.measurement import Measurement
from stibium_py.record import RUN_FORMAT
from stibium_py.store import MeasurementLog, write_json_atomic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100_000)
    a = ap.parse_args()
    d = scratch(None)
    try:
        rng = np.random.default_rng(0)
        sizes = np.geomspace(1e4, 2e9, 14).round()
        log = MeasurementLog(d)
        for seq in range(a.n):
            op = "write" if seq < a.n // 2 else "read"
            s = int(rng.choice(sizes))
            t = (2e-4 + s / 5e8) * float(np.exp(rng.normal(0, 0.05)))
            log.append(Measurement(**{"seq": seq, "test": "files", "op": op, "kind": "files", "access": "sequential",
                        "size_bytes": s, "granularity_bytes": s, "stride_bytes": 0, "trial": seq, "file": f"f{seq}",
                        "bytes": s, "seconds": t, "started_s": seq * 0.01, "resident_before": 0.0 if op == "read" else None,
                        "engine": "direct", "requests": 1}))
        log.close()
        write_json_atomic(d / "run.json", {"format": RUN_FORMAT, "plan": {"name": "synthetic"}, "status": "complete"})
        t0 = time.perf_counter()
        build_report(d)
        seconds = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        html = (d / "report.html").stat().st_size
        print(f"{a.n} measurements: summary + report {seconds:.2f} s, peak memory {peak / 1e9:.2f} GB, "
              f"HTML {html / 1e6:.2f} MB")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
