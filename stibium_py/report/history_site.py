"""`stibium history site`: a lab's history as a static site of self-contained pages, linked by relative paths so
that the folder can be served or copied anywhere. The index: every drive (its machines, runs, the latest rate of
each point with its interval, the steps found, the notes) and every machine (its drives, runs, system); a page
per drive as `stibium history` writes it; a page per plan across drives: the latest run of the plan on each
drive side by side, each point's rate with its interval. Views only: what they draw is computed before."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Sequence

from ..history.drives import DriveHistory
from ..history.entry import PointEntry, RunEntry
from . import figures, plot
from .history_text import day, note_text, page_name, rate_text, slug, step_text
from .page import esc, figure, page

DRIVES = "drives"
PLANS = "plans"


@dataclass(frozen=True)
class PlanOnDrive:
    drive: DriveHistory
    run: RunEntry                 # the latest complete run of the plan on the drive


@dataclass(frozen=True)
class Plan:
    name: str
    sha256: str | None
    on: tuple[PlanOnDrive, ...]   # a drive each, the latest used first

    @property
    def file(self) -> str:
        digest = hashlib.sha256(f"{self.name}\0{self.sha256}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
        return f"{slug(self.name)}-{digest}.html"


def plans_of(found: Sequence[DriveHistory]) -> list[Plan]:
    """Each plan (its name and text's digest: two texts of one name are two plans) with its latest complete run
    on each drive that ran it."""
    latest: dict[tuple[str, str | None], dict[str, PlanOnDrive]] = {}
    for h in found:
        for r in h.runs:
            if r.status == "complete" and r.plan_name:
                latest.setdefault((r.plan_name, r.plan_sha256), {})[h.drive.key] = PlanOnDrive(h, r)
    out = [Plan(name, sha, tuple(sorted(on.values(), key=lambda o: o.run.started_utc, reverse=True)))
           for (name, sha), on in latest.items()]
    return sorted(out, key=lambda p: (p.name, p.sha256 or ""))


@dataclass
class Machine:
    """A machine as the index lists it: the drives its runs measured, how many runs, its latest run and system."""

    drives: dict[str, DriveHistory] = field(default_factory=dict)
    runs: int = 0
    last_utc: str = ""
    os: str = ""


def drive_file(h: DriveHistory) -> str:
    return f"{DRIVES}/{page_name(h.drive.label, h.drive.key)}"


def _link(href: str, text: str) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def _rows(header: list[str], rows: list[list[str]]) -> str:
    """A table whose cells are HTML made here (links, lists), every text in them escaped as it was made."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _latest_rates(h: DriveHistory) -> str:
    items = []
    for p in h.points:
        if not p.drawn:
            continue
        last = [d for d in p.drawn if not d.interrupted] or list(p.drawn)
        d = last[-1]
        interval = f" [{rate_text(p, d.low)}, {rate_text(p, d.high)}]" if d.low is not None and d.high is not None \
            else " (no interval)"
        items.append(f"<li>{esc(p.point)}: {esc(rate_text(p, d.rate))}{esc(interval)}</li>")
    return f"<ul>{''.join(items)}</ul>" if items else "-"


def render_index(found: Sequence[DriveHistory], plans: Sequence[Plan], where: str) -> str:
    drives = []
    for h in found:
        steps = [(p, s) for p in h.points for s in p.steps]
        last = max(steps, key=lambda ps: ps[1].started_utc, default=None)
        hosts = sorted({r.host for r in h.runs if r.host})
        drives.append([_link(drive_file(h), h.drive.label), esc(", ".join(hosts) or "-"), esc(len(h.runs)),
                       esc(day(h.runs[-1].started_utc)), _latest_rates(h),
                       esc(f"{len(steps)} found; the last: {step_text(*last)}" if last else "none found"),
                       "<ul>" + "".join(f"<li>{esc(note_text(n, h.runs))}</li>" for n in h.notes) + "</ul>"
                       if h.notes else "-"])
    machines: dict[str, Machine] = {}
    for h in found:
        for r in h.runs:
            m = machines.setdefault(r.host or "unknown host", Machine())
            m.drives[h.drive.key] = h
            m.runs += 1
            if r.started_utc >= m.last_utc:
                m.last_utc, m.os = r.started_utc, r.os or ""
    machine_rows = [[esc(host), ", ".join(_link(drive_file(h), h.drive.label) for h in m.drives.values()), esc(m.runs),
              esc(day(m.last_utc)), esc(m.os or "-")] for host, m in sorted(machines.items())]
    plan_rows = [[_link(f"{PLANS}/{p.file}", p.name), esc((p.sha256 or "-")[:12]), esc(len(p.on)),
                  esc(day(p.on[0].run.started_utc))] for p in plans]
    sections = [
        f"<h1>stibium: the lab's history</h1><p class=\"muted\">{esc(where)}: {len(found)} drive"
        f"{'s' if len(found) != 1 else ''} on {len(machines)} machine{'s' if len(machines) != 1 else ''}. Each rate is "
        f"the latest complete run's (a series' runs as one) with its interval.</p>",
        "<h2>Drives</h2>" + (_rows(["drive", "machines", "runs", "last run (UTC)", "latest rates", "steps", "notes"],
                                   drives) if drives else "<p>No runs yet.</p>"),
        "<h2>Machines</h2>" + (_rows(["machine", "drives", "runs", "last run (UTC)", "system"], machine_rows)
                               if machine_rows else "<p>None yet.</p>"),
        "<h2>Plans across drives</h2>" + (_rows(["plan", "text's SHA-256", "drives", "last run (UTC)"], plan_rows)
                                          if plan_rows else "<p>None yet.</p>"),
    ]
    return page("stibium history: the lab", sections)


def _point(run: RunEntry, point: str) -> PointEntry | None:
    return next((p for p in run.points if p.point == point), None)


def render_plan(plan: Plan) -> str:
    points: dict[str, str] = {}
    for o in plan.on:
        for p in o.run.points:
            points.setdefault(p.point, p.unit)
    rows, figs = [], []
    for i, (point, unit) in enumerate(points.items()):
        shown = [(o, e) for o in plan.on if (e := _point(o.run, point)) is not None and e.estimate is not None]
        ph = next((p for o in plan.on for p in o.drive.points if p.point == point), None)

        def rate(value: float | None) -> str:
            return rate_text(ph, value) if ph is not None else f"{value:.4g}" if value is not None else "-"
        for o, e in shown:
            interval = f"[{rate(e.low)}, {rate(e.high)}]" if e.low is not None and e.high is not None else \
                f"no interval ({e.refused})" if e.refused else "no interval"
            rows.append([esc(point), _link(f"../{drive_file(o.drive)}", o.drive.drive.label), esc(rate(e.estimate)),
                         esc(interval), esc(o.run.name), esc(day(o.run.started_utc)), esc(o.run.host or "-")])
        if shown:
            fig = plot.Figure()
            values = [{"estimate": e.estimate, "low": e.low, "high": e.high} for _, e in shown]
            fig.add_trace(plot.Scatter(x=[e.estimate for _, e in shown], y=[o.drive.drive.label for o, _ in shown],
                                       mode="markers", marker_color=plot.BLUE, marker_size=9,
                                       error_x=figures.interval_bars(values), name=point, showlegend=False,
                                       hovertemplate="%{y}: %{x:.4s}<extra></extra>"))
            per = "bytes/s" if unit == "bytes" else f"{unit}/s"
            fig.update_layout(height=max(260, 60 + 40 * len(shown)))
            figs.append(figure(figures.layout(fig, point, per, ""), f"point-{i}"))
    sections = [
        f"<p>{_link('../index.html', 'the lab')}</p><h1>{esc(plan.name)} on every drive</h1><p class=\"muted\">The "
        f"latest complete run of this plan (text SHA-256 {esc((plan.sha256 or '-')[:12])}) on each of "
        f"{len(plan.on)} drive{'s' if len(plan.on) != 1 else ''}: each point's rate with its interval.</p>",
        "<div class=\"grid\">" + "".join(figs) + "</div>" if figs else "<p>No point of this plan has a rate.</p>",
        "<h2>Points</h2>" + _rows(["point", "drive", "rate", "interval", "run", "started (UTC)", "machine"], rows),
    ]
    notes = [[_link(f"../{drive_file(o.drive)}", o.drive.drive.label), esc(note_text(n, o.drive.runs))]
             for o in plan.on for n in o.drive.notes]
    if notes:                   # a reason people wrote stands beside the numbers it explains, on every page
        sections.append("<h2>Notes of these drives</h2>" + _rows(["drive", "note"], notes))
    return page(f"stibium history: {plan.name} across drives", sections)
