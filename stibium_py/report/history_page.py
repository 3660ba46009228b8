"""A drive's history as one self-contained page: what the drive is, its runs, the steps found and the versions
that changed, and a figure per test point: each entry's rate over time with its interval (a series' runs as
one, interrupted runs hollow and marked), the level of each stretch between steps, and the version changes
as lines across the plot."""

from __future__ import annotations

import math

from ..history.drives import DriveHistory, PointHistory
from ..units import format_bytes
from . import figures, plot
from .history_text import day, latest_text, note_text, rate_text, step_text
from .page import esc, figure, page, table


def _when(utc: str) -> str:
    """A run's start as plotly.js reads a date: 2026-11-26 02:03:21 (UTC, as the axis says)."""
    return utc[:19].replace("T", " ")


def _figure(h: DriveHistory, p: PointHistory) -> plot.Figure:
    fig = plot.Figure()
    for interrupted, colour, name in ((False, plot.BLUE, "run (series: its runs as one)"),
                                      (True, plot.GREY, "interrupted run (not in any step)")):
        drawn = [d for d in p.drawn if d.interrupted == interrupted]
        if not drawn:
            continue
        bars = figures.interval_bars([{"estimate": d.rate, "low": d.low, "high": d.high} for d in drawn])
        fig.add_trace(plot.Scatter(
            x=[_when(d.started_utc) for d in drawn], y=[d.rate for d in drawn], mode="markers", name=name,
            error_y=bars, marker_color=colour, marker_symbol="circle-open" if interrupted else "circle",
            text=[f"{esc(d.name)}<br>{rate_text(p, d.rate)} [{rate_text(p, d.low)}, {rate_text(p, d.high)}]"
                  + (f"<br>{d.runs} runs of a series" if d.runs > 1 else "") for d in drawn],
            hoverinfo="text"))
    bounds = [0, *(s.at for s in p.steps), len(p.entries)]
    for a, b in zip(bounds, bounds[1:]):
        stretch = p.entries[a:b]
        if not stretch:
            continue
        level = float(sum(e.log_rate for e in stretch) / len(stretch))
        fig.add_trace(plot.Scatter(x=[_when(stretch[0].started_utc), _when(stretch[-1].started_utc)], y=[math.exp(level)] * 2,
                                   mode="lines", line_color=plot.ORANGE, line_width=2, showlegend=a == 0,
                                   name="level between steps", hoverinfo="skip"))
    for c in h.changes:
        fig.add_vline(x=_when(c.started_utc), line_dash="dot", line_color=plot.GREEN, annotation_text=esc(c.text))
    unit = "bytes/s" if p.unit == "bytes" else f"{p.unit}/s"
    return figures.layout(fig, p.point, "run started (UTC)", unit)


def render(h: DriveHistory, back: str | None = None) -> str:
    """The drive's page; `back` links to a site's index (history site)."""
    d = h.drive
    facts = [["model", d.model or "-"], ["serial", d.serial or "-"], ["firmware (latest run)", d.firmware or "-"],
             ["capacity", format_bytes(d.capacity_bytes) if d.capacity_bytes else "-"], ["named in the history by", d.key]]
    runs = [[day(r.started_utc), r.name, r.series or "", r.plan_name or "", r.status + (f" ({r.stopped_by})" if r.stopped_by
                                                                                        else ""),
             r.host or "", r.os or "", r.stibium_version or ""] for r in h.runs]
    steps = [f"<li>{esc(step_text(p, s))}</li>" for p in h.points for s in p.steps]
    latest = [f"<li>{esc(latest_text(p))}</li>" for p in h.points if p.latest is not None and p.latest.ratio.high < 1.0]
    changes = [f"<li>{esc(c.text)} at {esc(c.at)} ({esc(day(c.started_utc))})</li>" for c in h.changes]
    notes = [f"<li>{esc(note_text(n, h.runs))}</li>" for n in h.notes]
    said = (f"<ul>{''.join(steps)}</ul>" if steps else
            "<p>No step found: a step is claimed where E-divisive means splits the runs (3 or more on each side, "
            "permutation test at p &le; 0.01) and the levels on both sides differ beyond their interval.</p>")
    sections = [
        f"<p><a href=\"{esc(back)}\">the lab</a></p>" if back else "",
        f"<h1>{esc(d.label)}</h1><p class=\"muted\">The history of this drive: {len(h.runs)} runs. Each point is a "
        f"run's rate with its interval; a series' runs are one point; interrupted runs are hollow and in no step.</p>",
        table(["fact", "value"], facts),
        "<h2>Steps found</h2>" + said,
        ("<h2>Latest run slower than its level</h2><ul>" + "".join(latest) + "</ul>") if latest else "",
        ("<h2>Versions that changed</h2><ul>" + "".join(changes) + "</ul>") if changes else "",
        ("<h2>Notes</h2><ul>" + "".join(notes) + "</ul>") if notes else "",
        "<h2>Runs</h2>" + table(["started (UTC)", "run", "series", "plan", "status", "host", "system", "stibium"], runs),
        "<h2>Points over time</h2><div class=\"grid\">"
        + "".join(figure(_figure(h, p), f"point-{i}") for i, p in enumerate(h.points)) + "</div>",
    ]
    return page(f"stibium history: {d.label}", [s for s in sections if s])
