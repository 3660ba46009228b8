"""A files test's analysis: its summary per op, its warnings and, where two runs compare it point by point, its
points."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...analysis import below
from .result import FilesResult, files_inputs, files_numbers
from ...analysis.rates import ONE_SIZE, PointKey, PointRule, bytes_per_s, line_rate
from ...analysis.summary import Pending, SummaryContext
from ...rundir.table import Table
from ...units import in_flight_label


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    """A files test and op, computed on the caller's executor where there is one (the same numbers)."""
    args = (op, files_inputs(rows, below.memory_shares(rows, ctx.memory_rates)), ctx.s, ctx.ceiling_bytes_per_s)
    if ctx.executor is None:
        numbers = files_numbers(*args)
        return lambda: [FilesResult(name=name, op=op, measurements=rows, **numbers)]
    later = ctx.executor.submit(files_numbers, *args)
    return lambda: [FilesResult(name=name, op=op, measurements=rows, **later.result())]


def below_reads(e: FilesResult) -> str | None:
    """How many of its reads ran at memory speed with none of the file in the page cache, in words; None: none."""
    flagged = e.below_cache
    if not flagged:
        return None
    return (f"{len(flagged)} of {e.n} reads ran at {float(np.median(e.memory_shares[flagged])):.0%} of memory speed "
            f"(median) with none of the file in the page cache")


def add_warnings(e: FilesResult, add: Any) -> None:
    label = f"{e.name} ({e.op})"
    if e.outliers:
        add("info", label, f"{len(e.outliers)} of {e.n} points are outliers (flagged, kept in the fit)",
            "look at them in the residual plot; many severe ones mean background activity: repeat the run on a "
            "quiet machine")
    if e.cache_suspects:
        add("warning", label, f"{len(e.cache_suspects)} reads look served from the page cache",
            "use between: evict (or drop-caches) and the direct engine; the rate without them is given beside")
    if e.fast_outliers:
        add("info", label, f"{len(e.fast_outliers)} reads were fast outliers: not the page cache (measured "
            "absent from it just before), a device cache or burst",
            "they are what the device did and stay in the fit; see the rate per size (size bands)")
    if e.drift.detected:
        add("warning", label, f"the rate drifted by {e.drift.drift_fraction:+.0%} over the run "
            f"({len(e.drift.change_points)} change points)",
            "throttling or background work (backups, indexing): see rate against elapsed time; repeat or cool down")
    if e.nonlinearity.detected:
        add("warning", label, "small and large files give different rates: one line does not describe this device",
            "read the rate per size (size bands) rather than the single fitted rate")
    rate = e.rate.as_dict()
    if rate.get("estimate") is not None and rate.get("low") is None and "no interval" in (rate.get("method") or ""):
        add("warning", label, "no interval for the rate: " + rate["method"].split("no interval: ")[-1],
            "set repeats: 3 or more in the plan")
    if e.n and len(np.unique(e.measurements.size_bytes)) < 2:
        add("warning", label, f"{ONE_SIZE}: a rate needs two sizes or more (time against size), so there is none",
            "give the test two sizes or more, such as sizes: [1MB, 64MB]")
    if e.slope_s_per_byte is not None and not e.slope_s_per_byte > 0:
        add("warning", label, "time does not grow with size here, so no transfer rate can be fitted",
            "use larger sizes (at least a few MB): these files are dominated by latency")
    intercept_s = e.fit.line.intercept_s
    if math.isfinite(intercept_s) and intercept_s < 0:
        add("info", label, f"the fitted line meets size 0 below 0 s ({intercept_s * 1e3:.3f} ms), which no time "
            f"can be: its latency is held to 0 s or more, and the summary shows the median time of the smallest size "
            f"instead", "smaller files measure the latency better")


# a files test and op is one point: its rate is the Theil-Sen slope of seconds against file size
POINTS = PointRule(lambda test, op, *_: PointKey(test, op, "files", "", 0, 0, 1, 1), "size_bytes",
                   lambda x, y, b, seed, c: line_rate(x, y, b, seed, c, latency_interval=False), "theil-sen rate",
                   op_rank=str, rate_format=bytes_per_s, unit=lambda op: "bytes", flight=in_flight_label)
