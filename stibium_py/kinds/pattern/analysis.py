"""A pattern test's analysis: its summary per op, its warnings and, where two runs compare it point by point, its
points."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...analysis import below
from ...analysis.fill_rates import sentence as fill_sentence
from .load import not_kept_sentence
from .load_view import answer_line
from .result import PatternResult, pattern_result
from ...analysis.rates import ONE_TRIAL, PointKey, PointRule, bytes_per_s, median_rate
from ...analysis.summary import Pending, SummaryContext
from ...analysis.warnings import MIX_SHARE_TOLERANCE, PRECONDITION_ADVICE
from ...rundir.table import Table
from ...units import format_per_s_short, format_rate, format_size, in_flight_label, op_label


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    s = ctx.s
    judged = ctx.judged.get(name)
    result = pattern_result(name, op, rows, s.resamples, s.seed, s.confidence,
                            below.memory_shares(rows, ctx.memory_rates),
                            judged.for_op(op) if judged is not None else None, s.noise_band)
    return lambda: [result]


def below_reads(e: PatternResult) -> str | None:
    """How many of its points' reads ran at memory speed with none of the file in the page cache, in words, the
    first four named; None: none."""
    flagged = e.below_cache
    if not flagged:
        return None
    return (f"{len(flagged)} of {len(e.points)} points ran at "
            f"{float(np.median([p.memory_share for p in flagged])):.0%} of memory speed (median) with none of the "
            f"file in the page cache (" + ", ".join(f"{p.access} {format_size(p.granularity_bytes)}"
                                                  for p in flagged[:4])
            + (", ..." if len(flagged) > 4 else "") + ")")


def add_warnings(e: PatternResult, add: Any) -> None:
    label = f"{e.name} ({e.op})"
    single = [p for p in e.points if p.trials < 2]
    if single:
        add("warning", label, f"{len(single)} of {len(e.points)} points have {ONE_TRIAL}: a median of one has no "
            f"interval, and compare gives them no verdict", "set trials: 6 or more in the plan (5 or fewer give "
            "the range of the trials, whose confidence the report states)" if e.instrument == "helper" else
            f"import several results of the same {e.instrument} jobs together (each file is a trial; 6 or more give "
            f"an interval of 95 %)")
    for p in e.points:
        mix = p.mix
        if mix is not None and abs(mix.read_share_bytes - mix.read_fraction) > MIX_SHARE_TOLERANCE:
            add("info", label, f"the {op_label('mixed', mix.read_fraction)} point at {format_size(p.granularity_bytes)} "
                f"{in_flight_label(p.queue_depth, p.threads) or 'Q1T1'} read {mix.read_share_bytes:.1%} of its bytes, "
                f"not {mix.read_fraction:.0%}: each pass of the requests holds the share rounded to whole requests",
                "move more bytes a pass (bytes, or span by time) so that the share rounds closer")
    unkept = [p for p in e.points if p.load is not None and not p.load.kept]
    if unkept:
        worst = unkept[0].load
        assert worst is not None
        where = (f"{unkept[0].access} {format_size(unkept[0].granularity_bytes)} "
                 f"{in_flight_label(unkept[0].queue_depth, unkept[0].threads) or 'Q1T1'} at "
                 f"{format_per_s_short(worst.offered_per_s)}")
        add("info", label, f"{len(unkept)} of {sum(p.load is not None for p in e.points)} offered rates were not "
            f"kept ({not_kept_sentence(where, worst)}): beyond what the drive carries with these requests in flight, "
            f"or the instrument's own lateness; their response times count every wait from the due times",
            "read the load table: the highest rate kept is what this drive carries at these requests in flight; "
            "more in flight (queue_depth, threads) may carry more")
    for answer in e.slo:
        if answer.met is None and answer.missed is not None:
            add("warning", label, answer_line(e, answer), "lower slo.lowest to search below it, or loosen the "
                "target: this drive does not meet it at these requests in flight")
        elif answer.met is not None and answer.missed is None:
            add("info", label, answer_line(e, answer), "raise slo.highest to search above it")
    moved = [f for f in e.fill_rates if f.apart]
    if moved:
        add("warning", label, fill_sentence(op_label(e.op, None), moved, format_rate),
            "quote each rate with its fill, and measure with data like your applications' (fill: {compressible: "
            "50%}, or the byte they repeat)")
    if e.stonewall is not None:
        sw = e.stonewall
        add("info", label, sw.line(), "nothing to do where that was the intent; for whole passes raise stonewall or "
            "lower bytes" if sw.stopped else "lower stonewall for it to bound the measurements, or leave it out")
    st = e.steady
    if st is None or st.steady:
        return
    first, last = st.window_rounds
    moving = st.unsteady             # this op's points that kept the test from steady state
    if not moving:
        return
    why = (f"{moving[0].label(e.name)}: {moving[0].verdict.why}" if moving[0].verdict is not None
           else f"{st.rounds} rounds, fewer than the window of {st.window}")
    more = f" (and {len(moving) - 1} more points)" if len(moving) > 1 else ""
    if st.rounds >= st.max_rounds:
        add("warning", label, f"not steady after {st.rounds} rounds: {why}{more}; its rates are of rounds "
            f"{first}-{last}, which still move",
            "raise steady.max_rounds, " + PRECONDITION_ADVICE + ", or quote these rates as not steady")
    else:
        add("warning", label, f"not steady yet: {st.rounds} of {st.max_rounds} rounds were measured before the "
            f"run stopped ({why}{more}); its rates are of rounds {first}-{last}",
            "finish the run with stibium resume, which goes on with the rounds")


# a point per access, granularity, stride, requests in flight, read share and instrument: the median throughput
POINTS = PointRule(lambda test, op, access, gran, stride, depth, threads, mix, instrument, fill, rate: PointKey(
    test, op, "pattern", access, int(gran), int(stride), int(depth), int(threads), mix, instrument or "helper", fill,
    float(rate) if rate else None),
    "bytes", median_rate, "median throughput", op_rank=str, rate_format=bytes_per_s, unit=lambda op: "bytes",
    flight=in_flight_label)
