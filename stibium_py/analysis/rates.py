"""A rate per test point and its bootstrap draws, shared by compare and repeated runs.

A test point is what two runs can match: a files test and op (its rate from the Theil-Sen line of
time against size), or a pattern test's op, access, granularity and stride (the median throughput
over trials). The draws are the within-run bootstrap of that rate."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import patterns, regression

PointKey = tuple[str, str, str, int, int]


def point_key(row: dict[str, Any]) -> PointKey:
    if row["kind"] == "files":
        return (row["test"], row["op"], "files", 0, 0)
    return (row["test"], row["op"], row["access"], row["granularity_bytes"], row["stride_bytes"])


def by_point(rows: list[dict[str, Any]]) -> dict[PointKey, list[dict[str, Any]]]:
    out: dict[PointKey, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(point_key(r), []).append(r)
    return out


def describe(key: PointKey) -> str:
    test, op, access, gran, stride = key
    if access == "files":
        return f"{test} {op}"
    return f"{test} {op} {access} {gran} B" + (f" stride {stride} B" if stride else "")


def rate_draws(rows: list[dict[str, Any]], resamples: int, seed: int) -> tuple[float, float | None, np.ndarray, str]:
    """A rate, its latency (files tests) and its bootstrap draws: the Theil-Sen rate and
    intercept of a files test, the median throughput over trials of a pattern point."""
    if rows[0]["kind"] == "files":
        x = np.array([r["size_bytes"] for r in rows], float)
        y = np.array([r["seconds"] for r in rows], float)
        line = regression.theil_sen(x, y)
        slopes = regression.bootstrap_slopes(x, y, resamples, seed)
        with np.errstate(divide="ignore"):
            draws = np.where(slopes > 0, 1.0 / slopes, np.nan)
        rate = 1.0 / line.slope_s_per_byte if line.slope_s_per_byte > 0 else math.nan
        return rate, line.intercept_s, draws, f"theil-sen rate, stratified bootstrap B={len(draws)}"
    tput = np.array([r["bytes"] / r["seconds"] for r in rows], float)
    draws = patterns.bootstrap_medians(tput, resamples, seed)
    return float(np.median(tput)), None, draws, f"median throughput over trials, bootstrap B={resamples}"


def valid(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The measurements that count: no error and a positive time."""
    return [r for r in rows if not r.get("error") and r.get("seconds") and r["seconds"] > 0]
