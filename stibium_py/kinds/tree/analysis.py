"""A tree test's analysis: its summary per op, its warnings and, where two runs compare it point by point, its
points."""

from __future__ import annotations

from typing import Any, Callable

from ...analysis.cache import RESIDENT_THRESHOLD
from ...analysis.rates import PointKey, PointRule, median_rate
from ...analysis.summary import Pending, SummaryContext
from .result import tree_result
from ...rundir.table import Table
from .shape import TREE_PHASES, rate_unit
from ...units import format_per_s


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    result = tree_result(name, op, rows, ctx.s.resamples, ctx.s.seed, ctx.s.confidence)
    return lambda: [result]


def add_warnings(e: Any, add: Callable[..., None]) -> None:
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


# a tree test's phase at a thread count: files (list: names) per second, the median over trials
POINTS = PointRule(lambda test, op, access, gran, stride, depth, threads, *_: PointKey(
    test, op, "tree", "", 0, 0, 1, int(threads)), "entries", median_rate, "median file rate",
    # the phases in the order they run; files (list: names) per second; threads (T4; nothing for one)
    op_rank=lambda op: f"{TREE_PHASES.index(op):02d}" if op in TREE_PHASES else op,
    rate_format=lambda op: lambda v: format_per_s(v, rate_unit(op)), unit=rate_unit,
    flight=lambda depth, threads: f"T{threads}" if threads > 1 else "")
