"""The comparison page: both machines' facts side by side, the two runs' curves
overlaid, and a forest plot of the ratios with their intervals. Self-contained."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..analysis.estimate import ratio_text
from ..analysis.rates import key_of, label
from ..compare import Drawn
from ..kinds import by_kind
from ..units import format_rate, format_size, in_flight_label
from .figures import DENSITY_ABOVE_POINTS, density, layout
from .page import esc, figure, page, table
from . import sustained
from .compare_terminal import verdict_text

COLORS = {"a": "#1f77b4", "b": "#d62728"}


def _overlay_files(drawn: Drawn, fit: dict[str, Any]) -> go.Figure:
    fig = go.Figure()
    test, op = fit["test"], fit["op"]
    for side, name, (x, y) in zip(("a", "b"), drawn.labels, drawn.measured[key_of(fit)]):
        if len(x) > DENSITY_ABOVE_POINTS:      # as in the report: every measurement counted into cells
            fig.add_trace(density(x, y, False, False, "Blues" if side == "a" else "Reds",
                                  f"{side.upper()}: {name}"))
        else:
            fig.add_trace(go.Scattergl(x=x, y=y, mode="markers", name=f"{side.upper()}: {esc(name)}",
                                       marker={"color": COLORS[side], "size": 6, "opacity": 0.7}))
        rate, latency = fit[f"rate_{side}_bytes_per_s"], fit[f"latency_{side}_s"]
        if rate and np.isfinite(rate) and latency is not None and len(x):
            grid = np.linspace(0, x.max(), 50)
            fig.add_trace(go.Scatter(x=grid, y=latency + grid / rate, mode="lines", line={"color": COLORS[side]},
                                     name=f"{side.upper()} Theil-Sen: {format_rate(rate)}"))
    return layout(fig, f"{test} {op}: time against size, both runs", "size (bytes)", "seconds")


def _overlay_pattern(cmp: dict[str, Any], test: str, op: str) -> go.Figure:
    fig = go.Figure()
    rows = [r for r in cmp["rows"] if r["test"] == test and r["op"] == op]
    # one line per access and requests in flight (strides of one access on one line, as before)
    for access, depth, threads in sorted({(r["access"], r["queue_depth"], r["threads"]) for r in rows}):
        sel = sorted((r for r in rows if (r["access"], r["queue_depth"], r["threads"]) == (access, depth, threads)),
                     key=lambda r: (r["stride_bytes"], r["granularity_bytes"]))
        flight = in_flight_label(depth, threads)
        for side in ("a", "b"):
            fig.add_trace(go.Scatter(x=[r["granularity_bytes"] for r in sel], y=[r[f"rate_{side}_bytes_per_s"] for r in sel],
                                     mode="lines+markers", name=f"{side.upper()} {esc(access)}" + (f" {flight}" if flight else ""),
                                     line={"color": COLORS[side], "dash": "solid" if access == "sequential" else "dot"}))
    return layout(fig, f"{test} {op}: throughput against granularity, both runs", "granularity (bytes)", "bytes/s",
                   log_x=True, log_y=True)


# how each kind's points of one test and op are drawn for both runs (sustained tests: sustained.compare_section)
OVERLAYS = by_kind("report: the compare page's figure of a test's points", {
    "files": lambda cmp, drawn, first: _overlay_files(drawn, first),
    "pattern": lambda cmp, drawn, first: _overlay_pattern(cmp, first["test"], first["op"]),
    "sustained": None,
})


def _forest(cmp: dict[str, Any]) -> go.Figure:
    items = [(label(key_of(r)), r["ratio"], r["verdict"]) for r in cmp["rows"]]
    items += [(f"{s['test']} {s['op']} (geometric mean)", s["ratio"], s["verdict"]) for s in cmp["summaries"]]
    items = [i for i in items if i[1]["estimate"] is not None]     # a files test of one size has no rate
    labels = [esc(i[0]) for i in items]
    est = [i[1]["estimate"] for i in items]
    fig = go.Figure(go.Scatter(
        x=est, y=labels, mode="markers", marker={"size": 9, "color": "#222"},
        error_x={"type": "data", "symmetric": False,
                 "array": [(i[1]["high"] or e) - e for i, e in zip(items, est)],
                 "arrayminus": [e - (i[1]["low"] or e) for i, e in zip(items, est)]},
        text=[i[2] for i in items], hovertemplate="%{y}: %{x:.3f}x (%{text})<extra></extra>", name="B / A"))
    fig.add_vrect(x0=1 - cmp["settings"]["noise_band"], x1=1 + cmp["settings"]["noise_band"], fillcolor="#ccc",
                  opacity=0.4, line_width=0)
    fig.add_vline(x=1, line_color="#888")
    fig = layout(fig, "B / A rate ratios with 95% intervals (grey: the 2% noise band)", "ratio B / A", "", log_x=True)
    fig.update_layout(height=max(300, 28 * len(items) + 120))
    return fig


def _headline(cmp: dict[str, Any]) -> str:
    """The ratio per test and op averaged across all its granularities (geometric mean), as the lab report
    puts it ("2.97x for reads, 7.07x for writes"), above everything else."""
    if not cmp["summaries"]:
        return ""
    items = []
    for s in cmp["summaries"]:
        items.append(f"<li><b>{esc(s['test'])} {esc(s['op'])}s: {esc(ratio_text(s['ratio'], 'x', digits=2))}</b>, "
                     f"{esc(s['verdict'])}</li>")
    return ("<div class=\"info\"><b>B / A averaged across all granularities</b> (geometric mean of the ratios, "
            f"95 % interval):<ul>{''.join(items)}</ul></div>")


def render(cmp: dict[str, Any], drawn: Drawn) -> str:
    """The page of two runs: cmp is the comparison's JSON form, drawn the measurements its figures show."""
    label_a, label_b = drawn.labels
    fa, fb = cmp["a"], cmp["b"]
    keys = [k for k in fa if k != "measurements"] + ["measurements"]
    facts = table(["", "A", "B"], [[k, fa.get(k), fb.get(k)] for k in keys])
    rows = table(["test", "op", "access", "granularity", "stride", "in flight", "rate A", "rate B",
                  "B / A (95% interval)", "verdict"],
                 [[r["test"], r["op"], r["access"], format_size(r["granularity_bytes"]) if r["granularity_bytes"] else "",
                   format_size(r["stride_bytes"]) if r["stride_bytes"] else "", in_flight_label(r["queue_depth"], r["threads"]),
                   format_rate(r["rate_a_bytes_per_s"]), format_rate(r["rate_b_bytes_per_s"]),
                   ratio_text(r["ratio"]),
                   r["verdict"] + (f" ({r['hint']})" if r["hint"] else "")] for r in cmp["rows"]])
    summ = table(["test", "op", "geometric mean B / A (95% interval)", "verdict"],
                 [[s["test"], s["op"], ratio_text(s["ratio"]), s["verdict"]] for s in cmp["summaries"]])
    un = cmp["unmatched"]
    unmatched = "" if not (un["only_in_a"] or un["only_in_b"]) else (
        f"<div class=\"warn\">Without a partner: only in A: {esc(', '.join(un['only_in_a']) or 'none')}; "
        f"only in B: {esc(', '.join(un['only_in_b']) or 'none')}.</div>")
    same = ("<div class=\"warn\">Both sides ran on the same machine and disk: this is a repeatability check, not a "
            "comparison of machines.</div>" if cmp.get("same_machine") else "")
    scope = f"<div class=\"{'info' if cmp.get('scope') == 'machines' else 'warn'}\">{esc(cmp.get('advice'))}.</div>"
    diffs = "".join(f"<li>{esc(d)}</li>" for d in cmp.get("differences", []))
    diffs = f"<div class=\"info\">The runs' tests differ in:<ul>{diffs}</ul></div>" if diffs else ""
    sections = [f"<h1>stibium compare: B / A</h1><p class=\"muted\">A: {esc(label_a)}; B: {esc(label_b)}</p>",
                _headline(cmp), same, scope, diffs, "<h2>Machines</h2>", facts, unmatched]
    if cmp["rows"]:                      # a comparison of sustained tests alone has no points
        sections += ["<h2>Ratios</h2>", rows, summ, figure(_forest(cmp), "forest")]
    n = 0
    for test, op in dict.fromkeys((r["test"], r["op"]) for r in cmp["rows"]):
        first = next(r for r in cmp["rows"] if (r["test"], r["op"]) == (test, op))
        fig = OVERLAYS[first["kind"]](cmp, drawn, first)
        sections.append(f"<h2>{esc(test)} {esc(op)}</h2>" + figure(fig, f"overlay{n}"))
        n += 1
    for i, entry in enumerate(cmp.get("sustained", [])):
        sections.append(sustained.compare_section(entry, label_a, label_b, COLORS, i))
    return page("stibium compare", sections)


def render_many(cmp: dict[str, Any], labels: list[str], reference: int) -> str:
    """Many machines in one table: per test point each run's rate and its ratio to the reference."""
    ref = labels[reference]
    keys = list(dict.fromkeys(key_of(r) for r in cmp["rows"]))
    body = []
    for key in keys:
        rs = [r for r in cmp["rows"] if key_of(r) == key]
        what = label(key)
        body.append([what, ref + " (reference)", format_rate(rs[0]["reference_rate_bytes_per_s"]), "1", ""])
        for r in rs:
            body.append(["", r["label"], format_rate(r["rate_bytes_per_s"]), ratio_text(r["ratio"]), verdict_text(r)])
    summ = table(["run", "test", "op", "geometric mean / reference (95% interval)", "verdict"],
                 [[s["run"], s["test"], s["op"], ratio_text(s["ratio"]), s["verdict"]] for s in cmp["summaries"]])
    advice = "".join(f"<div class=\"info\">{esc(a)}.</div>" for a in dict.fromkeys(cmp["advice"]))
    sections = [f"<h1>stibium compare: {len(labels)} runs against {esc(ref)}</h1>", advice,
                "<h2>Rates and ratios to the reference</h2>",
                table(["test", "run", "rate", "ratio to the reference (95% interval)", "verdict"], body), summ]
    for test, op in dict.fromkeys((s["test"], s["op"]) for s in cmp.get("sustained", [])):
        entries = [s for s in cmp["sustained"] if (s["test"], s["op"]) == (test, op)]
        rows = [[ref + " (reference)", entries[0]["reference_headline"], ""]]
        rows += [[s["label"], s["headline"], "; ".join(sustained.ratio_text(r) for r in s["ratios"])] for s in entries]
        sections.append(f"<h2>{esc(test)} {esc(op)}: sustained</h2>"
                        + table(["run", "what it did", "against the reference (95% intervals)"], rows))
    return page("stibium compare", sections)
