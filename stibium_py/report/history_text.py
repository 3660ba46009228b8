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


def note_text(note: Any, runs: Any) -> str:
    """A person's note as the pages and the terminal say it: of which run or of the drive, when, expected or not."""
    name = next((r.name for r in runs if r.run_key == note.run_key), None) if note.run_key else None
    about = f"of the run {name}" if name else "of a run not shown here" if note.run_key else "of the drive"
    return f"{note.text} ({about}, written {day(note.written_utc)}{'; expected: not an alarm' if note.expected else ''})"


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


def _aside(result: Any) -> str:
    """What a check names beside its verdict: steps a note says are meant, steps the confirming runs did not repeat."""
    parts = []
    if result.expected:
        s, note = result.expected[0]
        more = len(result.expected) - 1
        parts.append(f"expected ({note.text}): {s.drive.drive.label}: {latest_text(s.point)}"
                     + (f" and {more} more" if more else ""))
    if result.transient:
        s = result.transient[0]
        more = len(result.transient) - 1
        parts.append(f"not confirmed by {result.confirmed_by} more run{'s' if result.confirmed_by != 1 else ''}: "
                     f"{s.drive.drive.label}: {s.point.point}" + (f" and {more} more" if more else ""))
    return "".join(f"; {p}" for p in parts)


def check_line(result: Any, threshold_percent: float) -> str:
    """`history check`'s one line: the largest step down (and how many more), or what was checked."""
    if result.slower:
        worst = result.slower[0]
        more = len(result.slower) - 1
        confirmed = (f", confirmed by {result.confirmed_by} more run{'s' if result.confirmed_by != 1 else ''}"
                     if result.confirmed_by else "")
        return (f"history check: {worst.drive.drive.label}: {latest_text(worst.point)}: slower beyond "
                f"{threshold_percent:g} %{confirmed}" + (f"; {more} more point{'s' if more != 1 else ''} too" if more
                                                          else "") + _aside(result))
    said = (f"history check: no step down beyond {threshold_percent:g} % in the latest run of {result.drives} "
            f"drive{'s' if result.drives != 1 else ''} ({result.points} point{'s' if result.points != 1 else ''} "
            f"checked against the runs since their last step)") + _aside(result)
    if result.last_step is None:
        return said + "; no step in any point's history"
    drive, point, step = result.last_step
    return said + f"; the last step: {drive.drive.label}: {step_text(point, step)}"


def _cell(text: str) -> str:
    """Text in a markdown table's cell: its pipes and markup characters shown as text."""
    import re
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(text.split()))


def check_markdown(result: Any, threshold_percent: float, pages: str) -> str:
    """`history check --format markdown`: a heading with the verdict, then a row per point found slower (the drive,
    the point, the change with its interval, the run, the drive's page), and those named beside it."""
    def page(s: Any) -> str:
        name = page_name(s.drive.drive.label, s.drive.drive.key)
        return f"[page]({pages.rstrip('/')}/{name})"

    def row(s: Any, why: str) -> str:
        latest = s.point.latest
        r = latest.ratio
        return (f"| {_cell(s.drive.drive.label)} | {_cell(s.point.point)} | {_percent(r.estimate)} "
                f"[{_percent(r.low)}, {_percent(r.high)}] | {_cell(latest.entry.name)} | {_cell(why)} | {page(s)} |")

    if result.slower:
        drives = len({s.drive.drive.key for s in result.slower})
        head = (f"### stibium history check: slower beyond {threshold_percent:g} % on {drives} "
                f"drive{'s' if drives != 1 else ''}")
    else:
        head = (f"### stibium history check: no step down beyond {threshold_percent:g} % ({result.points} point"
                f"{'s' if result.points != 1 else ''} of {result.drives} drive{'s' if result.drives != 1 else ''})")
    rows = [row(s, "slower" + (f", confirmed by {result.confirmed_by} more runs" if result.confirmed_by else ""))
            for s in result.slower]
    rows += [row(s, f"expected: {note.text}") for s, note in result.expected]
    rows += [row(s, f"not confirmed by {result.confirmed_by} more runs") for s in result.transient]
    if not rows:
        return head
    return "\n".join([head, "", "| drive | point | change [interval] | run | why | page |",
                      "| --- | --- | --- | --- | --- | --- |", *rows])
