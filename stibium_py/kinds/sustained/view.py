"""How a sustained test is drawn: its row of the summary table, its sections of the page, its pairs of a comparison
(terminal and page) and what `plan show` says of it. Draws only."""

from __future__ import annotations

import zlib
from typing import Any

from .compare import SustainedPair, SustainedRatio
from ...analysis.estimate import ratio_text
from .result import SustainedTestResult
from . import figures as sustained
from ...report.build import KindView, plus_minus
from ...report.compare_page import COLORS
from ...report.page import esc, table
from ...units import format_bytes, format_seconds, format_size, in_flight_label


def drift(e: SustainedTestResult) -> str:
    """The cliff of a sustained test as its step in percent."""
    step = e.result.step_fraction
    return "-" if step is None else f"{step:+.0%}!"



def headline(e: SustainedTestResult, compact: bool) -> tuple[str, str, str]:
    first = e.result.stretches[0].rate_bytes_per_s
    latency = "-" if e.lat_p50_s is None else format_seconds(e.lat_p50_s) if compact else \
        f"p50 {format_seconds(e.lat_p50_s)}"
    if compact:
        return e.op, plus_minus(first), latency
    return f"{e.name} {e.op}", e.result.headline, latency



def sections(results: list[SustainedTestResult], n: int) -> tuple[list[str], int]:
    sections = []
    for e in results:
        html, drawn = sustained.section(e, n)
        sections.append(html)
        n += drawn
    return sections, n


def plan_note(test: Any) -> str:
    """What a sustained test will do to the drive, and how long it takes, in words."""
    from ...plan.expand import SUSTAINED_RATES_BYTES_PER_S
    writes = [o for o in test.ops if o.op == "write"]
    total = sum(o.bytes for o in writes)
    rows = sum(-(-o.bytes // o.chunk_bytes) for o in writes)
    of_free = (f", {total / test.free_bytes:.0%} of the {format_size(test.free_bytes)} free on the target now"
               if test.free_bytes else "")
    times = " and ".join(f"{format_seconds(total / r)} at {format_bytes(r)}/s" for r in SUSTAINED_RATES_BYTES_PER_S)
    reads = len(test.ops) > len(writes)
    flight = in_flight_label(writes[0].queue_depth, writes[0].threads)
    return (f"  {test.name}: writes {format_size(total)} without a pause{of_free}, in {len(writes)} files of "
            f"{format_size(writes[0].size_bytes)}, {format_size(writes[0].granularity_bytes)} a request"
            f"{' ' + flight if flight else ''}, a row every "
            f"{format_size(writes[0].chunk_bytes)} ({rows} rows){', then reads them back' if reads else ''}; takes "
            f"about {times}{' for the writes' if reads else ''}.\n"
            f"  [yellow]Wears the drive:[/] {format_size(total)} of real writes to its flash count against its rated "
            f"endurance (TBW); the files are removed at the end.")


def ratio_line(r: SustainedRatio) -> str:
    """One number of a sustained comparison in words: "fast rate (first stretch) 1.063x [0.991x, 1.140x],
    inconclusive"."""
    return f"{r.what} {ratio_text(r.ratio, 'x')}, {r.verdict}"


def compare_lines(pairs: list[SustainedPair], a: str, b: str) -> list[str]:
    """Each sustained test of a comparison: B's headline and A's, then each ratio of B over A (a, b: the sides'
    names: A and B, or the reference and a run)."""
    out = []
    for p in pairs:
        out.append(f"{p.a.name} {p.a.op}, sustained, {b}: {p.b.result.headline}; {a}: {p.a.result.headline}")
        out += [f"  {b} / {a}: {ratio_line(r)}" for r in p.ratios]
    return out


def compare_section(pairs: list[SustainedPair], label_a: str, label_b: str) -> str:
    """Each sustained test of a comparison, its curves overlaid; a figure's id from its sides and test, so that the
    sections of many runs against one reference stand on one page."""
    return "".join(sustained.compare_section(
        p, label_a, label_b, COLORS, f"sustained{zlib.crc32(f'{label_b}|{p.a.name}|{p.a.op}'.encode()):08x}")
        for p in pairs)


def series_lines(entries: list[dict[str, Any]]) -> list[str]:
    """A series' sustained tests on the terminal: each run's headline."""
    return [f"{s['test']} {s['op']} sustained, {r['run']}: {r['headline']}" for s in entries for r in s["runs"]]


def series_section(entries: list[dict[str, Any]]) -> str:
    """A series' sustained tests on its page: each run's headline, run by run."""
    return "".join(f"<h2>{esc(s['test'])} {esc(s['op'])}: sustained, run by run</h2>"
                   + table(["run", "what it did"], [[r["run"], r["headline"]] for r in s["runs"]]) for s in entries)


VIEW = KindView(headline, lambda e: ["0", "0", "0", "0"], drift, sections, sustained.lines, compare_lines,
                compare_section, series_lines, series_section)
