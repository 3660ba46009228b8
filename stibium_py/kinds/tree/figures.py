"""The views of a tree test: its row of the summary table, its terminal lines, and its section of the page (a
table of every phase at every thread count, the rates against threads, each phase's latency distribution). Draws
only: every number comes from TreeResult."""

from __future__ import annotations

import math
from typing import Any, Callable

from ...report import plot

from ...analysis.estimate import estimate_text
from .result import ENGINES, TreeResult
from ...units import format_bytes, format_per_s, format_rate, format_seconds
from ...report.figures import layout
from ...report.page import esc, figure, table
from ...report.terminal import Column, fitted_table, with_caption


def _per_s(e: TreeResult) -> Callable[[float | None], str]:
    return lambda v: format_per_s(v, e.unit)


def _flight(threads: int) -> str:
    return f"{threads} thread{'s' if threads > 1 else ''}"


def headline(e: TreeResult, compact: bool) -> tuple[str, str, str]:
    """The best thread count's rate and its median latency."""
    best = e.best
    p50 = best.latency_s.get("lat_p50_s")
    latency = "-" if p50 is None else format_seconds(p50) if compact else f"p50 {format_seconds(p50)}"
    if compact:
        return f"{e.op} T{best.threads}", estimate_text(best.rate, _per_s(e), compact=True), latency
    return f"{e.name} {e.op}", f"{estimate_text(best.rate, _per_s(e))} at {_flight(best.threads)}", latency


def lines(results: list[TreeResult], width: int) -> list[Any]:
    """The terminal's table of a run's tree phases, one line a phase: the rate at each thread count (and bytes
    per second where files moved bytes, left out first where the terminal is narrow), the scaling from the fewest
    threads to the most, and what the phase met (the sync at the end, clones, how the copy copied)."""
    if not results:
        return []
    threads = sorted({p.threads for e in results for p in e.points})
    columns = [Column("test", shortened=True), Column("phase"),
               *(Column(_flight(t), justify="right") for t in threads),
               Column("scaling", justify="right", drop=1)]
    variants = [[_row(e, threads, moved) for e in results] for moved in (True, False)]
    shown, dropped, _ = fitted_table("tree phases: the median rate over trials at each thread count", columns,
                                     variants, width)
    met = [f"{e.name} {e.op}: {'; '.join(said)}" for e in results if (said := _met(e))]
    return [with_caption(shown, dropped), *met]


def _row(e: TreeResult, threads: list[int], moved: bool) -> list[str]:
    by_threads = {p.threads: p for p in e.points}
    rates = []
    for t in threads:
        p = by_threads.get(t)
        if p is None:
            rates.append("")
            continue
        rate = format_per_s(p.rate.estimate, e.unit)
        rates.append(rate + (f" ({format_rate(p.bytes_per_s.estimate)})" if moved and p.bytes_per_s is not None
                             else ""))
    scaling = (f"T{e.points[-1].threads}/T{e.points[0].threads} {e.scaling:.2f}x"
               if e.scaling is not None and math.isfinite(e.scaling) else "")
    phase = e.op + (" (foundation)" if e.engine != "posix" else "")
    return [e.name, phase, *rates, scaling]


def _met(e: TreeResult) -> list[str]:
    """What a phase met that its rate alone does not say: the share of a create in its sync at the end, a copy
    made by clones (no bytes moved) and how the copy copied."""
    met = []
    if e.op == "create" and e.sync == "end" and e.points[0].sync_share is not None:
        met.append(f"the sync at the end {e.points[0].sync_share:.0%} of the phase")
    if e.op == "copy":
        most = max((p.cloned or 0 for p in e.points), default=0)
        method = next((p.copy_method for p in e.points if p.copy_method), "")
        if most:
            met.append(f"cloned {most:,} of {e.points[0].entries:,} files (no bytes moved)")
        if method:
            met.append(f"copied by {method}")
    return met


def _rows(results: list[TreeResult]) -> list[list[str]]:
    rows = []
    for e in results:
        for p in e.points:
            lat = p.latency_s
            rows.append([e.op, str(p.threads), estimate_text(p.rate, _per_s(e)),
                         estimate_text(p.bytes_per_s, format_rate) if p.bytes_per_s is not None else "",
                         *(format_seconds(v) if v is not None else "-"
                           for v in (lat.get("lat_p50_s"), lat.get("lat_p99_s"), lat.get("lat_p999_s"))),
                         f"{p.calls_per_op:.3g}" if p.calls_per_op is not None else "-",
                         str(p.trials), f"{p.entries:,}", e.warm])
    return rows


def rates_figure(results: list[TreeResult]) -> plot.Figure:
    """Each phase's rate (median and interval) against threads, on a log scale: phases differ a hundredfold."""
    fig = plot.Figure()
    for e in results:
        xs = [p.threads for p in e.points]
        ys = [p.rate.estimate for p in e.points]
        fig.add_trace(plot.Scatter(
            x=xs, y=ys, mode="lines+markers", name=esc(f"{e.op} ({e.unit}/s)"),
            error_y={"type": "data", "symmetric": False,
                     "array": [max(p.rate.high - y, 0.0) if math.isfinite(p.rate.high) else 0.0
                               for p, y in zip(e.points, ys)],
                     "arrayminus": [max(y - p.rate.low, 0.0) if math.isfinite(p.rate.low) else 0.0
                                    for p, y in zip(e.points, ys)]}))
    name = results[0].name if results else ""
    fig = layout(fig, f"{name}: files per second by phase against threads (median over trials, its interval)",
                 "threads", "files/s (list: names/s)", log_y=True)
    fig.update_xaxes(tickvals=sorted({p.threads for e in results for p in e.points}))   # whole threads only
    return fig


def latency_figure(results: list[TreeResult]) -> plot.Figure:
    """Each phase's distribution of one operation's latency (every trial's, at the fewest threads)."""
    fig = plot.Figure()
    for e in results:
        p = e.points[0]
        if p.latency_hist is None:
            continue
        x, y = p.latency_hist.cdf()
        fig.add_trace(plot.Scatter(x=x, y=y, mode="lines", name=esc(f"{e.op} ({_flight(p.threads)})")))
    name = results[0].name if results else ""
    return layout(fig, f"{name}: one file's operation (list: one folder's), cumulative distribution", "seconds",
                  "fraction of operations", log_x=True)


def section(results: list[TreeResult], n: int) -> tuple[list[str], int]:
    """Per tree test (its phases together): what the tree was, the table, the rates and the latencies."""
    sections = []
    by_test: dict[str, list[TreeResult]] = {}
    for e in results:
        by_test.setdefault(e.name, []).append(e)
    for name, entries in by_test.items():
        made = next((e for e in entries if e.files is not None), entries[0])
        what = (f"{made.files:,} files, {format_bytes(made.tree_bytes)}" if made.files is not None
                else format_bytes(made.tree_bytes))
        create = next((e for e in entries if e.op == "create"), None)
        sync = f"; create synced: {create.sync}" if create is not None else ""
        header = ["phase", "threads", "rate (95% interval)", "bytes/s", "p50", "p99", "p99.9",
                  "calls a file (list: a folder)", "trials", "files (list: names)", "what it met"]
        figs = [rates_figure(entries), latency_figure(entries)]
        engine = entries[0].engine
        sections.append(f"<h2>{esc(name)}: a tree of files</h2><p>{esc(what)}{esc(sync)}. Each phase of each trial "
                        f"is one measurement on a tree of its own; the rate is files (list: names) per second of the "
                        f"phase, the latency one file's operation (list: one folder's).</p>"
                        f"<p>Engine: {esc(engine)}, {esc(ENGINES.get(engine, ''))}.</p>"
                        + table(header, _rows(entries))
                        + "<div class=\"grid\">" + "".join(figure(f, f"fig{n + i}") for i, f in enumerate(figs))
                        + "</div>")
        n += len(figs)
    return sections, n
