"""Reading measurements.csv of N rows (default 1 000 000): stibium's reader (pyarrow's CSV reader, then
numpy columns) against the other columnar readers it was chosen from, median of --rounds each.
Target: at most 3 s for a million rows.

    python3 tests/bench/bench_read.py [--n N] [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import shutil

from bench_analysis import make_run
from common import scratch, timed
from stibium_py.rundir.csvread import read_measurements


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    d = scratch(None)
    try:
        make_run(d, a.n, True)
        path = d / "measurements.csv"
        print(f"{a.n} rows, {path.stat().st_size / 1e6:.0f} MB")
        print(f"  stibium (pyarrow, numpy columns)   {timed(lambda: read_measurements(d), a.rounds):6.2f} s")
        data = path.read_bytes()
        try:
            import pandas as pd
            print(f"  pandas, C engine                   "
                  f"{timed(lambda: pd.read_csv(io.BytesIO(data), low_memory=False), a.rounds):6.2f} s")
        except ImportError:
            print("  pandas: not installed")
        try:
            import polars as pl
            print(f"  polars, then numpy columns         "
                  f"{timed(lambda: pl.read_csv(io.BytesIO(data), infer_schema_length=10000).to_numpy(), a.rounds):6.2f} s")
        except ImportError:
            print("  polars: not installed")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
