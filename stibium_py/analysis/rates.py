"""A rate per test point and its bootstrap draws, shared by compare and repeated runs.

A test point is what two runs can match: a files test and op (its rate from the Theil-Sen line of
time against size), or a pattern test's op, access, granularity, stride, queue depth and threads (the
median throughput over trials). The draws are the within-run bootstrap of that rate."""

from __future__ import annotations

import math
from dataclasses import dataclass
from concurrent.futures import Executor
from typing import Any

import numpy as np

from ..table import Table
from ..units import format_size, in_flight_label
from . import patterns, regression
from .settings import Settings

# (test, op, access, granularity, stride, queue depth, threads); a files test: (test, op, "files", 0, 0, 1, 1)
PointKey = tuple[str, str, str, int, int, int, int]
KEY_FIELDS = ("test", "op", "access", "granularity_bytes", "stride_bytes", "queue_depth", "threads")


def by_point(rows: Table) -> dict[PointKey, Table]:
    """The measurements of each test point: tests in the order the run reached them, and inside a test
    by op, access, granularity, stride, queue depth and threads (not the run's shuffled order)."""
    keys: dict[PointKey, list[np.ndarray]] = {}
    for (test, op, kind, access, gran, stride, depth, threads), idx in rows.groups(
            "test", "op", "kind", "access", "granularity_bytes", "stride_bytes", "queue_depth", "threads").items():
        if kind == "sustained":          # a curve, not a point: compared by its stretches (comparison.py)
            continue
        key = (test, op, "files", 0, 0, 1, 1) if kind == "files" else \
            (test, op, access, int(gran), int(stride), int(depth), int(threads))
        keys.setdefault(key, []).append(idx)
    # groups come in the order of their first measurement, so the tests in the order the run reached them
    reached = {test: i for i, test in enumerate(dict.fromkeys(key[0] for key in keys))}
    return {key: rows.take(np.sort(np.concatenate(keys[key])))
            for key in sorted(keys, key=lambda k: (reached[k[0]], k[1:]))}


def key_json(key: PointKey) -> dict[str, Any]:
    """A point's key as the fields of its JSON row."""
    return dict(zip(KEY_FIELDS, key))


def key_of(row: dict[str, Any]) -> PointKey:
    """The key of a JSON row (one written before queue depth existed reads as 1 and 1)."""
    return (row["test"], row["op"], row["access"], row["granularity_bytes"], row["stride_bytes"],
            row.get("queue_depth", 1), row.get("threads", 1))


def label(key: PointKey) -> str:
    """A point for people: "rnd-4k read random 4 KiB Q32T1", "patterns write strided 4 KiB +64 KiB"."""
    test, op, access, gran, stride, depth, threads = key
    if access == "files":
        return f"{test} {op}"
    parts = [test, op, access, format_size(gran), f"+{format_size(stride)}" if stride else "",
             in_flight_label(depth, threads)]
    return " ".join(p for p in parts if p)


def describe(key: PointKey) -> str:
    test, op, access, gran, stride, depth, threads = key
    if access == "files":
        return f"{test} {op}"
    flight = in_flight_label(depth, threads)
    return f"{test} {op} {access} {gran} B" + (f" stride {stride} B" if stride else "") + (f" {flight}" if flight else "")


def draw_inputs(rows: Table) -> tuple[bool, np.ndarray, np.ndarray]:
    """What a point's draws are computed from: (files test, size, seconds) or (pattern, bytes moved,
    seconds). Arrays, not the table: a worker process gets these few megabytes, not every column."""
    files = rows.kind[0] == "files"
    return files, (rows.size_bytes if files else rows.bytes).astype(float), rows.seconds


def rate_draws(files: bool, x: np.ndarray, y: np.ndarray, resamples: int,
               seed: int) -> tuple[float, float | None, np.ndarray, str]:
    """A rate, its latency (files tests) and its bootstrap draws: the Theil-Sen rate and
    intercept of a files test (x sizes, y seconds), the median throughput over trials of a pattern
    point (x bytes moved, y seconds)."""
    if files:
        line = regression.theil_sen(x, y)
        slopes, _ = regression.bootstrap_lines(x, y, resamples, seed, intercepts=False, line=line)
        with np.errstate(divide="ignore"):
            draws = np.where(slopes > 0, 1.0 / slopes, np.nan)
        rate = 1.0 / line.slope_s_per_byte if line.slope_s_per_byte > 0 else math.nan
        return rate, line.intercept_s, draws, f"theil-sen rate, stratified bootstrap B={len(draws)}"
    tput = x / y
    draws = patterns.bootstrap_medians(tput, resamples, seed)
    return float(np.median(tput)), None, draws, f"median throughput over trials, bootstrap B={resamples}"


@dataclass(frozen=True)
class PointDraws:
    """One run's rate of one test point with its within-run bootstrap draws."""

    rate: float
    latency_s: float | None
    draws: np.ndarray
    n: int


def draws_per_run(runs: list[dict[PointKey, Table]], keys: list[PointKey], s: Settings,
                  executor: Executor | None = None) -> dict[tuple[int, PointKey], PointDraws]:
    """Every run's draws of every key it has, each from its own seed (s.seed + its place in the order:
    keys, then runs). The bootstraps are independent: the caller's executor runs them in parallel, and
    without one they run here, one after another, with the same results."""
    jobs = [(i, key) for key in keys for i, points in enumerate(runs) if key in points and len(points[key])]
    args = [(*draw_inputs(runs[i][key]), s.resamples, s.seed + n) for n, (i, key) in enumerate(jobs)]
    if executor is None:
        results = [rate_draws(*a) for a in args]
    else:
        results = list(executor.map(rate_draws, *zip(*args))) if args else []
    return {job: PointDraws(rate, lat, draws, len(a[1])) for job, a, (rate, lat, draws, _) in zip(jobs, args, results)}
