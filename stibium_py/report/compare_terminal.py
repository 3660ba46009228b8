"""The terminal's view of a comparison (analysis/comparison.py: TwoRuns, ManyRuns): two runs point by point,
or many runs against a reference. Renderables only; publish.py prints them."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from .. import registry
from ..analysis.comparison import ManyRuns, TwoRuns
from ..analysis.estimate import estimate_text, ratio_text
from ..analysis.rates import PointKey, label, rate_format
from ..units import format_per_s_short, format_size, in_flight_label
from .terminal import Column, cautions, fitted_table, with_caption


def verdict_text(verdict: str, scope: str) -> str:
    """A verdict, with "(these runs)" where one run a side cannot speak for the machines."""
    return verdict + (" (these runs)" if scope != "machines" and verdict in ("faster", "slower") else "")


def verdict_words(band: float, confidence: float) -> str:
    """What the verdicts mean, said where they are printed: a difference inside the noise band is not called."""
    pct = f"{band * 100:g} %"
    return (f"verdicts: faster or slower only where the whole {confidence * 100:g} % interval lies beyond the noise "
            f"band of {pct} ({1 - band:g} to {1 + band:g}); same within noise where it lies inside it; inconclusive "
            f"where it reaches across its edge: a difference smaller than {pct} is not called")


def many_runs(result: ManyRuns, width: int) -> list[Any]:
    """Many runs against a reference: the table (one line a point and run, every value whole at the terminal's
    width: terminal.fitted_table), the cautions, the kinds that compare their own results, the advice."""
    out: list[Any] = []
    rows = result.rows
    # a long test or run name is cut in the middle first, then the run's rate is left out; the ratio and the
    # verdict are what the table is for
    columns = [Column("test", shortened=True), Column("point"), Column("run", shortened=True),
               Column("rate", "right", drop=1), Column("ratio (95%)"), Column("verdict")]
    full, brief, briefest = [], [], []
    for r in rows:
        key = r.point.key
        point = label(key._replace(test="")).strip()
        short_point = label(key._replace(test="", access=_SHORT_ACCESS.get(key.access, key.access))).strip()
        rate = rate_format(key)(r.point.rate_b_bytes_per_s)
        word = verdict_text(r.point.verdict, r.point.scope)
        compact = estimate_text(r.point.ratio, lambda v: f"{v:.3f}", compact=True)
        full.append([key.test, point, r.run.run, rate, ratio_text(r.point.ratio), word])
        brief.append([key.test, point, r.run.run, rate, compact, word])
        briefest.append([key.test, short_point, r.run.run, rate, compact, word])
    table, dropped, shown = fitted_table(f"each run's rate over the reference's ({result.reference.run})", columns, [full, brief, briefest], width)
    with_caption(table, dropped, "the page")
    if rows:
        out.append(table)
        settings = result.pairs[0].settings
        out.append(verdict_words(settings.noise_band, settings.confidence))
        if shown == 2 and any(r.point.key.access for r in rows):
            out.append("seq, rand, str: sequential, random, strided access")
    out += cautions([(f"{label(r.point.key)} ({r.run.run})", r.caution) for r in rows if r.caution])
    for pair in result.pairs:
        out += kinds_lines(pair, "the reference", pair.b.run)
    return out + result.advice


def kinds_lines(result: TwoRuns, a: str, b: str) -> list[str]:
    """The lines of the kinds that compare their own results (a, b: the two sides' names)."""
    out: list[str] = []
    for kind, pairs in result.kinds.items():
        draw = registry.spec(kind).view.compare_lines
        out += [escape(line) for line in draw(pairs, a, b)]
    return out


_SHORT_ACCESS = {"sequential": "seq", "random": "rand", "strided": "str", "(geometric mean)": "geo-mean"}


def two_runs(result: TwoRuns, width: int) -> list[Any]:
    """B / A per point, one line each with every value whole at the terminal's width (terminal.fitted_table).
    Then the cautions, the kinds that compare their own results, the advice and the differences."""
    out: list[Any] = []
    title = "B / A: a repeatability check (both runs on one machine)" if result.same_machine else "B / A"
    lines = [(p.key.test, p.key.op, p.key.access, p.key.granularity_bytes, p.key.stride_bytes,
              in_flight_label(p.key.queue_depth, p.key.threads), offered(p.key), f"{p.runs_a}+{p.runs_b}", p.ratio,
              verdict_text(p.verdict, p.scope)) for p in result.points]
    lines += [(g.test, g.op, "(geometric mean)", 0, 0, "", "", f"{result.a.runs}+{result.b.runs}", g.ratio,
               verdict_text(g.verdict, g.scope)) for g in result.groups]
    # one line a point, every value whole (terminal.fitted_table): the access words shortened where narrow, then
    # a long test name cut in the middle, then the runs column left out
    columns = [Column("test", shortened=True), Column("op"), Column("access"), Column("size"), Column("stride"),
               Column("in flight"), Column("offered", "right"), Column("runs", "right", drop=1),
               Column("B / A (95% interval)"), Column("verdict")]
    full, brief = [], []
    for test, op, access, granularity, stride_bytes, flight, rate, runs, ratio, word in lines:
        size = format_size(granularity) if granularity else ""
        stride = f"+{format_size(stride_bytes)}" if stride_bytes else ""
        full.append([test, op, access, size, stride, flight, rate, runs, ratio_text(ratio), word])
        brief.append([test, op, _SHORT_ACCESS.get(access, access), size, stride, flight, rate, runs, ratio_text(ratio),
                      word])
    table, dropped, shown = fitted_table(title, columns, [full, brief], width)
    with_caption(table, dropped, "the page")
    if result.points:
        out.append(table)
        out.append(verdict_words(result.settings.noise_band, result.settings.confidence))
    out += cautions([(label(p.key), result.cautions[p.key]) for p in result.points if p.key in result.cautions])
    out += kinds_lines(result, "A", "B")
    if shown and any(p.key.access for p in result.points):
        out.append("seq, rand, str: sequential, random, strided access; +S: S skipped after each request; "
                   "Q8T1: 8 requests in flight on 1 thread")
    out.append(result.advice)
    out += [f"differs: {line}" for line in result.differences]
    if result.only_in_a or result.only_in_b:
        out.append(f"without a partner: only in A: {', '.join(result.only_in_a) or 'none'}; "
                   f"only in B: {', '.join(result.only_in_b) or 'none'}")
    return out


def offered(key: PointKey) -> str:
    """An open loop's offered rate a client ("20k/s"); "" for a closed loop (a column empty in every row is not
    shown)."""
    return format_per_s_short(key.rate_per_s) if key.rate_per_s else ""
