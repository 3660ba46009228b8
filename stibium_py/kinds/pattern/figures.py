"""A pattern test's figures: throughput against granularity (or each trial's, at one granularity), latency
percentiles (heatmaps when there are many lines), latency CDFs, the stride heatmap."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import fills
from ...report import plot
from ...report.figures import interval_bars, layout
from ...report.page import esc
from ...units import format_exact_size, in_flight_label, op_label
from .result import LATENCY_KEYS, PatternResult

def _line(p: Any) -> tuple[str, int, int, int, float | None, str]:
    """What one line of a figure over granularities holds: an access, stride, requests in flight, mixed, the read
    share, and the fill."""
    return p.access, p.stride_bytes, p.queue_depth, p.threads, p.read_fraction, p.fill


def _line_name(op: str, access: str, stride: int, depth: int, threads: int, read_fraction: float | None = None,
               fill: str = fills.RANDOM, granularity: int = 0) -> str:
    parts = (op_label(op, read_fraction), access, format_exact_size(granularity) if granularity else "",
             f"stride {format_exact_size(stride)}" if stride else "", in_flight_label(depth, threads),
             fills.short(fill))
    return " ".join(part for part in parts if part)


def single_granularity(entries: list[PatternResult]) -> bool:
    """Every op, access, stride and requests in flight of the test measured at one granularity only: a
    granularity axis would span decades around a single point."""
    return all(len({p.granularity_bytes for p in e.points if _line(p) == _line(q)}) == 1
               for e in entries for q in e.points)


def throughput_per_trial(entries: list[PatternResult]) -> plot.Figure:
    """A test of one granularity: what varies is the trials, so each trial's throughput in run order,
    with the median and its interval as a band."""
    fig = plot.Figure()
    # a test by rounds (steady) rates its last window's rounds: each point at its own round's number
    unit = "round" if any(e.steady is not None for e in entries) else "trial"
    for e in entries:
        m = e.measurements
        for p in e.points:
            mine = np.flatnonzero((m.access == p.access) & (m.stride_bytes == p.stride_bytes) &
                                  (m.queue_depth == p.queue_depth) & (m.threads == p.threads) &
                                  (np.isnan(m.read_fraction) if p.read_fraction is None
                                   else m.read_fraction == p.read_fraction))
            order = mine[np.argsort(m.seq[mine], kind="stable")]
            t = p.throughput.as_dict()
            name = _line_name(e.op, *_line(p), granularity=p.granularity_bytes)
            fig.add_trace(plot.Scatter(x=m.trial[order] + 1, y=m.bytes[order] / m.seconds[order],
                                     mode="lines+markers", name=esc(name),
                                     hovertemplate=unit + " %{x}: %{y:.4s}B/s<extra></extra>"))
            if t["low"] is not None and t["high"] is not None:
                fig.add_hrect(y0=t["low"], y1=t["high"], line_width=0, fillcolor="rgba(44,160,44,0.12)")
            fig.add_hline(y=t["estimate"], line_dash="dot", line_color=plot.GREEN, annotation_position="top left",
                          annotation_text=f"median {_line_name(e.op, *_line(p))}")
    name = entries[0].name if entries else ""
    fig = layout(fig, f"{name}: each {unit}'s throughput, median and interval", unit, "bytes/s")
    few = max((len(e.measurements) for e in entries), default=0) <= 20
    fig.update_xaxes(tickformat="d", **({"dtick": 1} if few else {}))      # whole trials: no tick at 1.5
    return fig


def throughput_vs_granularity(entries: list[PatternResult]) -> plot.Figure:
    if single_granularity(entries):
        return throughput_per_trial(entries)
    fig = plot.Figure()
    for e in entries:
        by_line: dict[tuple[str, int, int, int, float | None, str], list] = {}
        for p in e.points:
            by_line.setdefault(_line(p), []).append(p)
        for line, pts in sorted(by_line.items(), key=lambda kv: (kv[0][:4], kv[0][4] or 0, kv[0][5] != e.main_fill,
                                                                 kv[0][5])):
            pts = sorted(pts, key=lambda p: p.granularity_bytes)
            t = [p.throughput.as_dict() for p in pts]
            name = _line_name(e.op, *line)
            fig.add_trace(plot.Scatter(
                x=[p.granularity_bytes for p in pts], y=[v["estimate"] for v in t], mode="lines+markers",
                name=esc(name), error_y=interval_bars(t),
                text=[f"{p.iops:.0f} IOPS, p50 {1e3 * (p.lat_p50_s or 0):.3f} ms, {p.trials} "
                      f"{'trial' if p.trials == 1 else 'trials'}" + ("" if v["low"] is not None else ", no interval")
                      for p, v in zip(pts, t)], hovertemplate="%{x:,} B: %{y:.4s}B/s<br>%{text}<extra></extra>"))
        if e.knee_bytes:
            fig.add_vline(x=e.knee_bytes, line_dash="dot", annotation_text=f"knee {e.op}")
    name = entries[0].name if entries else ""
    return layout(fig, f"{name}: throughput against granularity", "granularity (bytes)", "bytes/s",
                   log_x=True, log_y=True)


LATENCY_LINES_MAX = 8


PERCENTILE_LABELS = ["p50", "p90", "p99", "p99.9", "max"]


def _panel_title(op: str, access: str, stride: int) -> str:
    return esc(f"{op} {access}" + (f" stride {format_exact_size(stride)}" if stride else ""))


def _op(e: PatternResult, p: Any) -> str:
    """A point's op as a panel names it: read, write, or mixed with its read share."""
    return op_label(e.op, p.read_fraction)


def _panel_points(entries: list[PatternResult], op: str, access: str, stride: int) -> list:
    """The points of one (op, access, stride) panel, by granularity."""
    return sorted((p for e in entries for p in e.points if (_op(e, p), p.access, p.stride_bytes) == (op, access, stride)),
                  key=lambda p: p.granularity_bytes)


def _small_multiples(panels: list[tuple[str, str, int]], **spacing: Any) -> tuple[plot.Figure, int]:
    """A grid of one panel per (op, access, stride), three to a row, each titled; and its column count."""
    cols = min(len(panels), 3)
    rows = -(-len(panels) // cols)
    return plot.make_subplots(rows=rows, cols=cols, subplot_titles=[_panel_title(*p) for p in panels], **spacing), cols


def _grid_layout(fig: plot.Figure, entries: list[PatternResult], title: str, x: str, y: str, panels: int, cols: int,
                 row_height: int, log_x: bool = False) -> plot.Figure:
    """The house style for a grid of panels, as tall as its rows need."""
    name = entries[0].name if entries else ""
    fig = layout(fig, f"{name}: {title}", x, y, log_x=log_x)
    fig.update_layout(height=max(420, row_height * -(-panels // cols)))
    return fig


def latency_heatmap(entries: list[PatternResult]) -> plot.Figure:
    """Many granularities: one heatmap per op, access and stride (granularity against percentile), the
    colour the latency on a log scale, each cell labelled."""
    panels = sorted({(_op(e, p), p.access, p.stride_bytes) for e in entries for p in e.points})
    fig, cols = _small_multiples(panels, horizontal_spacing=0.12, vertical_spacing=0.18)
    for i, panel in enumerate(panels):
        pts = _panel_points(entries, *panel)
        z = np.array([[p.latency_s.get(k) or np.nan for k in LATENCY_KEYS] for p in pts], float)
        with np.errstate(divide="ignore", invalid="ignore"):
            shade = np.log10(z)
        text = [[f"{v * 1e3:.3g} ms" if v == v else "" for v in row] for row in z]
        fig.add_trace(plot.Heatmap(z=shade, x=PERCENTILE_LABELS,
                                 y=[f"{format_exact_size(p.granularity_bytes)} {in_flight_label(p.queue_depth, p.threads)}".strip()
                                    for p in pts],
                                 text=text, texttemplate="%{text}", colorscale="Viridis",
                                 coloraxis="coloraxis", hovertemplate="%{y} %{x}: %{text}<extra></extra>"),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(coloraxis={"colorscale": "Viridis", "colorbar": {"title": "log10 s"}})
    return _grid_layout(fig, entries, "per-request latency by granularity and percentile (median over trials)", "", "",
                        len(panels), cols, 300)


def many_latency_lines(entries: list[PatternResult]) -> bool:
    return sum(len(e.points) for e in entries) > LATENCY_LINES_MAX


def latency_percentiles(entries: list[PatternResult]) -> plot.Figure:
    if many_latency_lines(entries):
        return latency_heatmap(entries)
    fig = plot.Figure()
    for e in entries:
        for p in e.points:
            label = _line_name(e.op, *_line(p), granularity=p.granularity_bytes)
            ys = [p.latency_s.get(k) for k in LATENCY_KEYS]
            if any(v is not None for v in ys):
                fig.add_trace(plot.Scatter(x=["p50", "p90", "p99", "p99.9", "max"], y=ys, mode="lines+markers",
                                         name=esc(label)))
    name = entries[0].name if entries else ""
    return layout(fig, f"{name}: per-request latency percentiles (median over trials)", "percentile",
                   "seconds", log_y=True)


CDF_PANELS_MAX = 6


def _cdf_panels(entries: list[PatternResult]) -> list[tuple[str, str, int]]:
    """The (op, access, stride) panels of the CDF figure: all of them up to CDF_PANELS_MAX, else per op
    and access the smallest and the largest stride (the stride heatmap shows the ones between)."""
    panels = sorted({(_op(e, p), p.access, p.stride_bytes) for e in entries for p in e.points
                     if p.latency_hist is not None})
    if len(panels) <= CDF_PANELS_MAX:
        return panels
    kept = []
    for op, access in sorted({(op, access) for op, access, _ in panels}):
        strides = [st for o, a, st in panels if (o, a) == (op, access)]
        kept += [(op, access, st) for st in sorted({strides[0], strides[-1]})]
    return kept


def latency_cdf(entries: list[PatternResult]) -> plot.Figure | None:
    """Every request's latency as a cumulative distribution, one curve per granularity (all trials'
    requests together), a panel per op, access and stride; None where the helper gave no histograms."""
    panels = _cdf_panels(entries)
    if not panels:
        return None
    # one curve per granularity and requests in flight, coloured in that order
    grans = sorted({(p.granularity_bytes, p.in_flight, p.queue_depth, p.threads) for e in entries for p in e.points})
    colours = plot.viridis([i / max(len(grans) - 1, 1) * 0.9 for i in range(len(grans))])
    fig, cols = _small_multiples(panels, shared_yaxes=True, horizontal_spacing=0.06, vertical_spacing=0.16)
    shown: set[str] = set()                     # each granularity once in the legend, whichever panel has it
    for i, panel in enumerate(panels):
        for p in (p for p in _panel_points(entries, *panel) if p.latency_hist is not None):
            x, y = p.latency_hist.cdf()
            label = f"{format_exact_size(p.granularity_bytes)} {in_flight_label(p.queue_depth, p.threads)}".strip()
            which = grans.index((p.granularity_bytes, p.in_flight, p.queue_depth, p.threads))
            fig.add_trace(plot.Scatter(x=x, y=y, mode="lines", line={"color": colours[which]},
                                     name=esc(label), legendgroup=label, showlegend=label not in shown,
                                     hovertemplate=f"{esc(label)}: %{{y:.1%}} of {p.latency_hist.n:,} requests "
                                                   "within %{x:.3s}s<extra></extra>"),
                          row=i // cols + 1, col=i % cols + 1)
            shown.add(label)
    fig.update_xaxes(title_text="latency (s)")
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
    return _grid_layout(fig, entries, "per-request latency, cumulative (every request of every trial)", "latency (s)",
                        "requests at or below", len(panels), cols, 320, log_x=True)


def stride_heatmap(entries: list[PatternResult]) -> plot.Figure | None:
    pts = [(_op(e, p), p) for e in entries for p in e.points if p.access == "strided"]
    strides = sorted({p.stride_bytes for _, p in pts})
    if len(strides) < 2:
        return None
    rows_ = sorted({(op, p.granularity_bytes, p.queue_depth, p.threads) for op, p in pts})
    z = [[next((p.throughput.estimate for o, p in pts
                if (o, p.granularity_bytes, p.queue_depth, p.threads) == row and p.stride_bytes == s), None)
          for s in strides] for row in rows_]
    fig = plot.Figure(plot.Heatmap(z=z, x=[f"{s:,}" for s in strides],
                               y=[f"{op} {format_exact_size(g)} {in_flight_label(d, t)}".strip() for op, g, d, t in rows_],
                               colorscale="Viridis", colorbar={"title": "B/s"}))
    name = entries[0].name if entries else ""
    return layout(fig, f"{name}: throughput by stride and granularity", "stride (bytes)", "granularity")
