"""The views of a sustained test: its rate against bytes written and against time, the stretches and
their rates drawn over the chunks, the cliff with its interval, the drive's temperature on a second axis;
and the section of the report that holds them. Draws only: every number comes from SustainedTestResult."""

from __future__ import annotations

from typing import Any

import numpy as np
from ...report import plot

from .compare import SustainedPair
from ...analysis.estimate import estimate_text, ratio_text as ratio_interval
from .result import SustainedTestResult
from ...units import format_bytes, format_rate, format_seconds
from ...report.figures import layout
from ...report.page import esc, figure, table
from ...report.terminal import Column, fitted_table, with_caption

STRETCH_COLOURS = (plot.GREEN, plot.RED, plot.PURPLE, plot.BROWN, plot.PINK)
TEMPERATURE_COLOUR = plot.ORANGE


def rate_curve(d: dict[str, Any], along: str = "bytes", name: str | None = None, colour: str = plot.BLUE,
               fig: plot.Figure | None = None) -> plot.Figure:
    """Each chunk's rate against the bytes moved when it ended (along="bytes") or the seconds since the test
    began (along="time"); the stretches' rates as lines over their chunks; the cliff with its interval; the
    temperature on a second axis where known. `d` is a sustained result's JSON form (summary.json, or a
    side of a comparison); `fig` and `name` draw a second machine over the first."""
    first = fig is None
    fig = fig if fig is not None else plot.Figure()
    points = d["points"]
    done = np.asarray(points["bytes_done"], float)
    elapsed = np.asarray([np.nan if v is None else v for v in points["elapsed_s"]], float)
    x = done if along == "bytes" else elapsed
    prefix = f"{name}: " if name else ""
    fig.add_trace(plot.Scatter(x=x, y=points["rate_bytes_per_s"], mode="lines+markers",
                             name=esc(name or f"{d['op']} chunks"), line={"color": colour, "width": 1},
                             marker={"size": 4, "color": colour}, customdata=np.c_[done, elapsed],
                             hovertemplate="%{customdata[0]:.4s}B, %{customdata[1]:.1f} s: %{y:.4s}B/s<extra></extra>"))
    for k, st in enumerate(d["stretches"]):
        rate = st["rate_bytes_per_s"]
        lo = st["start_bytes"] if along == "bytes" else (x[st["first_chunk"] - 1] if st["first_chunk"] else 0.0)
        fig.add_trace(plot.Scatter(x=[lo, x[st["end_chunk"] - 1]], y=[rate["estimate"]] * 2, mode="lines",
                                 line={"color": colour if name else STRETCH_COLOURS[k % len(STRETCH_COLOURS)],
                                       "width": 3, "dash": "dash" if name else "solid"},
                                 name=esc(f"{prefix}stretch {k + 1}: {estimate_text(rate, format_rate)}"),
                                 hoverinfo="name"))
    cliff = d.get("cliff_bytes")
    if cliff and along == "bytes":
        mark = colour if name else plot.RED
        if cliff.get("low") is not None and cliff.get("high") is not None:
            fig.add_vrect(x0=cliff["low"], x1=cliff["high"], fillcolor=mark, opacity=0.12, line_width=0)
        fig.add_vline(x=cliff["estimate"], line_dash="dash", line_color=mark,
                      annotation_text=esc(f"{prefix}cliff at {format_bytes(cliff['estimate'])}"))
    for pause in d.get("pauses", []):
        at = pause["after_bytes"] if along == "bytes" else float(
            x[min(int(np.searchsorted(done, pause["after_bytes"])), len(x) - 1)])
        fig.add_vline(x=at, line_dash="dot", line_color=plot.GREY, annotation_text=f"paused {pause['seconds']:.0f} s")
    temps = [np.nan if v is None else v for v in points["temperature_c"]]
    if not name and np.isfinite(temps).any():
        fig.add_trace(plot.Scatter(x=x, y=temps, mode="lines", name="drive temperature (°C)", yaxis="y2",
                                 line={"color": TEMPERATURE_COLOUR, "width": 2, "dash": "dot"}))
        fig.update_layout(yaxis2={"title": "°C", "overlaying": "y", "side": "right", "showgrid": False})
    if first:
        moved = "bytes written" if d["op"] == "write" else "bytes read"
        layout(fig, f"{d['name']} {d['op']}: rate per chunk against {'bytes moved' if along == 'bytes' else 'time'}"
               + (", both runs" if name else ""),
               moved if along == "bytes" else "seconds since the test began", "bytes/s")
        fig.update_layout(yaxis={"rangemode": "tozero"})
    return fig


def lines(results: list[SustainedTestResult], width: int) -> list[Any]:
    """The terminal's table of a run's sustained writes and reads back, one line each: the rate of the first
    stretch, where it ends (the cliff, with its interval) and the rate after it; "steady" where it does not end."""
    if not results:
        return []
    columns = [Column("test", shortened=True), Column("op"), Column("moved", justify="right"),
               Column("first stretch", justify="right"), Column("ends after", justify="right"),
               Column("then", justify="right")]
    variants = [[_line(e, compact) for e in results] for compact in (False, True)]
    shown, dropped, _ = fitted_table("sustained: where the first stretch ends (change points of the rate)", columns,
                                     variants, width)
    return [with_caption(shown, dropped)]


def _line(e: SustainedTestResult, compact: bool) -> list[str]:
    r = e.result
    first = estimate_text(r.stretches[0].rate_bytes_per_s, format_rate, compact=compact)
    if r.cliff_bytes is None:
        return [e.name, f"{e.op}s", format_bytes(r.bytes_written), first, "steady throughout", ""]
    return [e.name, f"{e.op}s", format_bytes(r.bytes_written), first,
            estimate_text(r.cliff_bytes, format_bytes, compact=compact),
            estimate_text(r.stretches[1].rate_bytes_per_s, format_rate, compact=compact)]


def stretch_rows(e: SustainedTestResult) -> list[list[Any]]:
    rows = []
    for k, s in enumerate(e.result.stretches):
        rows.append([k + 1, f"{format_bytes(s.start_bytes)} to {format_bytes(s.end_bytes)}", s.end - s.first,
                     estimate_text(s.rate_bytes_per_s, format_rate),
                     "-" if s.temperature_c is None else f"{s.temperature_c:.0f} °C"])
    return rows


def gaps_line(e: SustainedTestResult) -> str:
    """What came between the chunks: the only time not measured, stated."""
    if e.in_flight > 1:
        inside = (f"between two chunks of a file none: the {e.in_flight} requests in flight went on while each row "
                  f"was written out, and each chunk ends at the completion that filled it")
    else:
        inside = (f"between two chunks of a file (the helper writing out a row): median "
                  f"{format_seconds(e.chunk_gap_s[0])}, at most {format_seconds(e.chunk_gap_s[1])}")
    between = "" if e.file_gap_s is None else (
        f"; between two files (sync, close, the next file's creation and a round trip to the helper): median "
        f"{format_seconds(e.file_gap_s[0])}, at most {format_seconds(e.file_gap_s[1])}")
    return inside + between


def section(e: SustainedTestResult, first_id: int) -> tuple[str, int]:
    """The report's section of one sustained test's writes or reads, and how many figures it drew."""
    d = e.to_json()
    figs = [rate_curve(d, "bytes"), rate_curve(d, "time")]
    html = (f"<h2>{esc(e.name)}: sustained {esc(e.op)}s</h2>"
            f"<p><b>{esc(e.result.headline)}</b> ({e.result.chunks} chunks in {e.files} files, "
            f"{format_bytes(e.result.bytes_written)}).</p>"
            + table(["stretch", "bytes", "chunks", "rate (95% interval)", "drive temperature"], stretch_rows(e))
            + f"<p class=\"muted\">Time not measured: {esc(gaps_line(e))}.</p>"
            + "<div class=\"grid\">" + "".join(figure(f, f"fig{first_id + i}") for i, f in enumerate(figs))
            + "</div>")
    return html, len(figs)


def compare_section(pair: SustainedPair, label_a: str, label_b: str, colours: dict[str, str], figure_id: str) -> str:
    """A sustained test of a comparison: both headlines, the ratios of the fast rate, the rate after the
    cliff and the cliff's place, and both curves overlaid against bytes moved."""
    rows = []
    for r in pair.ratios:
        fmt = format_bytes if r.what.startswith("cliff") else format_rate
        rows.append([r.what, estimate_text(r.a, fmt), estimate_text(r.b, fmt), ratio_interval(r.ratio, "x"), r.verdict])
    fig = rate_curve(pair.a.to_json(), "bytes", f"A: {label_a}", colours["a"])
    rate_curve(pair.b.to_json(), "bytes", f"B: {label_b}", colours["b"], fig)
    return (f"<h2>{esc(pair.a.name)} {esc(pair.a.op)}: sustained</h2>"
            f"<p>A: {esc(label_a)}: {esc(pair.a.result.headline)}<br>B: {esc(label_b)}: {esc(pair.b.result.headline)}"
            f"</p>" + table(["", "A", "B", "B / A (95% interval)", "verdict"], rows) + figure(fig, figure_id))