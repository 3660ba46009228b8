"""Summary plus report of a synthetic run of N measurements (default 100k; --n 1000000 for the million):
the time of each stage (load, fits, outliers and cache, size bands and nonlinearity, drift, figures,
HTML), then `stibium report` end to end in a child process with its peak memory and the report's size.
Targets: 100k in 4 s, 1M in 30 s and 1.5 GB, the report at most 8 MB; the time is publish_run's, in a
process that has imported stibium (Python and its libraries start in about 2 s more, printed apart).

The run has a files test (writes and reads of 14 sizes, 10 kB-2 GB) and, with --pattern, a pattern test
with a fifth of the measurements; about 1 % of reads are planted page-cache hits and 0.5 % slow outliers,
so the flagged points are drawn one by one."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import statistics
import time
from pathlib import Path

import numpy as np

from common import run_measured, scratch
from stibium_py.kinds.files import result as files_analysis
from stibium_py.analysis import outliers, regression
from stibium_py.analysis.stats import bootstrap
from stibium_py.analysis.settings import SUMMARY
from stibium_py.analysis.summary import summarize
from stibium_py.rundir.measurement import COLUMN_DEFAULTS, COLUMNS, INT_COLUMNS
from stibium_py.rundir.record import RUN_FORMAT
from stibium_py.report import publish
from stibium_py.report import build, figures
from stibium_py.rundir.store import write_json_atomic
from stibium_py.rundir.csvread import read_measurements


def make_run(d: Path, n: int, pattern: bool, seed: int = 0, rate_bytes_per_s: float = 5e8) -> None:
    """A synthetic run directory of n measurements, written column by column."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    rng = np.random.default_rng(seed)
    n_pat = n // 5 if pattern else 0
    n_files = n - n_pat
    sizes = np.geomspace(1e4, 2e9, 14).round()
    size = rng.choice(sizes, n_files).astype(np.int64)
    op = np.where(np.arange(n_files) < n_files // 2, "write", "read")
    seconds = (2e-4 + size / rate_bytes_per_s) * np.exp(rng.normal(0, 0.05, n_files))
    reads = np.flatnonzero(op == "read")
    cached = rng.choice(reads, len(reads) // 100, replace=False)
    seconds[cached] /= 20                                   # page-cache hits
    slow = rng.choice(n_files, n_files // 200, replace=False)
    seconds[slow] *= 5                                      # background work
    resident = np.where(op == "read", 0.0, np.nan)
    resident[cached] = 1.0
    g = rng.choice([4096, 65536, 1 << 20], n_pat).astype(np.int64)
    cols = {
        "seq": np.arange(n, dtype=np.int64),
        "test": np.r_[np.full(n_files, "files"), np.full(n_pat, "pat")],
        "op": np.r_[op, np.full(n_pat, "read")],
        "kind": np.r_[np.full(n_files, "files"), np.full(n_pat, "pattern")],
        "access": np.r_[np.full(n_files, "sequential"), np.full(n_pat, "random")],
        "size_bytes": np.r_[size, np.full(n_pat, 1 << 30)],
        "granularity_bytes": np.r_[size, g],
        "stride_bytes": np.zeros(n, np.int64),
        "trial": np.arange(n, dtype=np.int64),
        "file": np.array([f"files/f{k}.bin" for k in range(n_files)] + ["pat/data.bin"] * n_pat),
        "bytes": np.r_[size, np.full(n_pat, 64 << 20)],
        "seconds": np.r_[seconds, (64 << 20) / (3e8 * np.exp(rng.normal(0, 0.05, n_pat)))],
        "started_s": np.arange(n) * 0.01,
        "resident_before": np.r_[resident, np.zeros(n_pat)],
        "engine": np.full(n, "direct"),
        "requests": np.r_[np.ones(n_files, np.int64), (64 << 20) // g],
    }
    # columns added since: their defaults where they have one (queue depth and threads 1), else empty
    table = pa.table({c: cols[c] if c in cols else np.full(n, COLUMN_DEFAULTS[c], np.int64 if c in INT_COLUMNS else object) if c in COLUMN_DEFAULTS
                      else pa.nulls(n) for c in COLUMNS})
    pa_csv.write_csv(table, d / "measurements.csv", pa_csv.WriteOptions(quoting_style="needed"))
    write_json_atomic(d / "run.json", {"format": RUN_FORMAT, "plan": {"name": "synthetic"}, "status": "complete",
                                       "machine": {"hostname": "bench"}})


def stage(name: str, timings: dict[str, float], fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0
    return out


def stages(d: Path) -> dict[str, float]:
    """Each stage of summary and report, timed on its own."""
    t: dict[str, float] = {}
    table, _ = stage("load", t, read_measurements, d)
    good = table.valid()
    for (test, op, kind), idx in good.groups("test", "op", "kind").items():
        if kind != "files":
            continue
        rows = good.take(idx)
        x, y = rows.size_bytes.astype(float), rows.seconds
        stage("fits (Theil-Sen)", t, regression.theil_sen, x, y)
        stage("bootstrap", t, bootstrap.bootstrap_lines, x, y, SUMMARY.resamples, SUMMARY.seed)
        fit = stage("fit_rate (fit + bootstrap + intervals, once more)", t, regression.fit_rate, x, y,
                    SUMMARY.resamples, SUMMARY.seed, SUMMARY.confidence)
        r = stage("outliers", t, outliers.log_residuals, y, fit.line.predict(x))
        stage("outliers", t, lambda: outliers.classify(r, outliers.fences(r)))
        stage("size bands + nonlinearity", t, files_analysis._size_bands, x, rows.bytes / y,
              fit.rate_bytes_per_s.estimate, SUMMARY)
        stage("size bands + nonlinearity", t, files_analysis._nonlinearity, x, y, SUMMARY)
        stage("drift", t, files_analysis._drift, files_analysis.files_inputs(rows), r, fit)
    summary = stage("summary (all of the above, once more)", t, summarize, table, SUMMARY)
    figs = []
    for e in summary.tests:
        if isinstance(e, files_analysis.FilesResult):
            figs += stage("figures", t, lambda: [figures.time_vs_size(e), figures.residuals(e),
                                                 figures.rate_vs_size(e), figures.rate_vs_elapsed(e)])
    from stibium_py.rundir.record import RunRecord
    stage("HTML", t, build.render, RunRecord(), summary)
    # the target's figure: the median of three, since one run on this machine swings by 10 %
    whole = []
    for _ in range(3):
        t0 = time.perf_counter()
        publish.publish_run(d)
        whole.append(time.perf_counter() - t0)
    t["summary + report (publish_run, median of 3: " + ", ".join(f"{w:.2f}" for w in whole) + ")"] = \
        statistics.median(whole)
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--pattern", action="store_true", help="a fifth of the measurements in a pattern test")
    ap.add_argument("--keep", help="keep the run directory here (for a browser or compare)")
    a = ap.parse_args()
    d = Path(a.keep) if a.keep else scratch(None)
    d.mkdir(parents=True, exist_ok=True)
    try:
        make_run(d, a.n, a.pattern)
        print(f"{a.n} measurements ({(d / 'measurements.csv').stat().st_size / 1e6:.0f} MB of CSV)")
        for name, seconds in stages(d).items():
            print(f"  {name:<40} {seconds:7.2f} s")
        seconds, peak = run_measured([sys.executable, "-m", "stibium_py", "report", str(d)])
        html = (d / "report.html").stat().st_size
        summary = json.loads((d / "summary.json").read_text())
        flagged = sum(len({p["seq"] for key in ("outliers", "cache_suspects", "fast_outliers") for p in e[key]})
                      for e in summary["tests"])
        print(f"stibium report end to end: {seconds:.2f} s, peak memory {peak / 1e9:.2f} GB, report {html / 1e6:.2f} MB, "
              f"{flagged} flagged points")
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
