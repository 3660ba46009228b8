"""stibium compare of two synthetic runs of N measurements each (default 10k; --n 1000000 for the
million), 10000 resamples: the time of each stage (load, bootstraps and ratios, page), then
`stibium compare` end to end with its peak memory. Targets: 10k in 10 s, 1M in 30 s."""

from __future__ import annotations

import argparse
import shutil
import sys
import time

from bench_analysis import make_run
from common import run_measured, scratch
from stibium_py.results.compare import compare_runs, drawn, load_side
from stibium_py.report.compare_page import render


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10_000)
    a = ap.parse_args()
    d = scratch(None)
    try:
        (d / "a").mkdir()
        (d / "b").mkdir()
        make_run(d / "a", a.n, False, seed=1, rate_bytes_per_s=2e8)
        make_run(d / "b", a.n, False, seed=2, rate_bytes_per_s=3e8)
        t0 = time.perf_counter()
        run_a, run_b = load_side(d / "a"), load_side(d / "b")
        t1 = time.perf_counter()
        result = compare_runs(run_a, run_b)
        t2 = time.perf_counter()
        html = render(result, drawn(run_a, run_b))
        t3 = time.perf_counter()
        print(f"{len(run_a.rows)} + {len(run_b.rows)} measurements, 10000 resamples:")
        print(f"  load {t1 - t0:.2f} s, bootstraps and ratios {t2 - t1:.2f} s, page {t3 - t2:.2f} s "
              f"({len(html) / 1e6:.1f} MB)")
        for row in result.to_json()["rows"][:2]:
            q = row["ratio"]
            print(f"  {row['test']} {row['op']}: {q['estimate']:.3f} [{q['low']:.3f}, {q['high']:.3f}] ({q['method']})")
        seconds, peak = run_measured([sys.executable, "-m", "stibium_py", "compare", str(d / "a"), str(d / "b"),
                                      "--out", str(d / "c.html")])
        print(f"stibium compare end to end: {seconds:.2f} s, peak memory {peak / 1e9:.2f} GB")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
