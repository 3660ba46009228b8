"""Reads served by a cache below the file system (docs/methods.md): a read the page cache held none of
(residency measured at most 1 % just before it) that still ran at BELOW_SHARE or more of what memory does
for the same shape on this machine (memory.py) came from memory one layer down: a loop device's backing
file, a RAM disk, a virtual machine's host, a network server. The same threshold decides selftest's check
"direct read bypasses the cache", so a target that fails it there is flagged in a run too.

BELOW_SHARE was chosen by measurement (tests/bench/bench_below_cache.py, docs/methods.md): uncached reads of
this machine's disk and of a loop device with direct I/O ran at 0.03-0.27 of memory speed read by read,
reads through a loop device without direct I/O (its backing file cached) at 0.24-0.99 for requests of
256 KiB and more. Small requests (4 KiB) through a cached loop device stay below it (0.06-0.08): a
request's fixed cost there is the block layer's, not the memory copy's; the stack's facts name such a
device instead. Pure: measurements and memory rates in."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..memory import Shape, shape_of
from ..table import Table
from .cache import RESIDENT_THRESHOLD

BELOW_SHARE = 0.4


def memory_shares(rows: Table, memory_rates: dict[Shape, float]) -> np.ndarray:
    """Per measurement: its rate as a share of what memory does for its shape (NaN where the run measured no
    memory rate for it, or for a write)."""
    n = len(rows)
    out = np.full(n, np.nan)
    if not n or not memory_rates:
        return out
    reads = np.flatnonzero(rows.op == "read")
    if not reads.size:
        return out
    cols = [rows.col(c)[reads] for c in ("bytes", "granularity_bytes", "access", "queue_depth", "threads")]
    seconds = rows.col("seconds")[reads].astype(float)
    keys: dict[tuple, float] = {}
    for j, key in enumerate(zip(*cols)):
        if key not in keys:
            shape = shape_of(int(key[0]), int(key[1]), str(key[2]), int(key[3]), int(key[4]))
            keys[key] = memory_rates.get(shape, np.nan)
        out[reads[j]] = float(cols[0][j]) / seconds[j] / keys[key] if seconds[j] > 0 else np.nan
    return out


def flagged(shares: np.ndarray, resident_before: np.ndarray) -> np.ndarray:
    """Per measurement: at BELOW_SHARE of memory speed or more with the page cache measured (nearly) empty."""
    with np.errstate(invalid="ignore"):
        absent = np.isfinite(resident_before) & (resident_before <= RESIDENT_THRESHOLD)
        return absent & np.isfinite(shares) & (shares >= BELOW_SHARE)


def reason(share: float) -> str:
    return f"below: {share:.0%} of memory speed for this read, with none of the file in the page cache"


def served_from_memory(uncached_bytes_per_s: float, memory_bytes_per_s: float) -> bool:
    """selftest's test of one pair: an uncached read at BELOW_SHARE of a read from memory or more."""
    return uncached_bytes_per_s >= BELOW_SHARE * memory_bytes_per_s


def stack_layers(facts: dict[str, Any]) -> list[dict[str, str]]:
    """The layers below the target's file system recorded in run.json (stack.py), as dicts."""
    layers = facts.get("stack")
    return [x for x in layers if isinstance(x, dict)] if isinstance(layers, list) else []


def point_shares(points: dict[Any, Table], memory_rates: dict[Shape, float]) -> dict[Any, float]:
    """compare's caution: each point (rates.by_point) whose reads ran at memory speed with the page cache
    empty, to the median share of those reads; points that did not are left out."""
    out = {}
    for key, rows in points.items():
        shares = memory_shares(rows, memory_rates)
        resident = rows.col("resident_before").astype(float)
        with np.errstate(invalid="ignore"):
            absent = np.isfinite(shares) & np.isfinite(resident) & (resident <= RESIDENT_THRESHOLD)
        if absent.any() and float(np.median(shares[absent])) >= BELOW_SHARE:
            out[key] = float(np.median(shares[absent]))
    return out
