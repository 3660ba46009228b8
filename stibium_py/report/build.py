"""The report of one run drawn from its typed summary: the page (render) and the terminal's renderables
(terminal). It computes nothing, reads and writes no file: publish.py does."""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any, Callable

from rich.table import Table

from ..analysis import calibration
from .. import registry
from ..analysis.below import BELOW_SHARE
from ..analysis.estimate import Estimate, estimate_text
from ..analysis.summary import Summary
from ..registry import KindResult as Result
from ..machine.link import Link
from ..rundir.record import RunRecord
from ..machine.stack import MAY_CACHE, MEMORY, Stack
from ..units import format_bytes, format_rate, format_size
from . import clients
from .terminal import DEFAULT_COLUMNS, Column, fitted_table, left_out, notices
from .page import esc, page, table


def terminal(summary: Summary, width: int) -> list[Any]:
    """What the terminal shows of a run: the summary table, each kind's lines under it (a sustained test's
    headline; a verify's verdict comes before the table where the run holds only verify tests: it is the run's
    answer), the kinds' tables of the whole run (the disk-mark table where requests were in flight), and the
    warnings."""
    out: list[Any] = [terminal_table(summary, width)]
    kinds = {e.kind for e in summary.tests}
    for spec in registry.specs():       # the kinds in the order of the page
        lines = spec.view.lines([e for e in summary.tests if e.kind == spec.name], width)
        if spec.view.lines_first and kinds == {spec.name}:
            out[:0] = lines             # its lines are the run's answer: before the table
        else:
            out += lines
    if summary.clients is not None:
        out += clients.terminal_lines(summary.clients, width)
    for spec in registry.specs():
        if spec.view.summary_lines is not None:
            out += spec.view.summary_lines(summary, width)
    return out + notices(summary.warnings, "the report")


def est_text(e: Estimate | None, fmt: Any) -> str:
    return estimate_text(e, fmt)


def plus_minus(e: Estimate) -> str:
    """An estimate with the larger side of its interval in percent: 488 MB/s ±2%."""
    return estimate_text(e, format_rate, compact=True)


def _table_notes(summary: Summary) -> list[tuple[str, str]]:
    """What each kind says under the summary table of its results' cells (the terminal's words, the page's)."""
    said = []
    for spec in registry.specs():
        if spec.view.table_note is not None:
            note = spec.view.table_note([e for e in summary.tests if e.kind == spec.name])
            if note is not None:
                said.append(note)
    return said


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
    return registry.spec(e.kind).view.headline(e, compact)


def _drift(e: Result) -> str:
    """The drift column: a files test's drift, a sustained test's cliff, - for pattern tests."""
    return registry.spec(e.kind).view.drift(e)


def _counts(e: Result) -> list[str]:
    """n, outliers, page-cache suspects, reads served by a cache below the file system (a pattern test: its
    points), fast outliers."""
    return [str(e.n), *registry.spec(e.kind).view.counts(e)]


# an interval of too few trials for 95 % says its own confidence (estimate_text): "(75%)", compact "*"
OWN_CONFIDENCE = re.compile(r"\(\d+%\)|[%\]]\*")          # a pattern's rate goes on: "... (50%) at 64 KiB random"
AN_INTERVAL = re.compile(r"\[.*\]|±")
# under the table, for the form it shows (full intervals, or compact +-%): what its intervals are
CONFIDENCE_NOTES = ("intervals: 95 %; one marked (N%) is the range of too few trials for 95 %: an N % interval",
                    "intervals: 95 %; one marked * is the range of too few trials for 95 % (the report gives its "
                    "confidence)")

TABLE_ROWS = 500          # flagged measurements listed in a table on the page (all of them are in the figures)


def terminal_table(summary: Summary, width: int = DEFAULT_COLUMNS) -> Table:
    """The summary for the terminal, one line per row with every value whole (terminal.fitted_table): the
    intervals in full where they fit, else as +-% (the exact ones are in the report), then a long test name cut
    in the middle, then the columns left out in this order: fast outliers, outliers, drift, n (the report has
    them all). Cache and below-the-file-system counts are never left out."""
    columns = [Column("test", shortened=True), Column("op"), Column("rate (interval)"), Column("latency"),
               Column("n", "right", drop=4), Column("outliers", "right", drop=2), Column("cache", "right"),
               Column("below", "right"), Column("fast", "right", drop=1), Column("drift", "right", drop=3)]
    full, brief = [], []
    for e in summary.tests:
        what, rate_brief, latency_brief = headline(e, compact=True)
        _, rate, latency = headline(e)
        counts = _counts(e)
        full.append([e.name, what, rate, latency, *counts, _drift(e)])
        brief.append([e.name, what, rate_brief, latency_brief, *counts, _drift(e)])
    t, dropped, shown = fitted_table("stibium summary (1 run)", columns, [full, brief], width)
    notes = [left_out(dropped)] if dropped else []
    cells = [row[2] for row in (full, brief)[shown]]
    if any(OWN_CONFIDENCE.search(cell) for cell in cells):
        notes.append(CONFIDENCE_NOTES[shown])
    elif any(AN_INTERVAL.search(cell) for cell in cells):      # a table of verdicts and counts has none to speak of
        notes.append("intervals: 95 %")
    notes += [said[0] for said in _table_notes(summary)]
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
        shapes = run.expanded.get("memory_shapes")       # the read shapes its operations had (memory.shapes_of)
        why = ("an imported result" if run.helper.get("imported_from") else
               "the run has no reads of a file's data by stibium's helper to hold against it" if shapes == 0 else
               "the run was cut off before it measured memory" if shapes else
               "the stibium that made this run did not record it")
        return f"not measured ({why}): no read is held against memory speed"
    lo, hi = min(rates.values()), max(rates.values())
    return (f"{len(rates)} read shapes read from the page cache before the tests, {format_rate(lo)} to "
            f"{format_rate(hi)}; a read with nothing in the page cache at {BELOW_SHARE:.0%} of that or more is "
            f"flagged as served by a cache below the file system")


def _link_text(link: Link) -> str:
    """The server, the interface and the most the link carries: "nas over eth0, 125 MB/s (eth0's negotiated
    speed)"."""
    over = f" over {link.interface}" if link.interface else ""
    if link.source == "loopback":
        return f"{link.server}{over}: this machine itself (no link to cross)"
    if link.bytes_per_s is None:
        return f"{link.server}{over}: its rate is not stated by the system (give it with --link-rate)"
    return f"{link.server}{over}, {format_rate(link.bytes_per_s)} ({link.said})"


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
        *([["link to the store", _link_text(link)]] if (link := Link.from_json(t.get("link"))) else []),
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
    # warnings under Warnings, notes (level info) under Notes: the words the terminal uses for each
    def said(level: str) -> str:
        return "".join(f"<div class=\"{'warn' if level == 'warning' else 'info'}\"><b>{esc(w.test)}</b>: "
                       f"{esc(w.message)}. <i>What to do:</i> {esc(w.what_to_do)}.</div>"
                       for w in summary.warnings if (w.level == "warning") == (level == "warning"))
    warn, notes = said("warning"), said("info")
    note = "".join(f"<p class=\"muted\">{said[1]}</p>" for said in _table_notes(summary))
    return ("<h2>Summary</h2>" + table(["test", "op", "kind", "rate or throughput (95% interval, or the % in brackets)", "latency", "n",
                                        "outliers", "cache suspects", "fast outliers (not the page cache)",
                                        "cache below the file system", "drift"], rows) + note
            + "<h2>Warnings</h2>" + (warn or "<p>No warning: no outliers, cache hits or drift were found.</p>")
            + (f"<h2>Notes</h2>{notes}" if notes else ""))


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
    lines: Callable[[list[Any], int], list[Any]]   # the terminal's lines or tables under the summary table, of
                                                   # the kind's results, fitted to the width
    # a kind that compares its own results (KindSpec.compare): its pairs on the terminal (pairs, A's name, B's
    # name -> lines) and on the compare page (pairs, A's label, B's label -> HTML)
    compare_lines: Callable[[list[Any], str, str], list[str]] | None = None
    compare_section: Callable[[list[Any], str, str], str] | None = None
    # a kind that puts its own results of a series together (KindSpec.series): them on the terminal and the page
    series_lines: Callable[[list[dict[str, Any]]], list[str]] | None = None
    series_section: Callable[[list[dict[str, Any]]], str] | None = None
    # what the kind says under the summary table of its results' cells (their results -> the terminal's words and
    # the page's HTML, or None: nothing to say)
    table_note: Callable[[list[Any]], tuple[str, str] | None] | None = None
    # a table of the kind's over the whole run (the pattern kind's disk-mark table): on the page after the summary
    # table (the summary -> sections), on the terminal after the lines of many clients (summary, width -> lines)
    summary_sections: Callable[[Summary], list[str]] | None = None
    summary_lines: Callable[[Summary, int], list[Any]] | None = None
    # a kind whose results are a run's answer (a verify's verdict: does the drive keep what it is given): where the
    # run holds only its tests, its lines come before the summary table, not after it
    lines_first: bool = False


def render(run: RunRecord, summary: Summary) -> str:
    sections = [_header(run), _summary_section(summary)]
    for spec in registry.specs():
        if spec.view.summary_sections is not None:
            sections += spec.view.summary_sections(summary)
    n = 0
    if summary.clients is not None:
        drawn_clients, n = clients.section(summary.clients, n)
        sections.append(drawn_clients)
    for spec in registry.specs():       # the kinds in the order of the page (registry.BUILTIN)
        drawn, n = spec.view.sections([e for e in summary.tests if e.kind == spec.name], n)
        sections.extend(drawn)
    sections.append("<h2>Methods</h2><p class=\"muted\">Every measurement is in measurements.csv beside this page; "
                    "the numbers above are in summary.json. Rates: Theil-Sen with stratified bootstrap intervals, "
                    "widened for small strata; no interval below 3 repeats per size. Outliers flagged by Tukey fences "
                    "on log residuals and never removed. Fast reads: page-cache suspects where the file was resident "
                    "or residency unknown, fast outliers where it was measured absent. Coverage of the 95 % intervals "
                    "of rate / latency in simulation (300 runs per cell):</p>"
                    + table(["repeats per size", *calibration.NOISES], calibration.rows()))
    return page(f"stibium: {run.plan.name}", sections)
