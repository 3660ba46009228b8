"""The history's sentences, the same on the terminal and the page: a step, the latest run against its level,
a rate in its point's unit."""

from __future__ import annotations

from typing import Any

from ..analysis.history import Step
from ..history.drives import PointHistory
from ..units import format_per_s, format_rate


def day(utc: str | None) -> str:
    """2026-11-26T02:03:21Z as 2026-11-26 02:03."""
    return (utc or "")[:16].replace("T", " ")


def rate_text(p: PointHistory, value: float | None) -> str:
    """A rate in its point's unit: bytes per second, or files (names) per second."""
    return format_rate(value) if p.unit == "bytes" else format_per_s(value, p.unit)


def _percent(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f} %"


def step_text(p: PointHistory, s: Step) -> str:
    return (f"{p.point}: {_percent(s.ratio.estimate)} [{_percent(s.ratio.low)}, {_percent(s.ratio.high)}] at "
            f"{s.name} ({day(s.started_utc)}); {s.before} entr{'ies' if s.before != 1 else 'y'} before, {s.after} after")


def latest_text(p: PointHistory) -> str:
    latest = p.latest
    assert latest is not None
    r = latest.ratio
    n = len(latest.baseline)
    return (f"{p.point}: {_percent(r.estimate)} [{_percent(r.low)}, {_percent(r.high)}] at {latest.entry.name} "
            f"({day(latest.entry.started_utc)}) against the {n} entr{'ies' if n != 1 else 'y'} since the last step")


def slug(label: str) -> str:
    """A drive's label as a file name: letters, digits, dot and dash."""
    import re
    return re.sub(r"[^A-Za-z0-9.]+", "-", label).strip("-.")[:80] or "drive"


def page_name(label: str, key: str) -> str:
    """A drive's page: its label as a file name, then a digest of the key that names the drive in the history, so
    that two drives whose labels differ only in what a file name cannot hold ("Disk A", "Disk-A") get a page
    each and neither replaces the other's."""
    import hashlib
    return f"{slug(label)}-{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}.html"


def check_line(result: Any, threshold_percent: float) -> str:
    """`history check`'s one line: the largest step down (and how many more), or what was checked."""
    if result.slower:
        worst = result.slower[0]
        more = len(result.slower) - 1
        return (f"history check: {worst.drive.drive.label}: {latest_text(worst.point)}: slower beyond "
                f"{threshold_percent:g} %" + (f"; {more} more point{'s' if more != 1 else ''} too" if more else ""))
    said = (f"history check: no step down beyond {threshold_percent:g} % in the latest run of {result.drives} "
            f"drive{'s' if result.drives != 1 else ''} ({result.points} point{'s' if result.points != 1 else ''} "
            f"checked against the runs since their last step)")
    if result.last_step is None:
        return said + "; no step in any point's history"
    drive, point, step = result.last_step
    return said + f"; the last step: {drive.drive.label}: {step_text(point, step)}"
