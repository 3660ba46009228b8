"""The history on the terminal: the drives with their runs, and for each drive the steps found, the latest
run against its level where it is a step, and the versions that changed (history/drives.py gives them)."""

from __future__ import annotations

from typing import Any, Sequence

from rich.text import Text

from ..analysis.history import MIN_SEGMENT
from ..history.db import DriveSummary
from ..history.drives import DriveHistory
from .history_text import day, latest_text, note_text, step_text
from .visible import as_markup, visible
from .terminal import Column, fitted_table, with_caption


def drives_table(drives: Sequence[DriveSummary], width: int) -> Any:
    columns = [Column("drive", shortened=True, identity=True), Column("runs", "right"), Column("interrupted", "right", drop=2),
               Column("first", drop=3), Column("last"), Column("hosts", shortened=True, drop=1)]
    rows = [[as_markup(d.drive.label), str(d.runs), str(d.interrupted) if d.interrupted else "",
             as_markup(day(d.first_utc)), as_markup(day(d.last_utc)), as_markup(", ".join(d.hosts))] for d in drives]
    table, dropped, _ = fitted_table("Drives in the history", columns, [rows], width)
    return with_caption(table, dropped, "the drive's page")


RUNS_SHOWN = 10


def runs_table(h: DriveHistory, width: int) -> Any:
    """A drive's latest runs, one line each (the page has every run)."""
    columns = [Column("started (UTC)"), Column("run"), Column("series", shortened=True, drop=5),
               Column("plan", shortened=True, drop=4), Column("status"), Column("host", drop=3),
               Column("system", shortened=True, drop=1), Column("stibium", drop=2)]
    shown = h.runs[-RUNS_SHOWN:]
    rows = [[as_markup(text) for text in (day(r.started_utc), r.name, r.series or "", r.plan_name or "", r.status,
                                          r.host or "", r.os or "", r.stibium_version or "")] for r in shown]
    earlier = len(h.runs) - len(shown)
    title = f"Runs on {as_markup(h.drive.label)}" + (f" (the latest {len(shown)}; {earlier} earlier on the page)"
                                                     if earlier else "")
    table, dropped, _ = fitted_table(title, columns, [rows], width)
    return with_caption(table, dropped, "the drive's page")


def drive_lines(h: DriveHistory, page: str | None) -> list[Any]:
    """A drive's steps, latest steps down and version changes, a line each (as rich Text: the names in them are a
    record's, printed as they are, never read as markup)."""
    complete = sum(r.status == "complete" for r in h.runs)
    cut = len(h.runs) - complete
    lines = [f"{h.drive.label}: {complete} complete run{'s' if complete != 1 else ''}"
             + (f" and {cut} interrupted (drawn, not in any step)" if cut else "")]
    if page:
        lines.append(f"  page: {page}")
    steps = [(p, s) for p in h.points for s in p.steps]
    for p, s in steps:
        lines.append(f"  step: {step_text(p, s)}")
    for p in h.points:
        if p.latest is not None and p.latest.ratio.high < 1.0:
            lines.append(f"  latest: {latest_text(p)}")
    if not steps:
        lines.append(f"  no step found in {len(h.points)} point{'s' if len(h.points) != 1 else ''} (a step needs "
                     f"{MIN_SEGMENT} entries on each side)")
    for c in h.changes:
        lines.append(f"  changed: {c.text} at {c.at} ({day(c.started_utc)})")
    for n in h.notes:
        lines.append(f"  note: {note_text(n, h.runs)}")
    return [Text(visible(line)) for line in lines]
