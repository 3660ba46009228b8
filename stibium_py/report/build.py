"""The report of one run drawn from its typed summary: the page (render) and the terminal's renderables
(terminal). It computes nothing, reads and writes no file: publish.py does."""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Any, Callable

from rich.table import Table

from ..analysis import calibration
from ..kinds import Kind, by_kind
from ..analysis.below import BELOW_SHARE
from ..analysis.estimate import Estimate, estimate_text
from ..analysis.files import FilesResult
from ..analysis.patterns import PatternResult
from ..analysis.sustained import SustainedTestResult
from ..analysis.summary import Summary
from ..analysis.warnings import Result
from ..record import RunRecord
from ..stack import MAY_CACHE, MEMORY, Stack
from ..units import format_bytes, format_rate, format_seconds, format_size, in_flight_label, op_label
from . import bench, clients, figures, in_flight, mix, steady, sustained, tree
from .terminal import DEFAULT_COLUMNS, Column, fitted_table, notices
from .page import esc, figure, page, table


def terminal(summary: Summary, width: int) -> list[Any]:
    """What the terminal shows of a run: the summary table, each kind's lines under it (a sustained test's
    headline), the disk-mark table where requests were in flight, and the warnings."""
    out: list[Any] = [terminal_table(summary, width)]
    out += [line for e in summary.tests for line in VIEWS[e.kind].lines(e)]
    if summary.clients is not None:
        out += clients.terminal_lines(summary.clients)
    if in_flight.shows_mark_table(summary):
        out.append(in_flight.mark_table_terminal(summary, width))
    return out + notices(summary.warnings, "the report")


def _est(e: Estimate | None, fmt: Any) -> str:
    return estimate_text(e, fmt)


def _plus_minus(e: Estimate) -> str:
    """An estimate with the larger side of its interval in percent: 488 MB/s ±2%."""
    return estimate_text(e, format_rate, compact=True)


def _files_drift(e: FilesResult) -> str:
    """The drift over the run in whole percent, with ! where it was detected."""
    if not e.drift.fitted:
        return "-"
    return f"{e.drift.drift_fraction:+.0%}" + ("!" if e.drift.detected else "")


def _sustained_drift(e: SustainedTestResult) -> str:
    """The cliff of a sustained test as its step in percent."""
    step = e.result.step_fraction
    return "-" if step is None else f"{step:+.0%}!"


SMALLEST_MARK = "*"
SMALLEST_NOTE = ("* the median time of the smallest size: the fitted latency (the line's intercept) is below zero, "
                 "which no time can be; the report explains")


def negative_latency(e: Result) -> bool:
    """A files result whose fitted latency is below zero: the latency column shows the smallest size's median
    time instead, marked."""
    if not isinstance(e, FilesResult) or e.latency_smallest_size_s is None:
        return False
    return math.isfinite(e.fit.line.intercept_s) and e.fit.line.intercept_s < 0


def _files_headline(e: FilesResult, compact: bool) -> tuple[str, str, str]:
    what = e.op
    rate = _plus_minus(e.rate) if compact else _est(e.rate, format_rate)
    if negative_latency(e):
        return what, rate, f"{format_seconds(e.latency_smallest_size_s)}{SMALLEST_MARK}"
    lat = e.latency.as_dict().get("estimate")
    latency = (format_seconds(lat) if lat is not None else "-") if compact else _est(e.latency, format_seconds)
    return what, rate, latency


def _sustained_headline(e: SustainedTestResult, compact: bool) -> tuple[str, str, str]:
    first = e.result.stretches[0].rate_bytes_per_s
    latency = "-" if e.lat_p50_s is None else format_seconds(e.lat_p50_s) if compact else \
        f"p50 {format_seconds(e.lat_p50_s)}"
    if compact:
        return e.op, _plus_minus(first), latency
    return f"{e.name} {e.op}", e.result.headline, latency


def _pattern_headline(e: PatternResult, compact: bool) -> tuple[str, str, str]:
    best = e.best
    p50 = "-" if best.lat_p50_s is None else format_seconds(best.lat_p50_s) if compact else \
        f"p50 {format_seconds(best.lat_p50_s)}"
    flight = in_flight_label(best.queue_depth, best.threads)
    op = op_label(e.op, best.read_fraction)
    if compact:
        return (" ".join(v for v in (op, short_size(best.granularity_bytes), flight) if v),
                _plus_minus(best.throughput), p50)
    return (f"{e.name} {op}", f"{_est(best.throughput, format_rate)} at {format_size(best.granularity_bytes)} "
            f"{best.access}" + (f" {flight}" if flight else ""), p50)


def short_size(n: int) -> str:
    """A request size in few characters, for a narrow terminal: 4K, 64K, 1M (binary), 4kB, 1MB (decimal)."""
    text = format_size(n)
    for long, short in ((" KiB", "K"), (" MiB", "M"), (" GiB", "G"), (" KB", "kB"), (" MB", "MB"), (" GB", "GB"),
                        (" B", "B")):
        if text.endswith(long):
            return text[: -len(long)] + short
    return text


def headline(e: Result, compact: bool = False) -> tuple[str, str, str]:
    """The label, rate (or best throughput) and latency of one result: the one headline the terminal and
    the page both show. Compact: the label is the op and the point (the test's name has a column of its
    own), the interval ± percent."""
    return VIEWS[e.kind].headline(e, compact)


def _drift(e: Result) -> str:
    """The drift column: a files test's drift, a sustained test's cliff, - for pattern tests."""
    return VIEWS[e.kind].drift(e)


def _counts(e: Result) -> list[str]:
    """n, outliers, page-cache suspects, reads served by a cache below the file system (a pattern test: its
    points), fast outliers."""
    return [str(e.n), *VIEWS[e.kind].counts(e)]


TABLE_ROWS = 500          # flagged measurements listed in a table on the page (all of them are in the figures)


def terminal_table(summary: Summary, width: int = DEFAULT_COLUMNS) -> Table:
    """The summary for the terminal, one line per row with every value whole (terminal.fitted_table): the
    intervals in full where they fit, else as +-% (the exact ones are in the report), then a long test name cut
    in the middle, then the columns left out in this order: fast outliers, outliers, drift, n (the report has
    them all). Cache and below-the-file-system counts are never left out."""
    columns = [Column("test", shortened=True), Column("op"), Column("rate (95% interval)"), Column("latency"),
               Column("n", "right", drop=4), Column("outliers", "right", drop=2), Column("cache", "right"),
               Column("below", "right"), Column("fast", "right", drop=1), Column("drift", "right", drop=3)]
    full, brief = [], []
    for e in summary.tests:
        what, rate_brief, latency_brief = headline(e, compact=True)
        _, rate, latency = headline(e)
        counts = _counts(e)
        full.append([e.name, what, rate, latency, *counts, _drift(e)])
        brief.append([e.name, what, rate_brief, latency_brief, *counts, _drift(e)])
    t, dropped, _ = fitted_table("stibium summary (1 run)", columns, [full, brief], width)
    notes = [f"left out at this width: {', '.join(dropped)} (the report has them)"] if dropped else []
    if any(negative_latency(e) for e in summary.tests):
        notes.append(SMALLEST_NOTE)
    if notes:
        t.caption, t.caption_justify = "\n".join(notes), "left"
    return t


def _fact(value: Any) -> str:
    return "unknown" if value is None or value == "" else str(value)


def _honoured(value: Any) -> str:
    """Whether the target's file system honours direct I/O, in words (unknown: network file systems)."""
    if value is None:
        return "unknown (`stibium selftest --target` on it measures it)"
    return "yes" if value else "no"


def _stack_text(facts: dict[str, Any]) -> str:
    """The layers below the target's file system, top down, each with what it means for reads."""
    layers = Stack.from_json(facts.get("stack"))
    if not layers.layers:
        return "unknown (not recorded: a run of an older stibium, or a platform that does not tell)"
    said = {MEMORY: "serves reads from memory", MAY_CACHE: "may serve reads from memory"}
    return layers.text() + "".join(f"; {x.name} {said[x.reads]}" for x in layers.layers if x.reads in said)


def _memory_text(run: RunRecord) -> str:
    rates = run.memory_rates
    if not rates:
        kinds = {t.get("kind") for t in run.expanded.get("tests", []) if isinstance(t, dict)}
        why = ("an imported result" if run.helper.get("imported_from") else
               "the run has no files or pattern reads to hold against it" if not kinds & {"files", "pattern"} else
               "the stibium that made this run did not measure it")
        return f"not measured ({why}): no read is held against memory speed"
    lo, hi = min(rates.values()), max(rates.values())
    return (f"{len(rates)} read shapes read from the page cache before the tests, {format_rate(lo)} to "
            f"{format_rate(hi)}; a read with nothing in the page cache at {BELOW_SHARE:.0%} of that or more is "
            f"flagged as served by a cache below the file system")


def _run_text(run: RunRecord) -> str:
    """When the run ran and how it ended, in words (a run cut off has no end time)."""
    when = f"{_fact(run.started_utc)} to {run.ended_utc}" if run.ended_utc else f"started {_fact(run.started_utc)}, " \
        f"no end recorded"
    return f"{when}, status {run.status}" + (f" ({run.stopped_by})" if run.stopped_by else "")


def _header(run: RunRecord) -> str:
    m = run.machine
    t = run.target_facts
    plan = run.plan
    facts = [
        ["machine", f"{_fact(m.get('hostname'))} — {_fact(m.get('os'))} {_fact(m.get('os_release'))}, "
                    f"{_fact(m.get('cpu'))}, {_fact(m.get('cpu_count'))} CPUs, "
                    f"{format_bytes(m['ram_bytes']) if m.get('ram_bytes') else 'unknown'} RAM"],
        ["target", f"{_fact(run.target)} on {_fact(t.get('fs_type'))} ({_fact(t.get('device'))}, "
                   f"{_fact(t.get('device_model'))}), mount options {_fact(t.get('mount_options'))}"],
        ["below the file system", _stack_text(t)],
        ["memory speed", _memory_text(run)],
        ["direct I/O", f"{_fact(t.get('direct_how'))}, honoured: {_honoured(t.get('direct_honoured'))}, alignment "
                       f"{_fact(t.get('direct_offset_align_bytes'))} B"],
        ["plan", f"{plan.name}: {plan.description}"],
        ["versions", f"stibium {_fact(run.stibium_version)}, helper {_fact(run.helper_version)}"
                     + (f" ({run.helper['foundation_implementation']})" if run.helper.get("foundation_implementation")
                        else "") + f", clock {_fact(run.clock.get('clock'))}"],
        ["run", _run_text(run)],
    ]
    return (f"<h1>stibium: {esc(plan.name)}</h1><p class=\"muted\">{esc(plan.description)}</p>"
            + table(["fact", "value"], facts))


def _summary_section(summary: Summary) -> str:
    rows = []
    for e in summary.tests:
        _, rate, lat = headline(e)
        rows.append([e.name, e.op, e.kind, rate, lat, *_counts(e), _drift(e)])
    warn = "".join(f"<div class=\"{'warn' if w.level == 'warning' else 'info'}\"><b>{esc(w.test)}</b>: "
                   f"{esc(w.message)}. <i>What to do:</i> {esc(w.what_to_do)}.</div>" for w in summary.warnings)
    note = ("<p class=\"muted\">* The latency of a files test is the intercept of its line of time against size: "
            "the time a file of no bytes would take. Where noise or a cache tilts the line, the intercept can fall "
            "below zero, which no time can be; the table then shows the median time of the smallest size measured "
            "(an upper bound of the latency, since it includes that size's bytes), and summary.json keeps the "
            "fitted value.</p>" if any(negative_latency(e) for e in summary.tests) else "")
    return ("<h2>Summary</h2>" + table(["test", "op", "kind", "rate or throughput (95% interval)", "latency", "n",
                                        "outliers", "cache suspects", "fast outliers (not the page cache)",
                                        "cache below the file system", "drift"], rows) + note
            + "<h2>Warnings</h2>" + (warn or "<p>No warning: no outliers, cache hits or drift were found.</p>"))


def _files_sections(results: list[FilesResult], n: int) -> tuple[list[str], int]:
    """Per files test and op: its four figures, and the tables of its flagged measurements."""
    sections = []
    for e in results:
        sections.append(f"<h2>{esc(e.name)}: {esc(e.op)}s of whole files</h2>")
        if figures.dense(e):
            flagged = len(e.flagged_any)
            sections.append(f"<div class=\"info\">The {e.n:,} measurements of this test are drawn as densities: "
                            f"each cell's colour is how many measurements fell in it, every one counted. Above "
                            f"{figures.DENSITY_ABOVE_POINTS:,} measurements a point for each would make a page too "
                            f"large for a browser to open. The {flagged:,} flagged measurements (outliers, cache "
                            f"suspects, fast outliers) are drawn one by one in the residual figure, with their "
                            f"numbers on hover"
                            + (f" (the {figures.FLAGGED_POINTS_DRAWN:,} farthest from the fit; the others as a "
                               f"density in red)" if flagged > figures.FLAGGED_POINTS_DRAWN else "")
                            + "; every measurement is in measurements.csv.</div>")
        figs = [figures.time_vs_size(e), figures.residuals(e), figures.rate_vs_size(e), figures.rate_vs_elapsed(e)]
        sections.append("<div class=\"grid\">" + "".join(figure(f, f"fig{n + i}") for i, f in enumerate(figs)) + "</div>")
        n += len(figs)
        for title, flagged in (("Page-cache suspects", e.cache_suspects),
                               ("Served by a cache below the file system: memory speed, nothing in the page cache",
                                e.below_cache),
                               ("Fast outliers: not the page cache", e.fast_outliers)):
            if flagged:
                shown = flagged[:TABLE_ROWS]
                more = (f"<p class=\"muted\">... and {len(flagged) - len(shown):,} more: every one is drawn in the "
                        f"figures above and listed in summary.json.</p>" if len(flagged) > len(shown) else "")
                sections.append(f"<h3>{title}</h3>" + table(
                    ["seq", "file", "size", "seconds", "rate", "reasons"],
                    [[m.seq, m.file, format_bytes(m.size_bytes), f"{m.seconds:.6f}", format_rate(m.rate_bytes_per_s),
                      "; ".join(e.reasons(k))] for k in shown for m in (e.measurements.row(k),)]) + more)
    return sections, n


def _sustained_sections(results: list[SustainedTestResult], n: int) -> tuple[list[str], int]:
    sections = []
    for e in results:
        html, drawn = sustained.section(e, n)
        sections.append(html)
        n += drawn
    return sections, n


def _pattern_sections(results: list[PatternResult], n: int) -> tuple[list[str], int]:
    """Per pattern test (its ops together): throughput, latency and queue-depth figures."""
    sections = []
    by_test: dict[str, list[PatternResult]] = {}
    for e in results:
        by_test.setdefault(e.name, []).append(e)
    for name, entries in by_test.items():
        benched, ratios = bench.section(entries)
        sections.append(f"<h2>{esc(name)}: access patterns</h2>" + steady.section(entries) + mix.section(entries)
                        + benched)
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


@dataclass(frozen=True)
class KindView:
    """How the report draws one kind's results: its row of the summary table (headline: label, rate,
    latency; counts after n: outliers, page-cache suspects, below the file system, fast outliers; the drift
    column) and its sections of the page (results of the kind, the next figure's number -> the sections, the
    number after them)."""

    headline: Callable[[Any, bool], tuple[str, str, str]]
    counts: Callable[[Any], list[str]]
    drift: Callable[[Any], str]
    sections: Callable[[list[Any], int], tuple[list[str], int]]
    lines: Callable[[Any], list[str]] = lambda e: []      # the terminal's lines under the table


VIEWS: dict[Kind, KindView] = by_kind("report: a kind's sections of the report", {
    "files": KindView(_files_headline,
                      lambda e: [str(len(e.outliers)), str(len(e.cache_suspects)), str(len(e.below_cache)),
                                 str(len(e.fast_outliers))], _files_drift, _files_sections),
    "pattern": KindView(_pattern_headline, lambda e: ["0", "0", str(len(e.below_cache)), "0"],
                        lambda e: "-", _pattern_sections,
                        lambda e: steady.terminal_lines(e) + mix.terminal_lines(e) + bench.terminal_lines(e)),
    "sustained": KindView(_sustained_headline, lambda e: ["0", "0", "0", "0"], _sustained_drift, _sustained_sections,
                          lambda e: [f"{e.name} ({e.op}s, {format_bytes(e.result.bytes_written)}): {e.result.headline}"]),
    "tree": KindView(tree.headline, lambda e: ["0", "0", "0", "0"], lambda e: "-", tree.section, tree.lines),
})
# the order of the kinds' sections on the page
PAGE_ORDER: tuple[Kind, ...] = ("files", "sustained", "pattern", "tree")


def render(run: RunRecord, summary: Summary) -> str:
    sections = [_header(run), _summary_section(summary)]
    if in_flight.shows_mark_table(summary):
        sections.append(in_flight.mark_table_html(summary))
    n = 0
    if summary.clients is not None:
        drawn_clients, n = clients.section(summary.clients, n)
        sections.append(drawn_clients)
    for kind in PAGE_ORDER:
        drawn, n = VIEWS[kind].sections([e for e in summary.tests if e.kind == kind], n)
        sections.extend(drawn)
    sections.append("<h2>Methods</h2><p class=\"muted\">Every measurement is in measurements.csv beside this page; "
                    "the numbers above are in summary.json. Rates: Theil-Sen with stratified bootstrap intervals, "
                    "widened for small strata; no interval below 3 repeats per size. Outliers flagged by Tukey fences "
                    "on log residuals and never removed. Fast reads: page-cache suspects where the file was resident "
                    "or residency unknown, fast outliers where it was measured absent. Coverage of the 95 % intervals "
                    "of rate / latency in simulation (300 runs per cell):</p>"
                    + table(["repeats per size", *calibration.NOISES], calibration.rows()))
    return page(f"stibium: {run.plan.name}", sections)
