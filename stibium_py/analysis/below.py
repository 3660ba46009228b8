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

from ..machine.memory import Shape, shape_of
from ..rundir.table import Table
from .cache import RESIDENT_THRESHOLD

BELOW_SHARE = 0.4


def memory_shares(rows: Table, memory_rates: dict[Shape, float]) -> np.ndarray:
    """Per measurement: its rate as a share of what memory does for its shape (NaN where the run measured no
    memory rate for it, or for a write)."""
    out = np.full(len(rows), np.nan)
    if not len(rows) or not memory_rates:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = rows.col("bytes").astype(float) / rows.col("seconds").astype(float)
    for (op, nbytes, gran, access, depth, threads), idx in rows.groups(
            "op", "bytes", "granularity_bytes", "access", "queue_depth", "threads").items():
        if op == "read":
            memory = memory_rates.get(shape_of(int(nbytes), int(gran), str(access), int(depth), int(threads)))
            if memory:
                out[idx] = rate[idx] / memory
    return out


def absent(resident_before: np.ndarray) -> np.ndarray:
    """Per measurement: the page cache measured (nearly) empty just before it."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(resident_before) & (resident_before <= RESIDENT_THRESHOLD)


def flagged(shares: np.ndarray, resident_before: np.ndarray) -> np.ndarray:
    """Per measurement: at BELOW_SHARE of memory speed or more with the page cache measured (nearly) empty."""
    with np.errstate(invalid="ignore"):
        return absent(resident_before) & np.isfinite(shares) & (shares >= BELOW_SHARE)


def point_share(shares: np.ndarray, resident_before: np.ndarray) -> float | None:
    """A point's share of memory speed (a pattern point's trials, a files test's reads): the median over its
    measurements that met an empty page cache and have a memory rate; None where none did. The point was
    served by a cache below the file system where it is BELOW_SHARE or more."""
    ok = absent(resident_before) & np.isfinite(shares)
    return float(np.median(shares[ok])) if ok.any() else None


def reason(share: float) -> str:
    return f"below: {share:.0%} of memory speed for this read, with none of the file in the page cache"


def served_from_memory(uncached_bytes_per_s: float, memory_bytes_per_s: float) -> bool:
    """selftest's test of one pair: an uncached read at BELOW_SHARE of a read from memory or more."""
    return uncached_bytes_per_s >= BELOW_SHARE * memory_bytes_per_s


def point_shares(points: dict[Any, Table], memory_rates: dict[Shape, float]) -> dict[Any, float]:
    """compare's caution: each point (rates.by_point) served by a cache below the file system, to its share of
    memory speed (point_share); the other points are left out."""
    out = {}
    for key, rows in points.items():
        share = point_share(memory_shares(rows, memory_rates), rows.col("resident_before").astype(float))
        if share is not None and share >= BELOW_SHARE:
            out[key] = share
    return out
