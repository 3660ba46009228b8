"""Plotly figures of one run. Up to 10,000 measurements of a test every point is drawn, outliers and
cache suspects with their own markers and hover text; above, the clouds are densities that count every
measurement, and the flagged ones are drawn one by one in the residual figure. Pattern tests: throughput
against granularity (or each trial's, at one granularity), latency percentiles (heatmaps when there are
many), the stride heatmap. Strings from plans and paths are HTML-escaped before they reach a figure."""

from __future__ import annotations

import textwrap

from typing import Any, Callable

import numpy as np
from . import plot

from .. import fills
from ..analysis.files import FilesResult, column
from ..analysis.patterns import LATENCY_KEYS, PatternResult
from ..units import format_exact_size, in_flight_label, op_label
from .page import esc

WEBGL_ABOVE_POINTS = 10000
DENSITY_ABOVE_POINTS = 10000


def _scatter(n: int) -> type:
    return plot.Scattergl if n > WEBGL_ABOVE_POINTS else plot.Scatter


TITLE_CHARS = 58       # a title's line on a figure half the page wide (the page's grid: two of 596 px)
TITLE_LINE_PX = 22


def layout(fig: plot.Figure, title: str, x: str, y: str, log_x: bool = False, log_y: bool = False) -> plot.Figure:
    """The house style of every figure."""
    # the toolbar stands upright at the right edge (shown on hover), where it covers no title; the
    # template (plotly_white) is given by the page (page.figure)
    # a title longer than a half-page figure is wide goes on over more lines (plotly.js cuts a title at the
    # figure's edge); the top margin grows by a line for each
    lines = textwrap.wrap(title, TITLE_CHARS, break_long_words=False, break_on_hyphens=False) or [""]
    fig.update_layout(title="<br>".join(esc(line) for line in lines), xaxis_title=x, yaxis_title=y,
                      height=420 + TITLE_LINE_PX * (len(lines) - 1),
                      margin={"l": 60, "r": 40, "t": 50 + TITLE_LINE_PX * (len(lines) - 1), "b": 50},
                      legend={"orientation": "h", "y": -0.2}, modebar={"orientation": "v"})
    fig.update_xaxes(exponentformat="SI")   # 2.4G, not 2.4B (billions read as bytes)
    fig.update_yaxes(exponentformat="SI")
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def dense(e: FilesResult) -> bool:
    """Above DENSITY_ABOVE_POINTS measurements a test's clouds are drawn as densities: a point per
    measurement would make a page of tens of MB that a browser struggles to open."""
    return e.n > DENSITY_ABOVE_POINTS


def _values(e: FilesResult, idx: Any, name: str) -> np.ndarray:
    """A field of some of the result's measurements: single precision in large runs (plenty for the eye,
    half the HTML)."""
    dtype = np.float32 if e.n > WEBGL_ABOVE_POINTS else float
    return e.measurements.col(name)[idx].astype(dtype)


def _rates(e: FilesResult, idx: Any) -> np.ndarray:
    return _values(e, idx, "bytes") / _values(e, idx, "seconds")


def _hovering(e: FilesResult, idx: np.ndarray, notes: dict[int, str]) -> dict[str, Any]:
    """Hover per point: its file, size, time, rate, place in the run and why it was flagged. Dense tests
    carry the numbers only (as compact typed arrays), so that thousands of flagged points stay small."""
    m = e.measurements
    if dense(e):
        data = np.column_stack([m.seq[idx], m.size_bytes[idx], m.seconds[idx] * 1e3,
                                m.bytes[idx] / m.seconds[idx] / 1e6, m.started_s[idx]]).astype(np.float32)
        return {"customdata": data, "hovertemplate": "seq %{customdata[0]:.0f}: %{customdata[1]:,.0f} B in "
                "%{customdata[2]:.3f} ms, %{customdata[3]:.1f} MB/s, at %{customdata[4]:.1f} s<extra>%{fullData.name}"
                "</extra>"}
    text = []
    for k, file, size, seconds, bytes_, seq, started in zip(
            idx, m.file[idx], m.size_bytes[idx], m.seconds[idx], m.bytes[idx], m.seq[idx], m.started_s[idx]):
        rate = bytes_ / seconds
        text.append(f"{esc(file)}<br>{int(size):,} B in {seconds * 1e3:.3f} ms<br>"
                    f"{rate / 1e6:.1f} MB/s<br>seq {int(seq)}, at {started:.1f} s"
                    + (f"<br>{esc(notes[k])}" if k in notes else ""))
    return {"text": text, "hoverinfo": "text"}


def _groups(e: FilesResult) -> tuple[list[tuple[str, np.ndarray, dict]], dict[int, str]]:
    """The measurements by what they were flagged as (indexes), each group with its marker, and a note per
    flagged measurement."""
    cached, fast, out, below = (np.zeros(e.n, bool) for _ in range(4))
    cached[e.cache_suspects] = True
    fast[e.fast_outliers] = True
    out[e.outliers] = True
    below[e.below_cache] = True
    notes = {} if dense(e) else {
        **{k: f"outlier ({e.outlier_class[k]})" for k in np.flatnonzero(out)},
        **{k: f"cache suspect: {'; '.join(e.reasons(k))}" for k in np.flatnonzero(cached)},
        **{k: f"fast outlier: {'; '.join(e.reasons(k))}" for k in np.flatnonzero(fast)},
        **{k: f"cache below the file system: {'; '.join(e.reasons(k))}" for k in np.flatnonzero(below)}}
    flagged = cached | fast | below
    return [("measurement", np.flatnonzero(~out & ~flagged), {"size": 6, "color": plot.BLUE, "opacity": 0.7}),
            ("outlier", np.flatnonzero(out & ~flagged), {"size": 9, "color": plot.ORANGE, "symbol": "diamond"}),
            ("cache suspect", np.flatnonzero(cached), {"size": 10, "color": plot.RED, "symbol": "x"}),
            ("fast outlier (not the page cache)", np.flatnonzero(fast),
             {"size": 10, "color": plot.PURPLE, "symbol": "triangle-up"}),
            ("cache below the file system (memory speed)", np.flatnonzero(below),
             {"size": 10, "color": plot.BROWN, "symbol": "square-open"})], notes


def _points(e: FilesResult, x: Callable[[Any], np.ndarray], y: Callable[[Any], np.ndarray],
            log_x: bool = False, log_y: bool = False, flagged: bool = False) -> plot.Figure:
    """A figure with every measurement: ordinary points, outliers and cache suspects in their own traces.
    A dense test draws all its measurements as a density (each counted once), and where `flagged` (the
    residual figure, whose fences define the outliers) the flagged ones on top, one by one: thousands of
    markers in every figure would take a browser without a graphics card seconds each."""
    fig = plot.Figure()
    groups, notes = _groups(e)
    if dense(e):
        fig.add_trace(density(x(slice(None)), y(slice(None)), log_x, log_y))
        groups = groups[1:] if flagged else []
    Scatter = _scatter(e.n)
    drawn, rest = _cap(e, groups)
    for label, idx, marker in drawn:
        if len(idx):
            fig.add_trace(Scatter(x=x(idx), y=y(idx), mode="markers", name=label, marker=marker,
                                  **_hovering(e, idx, notes)))
    if len(rest):
        fig.add_trace(density(x(rest), y(rest), log_x, log_y, "Reds", f"{len(rest):,} more flagged:"))
    return fig


FLAGGED_POINTS_DRAWN = 50_000     # per test: about 2 MB of page; beyond, the least extreme become a density


def _cap(e: FilesResult, groups: list[tuple[str, np.ndarray, dict]]) -> tuple[list[tuple[str, np.ndarray, dict]],
                                                                          np.ndarray]:
    """A dense test's flagged groups cut to the FLAGGED_POINTS_DRAWN measurements farthest from the fit, and
    the indexes of the others (to be drawn as a density)."""
    if not dense(e) or not groups:
        return groups, np.zeros(0, np.int64)
    idx = np.concatenate([g[1] for g in groups])
    order = idx[np.argsort(-np.abs(np.nan_to_num(e.log_residuals[idx])), kind="stable")]
    keep = order[:FLAGGED_POINTS_DRAWN]
    return ([(label, g[np.isin(g, keep)], marker) for label, g, marker in groups],
            np.sort(order[FLAGGED_POINTS_DRAWN:]))


DENSITY_BINS = (160, 120)
DISCRETE_VALUES = 64


def _edges(values: np.ndarray, log: bool, bins: int) -> np.ndarray:
    """Bin edges: one bin per value where there are few distinct ones (the sizes of a files test), else
    evenly spaced (on a log axis, evenly in the logarithm)."""
    v = np.log10(values) if log else values
    distinct = np.unique(v)
    if len(distinct) <= DISCRETE_VALUES:
        gap = np.diff(distinct).min() if len(distinct) > 1 else 1.0
        edges = np.r_[distinct[0] - gap / 2, (distinct[1:] + distinct[:-1]) / 2, distinct[-1] + gap / 2]
    else:
        lo, hi = float(v.min()), float(v.max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1, bins + 1)
    return 10 ** edges if log else edges


def density(x: np.ndarray, y: np.ndarray, log_x: bool, log_y: bool, colorscale: str = "Blues",
            label: str = "") -> plot.Heatmap:
    """Every measurement counted into a grid of cells; colour is the count on a log scale, the hover says
    how many. Values a log axis cannot show (zero, negative) or that are not numbers are not placed, and the
    trace's name says how many were."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & ((x > 0) if log_x else True) & ((y > 0) if log_y else True)
    xe = _edges(x[ok], log_x, DENSITY_BINS[0])
    ye = _edges(y[ok], log_y, DENSITY_BINS[1])
    counts = np.histogram2d(x[ok], y[ok], bins=[xe, ye])[0].T
    with np.errstate(divide="ignore"):
        shade = np.where(counts > 0, np.log10(counts), np.nan)
    return plot.Heatmap(x=xe, y=ye, z=shade.astype(np.float32), customdata=counts.astype(np.int32),
                      colorscale=colorscale, zmin=0, showscale=not label, opacity=0.7 if label else 1.0,
                      colorbar={"title": "log10 count", "len": 0.6},
                      hovertemplate=f"{esc(label)} %{{customdata:,}} measurements<extra></extra>",
                      name=f"{esc(label)} density of {int(counts.sum()):,} measurements".strip(),
                      showlegend=bool(label))


def time_vs_size(e: FilesResult) -> plot.Figure:
    fig = _points(e, lambda i: _values(e, i, "size_bytes"), lambda i: _values(e, i, "seconds"))
    grid = np.linspace(0, float(column(e.measurements, "size_bytes").max()), 100)
    rate, lat = e.rate.as_dict(), e.latency.as_dict()
    if rate["estimate"] and lat["estimate"] is not None:
        y_fit = lat["estimate"] + grid / rate["estimate"]
        if rate["low"] and rate["high"]:
            y_lo = lat["estimate"] + grid / rate["high"]
            y_hi = lat["estimate"] + grid / rate["low"]
            fig.add_trace(plot.Scatter(x=np.r_[grid, grid[::-1]], y=np.r_[y_hi, y_lo[::-1]], fill="toself",
                                     fillcolor="rgba(44,160,44,0.15)", line={"width": 0}, name="95% interval",
                                     hoverinfo="skip"))
        fig.add_trace(plot.Scatter(x=grid, y=y_fit, mode="lines", line={"color": plot.GREEN, "width": 2},
                                 name=f"Theil-Sen: {rate['estimate'] / 1e6:.1f} MB/s, {lat['estimate'] * 1e3:.3f} ms"))
    ols = e.references.ols
    if ols:
        fig.add_trace(plot.Scatter(x=grid, y=ols.intercept_s + grid * ols.slope_s_per_byte, mode="lines",
                                 line={"color": plot.GREY, "dash": "dash"}, name="least squares (reference)"))
    return layout(fig, f"{e.name} {e.op}: time against size", "size (bytes)", "seconds")


def residuals(e: FilesResult) -> plot.Figure:
    if e.slope_s_per_byte is None or e.latency.as_dict()["estimate"] is None:
        return layout(plot.Figure(), f"{e.name} {e.op}: no fit, so no residuals", "size (bytes)", "")
    fig = _points(e, lambda i: _values(e, i, "size_bytes"), lambda i: e.log_residuals[i], log_x=True, flagged=True)
    for key, dash in zip(e.fences.FENCES, ("dot", "dash", "dash", "dot")):
        value = getattr(e.fences, key)
        if np.isfinite(value):
            fig.add_hline(y=value, line_dash=dash, line_color="#999", annotation_text=key.replace("_", " "))
    return layout(fig, f"{e.name} {e.op}: log residuals ln(t / fit) with Tukey fences",
                  "size (bytes)", "ln(t / fitted t)", log_x=True)


def rate_vs_size(e: FilesResult) -> plot.Figure:
    fig = _points(e, lambda i: _values(e, i, "size_bytes"), lambda i: _rates(e, i), log_x=True)
    bands = e.size_bands
    if bands:
        fig.add_trace(plot.Scatter(
            x=[b.size_bytes for b in bands], y=[b.median_rate.estimate for b in bands],
            error_y={"type": "data", "symmetric": False,
                     "array": [b.median_rate.high - b.median_rate.estimate for b in bands],
                     "arrayminus": [b.median_rate.estimate - b.median_rate.low for b in bands]},
            mode="lines+markers", name="median per size (95% interval)", line={"color": plot.PURPLE}))
    rate = e.rate.as_dict()["estimate"]
    if rate:
        fig.add_hline(y=rate, line_color=plot.GREEN, annotation_text="fitted rate")
    title = f"{e.name} {e.op}: rate against size"
    return layout(fig, title, "size (bytes)", "bytes/s", log_x=True)


def rate_vs_elapsed(e: FilesResult) -> plot.Figure:
    fig = _points(e, lambda i: _values(e, i, "started_s"), lambda i: _rates(e, i), log_y=True)
    for cp in e.drift.change_points:
        fig.add_vline(x=cp.started_s, line_dash="dash", line_color=plot.RED,
                      annotation_text=f"change {cp.step_fraction:+.0%}")
    return layout(fig, f"{e.name} {e.op}: rate against elapsed time",
                  "seconds since the run began", "bytes/s", log_y=True)


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


def interval_bars(estimates: list[dict[str, Any]]) -> dict[str, Any]:
    """Error bars of each estimate's interval; none (null) for an estimate that has no interval (one trial), or
    no estimate."""
    def part(v: dict[str, Any], end: str) -> float | None:
        return None if v.get(end) is None or v.get("estimate") is None else abs(v[end] - v["estimate"])
    return {"type": "data", "symmetric": False, "array": [part(v, "high") for v in estimates],
            "arrayminus": [part(v, "low") for v in estimates]}


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
