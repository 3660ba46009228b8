"""A drive's history as the views draw it: its runs, each test point's entries (a run, or a series' runs as
one), the steps found in them and the latest entry against its level (analysis/history.py), interrupted
runs beside them (drawn, marked, never in a step), and the changes of firmware, system and stibium between
runs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..analysis.history import Entry, Latest, Step, check_latest, entry_of, find_steps
from .entry import Drive, Note, PointEntry, RunEntry
from .step_tests import StepTests


@dataclass(frozen=True)
class Drawn:
    """An entry as drawn: its time, rate and interval (None where it has none)."""

    name: str
    started_utc: str
    rate: float
    low: float | None
    high: float | None
    runs: int
    interrupted: bool = False


@dataclass(frozen=True)
class PointHistory:
    point: str
    unit: str
    entries: tuple[Entry, ...]       # the complete runs (a series as one), oldest first
    drawn: tuple[Drawn, ...]         # the same, and the interrupted runs, as drawn
    steps: tuple[Step, ...]
    latest: Latest | None


@dataclass(frozen=True)
class Change:
    """A version that changed between two runs of the drive: firmware, system or stibium."""

    at: str                   # the first run with the new version
    started_utc: str
    what: str
    before: str
    after: str

    @property
    def text(self) -> str:
        return f"{self.what} {self.before} -> {self.after}"


@dataclass(frozen=True)
class DriveHistory:
    drive: Drive
    runs: tuple[RunEntry, ...]
    points: tuple[PointHistory, ...]
    changes: tuple[Change, ...]
    notes: tuple[Note, ...] = ()        # what people wrote of the drive and its runs, oldest first


VERSIONED = (("firmware", lambda r: r.drive.firmware), ("system", lambda r: r.os),
             ("stibium", lambda r: r.stibium_version))


def changes_of(runs: Sequence[RunEntry]) -> tuple[Change, ...]:
    out = []
    for what, get in VERSIONED:
        known = [(r, get(r)) for r in runs if get(r)]
        for (_, a), (r, b) in zip(known, known[1:]):
            if a != b:
                out.append(Change(r.name, r.started_utc, what, a, b))
    return tuple(sorted(out, key=lambda c: c.started_utc))


def _groups(runs: Sequence[RunEntry]) -> list[list[RunEntry]]:
    """Complete runs in order, the consecutive runs of one series together."""
    groups: list[list[RunEntry]] = []
    for r in runs:
        if r.status != "complete":
            continue
        if groups and r.series is not None and groups[-1][0].series == r.series:
            groups[-1].append(r)
        else:
            groups.append([r])
    return groups


def _point(run: RunEntry, point: str) -> PointEntry | None:
    return next((p for p in run.points if p.point == point and p.estimate is not None), None)


def point_history(runs: Sequence[RunEntry], point: str, unit: str, kept_at: Path | None = None) -> PointHistory:
    """A point's history: its entries, what the pages draw, its steps and its latest run against its level; the
    step searches' tests kept in the file at `kept_at` (step_tests.py) where one is given."""
    entries, drawn = [], []
    for group in _groups(runs):
        measured = [(r, p) for r in group if (p := _point(r, point)) is not None]
        if not measured:
            continue
        first = measured[0][0]
        name = first.series if len(measured) > 1 and first.series else first.name
        entry = entry_of(name, first.started_utc, [(r.name, float(p.estimate or 0.0), p.low, p.high)
                                                   for r, p in measured])     # _point: each has an estimate
        entries.append(entry)
        if len(measured) == 1:
            p = measured[0][1]
            drawn.append(Drawn(name, first.started_utc, entry.rate, p.low, p.high, 1))
        else:
            half = 1.96 * entry.own_se
            drawn.append(Drawn(name, first.started_utc, entry.rate, math.exp(entry.log_rate - half),
                               math.exp(entry.log_rate + half), len(measured)))
    for r in runs:
        p = _point(r, point) if r.status == "interrupted" else None
        if p is not None and p.estimate is not None:
            drawn.append(Drawn(r.name, r.started_utc, p.estimate, p.low, p.high, 1, interrupted=True))
    drawn.sort(key=lambda d: d.started_utc)
    with StepTests(kept_at) as kept:
        return PointHistory(point, unit, tuple(entries), tuple(drawn), tuple(find_steps(entries, kept=kept)),
                            check_latest(entries, kept=kept))


def point_names(runs: Sequence[RunEntry]) -> dict[str, str]:
    """The points the runs measured, each with its unit, in the order the runs first gave them."""
    points: dict[str, str] = {}
    for r in runs:
        for p in r.points:
            points.setdefault(p.point, p.unit)
    return points


def drive_history(runs: Sequence[RunEntry], notes: tuple[Note, ...] = (),
                  points: Sequence[PointHistory] | None = None) -> DriveHistory:
    """The history of one drive from its runs (oldest first) and its notes; `points` where its points' histories
    were made already (side by side: history/actions.py)."""
    if points is None:
        points = [point_history(runs, name, unit) for name, unit in point_names(runs).items()]
    return DriveHistory(runs[0].drive, tuple(runs), tuple(points), changes_of(runs), notes)
