"""The house style of the report's Plotly figures and the parts every kind's figures share: the layout, a
cloud drawn as a density above DENSITY_ABOVE_POINTS measurements (a point per measurement would make a page of
tens of MB), interval bars. Each kind's own figures are in its folder (kinds/<name>/figures.py). Strings from
plans and paths are HTML-escaped before they reach a figure."""

from __future__ import annotations

import textwrap

from typing import Any

import numpy as np
from . import plot

from .page import esc

WEBGL_ABOVE_POINTS = 10000


DENSITY_ABOVE_POINTS = 10000


def scatter(n: int) -> type:
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


DENSITY_BINS = (160, 120)


DISCRETE_VALUES = 64


# the values whose distinct ones are counted first: more than DISCRETE_VALUES among them, and the axis is evenly
# spaced without sorting every value
DISCRETE_SAMPLE = 4096


def _cells(values: np.ndarray, log: bool, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Bin edges, and each value's bin: one bin per value where there are few distinct ones (the sizes of a files
    test), else evenly spaced (on a log axis, evenly in the logarithm). Each value's bin is found in the axis's own
    terms (its place among the distinct values, or its distance from the lowest): np.histogram2d's search of the
    values among the edges took 2-5 times as long for 500,000 points, and dropped the smallest or the largest value
    where 10 to the power of its logarithm came out beyond it (docs/performance.md)."""
    v = np.log10(values) if log else values
    if not len(v):                          # nothing to place: one empty cell
        return (np.array([1.0, 10.0]) if log else np.array([0.0, 1.0])), np.zeros(0, np.intp)
    distinct = np.unique(v) if len(np.unique(v[:DISCRETE_SAMPLE])) <= DISCRETE_VALUES else None
    if distinct is not None and len(distinct) <= DISCRETE_VALUES:
        gap = np.diff(distinct).min() if len(distinct) > 1 else 1.0
        edges = np.r_[distinct[0] - gap / 2, (distinct[1:] + distinct[:-1]) / 2, distinct[-1] + gap / 2]
        index = np.searchsorted(distinct, v)
    else:
        lo, hi = float(v.min()), float(v.max())
        hi = hi if hi > lo else lo + 1
        edges = np.linspace(lo, hi, bins + 1)
        index = np.minimum(((v - lo) * (bins / (hi - lo))).astype(np.intp), bins - 1)
    return (10 ** edges if log else edges), index


def density(x: np.ndarray, y: np.ndarray, log_x: bool, log_y: bool, colorscale: str = "Blues",
            label: str = "") -> plot.Heatmap:
    """Every measurement counted into a grid of cells; colour is the count on a log scale, the hover says
    how many. Values a log axis cannot show (zero, negative) or that are not numbers are not placed, and the
    trace's name says how many were."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & ((x > 0) if log_x else True) & ((y > 0) if log_y else True)
    xe, ix = _cells(x[ok], log_x, DENSITY_BINS[0])
    ye, iy = _cells(y[ok], log_y, DENSITY_BINS[1])
    columns = len(ye) - 1
    counts = np.bincount(ix * columns + iy, minlength=(len(xe) - 1) * columns).reshape(len(xe) - 1, columns).T
    with np.errstate(divide="ignore"):
        shade = np.where(counts > 0, np.log10(counts), np.nan)
    return plot.Heatmap(x=xe, y=ye, z=shade.astype(np.float32), customdata=counts.astype(np.int32),
                      colorscale=colorscale, zmin=0, showscale=not label, opacity=0.7 if label else 1.0,
                      colorbar={"title": "log10 count", "len": 0.6},
                      hovertemplate=f"{esc(label)} %{{customdata:,}} measurements<extra></extra>",
                      name=f"{esc(label)} density of {int(counts.sum()):,} measurements".strip(),
                      showlegend=bool(label))


def interval_bars(estimates: list[dict[str, Any]]) -> dict[str, Any]:
    """Error bars of each estimate's interval; none (null) for an estimate that has no interval (one trial), or
    no estimate."""
    def part(v: dict[str, Any], end: str) -> float | None:
        return None if v.get(end) is None or v.get("estimate") is None else abs(v[end] - v["estimate"])
    return {"type": "data", "symmetric": False, "array": [part(v, "high") for v in estimates],
            "arrayminus": [part(v, "low") for v in estimates]}
