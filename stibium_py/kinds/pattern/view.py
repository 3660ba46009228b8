"""How a pattern test is drawn: its row of the summary table, its sections of the page, its figure on the compare
page. Draws only."""

from __future__ import annotations

from dataclasses import replace

from ...analysis.comparison import Drawn, PointRatio, TwoRuns
from .result import PatternResult
from . import bench_view as bench, in_flight, load_view as load, mix_view as mix, steady_view as steady
from ...report import plot
from . import figures
from ...report.build import KindView, est_text, plus_minus, short_size
from ...report.compare_page import COLORS
from ...report.figures import layout
from ...report.page import esc, figure
from ...units import format_per_s_short, format_rate, format_seconds, format_size, in_flight_label, op_label


def headline(e: PatternResult, compact: bool) -> tuple[str, str, str]:
    best = e.best
    p50 = "-" if best.lat_p50_s is None else format_seconds(best.lat_p50_s) if compact else \
        f"p50 {format_seconds(best.lat_p50_s)}"
    flight = in_flight_label(best.queue_depth, best.threads)
    op = op_label(e.op, best.read_fraction)
    # an open loop's best point moved its bytes at the rate it was offered: say which
    offered = f"{format_per_s_short(best.rate_per_s)} offered" if best.rate_per_s else ""
    if compact:
        return (" ".join(v for v in (op, short_size(best.granularity_bytes), flight, offered) if v),
                plus_minus(best.throughput), p50)
    return (f"{e.name} {op}", f"{est_text(best.throughput, format_rate)} at {format_size(best.granularity_bytes)} "
            f"{best.access}" + (f" {flight}" if flight else "") + (f", {offered}" if offered else ""), p50)


def sections(results: list[PatternResult], n: int) -> tuple[list[str], int]:
    """Per pattern test (its ops together): throughput, latency and queue-depth figures."""
    sections = []
    by_test: dict[str, list[PatternResult]] = {}
    for e in results:
        by_test.setdefault(e.name, []).append(e)
    for name, every in by_test.items():
        benched, ratios = bench.section(every)
        sections.append(f"<h2>{esc(name)}: access patterns</h2>" + steady.section(every) + mix.section(every)
                        + load.answer_section(every) + load.section(every) + benched)
        loaded = [f for f in (load.latency_vs_load(every), load.achieved_vs_offered(every)) if f is not None]
        if loaded:
            sections.append("<div class=\"grid\">" + "".join(figure(f, f"fig{n + i}") for i, f in enumerate(loaded))
                            + "</div>")
            n += len(loaded)
        # the figures over granularity and requests in flight are of the closed loop's points (an open loop's are
        # over its offered rate, above)
        entries = [c for c in (closed_loop(e) for e in every) if c.points]
        if not entries:
            continue
        figs = [figures.throughput_vs_granularity(entries)]
        for extra in (ratios, steady.rounds_figure(entries), figures.stride_heatmap(entries),
                      in_flight.latency_vs_queue_depth(entries)):
            if extra is not None:
                figs.append(extra)
        latency = figures.latency_percentiles(entries)
        wide = figures.many_latency_lines(entries)      # small multiples of heatmaps: the page's whole width
        if not wide:
            figs.insert(1, latency)
        sections.append("<div class=\"grid\">" + "".join(figure(f, f"fig{n + i}") for i, f in enumerate(figs)) + "</div>")
        n += len(figs)
        if wide:
            sections.append(figure(latency, f"fig{n}"))
            n += 1
        depth = in_flight.throughput_vs_queue_depth(entries)   # two panels: the page's whole width
        if depth is not None:
            sections.append(figure(depth, f"fig{n}"))
            n += 1
        cdf = figures.latency_cdf(entries)           # small multiples too: the page's whole width
        if cdf is not None:
            sections.append(figure(cdf, f"fig{n}"))
            n += 1
    return sections, n


def closed_loop(e: PatternResult) -> PatternResult:
    """A test's closed-loop points alone (all of them but those with a rate)."""
    return e if all(p.load is None for p in e.points) else replace(e, points=[p for p in e.points if p.load is None])


def overlay(result: TwoRuns, drawn: Drawn, first: PointRatio) -> plot.Figure | str:
    """Throughput against granularity, a line per access and requests in flight, both runs; where each line would
    be one point a side, a sentence instead (it draws nothing a reader can follow)."""
    test, op = first.key.test, first.key.op
    if one_granularity(result, test, op):
        return "One granularity a line: A's and B's rates are in the ratios table above."
    fig = plot.Figure()
    points = [p for p in result.points if (p.key.test, p.key.op) == (test, op)]
    # one line per access and requests in flight (strides of one access on one line, as before)
    for access, depth, threads in sorted({(p.key.access, p.key.queue_depth, p.key.threads) for p in points}):
        sel = sorted((p for p in points if (p.key.access, p.key.queue_depth, p.key.threads) == (access, depth, threads)),
                     key=lambda p: (p.key.stride_bytes, p.key.granularity_bytes))
        flight = in_flight_label(depth, threads)
        for side in ("a", "b"):
            fig.add_trace(plot.Scatter(x=[p.key.granularity_bytes for p in sel],
                                     y=[getattr(p, f"rate_{side}_bytes_per_s") for p in sel],
                                     mode="lines+markers", name=f"{side.upper()} {esc(access)}" + (f" {flight}" if flight else ""),
                                     line={"color": COLORS[side], "dash": "solid" if access == "sequential" else "dot"}))
    return layout(fig, f"{test} {op}: throughput against granularity, both runs", "granularity (bytes)", "bytes/s",
                  log_x=True, log_y=True)


def one_granularity(result: TwoRuns, test: str, op: str) -> bool:
    """Every line of the test's figure (an access at a number of requests in flight) would have one point a side."""
    lines: dict[tuple, set[int]] = {}
    for p in result.points:
        if (p.key.test, p.key.op) == (test, op):
            lines.setdefault((p.key.access, p.key.stride_bytes, p.key.queue_depth, p.key.threads), set()).add(
                p.key.granularity_bytes)
    return all(len(g) < 2 for g in lines.values())


VIEW = KindView(headline, lambda e: ["0", "0", str(len(e.below_cache)), "0"], lambda e: "-", sections,
                lambda results, width: [line for e in results for line in
                                        steady.terminal_lines(e) + mix.terminal_lines(e) + bench.terminal_lines(e)
                                        + load.terminal_lines(e, width)],
                compare_lines=load.compare_lines, compare_section=load.compare_section,
                summary_sections=lambda summary: ([in_flight.mark_table_html(summary)]
                                                  if in_flight.shows_mark_table(summary) else []),
                summary_lines=lambda summary, width: ([in_flight.mark_table_terminal(summary, width)]
                                                      if in_flight.shows_mark_table(summary) else []))
