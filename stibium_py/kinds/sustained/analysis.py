"""A sustained test's analysis: its summary per op, its warnings and, where two runs compare it point by point, its
points."""

from __future__ import annotations

from typing import Any

from ...analysis.summary import Pending, SummaryContext
from .result import MIN_SIZE, SustainedTestResult, sustained_results
from ...rundir.table import Table
from ...units import format_bytes


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    found = list(sustained_results(rows, ctx.s.confidence, ctx.s.seed).values())   # none before a file is whole
    return lambda: found


def add_warnings(e: SustainedTestResult, add: Any) -> None:
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
