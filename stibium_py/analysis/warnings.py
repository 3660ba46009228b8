"""What the reader must know about a run, each with what to do: outliers, page-cache suspects, fast
outliers, drift, nonlinearity, missing intervals, direct I/O the platform sent through the cache,
requests split into several calls, writes a Mac synced without flushing the drive's cache, flushes faster
than the writes they flush, GNUstep's Foundation.
Pure: results and measurements in."""

from __future__ import annotations


from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .. import registry
from ..rundir.table import Table
from ..machine.stack import MAY_CACHE, MEMORY, Stack
from ..units import format_seconds, format_size
from .durability import MAC_ADVICE, flushes_drive_cache, unflushed_count
from ..registry import AddNotice, KindResult
FS_CACHES_REASON = "this file system caches uncached I/O anyway"
MIX_SHARE_TOLERANCE = 0.01      # of the bytes: a mix further from the share asked is said
# advice that holds only where the plan does not precondition the test already (pipeline.held_to_plan drops it there)
PRECONDITION_ADVICE = "precondition the span (precondition: true) so that writes meet a written device"


@dataclass(frozen=True)
class Notice:
    level: str          # warning | info
    test: str           # "name (op)" or "all"
    message: str
    what_to_do: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def warnings(results: list[KindResult], rows: Table, facts: dict[str, Any],
             target_facts: dict[str, Any] | None = None) -> list[Notice]:
    """facts: the helper's (platform); target_facts: run.json's, with the stack below the file system."""
    out: list[Notice] = []

    def add(level: str, test: str, message: str, todo: str) -> None:
        notice = Notice(level, test, message, todo)
        if notice not in out:               # a test's notice said by each of its results once
            out.append(notice)

    layers = Stack.from_json((target_facts or {}).get("stack"))
    not_honoured = rows.direct_honoured == 0.0
    reasons = rows.cached_reason
    fs_caches = any(not reasons[k] for k in np.flatnonzero(not_honoured)) or bool(np.any(reasons == FS_CACHES_REASON))
    if fs_caches:
        add("warning", "all", "the file system accepted direct I/O but caches anyway (tmpfs, ramfs or macFUSE)",
            "these are memory speeds, not the device's: choose a target on a disk-backed file system")
    for layer in layers.layers:
        if fs_caches and layer.kind == "file system":      # said above
            continue
        if layer.reads == MEMORY:
            add("warning", "all", f"{layer.label} serves reads from memory below the file system", layer.why)
        elif layer.reads == MAY_CACHE:
            add("info", "all", f"{layer.label} may serve reads from memory below the file system", layer.why)
    for e in results:
        spec = registry.spec(e.kind)
        spec.warnings(e, add)                      # the warnings of each kind's result
        if spec.below is not None:
            _below_warnings(e, spec.below(e), layers, add)
    for label, count, total, reason in _not_honoured(rows):
        add("warning", label, f"{count} of {total} direct measurements went through the page cache: {reason}",
            "these are not uncached numbers; on macOS write requests of at least 16 KiB at offsets aligned to the "
            "kernel page (16 KiB on Apple Silicon) bypass the cache, and reads at offsets aligned to the disk's block "
            "whose length is whole blocks or at least a kernel page")
    for label, count, largest in _split_calls(rows):
        add("info", label, f"{count} measurements moved each request in more than one call (the largest "
            f"{largest:,} bytes), smaller than the granularity the plan names",
            "the platform's largest single transfer (or the engine) splits larger requests; the knee uses the real "
            "call size")
    unflushed = unflushed_count(facts.get("platform"), rows.op.tolist(), rows.sync_used.tolist())
    if unflushed:
        add("info", "all", f"{unflushed} write measurements were synced with fsync, which on macOS leaves the data in "
            "the drive's write cache (Linux's fsync flushes it)",
            f"these compare with other Macs' fsync writes, not with Linux's; {MAC_ADVICE}")
    for label, used, flush_s, write_s, size in _fast_flushes(rows, facts.get("platform")):
        add("warning", label, f"its flushes ({used}) return in {format_seconds(flush_s)}, faster than its {size} uncached "
            f"writes reach the drive ({format_seconds(write_s)} a request): the drive does not flush to its medium, "
            f"or it has power-loss protection",
            "these writes may not be durable when they return; `stibium selftest` times every flush of the "
            "platform on the target, and only a power cut proves what the drive keeps")
    engines = set(rows.engine.tolist())
    if "foundation" in engines and facts.get("platform") == "linux":
        add("info", "all", "the foundation engine ran on GNUstep Base, whose implementation is not Apple's",
            "compare foundation numbers only with other GNUstep runs; use direct or buffered across platforms")
    return out


def _below_warnings(e: KindResult, what: str | None, layers: Stack, add: AddNotice) -> None:
    """Reads at memory speed with the page cache empty, as the kind says them (KindSpec.below: the count and
    share), and the likely layer."""
    if not what:
        return
    if layers.memory:
        likely = f"the layer that caches: {layers.memory[0].label}"
    elif layers.may_cache:
        likely = f"the likely cache: {layers.may_cache[0].label}"
    else:
        likely = "no layer below the file system is known to cache: a device as fast as a memory copy is possible"
    add("warning", f"{e.name} ({e.op})", f"{what}: served by a cache below the file system",
        f"these are not the drive's numbers ({likely}); run `stibium selftest` on the target, and measure a "
        f"target whose reads reach the device")


def _by_test(rows: Table) -> dict[str, Table]:
    return {f"{test} ({op})": rows.take(idx) for (test, op), idx in rows.groups("test", "op").items()}


def _not_honoured(rows: Table) -> list[tuple[str, int, int, str]]:
    """Per test and op: direct measurements the platform sent through the page cache, by its rules for the
    requests' sizes and offsets (the helper names the reason)."""
    out = []
    for label, rs in _by_test(rows.take(rows.engine == "direct")).items():
        reasons = rs.cached_reason
        cached = [k for k in np.flatnonzero(rs.direct_honoured == 0.0)
                  if reasons[k] and reasons[k] != FS_CACHES_REASON]
        if cached:
            out.append((label, len(cached), len(rs), str(reasons[cached[0]])))
    return out


SMALL_WRITE_BYTES = 64 * 1024     # a flush after writes of at most this size must write at least one to the medium
FLUSHES_JUDGED = 3                # measurements of a point before its flushes are judged


def _fast_flushes(rows: Table, platform: str | None) -> list[tuple[str, str, float, float, str]]:
    """Per test and op of small uncached writes into a laid-out span (a kind whose spec is `spanned`: a pattern
    test's requests) synced by a call that promises the drive's cache flushed (durability.flushes_drive_cache):
    where the flush's median time is below a request's median, the flush cannot have written even one request to
    the medium (analysis/flushes.py says the same of selftest's flushes). A synchronous write (O_DSYNC) carries its
    flush inside each request and is not judged here."""
    out = []
    spanned = np.isin(rows.kind, [spec.name for spec in registry.specs() if spec.spanned])
    writes = rows.take((rows.op == "write") & spanned & (rows.engine == "direct")
                       & (rows.granularity_bytes <= SMALL_WRITE_BYTES))
    for label, rs in _by_test(writes).items():
        for used in sorted({str(u) for u in rs.sync_used if u and str(u) not in ("none", "O_DSYNC")}):
            if not flushes_drive_cache(platform, used):
                continue
            mine = rs.take(rs.sync_used == used)
            flush, lat = mine.sync_seconds.astype(float), mine.lat_p50_s.astype(float)
            ok = np.isfinite(flush) & np.isfinite(lat) & (lat > 0)
            if ok.sum() < FLUSHES_JUDGED:
                continue
            flush_s, write_s = float(np.median(flush[ok])), float(np.median(lat[ok]))
            if flush_s < write_s:
                out.append((label, used, flush_s, write_s, format_size(int(np.median(mine.granularity_bytes)))))
    return out


def _split_calls(rows: Table) -> list[tuple[str, int, int]]:
    """Per test and op: measurements whose requests took more calls than one each (plus the buffered tail). A phase
    of files (a tree's, `entries` set) calls for every file's operation (open, write, close ...): its calls are
    not a request's pieces."""
    out = []
    for label, rs in _by_test(rows.take(~np.isfinite(rows.col("entries").astype(float)))).items():
        tail = np.where(np.nan_to_num(rs.tail_bytes_buffered) > 0, 1, 0)
        # the premise said: more calls than requests (the warm-up's requests are calls too), and a call smaller
        # than the request (where every call moved a whole request, none was split)
        with np.errstate(invalid="ignore"):
            split = (rs.requests > 0) & (rs.syscalls > rs.requests + np.nan_to_num(rs.warmup_requests) + tail) \
                & (rs.largest_syscall_bytes < rs.granularity_bytes)
        if split.any():
            largest = np.nan_to_num(rs.largest_syscall_bytes[split])
            out.append((label, int(split.sum()), int(largest.max())))
    return out
