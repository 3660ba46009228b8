"""Tree tests: per phase and thread count the files per second (and, where the phase moves bytes, the bytes per
second) as the median over trials with its order-statistic interval, the latency of one file's operation from
every trial's histogram together, what the phase met in memory, and how the rate grows with threads
(docs/methods.md, "Trees of files")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...rundir.table import Table
from .shape import rate_unit
from ...analysis import rates
from ...analysis.estimate import Estimate
from ...analysis.histogram import HistogramError, LatencyHistogram

LATENCY_QUANTILES = {"lat_p50_s": 0.5, "lat_p90_s": 0.9, "lat_p99_s": 0.99, "lat_p999_s": 0.999}
MOVES_BYTES = ("create", "read", "copy")

# What each phase met, in words (between: none): metadata cannot be evicted file by file, so a phase after
# create meets the folder entries and inodes the phases before it left in memory.
WARM = {
    "create": "made the tree: new folder entries and inodes, in memory as it made them",
    "stat": "metadata warm: the inodes create left in memory",
    "list": "metadata warm: the folders create and stat left in memory",
    "read": "metadata warm; each file's data evicted first (the residency column says what stayed)",
    "copy": "metadata and data warm: the files the read phase left in memory are the copy's sources",
    "rename": "metadata warm: the folder entries the phases before left in memory",
    "delete": "metadata warm: the folder entries the phases before left in memory",
}
COLD = "the kernel's caches dropped before the phase (between: drop-caches): folder entries and inodes read anew"


# What each engine calls, in words: the report names the difference.
ENGINES = {
    "posix": "POSIX calls as C code makes them: open with O_CREAT | O_EXCL, write, close; stat; opendir and "
             "readdir; open, read, close; rename; unlink; a copy by FICLONE or copy_file_range (macOS: clonefile or "
             "copyfile)",
    "foundation": "what a Mac app calls: each file saved by NSData writeToFile:atomically: (written to a temporary "
                  "name, then renamed over its own: a create, a rename and the temporary file's metadata where the "
                  "POSIX path makes one create), folders, stat, listing, moves, removal and copies by "
                  "NSFileManager, reads into NSData; on one thread (on Linux: GNUstep Base, not Apple's code)",
}


@dataclass(frozen=True)
class TreePoint:
    """One phase at one thread count: the median over its trials."""

    threads: int
    rate: Estimate                   # files (list: names) per second
    bytes_per_s: Estimate | None     # create and read
    entries: int                     # files (names) each trial handled: the median
    latency_s: dict[str, float | None]   # one file's (list: one folder's) operation, every trial's together
    latency_hist: LatencyHistogram | None
    trials: int
    resident_before_max: float | None    # read: the most of the files' pages a trial met cached
    sync_share: float | None             # create: the median share of the phase in the syncs at the end
    dirs_made: int | None                # create: folders made on the way (the median)
    calls_per_op: float | None = None    # the calls a file's operation made (list: a folder's), the median
    cloned: int | None = None            # copy: the most copies one trial made as clones (no bytes moved)
    copy_method: str = ""                # copy: what copied the files that did not clone

    def to_json(self) -> dict[str, Any]:
        return {"threads": self.threads, "rate_per_s": self.rate.as_dict(),
                "bytes_per_s": self.bytes_per_s.as_dict() if self.bytes_per_s is not None else None,
                "entries": self.entries, **self.latency_s, "trials": self.trials,
                "lat_hist_ns": self.latency_hist.to_text() if self.latency_hist is not None else None,
                "resident_before_max": self.resident_before_max, "sync_share": self.sync_share,
                "dirs_made": self.dirs_made, "calls_per_op": self.calls_per_op, "cloned": self.cloned,
                "copy_method": self.copy_method}


@dataclass(frozen=True)
class TreeResult:
    """One tree test's phase: its points by thread count, what it met, and the scaling from the fewest threads
    to the most."""

    name: str
    op: str                          # the phase
    measurements: Table
    points: list[TreePoint]
    files: int | None                # files in the tree (None for list, which counts folders and names)
    tree_bytes: int
    sync: str                        # create: each | end | none
    warm: str                        # what the phase met, in words
    metadata_warm: bool = False      # a phase after create that met what the phases before left in memory
    engine: str = "posix"            # posix, or foundation (a Mac app's calls)
    kind: str = "tree"

    @property
    def n(self) -> int:
        return len(self.measurements)

    @property
    def unit(self) -> str:
        return rate_unit(self.op)

    @property
    def best(self) -> TreePoint:
        return max(self.points, key=lambda p: p.rate.estimate)

    @property
    def scaling(self) -> float | None:
        """The rate at the most threads over the rate at the fewest (None with one thread count)."""
        if len(self.points) < 2:
            return None
        first, last = self.points[0].rate.estimate, self.points[-1].rate.estimate
        return last / first if first > 0 else None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "kind": "tree", "n": self.n, "rate_bytes_per_s": None,
                "latency_s": None, "outliers": [], "cache_suspects": [], "fast_outliers": [],
                "drift": {"detected": False}, "unit": self.unit, "files": self.files, "tree_bytes": self.tree_bytes,
                "sync": self.sync, "warm": self.warm, "engine": self.engine, "scaling": self.scaling,
                "points": [p.to_json() for p in self.points]}


def _median(values: np.ndarray) -> float | None:
    values = values[np.isfinite(values)]
    return float(np.median(values)) if len(values) else None


def _latency(rs: Table) -> tuple[dict[str, float | None], LatencyHistogram | None]:
    """Every trial's operations in one histogram, its quantiles; the helper's percentiles (medians over trials)
    where a histogram is missing or damaged."""
    try:
        hist = LatencyHistogram.merged(rs.col("lat_hist_ns"))
    except HistogramError:
        hist = None
    if hist is None or hist.n == 0:
        keys = (*LATENCY_QUANTILES, "lat_max_s")
        return {k: _median(rs.col(k).astype(float)) for k in keys}, None
    out: dict[str, float | None] = {k: hist.quantile_s(q) for k, q in LATENCY_QUANTILES.items()}
    slowest = rs.col("lat_max_s").astype(float)
    out["lat_max_s"] = float(slowest[np.isfinite(slowest)].max()) if np.isfinite(slowest).any() else None
    return out, hist


def tree_result(name: str, phase: str, rows: Table, resamples: int, seed: int, confidence: float) -> TreeResult:
    """A tree test's phase from its valid rows."""
    points = []
    for (threads,), idx in sorted(rows.groups("threads").items()):
        rs = rows.take(idx)
        seconds = rs.seconds
        entries = rs.col("entries").astype(float)
        rate = rates.median_rate(entries, seconds, resamples, seed, confidence, with_draws=False).rate
        rate = Estimate(rate.estimate, rate.low, rate.high, rate.method.replace("throughput", f"{rate_unit(phase)} per s"),
                        rate.n)
        moved = None
        if phase in MOVES_BYTES:
            moved = rates.median_rate(rs.bytes, seconds, resamples, seed, confidence, with_draws=False).rate
        latency, hist = _latency(rs)
        resident = rs.resident_before.astype(float)
        syncs = rs.sync_seconds.astype(float) / seconds
        made = _median(rs.col("dirs_made").astype(float))
        cloned = rs.col("cloned").astype(float)
        points.append(TreePoint(
            threads=int(threads), rate=rate, bytes_per_s=moved, entries=int(np.median(entries)),
            latency_s=latency, latency_hist=hist, trials=len(rs),
            resident_before_max=float(np.nanmax(resident)) if np.isfinite(resident).any() else None,
            sync_share=_median(syncs) if phase == "create" else None,
            dirs_made=int(made) if made is not None and phase == "create" else None,
            calls_per_op=_median(rs.syscalls.astype(float) / rs.requests.astype(float)),
            cloned=int(np.nanmax(cloned)) if phase == "copy" and np.isfinite(cloned).any() else None,
            copy_method=next((str(v) for v in rs.io_method if v), "") if phase == "copy" else ""))
    sync = str(rows.sync_used[0]) if phase == "create" and len(rows) else ""
    dropped = rows.col("caches_dropped").astype(float) == 1.0     # empty (unknown) is not dropped
    cold = bool(len(rows)) and bool(dropped.all())
    warm = COLD if cold and phase != "create" else WARM[phase]
    if not cold and dropped.any():
        warm = "some trials met caches dropped before the phase, others warm metadata: " + WARM[phase]
    return TreeResult(name=name, op=phase, measurements=rows, points=points,
                      files=int(np.median(rows.requests)) if phase != "list" and len(rows) else None,
                      tree_bytes=int(rows.size_bytes[0]) if len(rows) else 0, sync=sync, warm=warm,
                      metadata_warm=phase != "create" and not dropped.any(),
                      engine=str(rows.engine[0]) if len(rows) else "posix")
