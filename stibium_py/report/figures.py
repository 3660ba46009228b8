"""Plotly figures of one run. Every point is drawn; outliers and cache suspects
have their own markers and hover text. WebGL traces above 10k points. Strings
from plans and paths are HTML-escaped before they reach a figure."""

from __future__ import annotations

import html
from typing import Any, Callable

import numpy as np
import plotly.graph_objects as go

WEBGL_ABOVE_POINTS = 10000


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _scatter(n: int) -> type:
    return go.Scattergl if n > WEBGL_ABOVE_POINTS else go.Scatter


def _layout(fig: go.Figure, title: str, x: str, y: str, log_x: bool = False, log_y: bool = False) -> go.Figure:
    # the toolbar stands upright at the right edge (shown on hover), where it covers no title
    fig.update_layout(title=esc(title), xaxis_title=x, yaxis_title=y, template="plotly_white", height=420,
                      margin={"l": 60, "r": 40, "t": 50, "b": 50}, legend={"orientation": "h", "y": -0.2},
                      modebar={"orientation": "v"})
    fig.update_xaxes(exponentformat="SI")   # 2.4G, not 2.4B (billions read as bytes)
    fig.update_yaxes(exponentformat="SI")
    if log_x:
        fig.update_xaxes(type="log")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def _flags(entry: dict[str, Any]) -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    out = {p["seq"]: p["class"] for p in entry.get("outliers", [])}
    cached = {p["seq"]: "; ".join(p["reasons"]) for p in entry.get("cache_suspects", [])}
    fast = {p["seq"]: "; ".join(p["reasons"]) for p in entry.get("fast_outliers", [])}
    return out, cached, fast


def _col(rows: list[dict[str, Any]], key: str) -> np.ndarray:
    """A column for plotting: single precision in large runs (plenty for the eye, half the HTML)."""
    return np.array([r[key] for r in rows], dtype=np.float32 if len(rows) > WEBGL_ABOVE_POINTS else float)


def _rate(rows: list[dict[str, Any]]) -> np.ndarray:
    return _col(rows, "bytes") / _col(rows, "seconds")


def _hover(rows: list[dict[str, Any]], note: dict[int, str]) -> list[str] | None:
    """Hover text per point; large runs show the coordinates only (the HTML stays small)."""
    if len(rows) > WEBGL_ABOVE_POINTS:
        return None
    return [f"{esc(r['file'])}<br>{r['size_bytes']:,} B in {r['seconds'] * 1e3:.3f} ms<br>"
            f"{r['bytes'] / r['seconds'] / 1e6:.1f} MB/s<br>seq {r['seq']}, at {r['started_s']:.1f} s"
            + (f"<br>{esc(note[r['seq']])}" if r["seq"] in note else "") for r in rows]


def _hovering(rows: list[dict[str, Any]], note: dict[int, str]) -> dict[str, Any]:
    text = _hover(rows, note)
    return {"text": text, "hoverinfo": "text"} if text is not None else {}


def _groups(rows: list[dict[str, Any]], entry: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]], dict]]:
    outl, cached, fast = _flags(entry)
    normal = [r for r in rows if r["seq"] not in outl and r["seq"] not in cached and r["seq"] not in fast]
    out_rows = [r for r in rows if r["seq"] in outl and r["seq"] not in cached and r["seq"] not in fast]
    cache_rows = [r for r in rows if r["seq"] in cached]
    fast_rows = [r for r in rows if r["seq"] in fast]
    notes = {**{k: f"outlier ({v})" for k, v in outl.items()}, **{k: f"cache suspect: {v}" for k, v in cached.items()},
             **{k: f"fast outlier: {v}" for k, v in fast.items()}}
    return [("measurement", normal, {"size": 6, "color": "#1f77b4", "opacity": 0.7}),
            ("outlier", out_rows, {"size": 9, "color": "#ff7f0e", "symbol": "diamond"}),
            ("cache suspect", cache_rows, {"size": 10, "color": "#d62728", "symbol": "x"}),
            ("fast outlier (not the page cache)", fast_rows,
             {"size": 10, "color": "#9467bd", "symbol": "triangle-up"})], notes


def _points(rows: list[dict[str, Any]], entry: dict[str, Any], x: Callable[[list[dict[str, Any]]], np.ndarray],
            y: Callable[[list[dict[str, Any]]], np.ndarray]) -> go.Figure:
    """A figure with every measurement: ordinary points, outliers and cache suspects in their own traces."""
    fig = go.Figure()
    groups, notes = _groups(rows, entry)
    Scatter = _scatter(len(rows))
    for label, rs, marker in groups:
        if rs:
            fig.add_trace(Scatter(x=x(rs), y=y(rs), mode="markers", name=label, marker=marker, **_hovering(rs, notes)))
    return fig


def _sizes(rs: list[dict[str, Any]]) -> np.ndarray:
    return _col(rs, "size_bytes")


def time_vs_size(rows: list[dict[str, Any]], entry: dict[str, Any]) -> go.Figure:
    fig = _points(rows, entry, _sizes, lambda rs: _col(rs, "seconds"))
    xs = np.array([r["size_bytes"] for r in rows], float)
    grid = np.linspace(0, xs.max(), 100)
    rate, lat = entry["rate_bytes_per_s"], entry["latency_s"]
    if rate["estimate"] and lat["estimate"] is not None:
        y_fit = lat["estimate"] + grid / rate["estimate"]
        if rate["low"] and rate["high"]:
            y_lo = lat["estimate"] + grid / rate["high"]
            y_hi = lat["estimate"] + grid / rate["low"]
            fig.add_trace(go.Scatter(x=np.r_[grid, grid[::-1]], y=np.r_[y_hi, y_lo[::-1]], fill="toself",
                                     fillcolor="rgba(44,160,44,0.15)", line={"width": 0}, name="95% interval",
                                     hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=grid, y=y_fit, mode="lines", line={"color": "#2ca02c", "width": 2},
                                 name=f"Theil-Sen: {rate['estimate'] / 1e6:.1f} MB/s, {lat['estimate'] * 1e3:.3f} ms"))
    ols = (entry.get("references") or {}).get("ols")
    if ols:
        fig.add_trace(go.Scatter(x=grid, y=ols["intercept_s"] + grid * ols["slope_s_per_byte"], mode="lines",
                                 line={"color": "#7f7f7f", "dash": "dash"}, name="least squares (reference)"))
    return _layout(fig, f"{entry['name']} {entry['op']}: time against size", "size (bytes)", "seconds")


def residuals(rows: list[dict[str, Any]], entry: dict[str, Any]) -> go.Figure:
    slope, intercept = entry["slope_s_per_byte"], entry["latency_s"]["estimate"]
    if slope is None or intercept is None:
        return _layout(go.Figure(), f"{entry['name']} {entry['op']}: no fit, so no residuals", "size (bytes)", "")

    def log_residual(rs: list[dict[str, Any]]) -> np.ndarray:
        pred = intercept + _sizes(rs) * slope
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(pred > 0, np.log(_col(rs, "seconds") / pred), np.nan)

    fig = _points(rows, entry, _sizes, log_residual)
    f = entry.get("fences", {})
    for key, dash in (("low_severe", "dot"), ("low_mild", "dash"), ("high_mild", "dash"), ("high_severe", "dot")):
        if f.get(key) is not None and np.isfinite(f[key]):
            fig.add_hline(y=f[key], line_dash=dash, line_color="#999", annotation_text=key.replace("_", " "))
    return _layout(fig, f"{entry['name']} {entry['op']}: log residuals ln(t / fit) with Tukey fences",
                   "size (bytes)", "ln(t / fitted t)", log_x=True)


def rate_vs_size(rows: list[dict[str, Any]], entry: dict[str, Any]) -> go.Figure:
    # In large runs this figure shows the medians per size only: its points are the same
    # measurements as those of time against size, and the page stays small.
    large = len(rows) > WEBGL_ABOVE_POINTS
    fig = go.Figure() if large else _points(rows, entry, _sizes, _rate)
    bands = entry.get("size_bands", [])
    if bands:
        fig.add_trace(go.Scatter(
            x=[b["size_bytes"] for b in bands], y=[b["median_rate_bytes_per_s"]["estimate"] for b in bands],
            error_y={"type": "data", "symmetric": False,
                     "array": [b["median_rate_bytes_per_s"]["high"] - b["median_rate_bytes_per_s"]["estimate"] for b in bands],
                     "arrayminus": [b["median_rate_bytes_per_s"]["estimate"] - b["median_rate_bytes_per_s"]["low"] for b in bands]},
            mode="lines+markers", name="median per size (95% interval)", line={"color": "#9467bd"}))
    if entry["rate_bytes_per_s"]["estimate"]:
        fig.add_hline(y=entry["rate_bytes_per_s"]["estimate"], line_color="#2ca02c", annotation_text="fitted rate")
    title = f"{entry['name']} {entry['op']}: rate against size" + (" (medians per size)" if large else "")
    return _layout(fig, title, "size (bytes)", "bytes/s", log_x=True)


def rate_vs_elapsed(rows: list[dict[str, Any]], entry: dict[str, Any]) -> go.Figure:
    fig = _points(rows, entry, lambda rs: _col(rs, "started_s"), _rate)
    for cp in entry.get("drift", {}).get("change_points", []):
        fig.add_vline(x=cp["started_s"], line_dash="dash", line_color="#d62728",
                      annotation_text=f"change {cp['step_fraction']:+.0%}")
    return _layout(fig, f"{entry['name']} {entry['op']}: rate against elapsed time (throttling, background work)",
                   "seconds since the run began", "bytes/s", log_y=True)


def throughput_vs_granularity(entries: list[dict[str, Any]]) -> go.Figure:
    fig = go.Figure()
    for e in entries:
        by_access: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for p in e["points"]:
            by_access.setdefault((p["access"], p["stride_bytes"]), []).append(p)
        for (access, stride), pts in sorted(by_access.items()):
            pts = sorted(pts, key=lambda p: p["granularity_bytes"])
            t = [p["throughput_bytes_per_s"] for p in pts]
            name = f"{e['op']} {access}" + (f" stride {stride:,} B" if stride else "")
            fig.add_trace(go.Scatter(
                x=[p["granularity_bytes"] for p in pts], y=[v["estimate"] for v in t], mode="lines+markers",
                name=esc(name), error_y={"type": "data", "symmetric": False,
                                         "array": [v["high"] - v["estimate"] for v in t],
                                         "arrayminus": [v["estimate"] - v["low"] for v in t]},
                text=[f"{p['iops']:.0f} IOPS, p50 {1e3 * (p['lat_p50_s'] or 0):.3f} ms, {p['trials']} trials"
                      for p in pts], hovertemplate="%{x:,} B: %{y:.4s}B/s<br>%{text}<extra></extra>"))
        if e.get("knee_bytes"):
            fig.add_vline(x=e["knee_bytes"], line_dash="dot", annotation_text=f"knee {e['op']}")
    name = entries[0]["name"] if entries else ""
    return _layout(fig, f"{name}: throughput against granularity", "granularity (bytes)", "bytes/s",
                   log_x=True, log_y=True)


def latency_percentiles(entries: list[dict[str, Any]]) -> go.Figure:
    fig = go.Figure()
    for e in entries:
        for p in e["points"]:
            label = f"{e['op']} {p['access']} {p['granularity_bytes']:,} B" + \
                (f" stride {p['stride_bytes']:,}" if p["stride_bytes"] else "")
            keys = ["lat_p50_s", "lat_p90_s", "lat_p99_s", "lat_p999_s", "lat_max_s"]
            ys = [p.get(k) for k in keys]
            if any(v is not None for v in ys):
                fig.add_trace(go.Scatter(x=["p50", "p90", "p99", "p99.9", "max"], y=ys, mode="lines+markers",
                                         name=esc(label)))
    name = entries[0]["name"] if entries else ""
    return _layout(fig, f"{name}: per-request latency percentiles (median over trials)", "percentile",
                   "seconds", log_y=True)


def stride_heatmap(entries: list[dict[str, Any]]) -> go.Figure | None:
    pts = [(e["op"], p) for e in entries for p in e["points"] if p["access"] == "strided"]
    strides = sorted({p["stride_bytes"] for _, p in pts})
    if len(strides) < 2:
        return None
    rows_ = sorted({(op, p["granularity_bytes"]) for op, p in pts})
    z = [[next((p["throughput_bytes_per_s"]["estimate"] for o, p in pts
                if o == op and p["granularity_bytes"] == g and p["stride_bytes"] == s), None) for s in strides]
         for op, g in rows_]
    fig = go.Figure(go.Heatmap(z=z, x=[f"{s:,}" for s in strides], y=[f"{op} {g:,} B" for op, g in rows_],
                               colorscale="Viridis", colorbar={"title": "B/s"}))
    name = entries[0]["name"] if entries else ""
    return _layout(fig, f"{name}: throughput by stride and granularity", "stride (bytes)", "granularity")
