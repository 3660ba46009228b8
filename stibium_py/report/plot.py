"""Figures as plain records in plotly.js's own schema: a figure is its traces (dicts) and its layout (a dict),
built by the few calls the views make (add_trace, update_layout, the axes, lines and bands across a plot, a
grid of panels) and written as JSON for plotly.js, rather than through plotly.py's graph objects, which
validate every property as it is set (their cost is in docs/performance.md). What their validation caught is
held instead by tests/test_plot.py, which compares every figure of a report with
the one plotly.py builds from the same calls. Numeric arrays go into the page as typed arrays (base64, as
plotly.py writes them), so that a page of many points stays small."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import numpy as np
from plotly import colors as plotly_colors

# keyword arguments that name a property inside another (plotly's "magic underscores"), as the views use them
_NESTED = ("line_", "xaxis_", "yaxis_", "title_", "marker_", "font_")


# plotly's qualitative palette ("Plotly"); its named colour scales come from plotly.colors as plotly.py writes
# them out (plotly.js's own scales of these names have other stops)
QUALITATIVE = tuple(plotly_colors.qualitative.Plotly)

# the colours the figures give a meaning (a measurement, an outlier, a fitted line, run A and run B): D3's
# category10 as plotly.colors carries it, by name
BLUE, ORANGE, GREEN, RED, PURPLE, BROWN, PINK, GREY = (c.lower() for c in plotly_colors.qualitative.D3[:8])


def _scale(name: str) -> list[list[Any]]:
    """A named sequential scale's stops as plotly.py writes them out (its colours evenly spaced, i / (n - 1))."""
    colours = getattr(plotly_colors.sequential, name)
    return [[i / (len(colours) - 1), c] for i, c in enumerate(colours)]


def viridis(points: list[float]) -> list[str]:
    """The Viridis scale's colours at points in [0, 1] (plotly.colors.sample_colorscale)."""
    return list(plotly_colors.sample_colorscale("Viridis", [float(p) for p in points]))


class Trace(dict):
    """One trace: a dict of plotly.js properties, read as attributes too (None where unset)."""

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


def _trace(kind: str, props: dict[str, Any]) -> Trace:
    return Trace(type=kind, **_props(props))


def Scatter(**props: Any) -> Trace:  # noqa: N802 (named as plotly.js's trace types are)
    return _trace("scatter", props)


def Scattergl(**props: Any) -> Trace:  # noqa: N802
    return _trace("scattergl", props)


def Heatmap(**props: Any) -> Trace:  # noqa: N802
    return _trace("heatmap", props)


def Bar(**props: Any) -> Trace:  # noqa: N802
    return _trace("bar", props)


def _props(props: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments as nested properties (line_dash -> line.dash), titles as {"text": ...}."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if value is None:
            continue
        prefix = next((p for p in _NESTED if key.startswith(p)), None)
        if prefix:
            _merge(out, {prefix[:-1]: _props({key[len(prefix):]: value})})
        else:
            _merge(out, {key: _titled(key, value)})
    return out


def _titled(key: str, value: Any) -> Any:
    if key == "title" and isinstance(value, str):
        return {"text": value}
    if key == "colorscale" and isinstance(value, str):
        return _scale(value)
    if isinstance(value, dict):
        return {k: _titled(k, v) for k, v in value.items()}
    return value


def _merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


class Figure:
    """Traces and a layout. A grid of panels (make_subplots) has an axis pair per panel; add_trace with
    row and col puts a trace on its panel's pair."""

    def __init__(self, data: Trace | list[Trace] | None = None, cols: int = 1):
        self.data: list[Trace] = [] if data is None else [data] if isinstance(data, dict) else list(data)
        self.layout: dict[str, Any] = {}
        self._cols = cols

    def add_trace(self, trace: Trace, row: int | None = None, col: int | None = None) -> "Figure":
        if row is not None and col is not None:
            n = (row - 1) * self._cols + col
            trace = Trace(trace, xaxis=f"x{n if n > 1 else ''}", yaxis=f"y{n if n > 1 else ''}")
        self.data.append(trace)
        return self

    def update_layout(self, **props: Any) -> "Figure":
        _merge(self.layout, _props(props))
        return self

    def _axes(self, letter: str) -> list[str]:
        named = [k for k in self.layout if k.startswith(f"{letter}axis")]
        return named if f"{letter}axis" in named else [f"{letter}axis", *named]

    def update_xaxes(self, **props: Any) -> "Figure":
        for axis in self._axes("x"):
            self.update_layout(**{axis: _props(props)})
        return self

    def update_yaxes(self, **props: Any) -> "Figure":
        for axis in self._axes("y"):
            self.update_layout(**{axis: _props(props)})
        return self

    def add_annotation(self, **props: Any) -> "Figure":
        self.layout.setdefault("annotations", []).append(_props(props))
        return self

    def _span(self, shape: dict[str, Any], props: dict[str, Any], note: dict[str, Any]) -> "Figure":
        """A shape across the plot (a line or band), its annotation where one is given."""
        text = props.pop("annotation_text", None)
        position = props.pop("annotation_position", None)
        self.layout.setdefault("shapes", []).append({**_props(props), **shape})
        if text is not None:
            if position == "top left":
                note = {**note, "x": shape["x0"], "xanchor": "left"}
            elif position is not None:
                raise ValueError(f"annotation_position {position!r} is not drawn here")
            self.add_annotation(showarrow=False, text=text, **note)
        return self

    def add_hline(self, y: float, **props: Any) -> "Figure":
        return self._span({"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": y, "y1": y, "yref": "y"}, props,
                          {"x": 1, "xanchor": "right", "xref": "x domain", "y": y, "yanchor": "bottom", "yref": "y"})

    def add_vline(self, x: float, **props: Any) -> "Figure":
        return self._span({"type": "line", "x0": x, "x1": x, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain"}, props,
                          {"x": x, "xanchor": "left", "xref": "x", "y": 1, "yanchor": "top", "yref": "y domain"})

    def add_hrect(self, y0: float, y1: float, **props: Any) -> "Figure":
        return self._span({"type": "rect", "x0": 0, "x1": 1, "xref": "x domain", "y0": y0, "y1": y1, "yref": "y"},
                          props, {"x": 1, "xanchor": "right", "xref": "x domain", "y": y1, "yanchor": "top",
                                  "yref": "y"})

    def add_vrect(self, x0: float, x1: float, **props: Any) -> "Figure":
        return self._span({"type": "rect", "x0": x0, "x1": x1, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain"},
                          props, {"x": x1, "xanchor": "right", "xref": "x", "y": 1, "yanchor": "top",
                                  "yref": "y domain"})


def make_subplots(rows: int, cols: int, subplot_titles: list[str] | None = None, shared_yaxes: bool = False,
                  horizontal_spacing: float | None = None, vertical_spacing: float | None = None) -> Figure:
    """A grid of panels, row 1 at the top, each with its own axes and its title above it (plotly's
    make_subplots: the same domains, spacings and title annotations)."""
    h = 0.2 / cols if horizontal_spacing is None else horizontal_spacing
    v = (0.5 if subplot_titles is not None else 0.3) / rows if vertical_spacing is None else vertical_spacing
    width, height = (1 - h * (cols - 1)) / cols, (1.0 - v * (rows - 1)) / rows
    fig = Figure(cols=cols)
    for r in range(rows):
        up = rows - 1 - r                                  # rows counted from the bottom, as plotly sums them
        y0 = sum([height] * up) + up * v
        y_domain = [min(max(y, 0.0), 1.0) for y in (y0, y0 + height)]
        for c in range(cols):
            n = r * cols + c + 1
            tag = "" if n == 1 else str(n)
            left = sum([width] * c) + c * h
            fig.layout[f"xaxis{tag}"] = {"anchor": f"y{tag}", "domain": [left, left + width]}
            fig.layout[f"yaxis{tag}"] = {"anchor": f"x{tag}", "domain": y_domain}
            if shared_yaxes and c > 0:
                fig.layout[f"yaxis{tag}"].update(matches=f"y{'' if r == 0 else r * cols + 1}", showticklabels=False)
            if subplot_titles and n <= len(subplot_titles) and subplot_titles[n - 1]:
                fig.add_annotation(font={"size": 16}, showarrow=False, text=subplot_titles[n - 1],
                                   x=(left + left + width) / 2.0, xanchor="center", xref="paper", y=y_domain[1],
                                   yanchor="bottom", yref="paper")
    return fig


_SHORT = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4", "float32": "f4",
          "float64": "f8"}


def _typed(value: Any, key: str = "") -> Any:
    """A numeric array as plotly.js's typed array (dtype, base64 bytes, shape), 64-bit integers in the
    narrowest type that holds them, as plotly.py writes them; other arrays (and axis ranges) as lists."""
    if isinstance(value, np.ndarray):
        a = value
        if a.dtype.kind in "iu" and a.dtype.itemsize == 8 and a.size:
            lo, hi = int(a.min()), int(a.max())
            a = next((a.astype(t) for t in ((np.int8, np.int16, np.int32) if a.dtype.kind == "i" else
                                            (np.uint8, np.uint16, np.uint32))
                      if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max), a)
        if str(a.dtype) in _SHORT and a.size and key != "range":
            typed = {"dtype": _SHORT[str(a.dtype)], "bdata": base64.b64encode(np.ascontiguousarray(a)).decode("ascii")}
            if a.ndim > 1:
                typed["shape"] = ", ".join(str(d) for d in a.shape)
            return typed
        return [_typed(v) for v in a.tolist()]
    if isinstance(value, dict):
        return {k: _typed(v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_typed(v) for v in value]
    if isinstance(value, np.generic):
        return _typed(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None                     # as plotly.py's encoder: NaN and infinities as null
    return value


def to_json(value: Any) -> str:
    """JSON for plotly.js: typed arrays, NaN and infinities as null, and "/" and "<" escaped (as JSON's \\u002f and
    \\u003c, the same strings to the script) so that no string from a record closes the script element (</script>)
    or opens a comment that keeps it open (<!--<script>: the rest of the page read as script)."""
    return json.dumps(_typed(value), separators=(",", ":"), allow_nan=False).replace("/", "\\u002f") \
        .replace("<", "\\u003c")
