"""What a test with a bench (`bench: fio`) adds to the report: a line per point for the terminal (the bench's rate
against the road test's, their ratio with its interval and the verdict), and for the page the same as a table, a
figure of the ratios with their intervals against 1, and what differs between the two ways. Draws the summary's
`BenchPair`s (analysis/bench.py); computes nothing. A run whose rows are all another instrument's (a fio result
imported) says whose they are."""

from __future__ import annotations

from ...report import plot

from .bench import BenchAlone, BenchPair
from ...analysis.estimate import estimate_text, ratio_text
from .result import PatternResult
from ...analysis.rates import PointKey, label
from ...units import format_rate
from ...report.figures import layout
from ...report.page import esc, table


def _point(e: PatternResult, b: BenchPair | BenchAlone) -> str:
    """rnd-4k read random 4 KiB Q32T1 (the road test's point, as every view names a point)"""
    return label(PointKey(e.name, e.op, "pattern", **b.point))


def _gap(b: BenchPair) -> str:
    """The verdict in the bench's words: fio 12% slower than the road test."""
    r = b.ratio.estimate
    if b.verdict in ("faster", "slower"):
        return f"{b.instrument} {abs(r - 1):.0%} {b.verdict} than the road test"
    return f"{b.verdict}" + ("" if b.verdict != "same within noise" else f" ({b.instrument} and the road test)")


def terminal_lines(e: PatternResult) -> list[str]:
    lines = [f"{_point(e, b)}: bench ({b.version}) {format_rate(b.bench.estimate)} against road (helper) "
             f"{format_rate(b.road.estimate)}: ratio {ratio_text(b.ratio)}, {_gap(b)}" for b in e.bench]
    lines += [f"{_point(e, b)}: bench ({b.version}) {estimate_text(b.bench, format_rate)}, {_ALONE}" for b in e.bench_alone]
    if e.instrument != "helper":
        lines.append(f"{e.name} {e.op}: measured by {e.instrument} alone, not by stibium's helper (an imported result, "
                     f"or a job file's jobs of an op the road test does not measure)")
    return lines


_ALONE = "a job of the plan's job file: the road test measured no point of its shape"


def section(entries: list[PatternResult]) -> tuple[str, plot.Figure | None]:
    """The page's table of a test's bench against its road test and the figure of the ratios; ("", None) where it
    has no bench."""
    pairs = [(e, b) for e in entries for b in e.bench]
    mine = [e for e in entries if e.instrument != "helper"]
    html = "".join(f"<div class=\"info\">{esc(e.name)} ({esc(e.op)}): every measurement is {esc(e.instrument)}'s "
                   f"(an imported result, or a job file's jobs of an op the road test does not measure): the rates "
                   f"are its, read from its JSON output, with stibium's intervals across trials.</div>" for e in mine)
    lonely = [(e, b) for e in entries for b in e.bench_alone]
    if not pairs and not lonely:
        return html, None
    rows = [[_point(e, b), estimate_text(b.road, format_rate), f"{b.instrument} ({b.version})",
             estimate_text(b.bench, format_rate), ratio_text(b.ratio), _gap(b)] for e, b in pairs]
    rows += [[_point(e, b), "none", f"{b.instrument} ({b.version})", estimate_text(b.bench, format_rate), "", _ALONE]
             for e, b in lonely]
    differs = list(dict.fromkeys(d for _, b in pairs for d in b.differs))
    html += ("<h3>The bench beside the road test</h3><p class=\"muted\">Each point was measured by stibium's helper "
             "(the road test: the engine an app uses) and by fio (the bench: the point's equivalent job, or a job of "
             "the plan's own job file), their trials interleaved on the same target. Each rate is the median over trials with its 95 % interval; the ratio is "
             "the bench's over the road test's, its interval from independent bootstraps of each side's trials, and "
             "the verdict compare's (a noise band of 2 %).</p>"
             + table(["point", "road (helper)", "bench", "bench rate", "bench / road", "verdict"], rows)
             + "<p class=\"muted\">What differs between the two ways:</p><ul>"
             + "".join(f"<li>{esc(d)}</li>" for d in differs) + "</ul>")
    return html, _ratios(pairs) if pairs else None


def _ratios(pairs: list[tuple[PatternResult, BenchPair]]) -> plot.Figure:
    """Each point's bench / road with its interval, against 1 (the bench as fast as the road test)."""
    labels = [_point(e, b) for e, b in pairs]
    ratio = [b.ratio.estimate for _, b in pairs]
    fig = plot.Figure(plot.Scatter(
        x=ratio, y=labels, mode="markers", name="bench / road",
        error_x={"type": "data", "symmetric": False, "array": [b.ratio.high - b.ratio.estimate for _, b in pairs],
                 "arrayminus": [b.ratio.estimate - b.ratio.low for _, b in pairs]},
        hovertext=[f"{lab}: {ratio_text(b.ratio)}" for lab, (_, b) in zip(labels, pairs)], hoverinfo="text"))
    fig.add_vline(x=1.0, line_dash="dash", line_color="grey")
    return layout(fig, "bench (fio) / road (helper): above 1 the bench is faster", "rate ratio, bench / road", "")
