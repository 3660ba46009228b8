"""A files test's figures: time against size with the fitted line, residuals, rate against size and against
elapsed time. Up to DENSITY_ABOVE_POINTS measurements every point is drawn, outliers and cache suspects with
their own markers and hover text; above, the clouds are densities that count every measurement, and the
flagged ones are drawn one by one in the residual figure."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...report import plot
from ...report.figures import DENSITY_ABOVE_POINTS, WEBGL_ABOVE_POINTS, density, layout, scatter
from ...report.page import esc
from .result import FilesResult, column

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
        **{k: f"outlier ({e.outlier_class[k]})" for k in map(int, np.flatnonzero(out))},
        **{k: f"cache suspect: {'; '.join(e.reasons(k))}" for k in map(int, np.flatnonzero(cached))},
        **{k: f"fast outlier: {'; '.join(e.reasons(k))}" for k in map(int, np.flatnonzero(fast))},
        **{k: f"cache below the file system: {'; '.join(e.reasons(k))}" for k in map(int, np.flatnonzero(below))}}
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
    Scatter = scatter(e.n)
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
