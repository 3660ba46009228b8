"""The view of a run's many clients: a line per point under the terminal's table (the slowest client, first
and last done), and the report's section (every client's rate with its interval, stragglers, the clocks'
offsets, a timeline of each client's steps). It draws the summary's numbers and computes none."""

from __future__ import annotations

import math
from typing import Any

from . import plot

from ..analysis.clients import ClientsSummary
from ..analysis.rates import label, rate_format
from ..units import format_seconds
from .figures import layout
from .page import esc, figure, table
from .terminal import Column, fitted_table, with_caption


def hosts_text(c: ClientsSummary) -> str:
    distinct = list(dict.fromkeys(c.hosts))
    return f"{c.ranks} clients on {len(distinct)} machine{'s' if len(distinct) != 1 else ''} ({', '.join(distinct)})"


def terminal_lines(c: ClientsSummary, width: int) -> list[Any]:
    """What the clients were, in a line, and a table of the slowest client of each point, one line a point."""
    from rich.text import Text
    lines: list[Any] = [Text(f"{hosts_text(c)}: the table's rates are the aggregate (all bytes from the first "
                             f"client's start to the last one's end)" if c.points else
                             f"{hosts_text(c)}: each test counts every client's measurements")]
    rows = [[label(p.key), str(p.slowest.rank), p.slowest.host, rate_format(p.key)(p.slowest.rate),
             format_seconds(p.first_done_s), format_seconds(p.last_done_s)] for p in c.points if p.slowest is not None]
    if rows:
        columns = [Column("point", shortened=True), Column("rank", justify="right"), Column("host", shortened=True),
                   Column("its rate", justify="right"), Column("first done", justify="right", drop=2),
                   Column("last done", justify="right", drop=1)]
        shown, dropped, _ = fitted_table("the slowest client of each point (done: after the step's start)", columns,
                                         [rows], width)
        lines.append(with_caption(shown, dropped))
    return lines


def section(c: ClientsSummary, n: int) -> tuple[str, int]:
    """The section's HTML and the next figure number."""
    if not c.points:        # only tests whose clients are read apart in their own sections (streams)
        parts = [f"<h2>Clients</h2><p>{esc(hosts_text(c))}. No test of this run has a rate of all clients "
                 f"together: each test's own section counts every client's measurements.</p>"]
    else:
        parts = [f"<h2>Clients</h2><p>{esc(hosts_text(c))}. The rates above are the aggregate as IOR defines it: "
                 f"every client's bytes over the time from the first client's start to the last client's end, on "
                 f"rank 0's clock. Below, each client's own rate (the same estimator on its own measurements), "
                 f"flagged as a straggler where Tukey's fences on log(rate / the clients' median) call it low; "
                 f"stragglers count in the aggregate.</p>"]
        parts += _points(c)
    clocks = [[k.get("rank"), k.get("host"), "same machine as rank 0: its clock" if k.get("same_clock") else
               f"{k.get('offset_ns', 0):,} ns", f"± {k.get('uncertainty_ns', 0):,} ns", f"{k.get('round_trip_ns', 0):,} ns"]
              for k in c.clocks]
    parts.append("<h3>Clocks: each rank's offset to rank 0's (the shortest of 40 round trips)</h3>"
                 + table(["rank", "host", "offset", "uncertainty", "round trip"], clocks))
    if c.timeline:
        parts.append(figure(timeline_figure(c), f"fig{n}"))
        n += 1
    return "".join(parts), n


def _points(c: ClientsSummary) -> list[str]:
    """Each point's clients' own rates, and when the first and the last were done."""
    parts = []
    rows = []
    for p in c.points:
        for cl in p.clients:
            fmt = rate_format(p.key)
            interval = "" if not math.isfinite(cl.low) else f"{fmt(cl.low)} to {fmt(cl.high)}"
            rows.append([label(p.key), cl.rank, cl.host, fmt(cl.rate), interval, cl.n, cl.straggler or ""])
    parts.append(table(["point", "rank", "host", "rate", "interval", "n", "straggler"], rows))
    done = [[label(p.key), format_seconds(p.first_done_s), format_seconds(p.last_done_s)] for p in c.points]
    parts.append("<h3>First and last done (median over the point's steps, after the step's first start)</h3>"
                 + table(["point", "first client done", "last client done"], done))
    return parts


def timeline_figure(c: ClientsSummary) -> plot.Figure:
    """Each client's steps as bars from start to end, a row per rank, a colour per test and op."""
    fig = plot.Figure()
    by_phase: dict[tuple[str, str], list[tuple[int, float, float]]] = {}
    for rank, test, op, start, end in c.timeline:
        by_phase.setdefault((test, op), []).append((rank, start, end))
    for (test, op), steps in by_phase.items():
        fig.add_trace(plot.Bar(y=[f"rank {r}" for r, _, _ in steps], x=[e - s for _, s, e in steps],
                             base=[s for _, s, _ in steps], orientation="h", name=esc(f"{test} {op}"),
                             hovertemplate="%{y}: %{base:.4f} s to %{x:.4f} s later<extra>" + esc(f"{test} {op}")
                             + "</extra>"))
    fig.update_layout(barmode="overlay", bargap=0.3)
    fig.update_yaxes(categoryorder="array", categoryarray=[f"rank {r}" for r in range(c.ranks)][::-1])
    return layout(fig, "Each client's measurements on rank 0's clock", "seconds since the clients joined", "")
