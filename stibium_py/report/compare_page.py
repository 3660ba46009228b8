"""The comparison page: both machines' facts side by side, the two runs' curves
overlaid, and a forest plot of the ratios with their intervals. Self-contained."""

from __future__ import annotations

import numpy as np
from . import plot

from ..analysis.estimate import ratio_text
from ..analysis.comparison import Drawn, ManyRuns, SideFacts, TwoRuns
from ..analysis.rates import label, rate_format
from .. import registry
from ..units import format_bytes, format_size, in_flight_label
from .figures import layout
from .page import esc, figure, page, table
from .compare_terminal import offered, verdict_text, verdict_words

COLORS = {"a": plot.BLUE, "b": plot.RED}


def _forest(result: TwoRuns) -> plot.Figure:
    items = [(label(p.key), p.ratio, p.verdict) for p in result.points]
    items += [(f"{g.test} {g.op} (geometric mean)", g.ratio, g.verdict) for g in result.groups]
    items = [i for i in items if np.isfinite(i[1].estimate)]     # a files test of one size has no rate
    est = [i[1].estimate for i in items]
    fig = plot.Figure(plot.Scatter(
        x=est, y=[esc(i[0]) for i in items], mode="markers", marker={"size": 9, "color": "#222"},
        error_x={"type": "data", "symmetric": False,
                 "array": [(i[1].high if np.isfinite(i[1].high) else e) - e for i, e in zip(items, est)],
                 "arrayminus": [e - (i[1].low if np.isfinite(i[1].low) else e) for i, e in zip(items, est)]},
        text=[i[2] for i in items], hovertemplate="%{y}: %{x:.3f}x (%{text})<extra></extra>", name="B / A"))
    band = result.settings.noise_band
    fig.add_vrect(x0=1 - band, x1=1 + band, fillcolor="#ccc", opacity=0.4, line_width=0)
    fig.add_vline(x=1, line_color="#888")
    fig = layout(fig, "B / A rate ratios with 95% intervals (grey: the 2% noise band)", "ratio B / A", "", log_x=True)
    fig.update_layout(height=max(300, 28 * len(items) + 120))
    return fig


def _headline(result: TwoRuns) -> str:
    """The ratio per test and op averaged across all its granularities (geometric mean), as the lab report
    puts it ("2.97x for reads, 7.07x for writes"), above everything else."""
    if not result.groups:
        return ""
    items = [f"<li><b>{esc(g.test)} {esc(g.op)}s: {esc(ratio_text(g.ratio, 'x', digits=2))}</b>, {esc(g.verdict)}</li>"
             for g in result.groups]
    return ("<div class=\"info\"><b>B / A averaged across all granularities</b> (geometric mean of the ratios, "
            f"95 % interval):<ul>{''.join(items)}</ul></div>")


# how a fact is shown (the JSON keeps the raw value)
_FACT_TEXT = {"ram_bytes": ("memory", lambda v: format_bytes(v, "binary")), "measurements": ("measurements", "{:,}".format),
              "fs_type": ("file system", str), "device_model": ("device", str), "started_utc": ("started (UTC)", str),
              "os": ("operating system", str), "cpu": ("CPU", str)}


def _facts_table(sides: list[SideFacts], names: list[str]) -> str:
    fields = [f for f in sides[0].to_json() if f != "measurements"] + ["measurements"]
    rows = []
    for f in fields:
        name, show = _FACT_TEXT.get(f, (f, str))
        rows.append([name, *[show(v) if v is not None and v != "" else "unknown" for v in
                             (s.to_json().get(f) for s in sides)]])
    return table(["", *names], rows)


def render(result: TwoRuns, drawn: Drawn) -> str:
    """The page of two runs: the comparison, and drawn, the measurements its figures show."""
    label_a, label_b = drawn.labels
    loaded = any(p.key.rate_per_s for p in result.points)    # an open loop's offered rate, where a point has one
    rows = table(["test", "op", "access", "granularity", "stride", "in flight", *(["offered"] if loaded else []),
                  "rate A", "rate B", "B / A (95% interval)", "verdict"],
                 [[p.key.test, p.key.op, p.key.access,
                   format_size(p.key.granularity_bytes) if p.key.granularity_bytes else "",
                   format_size(p.key.stride_bytes) if p.key.stride_bytes else "",
                   in_flight_label(p.key.queue_depth, p.key.threads), *([offered(p.key)] if loaded else []),
                   rate_format(p.key)(p.rate_a_bytes_per_s), rate_format(p.key)(p.rate_b_bytes_per_s), ratio_text(p.ratio),
                   p.verdict + (f" ({p.hint})" if p.hint else "")] for p in result.points])
    # the geometric mean over granularities, where a test and op has two or more
    summ = table(["test", "op", "geometric mean B / A (95% interval)", "verdict"],
                 [[g.test, g.op, ratio_text(g.ratio), g.verdict] for g in result.groups]) if result.groups else ""
    unmatched = "" if not (result.only_in_a or result.only_in_b) else (
        f"<div class=\"warn\">Without a partner: only in A: {esc(', '.join(result.only_in_a) or 'none')}; "
        f"only in B: {esc(', '.join(result.only_in_b) or 'none')}.</div>")
    same = ("<div class=\"warn\">Both sides ran on the same machine and disk: this is a repeatability check, not a "
            "comparison of machines.</div>" if result.same_machine else "")
    scope = (f"<div class=\"{'info' if result.comparison.scope == 'machines' else 'warn'}\">{esc(result.advice)}."
             f"</div>")
    diffs = "".join(f"<li>{esc(d)}</li>" for d in result.differences)
    diffs = f"<div class=\"info\">The runs' tests differ in:<ul>{diffs}</ul></div>" if diffs else ""
    said = verdict_words(result.settings.noise_band, result.settings.confidence)
    sections = [f"<h1>stibium compare: B / A</h1><p class=\"muted\">A: {esc(label_a)}; B: {esc(label_b)}</p>",
                _headline(result), same, scope, f"<p class=\"muted\">{esc(said[0].upper() + said[1:])}.</p>", diffs, "<h2>Machines</h2>",
                _facts_table([result.a, result.b], ["A", "B"]), unmatched]
    if result.points:                      # a comparison of kinds without points (sustained) has none
        sections += ["<h2>Ratios</h2>", rows, summ, figure(_forest(result), "forest")]
    n = 0
    for test, op in dict.fromkeys((p.key.test, p.key.op) for p in result.points):
        first = next(p for p in result.points if (p.key.test, p.key.op) == (test, op))
        fig = registry.spec(first.key.kind).overlay(result, drawn, first)
        if isinstance(fig, str):            # the kind says why there is no figure, and where its numbers are
            sections.append(f"<h2>{esc(test)} {esc(op)}</h2><p class=\"muted\">{esc(fig)}</p>")
            continue
        sections.append(f"<h2>{esc(test)} {esc(op)}</h2>" + figure(fig, f"overlay{n}"))
        n += 1
    sections += _kinds_sections(result, label_a, label_b)
    return page("stibium compare", sections)


def _kinds_sections(result: TwoRuns, label_a: str, label_b: str) -> list[str]:
    """The sections of the kinds that compare their own results."""
    return [registry.spec(kind).view.compare_section(pairs, label_a, label_b) for kind, pairs in result.kinds.items()]


def render_many(result: ManyRuns) -> str:
    """Many machines in one table: per test point each run's rate and its ratio to the reference."""
    ref = result.reference.label
    rows = result.rows
    body = []
    for key in dict.fromkeys(r.point.key for r in rows):
        mine = [r for r in rows if r.point.key == key]
        body.append([label(key), ref + " (reference)", rate_format(key)(mine[0].point.rate_a_bytes_per_s), "1", ""])
        body += [["", r.run.label, rate_format(key)(r.point.rate_b_bytes_per_s), ratio_text(r.point.ratio),
                  verdict_text(r.point.verdict, r.point.scope)] for r in mine]
    groups = [(pair.b.run, g) for pair in result.pairs for g in pair.groups]
    summ = table(["run", "test", "op", "geometric mean / reference (95% interval)", "verdict"],
                 [[run, g.test, g.op, ratio_text(g.ratio), g.verdict] for run, g in groups]) if groups else ""
    advice = "".join(f"<div class=\"info\">{esc(a)}.</div>" for a in result.advice)
    said = verdict_words(result.pairs[0].settings.noise_band, result.pairs[0].settings.confidence)
    sections = [f"<h1>stibium compare: {len(result.pairs) + 1} runs against {esc(ref)}</h1>", advice,
                f"<p class=\"muted\">{esc(said[0].upper() + said[1:])}.</p>",
                "<h2>Rates and ratios to the reference</h2>",
                table(["test", "run", "rate", "ratio to the reference (95% interval)", "verdict"], body), summ]
    for pair in result.pairs:
        sections += _kinds_sections(pair, ref + " (reference)", pair.b.label)
    return page("stibium compare", sections)


