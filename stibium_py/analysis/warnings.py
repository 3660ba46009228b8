"""What the reader must know about a run, each with what to do: outliers, page-cache suspects, fast
outliers, drift, nonlinearity, missing intervals, direct I/O the platform sent through the cache,
requests split into several calls, writes a Mac synced without flushing the drive's cache, GNUstep's Foundation.
Pure: results and measurements in."""

from __future__ import annotations

import math

from dataclasses import asdict, dataclass
from typing import Any, Callable, Union

import numpy as np

from ..kinds import Kind, by_kind
from ..table import Table
from ..stack import MAY_CACHE, MEMORY, Stack
from ..units import format_bytes, format_size, in_flight_label, op_label
from .cache import RESIDENT_THRESHOLD
from .durability import MAC_ADVICE, unflushed_count
from .files import FilesResult
from .patterns import PatternResult
from .rates import ONE_SIZE, ONE_TRIAL
from .sustained import MIN_SIZE, SustainedTestResult
from .tree import TreeResult

Result = Union[FilesResult, PatternResult, SustainedTestResult, TreeResult]
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


def warnings(results: list[Result], rows: Table, facts: dict[str, Any],
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
        add("warning", "all", "the file system accepted direct I/O but caches anyway (tmpfs, FUSE)",
            "these are memory speeds, not the device's: choose a target on a disk-backed file system")
    for layer in layers.layers:
        if fs_caches and layer.kind == "file system":      # said above
            continue
        if layer.reads == MEMORY:
            add("warning", "all", f"{layer.label} serves reads from memory below the file system", layer.why)
        elif layer.reads == MAY_CACHE:
            add("info", "all", f"{layer.label} may serve reads from memory below the file system", layer.why)
    for e in results:
        WARNINGS[e.kind](e, add)
        _below_warnings(e, layers, add)
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
    engines = set(rows.engine.tolist())
    if "foundation" in engines and facts.get("platform") == "linux":
        add("info", "all", "the foundation engine ran on GNUstep Base, whose implementation is not Apple's",
            "compare foundation numbers only with other GNUstep runs; use direct or buffered across platforms")
    return out


def _below_warnings(e: Result, layers: Stack, add: Any) -> None:
    """Reads at memory speed with the page cache empty: the count and share, and the likely layer."""
    if isinstance(e, FilesResult):
        flagged = e.below_cache
        if not flagged:
            return
        what = (f"{len(flagged)} of {e.n} reads ran at {float(np.median(e.memory_shares[flagged])):.0%} of memory "
                f"speed (median) with none of the file in the page cache")
    elif isinstance(e, PatternResult):
        flagged_points = e.below_cache
        if not flagged_points:
            return
        what = (f"{len(flagged_points)} of {len(e.points)} points ran at "
                f"{float(np.median([p.memory_share for p in flagged_points])):.0%} of memory speed (median) with "
                f"none of the file in the page cache ("
                + ", ".join(f"{p.access} {format_size(p.granularity_bytes)}" for p in flagged_points[:4])
                + (", ..." if len(flagged_points) > 4 else "") + ")")
    else:
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


def _files_warnings(e: FilesResult, add: Any) -> None:
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


def _pattern_warnings(e: PatternResult, add: Any) -> None:
    label = f"{e.name} ({e.op})"
    single = [p for p in e.points if p.trials < 2]
    if single:
        add("warning", label, f"{len(single)} of {len(e.points)} points have {ONE_TRIAL}: a median of one has no "
            f"interval, and compare gives them no verdict", "set trials: 6 or more in the plan (5 or fewer give "
            "the range of the trials, whose confidence the report states)" if e.instrument == "helper" else
            f"import several results of the same {e.instrument} jobs together (each file is a trial; 6 or more give "
            f"an interval of 95 %)")
    for p in e.points:
        mix = p.mix
        if mix is not None and abs(mix.read_share_bytes - mix.read_fraction) > MIX_SHARE_TOLERANCE:
            add("info", label, f"the {op_label('mixed', mix.read_fraction)} point at {format_size(p.granularity_bytes)} "
                f"{in_flight_label(p.queue_depth, p.threads) or 'Q1T1'} read {mix.read_share_bytes:.1%} of its bytes, "
                f"not {mix.read_fraction:.0%}: each pass of the requests holds the share rounded to whole requests",
                "move more bytes a pass (bytes, or span by time) so that the share rounds closer")
    if e.stonewall is not None:
        sw = e.stonewall
        add("info", label, sw.line(), "nothing to do where that was the intent; for whole passes raise stonewall or "
            "lower bytes" if sw.stopped else "lower stonewall for it to bound the measurements, or leave it out")
    st = e.steady
    if st is None or st.steady:
        return
    first, last = st.window_rounds
    moving = st.unsteady             # this op's points that kept the test from steady state
    if not moving:
        return
    why = (f"{moving[0].label(e.name)}: {moving[0].verdict.why}" if moving[0].verdict is not None
           else f"{st.rounds} rounds, fewer than the window of {st.window}")
    more = f" (and {len(moving) - 1} more points)" if len(moving) > 1 else ""
    if st.rounds >= st.max_rounds:
        add("warning", label, f"not steady after {st.rounds} rounds: {why}{more}; its rates are of rounds "
            f"{first}-{last}, which still move",
            "raise steady.max_rounds, " + PRECONDITION_ADVICE + ", or quote these rates as not steady")
    else:
        add("warning", label, f"not steady yet: {st.rounds} of {st.max_rounds} rounds were measured before the "
            f"run stopped ({why}{more}); its rates are of rounds {first}-{last}",
            "finish the run with stibium resume, which goes on with the rounds")


def _sustained_warnings(e: SustainedTestResult, add: Any) -> None:
    label = f"{e.name} ({e.op})"
    for w in e.result.warnings:
        add("warning", label, w, "let the drive cool, give it airflow or a heatsink, and run again to tell heat "
            "from a full cache")
    for after, seconds in e.pauses:
        add("warning", label, f"the {e.op}s paused for {seconds:.0f} s after {format_bytes(after)} (the run was "
            f"resumed)", "a drive empties its fast cache during a pause, so the stretch after it can be fast "
            "again: for one uninterrupted curve, start a new run")
    if not e.temperature_known:
        add("info", label, "the drive's temperature could not be read on this machine (the system reports no "
            "sensor for this disk, and smartctl is not installed or cannot ask it), so heat cannot be told from a "
            "full cache",
            "install smartmontools (smartctl) to have it read with each chunk")
    if e.result.chunks < 2 * MIN_SIZE:
        add("warning", label, f"{e.result.chunks} chunks are too few to find a cliff (at least {2 * MIN_SIZE})",
            "write more bytes or use a smaller chunk")


def _tree_warnings(e: Any, add: Callable[..., None]) -> None:
    label = f"{e.name} ({e.op})"
    if e.metadata_warm:
        add("info", e.name, "the phases after create met the folder entries and inodes the phases before left in "
            "memory: metadata cannot be evicted file by file, so stat, list, rename and delete are warm-cache rates "
            "(a reboot or dropped caches would make them slower)",
            "for cold metadata set between: drop-caches (root) in the test; compare warm with warm")
    cloned = [p for p in e.points if p.cloned]
    if e.op == "copy" and cloned:
        most = max(p.cloned for p in cloned)
        add("info", label, f"the file system cloned the copies (up to {most:,} of {e.points[0].entries:,} a trial): a "
            f"clone shares its source's blocks and moves no bytes, so this copy's bytes per second are not a byte "
            f"copy's", "to time a copy that moves the bytes, run on a file system that does not clone (ext4, or "
            "another volume); a Finder or cp --reflink copy on this one clones as this did")
    # above the threshold, as a read's page-cache suspects are (cache.suspects): at 1 % a read is not one
    cached = [p for p in e.points if p.resident_before_max and p.resident_before_max > RESIDENT_THRESHOLD]
    if e.op == "read" and cached:
        worst = max(p.resident_before_max for p in cached)
        add("warning", label, f"a read phase met up to {worst:.0%} of the files' pages in the page cache after they "
            f"were evicted: some reads came from memory", "this file system keeps what was evicted (a network or "
            "FUSE file system may); choose a target on a local disk for uncached reads")


# the warnings of each kind's result
WARNINGS: dict[Kind, Callable[[Any, Any], None]] = by_kind("analysis: a kind's warnings", {
    "files": _files_warnings, "pattern": _pattern_warnings, "sustained": _sustained_warnings,
    "tree": _tree_warnings})


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


def _split_calls(rows: Table) -> list[tuple[str, int, int]]:
    """Per test and op: measurements whose requests took more calls than one each (plus the buffered tail). A tree
    test's calls are every call of a file's operation (open, write, close ...), not a request's pieces."""
    out = []
    for label, rs in _by_test(rows.take(rows.kind != "tree")).items():
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
