"""stibium compare of two synthetic runs of about 10k measurements each with
10000 resamples: seconds (target: at most 10 s)."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import scratch  # noqa: E402
from stibium_py.compare import compare_runs, load_run  # noqa: E402
from stibium_py.report.compare_page import render  # noqa: E402
from synthetic import make_run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=700, help="per size and op: 7 sizes x 2 ops x repeats")
    a = ap.parse_args()
    d = scratch(None)
    try:
        ra = make_run(d / "a", rate_bytes_per_s=2e8, repeats=a.repeats, seed=1)
        rb = make_run(d / "b", rate_bytes_per_s=3e8, repeats=a.repeats, seed=2)
        t0 = time.perf_counter()
        run_a, run_b = load_run(ra), load_run(rb)
        result = compare_runs(run_a, run_b)
        html = render(result, run_a, run_b)
        seconds = time.perf_counter() - t0
        print(f"{len(run_a.rows)} + {len(run_b.rows)} measurements, 10000 resamples: compare + page {seconds:.2f} s, "
              f"page {len(html) / 1e6:.1f} MB")
        for row in result["rows"][:2]:
            q = row["ratio"]
            print(f"  {row['test']} {row['op']}: {q['estimate']:.3f} [{q['low']:.3f}, {q['high']:.3f}] ({q['method']})")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
