"""How a files test is drawn: its row of the summary table, its sections of the page, its figure on the compare page.
Draws only."""

from __future__ import annotations

import math

import numpy as np

from ...analysis.comparison import Drawn, PointRatio, TwoRuns
from .result import FilesResult
from ...report import plot
from . import figures
from ...report.build import TABLE_ROWS, KindView, est_text, plus_minus
from ...report.compare_page import COLORS
from ...report.figures import DENSITY_ABOVE_POINTS, density, layout
from ...report.page import esc, figure, table
from ...units import format_bytes, format_rate, format_seconds


SMALLEST_MARK = "*"
SMALLEST_NOTE = ("* the median time of the smallest size: the fitted latency (the line's intercept) is below zero, "
                 "which no time can be; the report explains")
SMALLEST_PAGE_NOTE = (
    "* The latency of a files test is the intercept of its line of time against size: the time a file of no bytes "
    "would take. Where noise or a cache tilts the line, the intercept can fall below zero, which no time can be; the "
    "table then shows the median time of the smallest size measured (an upper bound of the latency, since it "
    "includes that size's bytes), and summary.json keeps the fitted value.")


def negative_latency(e: FilesResult) -> bool:
    """A result whose fitted latency is below zero: the latency column shows the smallest size's median time
    instead, marked."""
    if e.latency_smallest_size_s is None:
        return False
    return math.isfinite(e.fit.line.intercept_s) and e.fit.line.intercept_s < 0


def table_note(results: list[FilesResult]) -> tuple[str, str] | None:
    return (SMALLEST_NOTE, SMALLEST_PAGE_NOTE) if any(negative_latency(e) for e in results) else None


def drift(e: FilesResult) -> str:
    """The drift over the run in whole percent, with ! where it was detected."""
    if not e.drift.fitted:
        return "-"
    return f"{e.drift.drift_fraction:+.0%}" + ("!" if e.drift.detected else "")



def headline(e: FilesResult, compact: bool) -> tuple[str, str, str]:
    what = e.op
    rate = plus_minus(e.rate) if compact else est_text(e.rate, format_rate)
    smallest_s = e.latency_smallest_size_s
    if negative_latency(e) and smallest_s is not None:
        return what, rate, f"{format_seconds(smallest_s)}{SMALLEST_MARK}"
    lat = e.latency.as_dict().get("estimate")
    latency = (format_seconds(lat) if lat is not None else "-") if compact else est_text(e.latency, format_seconds)
    return what, rate, latency



def sections(results: list[FilesResult], n: int) -> tuple[list[str], int]:
    """Per files test and op: its four figures, and the tables of its flagged measurements."""
    sections = []
    for e in results:
        sections.append(f"<h2>{esc(e.name)}: {esc(e.op)}s of whole files</h2>")
        if figures.dense(e):
            flagged_count = len(e.flagged_any)
            sections.append(f"<div class=\"info\">The {e.n:,} measurements of this test are drawn as densities: "
                            f"each cell's colour is how many measurements fell in it, every one counted. Above "
                            f"{figures.DENSITY_ABOVE_POINTS:,} measurements a point for each would make a page too "
                            f"large for a browser to open. The {flagged_count:,} flagged measurements (outliers, cache "
                            f"suspects, fast outliers) are drawn one by one in the residual figure, with their "
                            f"numbers on hover"
                            + (f" (the {figures.FLAGGED_POINTS_DRAWN:,} farthest from the fit; the others as a "
                               f"density in red)" if flagged_count > figures.FLAGGED_POINTS_DRAWN else "")
                            + "; every measurement is in measurements.csv.</div>")
        figs = [figures.time_vs_size(e), figures.residuals(e), figures.rate_vs_size(e), figures.rate_vs_elapsed(e)]
        sections.append("<div class=\"grid\">" + "".join(figure(f, f"fig{n + i}") for i, f in enumerate(figs)) + "</div>")
        n += len(figs)
        for title, flagged in (("Page-cache suspects", e.cache_suspects),
                               ("Served by a cache below the file system: memory speed, nothing in the page cache",
                                e.below_cache),
                               ("Fast outliers: not the page cache", e.fast_outliers)):
            if flagged:
                shown = flagged[:TABLE_ROWS]
                more = (f"<p class=\"muted\">... and {len(flagged) - len(shown):,} more: every one is drawn in the "
                        f"figures above and listed in summary.json.</p>" if len(flagged) > len(shown) else "")
                sections.append(f"<h3>{title}</h3>" + table(
                    ["seq", "file", "size", "seconds", "rate", "reasons"],
                    [[m.seq, m.file, format_bytes(m.size_bytes), f"{m.seconds:.6f}", format_rate(m.rate_bytes_per_s),
                      "; ".join(e.reasons(k))] for k in shown for m in (e.measurements.row(k),)]) + more)
    return sections, n


def overlay(result: TwoRuns, drawn: Drawn, first: PointRatio) -> plot.Figure:
    fig = plot.Figure()
    test, op = first.key.test, first.key.op
    fits = {"a": (first.rate_a_bytes_per_s, first.latency_a_s), "b": (first.rate_b_bytes_per_s, first.latency_b_s)}
    for side, name, (x, y) in zip(("a", "b"), drawn.labels, drawn.measured[first.key]):
        if len(x) > DENSITY_ABOVE_POINTS:      # as in the report: every measurement counted into cells
            fig.add_trace(density(x, y, False, False, "Blues" if side == "a" else "Reds",
                                  f"{side.upper()}: {name}"))
        else:
            fig.add_trace(plot.Scattergl(x=x, y=y, mode="markers", name=f"{side.upper()}: {esc(name)}",
                                       marker={"color": COLORS[side], "size": 6, "opacity": 0.7}))
        rate, latency = fits[side]
        if rate and np.isfinite(rate) and latency is not None and len(x):
            grid = np.linspace(0, x.max(), 50)
            fig.add_trace(plot.Scatter(x=grid, y=latency + grid / rate, mode="lines", line={"color": COLORS[side]},
                                     name=f"{side.upper()} Theil-Sen: {format_rate(rate)}"))
    return layout(fig, f"{test} {op}: time against size, both runs", "size (bytes)", "seconds")


# its row of the summary table (counts: outliers, page-cache suspects, below the file system, fast outliers)
VIEW = KindView(headline,
                lambda e: [str(len(e.outliers)), str(len(e.cache_suspects)), str(len(e.below_cache)),
                           str(len(e.fast_outliers))],
                drift, sections, lambda results, width: [], table_note=table_note)
