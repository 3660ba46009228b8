"""The report's figures are plain records (report/plot.py), not plotly.py's validated graph objects: every
figure of a report must be the very figure plotly.py builds from the same calls. A report is rendered twice,
once as it is and once with plotly.py's classes in place of report/plot's in every view, and the figures of
the two pages are compared value by value (typed arrays decoded)."""

from __future__ import annotations

import base64
import json
import pkgutil
import math
import re
from types import SimpleNamespace

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from stibium_py import registry
from stibium_py.report import plot
from synthetic import make_run

VIEWS = ("figures", "clients", "compare_page", "series_page")
SHORT = {"i1": np.int8, "u1": np.uint8, "i2": np.int16, "u2": np.uint16, "i4": np.int32, "u4": np.uint32,
         "f4": np.float32, "f8": np.float64}


def _plotly_figure(fig: go.Figure, div_id: str) -> str:
    fig.update_layout(template=None)
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       config={"displaylogo": False, "responsive": True})


def _decoded(v):
    if isinstance(v, dict):
        if {"dtype", "bdata"} <= set(v):
            a = np.frombuffer(base64.b64decode(v["bdata"]), SHORT[v["dtype"]])
            if "shape" in v:
                a = a.reshape([int(s) for s in v["shape"].split(",")])
            return v["dtype"], a.tolist()
        return {k: _decoded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_decoded(x) for x in v]
    return v


def _figures(page: str) -> list:
    """Every figure of a page: the arguments of its Plotly.newPlot call, decoded."""
    decoder, out = json.JSONDecoder(), []
    for m in re.finditer(r"Plotly\.newPlot\(\s*", page):
        i, args = m.end(), []
        for _ in range(3):
            value, i = decoder.raw_decode(page, i)
            args.append(_decoded(value))
            i = re.compile(r"[\s,]*").match(page, i).end()
        out.append(args)
    return out


@pytest.fixture
def with_plotly(monkeypatch):
    """Every view drawing with plotly.py's graph objects, its palette and its to_html."""
    from importlib import import_module
    shim = SimpleNamespace(Figure=go.Figure, Scatter=go.Scatter, Scattergl=go.Scattergl, Heatmap=go.Heatmap,
                           Bar=go.Bar, make_subplots=make_subplots, QUALITATIVE=plotly.colors.qualitative.Plotly,
                           viridis=lambda points: plotly.colors.sample_colorscale("Viridis", points),
                           **{name: getattr(plot, name) for name in ("BLUE", "ORANGE", "GREEN", "RED", "PURPLE",
                                                                     "BROWN", "PINK", "GREY")})

    def use() -> None:
        for name in VIEWS:
            monkeypatch.setattr(import_module(f"stibium_py.report.{name}"), "plot", shim)
        for name in ("page", "clients", "compare_page", "series_page"):
            monkeypatch.setattr(import_module(f"stibium_py.report.{name}"), "figure", _plotly_figure)
        for kind in registry.BUILTIN:          # each kind's own views and figures, in its folder
            folder = import_module(f"stibium_py.kinds.{kind}")
            for found in pkgutil.iter_modules(folder.__path__):
                if found.ispkg:
                    continue
                module = import_module(f"{folder.__name__}.{found.name}")
                for name, value in (("plot", shim), ("figure", _plotly_figure)):
                    if hasattr(module, name):
                        monkeypatch.setattr(module, name, value)
    return use


def test_every_figure_of_a_report_is_plotlys(tmp_path, with_plotly):
    from stibium_py.results.pipeline import summarize_run
    from stibium_py.report import build
    run_dir = make_run(tmp_path / "r", rate_bytes_per_s=2e8, repeats=4, trials=6)
    run, _, summary = summarize_run(run_dir)
    ours = _figures(build.render(run, summary))
    with_plotly()
    theirs = _figures(build.render(run, summary))
    assert len(ours) == len(theirs) >= 8
    for a, b in zip(ours, theirs):
        assert a == b, a[0]


def test_every_figure_of_a_tree_report_is_plotlys(tmp_path, disk_dir, with_plotly):
    """A tree test's figures (its rates against threads, its latency distributions), from a real small run."""
    import subprocess
    import sys
    from stibium_py.results.pipeline import summarize_run
    from stibium_py.report import build
    (tmp_path / "plan.yaml").write_text("name: t\ntests:\n  - name: t\n    kind: tree\n    files: 40\n"
                                        "    file_size: {from: 1KB, to: 8KB}\n    dirs: 4\n    threads: [1, 2]\n"
                                        "    trials: 2\n")
    proc = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(tmp_path / "plan.yaml"), "--target",
                           str(disk_dir / "t"), "--out", str(tmp_path / "r")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    run, _, summary = summarize_run(next((tmp_path / "r").iterdir()))
    ours = _figures(build.render(run, summary))
    with_plotly()
    theirs = _figures(build.render(run, summary))
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert a == b, a[0]


def test_the_palettes_are_plotlys():
    points = [i / 36 * 0.9 for i in range(37)] + list(np.random.default_rng(1).uniform(0, 1, 200)) + [0.0, 1.0]
    assert plot.viridis(points) == plotly.colors.sample_colorscale("Viridis", points)
    assert list(plot.QUALITATIVE) == plotly.colors.qualitative.Plotly


def test_lines_bands_and_grids_are_plotlys():
    """The calls the views make, one by one, against plotly.py's own figure."""
    def draw(p, grid):
        fig = grid(rows=2, cols=3, subplot_titles=["a", "b", "c", "d"], shared_yaxes=True, horizontal_spacing=0.06,
                   vertical_spacing=0.16)
        fig.add_trace(p.Scatter(x=np.arange(3.0), y=np.arange(3, dtype=np.int64), mode="markers", name="s",
                                error_y={"type": "data", "array": [1, 2, 3]}), row=2, col=2)
        fig.add_trace(p.Heatmap(z=np.ones((2, 2), np.float32), colorscale="Blues"), row=1, col=1)
        fig.add_trace(p.Heatmap(z=np.ones((2, 2)), colorscale="Viridis", colorbar={"title": "B/s"}), row=1, col=2)
        fig.update_layout(title="t", xaxis_title="x", yaxis_title="y", height=420, coloraxis={"colorbar": {"title": "c"}})
        fig.update_xaxes(exponentformat="SI", type="log", title_text="depth")
        fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
        fig.add_annotation(text="n", xref="paper", yref="paper", x=0, y=-0.2, showarrow=False, font={"size": 11})
        return fig

    def spans(p):
        fig = p.Figure(p.Bar(x=[1, 2], y=["a", "b"], orientation="h"))
        fig.add_trace(p.Scatter(x=[1, 2, 3], y=[1.0, math.inf, math.nan], customdata=np.array([1.0, -math.inf, 2.0])))
        fig.add_hline(y=3.0, line_dash="dot", line_color="#999", annotation_text="fence")
        fig.add_vline(x=2.0, line_dash="dash", annotation_text="knee")
        fig.add_hrect(y0=1.0, y1=2.0, fillcolor="#d62728", opacity=0.12, line_width=0)
        fig.add_vrect(x0=1.0, x1=2.0, fillcolor="green", opacity=0.12, line_width=0, annotation_text="steady",
                      annotation_position="top left")
        fig.add_vrect(x0=3.0, x1=4.0, fillcolor="#ccc", opacity=0.4, line_width=0)
        fig.update_layout(yaxis2={"title": "°C", "overlaying": "y", "side": "right"})
        return fig

    for ours, theirs in ((draw(plot, plot.make_subplots), draw(go, make_subplots)), (spans(plot), spans(go))):
        theirs.update_layout(template=None)
        assert _decoded(json.loads(plot.to_json({"template": {}, **ours.layout}))) == _decoded(
            json.loads(theirs.to_json())["layout"])
        assert _decoded(json.loads(plot.to_json(ours.data))) == _decoded(json.loads(theirs.to_json())["data"])
