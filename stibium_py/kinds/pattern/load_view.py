"""What an open loop (a pattern test with a rate) adds to the report: a table of each offered rate with what was
achieved, the response times (from each request's due time) and the late issues, on the terminal and the page;
the response and service times against the offered rate (the curve that bends at the knee), and the achieved
rate against the offered one. Draws only."""

from __future__ import annotations

import math
from typing import Any

from ...analysis.estimate import estimate_text
from ...report import plot
from ...report.figures import layout
from ...report.page import esc, table
from ...report.terminal import Column, fitted_table, with_caption
from ...units import format_per_s_short, format_seconds, format_size, in_flight_label, mix_label, op_label
from .compare import TargetPair
from .load import Judged, Load, SloAnswer
from .result import PatternPoint, PatternResult

Line = tuple[str, str, int, int, int, int, float | None, str]


def _loaded(entries: list[PatternResult]) -> list[tuple[PatternResult, PatternPoint, Load]]:
    return [(e, p, p.load) for e in entries for p in e.points if p.load is not None]


def _line(e: PatternResult, p: PatternPoint) -> Line:
    return (e.op, p.access, p.granularity_bytes, p.stride_bytes, p.queue_depth, p.threads, p.read_fraction, p.fill)


def _line_name(line: Line, with_op: bool = True) -> str:
    """read random 4 KiB Q8T1: a line over offered rates (without its op in a table of one test and op)."""
    op, access, gran, _stride, depth, threads, mix, _fill = line
    head = op_label(op, mix) if with_op else mix_label(mix) if mix is not None else ""
    return " ".join(v for v in (head, access, format_size(gran),
                                in_flight_label(depth, threads) or "Q1T1") if v)


def _seconds(value: float | None) -> str:
    return format_seconds(value) if value is not None else "-"


def _rows(entries: list[PatternResult], compact: bool) -> list[list[str]]:
    rows = []
    for e, p, load in sorted(_loaded(entries), key=lambda t: (_line(t[0], t[1])[:6], t[2].offered_per_s)):
        achieved = (format_per_s_short(load.achieved.estimate) if compact
                    else estimate_text(load.achieved, lambda v: format_per_s_short(v) if v is not None else "-"))
        rows.append([_line_name(_line(e, p), with_op=False), format_per_s_short(load.offered_per_s), achieved,
                     _seconds(load.response_s["p50"]), _seconds(load.response_s["p99"]),
                     _seconds(load.response_s["p999"]), _seconds(load.service_s["p99"]),
                     f"{load.late_issues:,} ({load.late_share:.1%})", "yes" if load.kept else "no"])
    return rows


HEADER = ["point", "offered", "achieved", "resp p50", "resp p99", "resp p99.9", "service p99", "late issues",
          "kept"]


def terminal_lines(e: PatternResult, width: int = 120) -> list[Any]:
    """The table of an open loop's rates and a search's answers (none for a closed loop)."""
    if not any(p.load is not None for p in e.points):
        return []
    columns = [Column("point", shortened=True), Column("offered", "right"), Column("achieved", "right"),
               Column("resp p50", "right"), Column("resp p99", "right"), Column("resp p99.9", "right", drop=2),
               Column("service p99", "right", drop=1), Column("late issues", "right"), Column("kept")]
    fitted, dropped, _ = fitted_table(f"{e.name} {e.op} at a stated load (response times from each request's due "
                                      f"time; achieved: median over trials, 95 % interval)", columns,
                                      [_rows([e], False), _rows([e], True)], width)
    return [with_caption(fitted, dropped), *knee_lines(e), *answer_lines(e)]


def knee_lines(e: PatternResult) -> list[str]:
    """A list of rates (not a search): for each point shape with two or more, the highest rate kept below the lowest
    not kept (load.Load.kept: at most 1 % of the requests issued over 100 us late)."""
    if e.slo:
        return []
    out = []
    for line, loads in _lines([e]).items():
        if len(loads) < 2:
            continue
        missed = next((x for x in loads if not x.kept), None)
        kept = [x for x in loads if x.kept and (missed is None or x.offered_per_s < missed.offered_per_s)]
        name = f"{e.name} {_line_name(line)}"
        if missed is None:
            out.append(f"{name}: every offered rate kept, up to {format_per_s_short(loads[-1].offered_per_s)}")
        elif not kept:
            out.append(f"{name}: not kept even at {format_per_s_short(missed.offered_per_s)}, the lowest offered")
        else:
            out.append(f"{name}: kept up to {format_per_s_short(kept[-1].offered_per_s)}, not at "
                       f"{format_per_s_short(missed.offered_per_s)}, where {missed.late_share:.1%} of the requests "
                       f"were issued over 100 us late (all slots busy, or the instrument late); response p99 "
                       f"{_seconds(kept[-1].response_s['p99'])} and {_seconds(missed.response_s['p99'])}")
    return out


def section(entries: list[PatternResult]) -> str:
    """The page's table of a test's offered rates; "" for a closed loop."""
    rows = _rows(entries, False)
    if not rows:
        return ""
    knees = "".join(f"<p>{esc(line)}.</p>" for e in entries for line in knee_lines(e))
    return ("<h3>At a stated load</h3><p class=\"muted\">Each client issued its requests at their due times, set "
            "before the timer, whatever was still in flight (an open loop). A request's response time runs from its "
            "due time to its completion: a wait for a free slot or for a stalled device is in it, which a closed "
            "loop never counts. Its service time runs from its issue. Percentiles are of every trial's requests "
            "together (their histograms merged); achieved is the median over trials with its 95 % interval; a late "
            "issue left over 100 us after its due time (all slots busy, or the instrument late); kept: at most 1 % "
            "issued late.</p>" + table(HEADER, rows) + knees)


def latency_vs_load(entries: list[PatternResult]) -> plot.Figure | None:
    """Response time percentiles (p50 solid, p99 dashed, p99.9 dotted) and the service time's p99 (thin) against
    the offered rate, a line per point shape; None for a closed loop."""
    lines = _lines(entries)
    if not lines:
        return None
    fig = plot.Figure()
    for line, pts in lines.items():
        name = _line_name(line)
        x = [load.offered_per_s for load in pts]
        for key, dash, what in (("p50", "solid", "response p50"), ("p99", "dash", "response p99"),
                                ("p999", "dot", "response p99.9")):
            fig.add_trace(plot.Scatter(x=x, y=[load.response_s[key] for load in pts], mode="lines+markers",
                                       name=esc(f"{name} {what}"), legendgroup=name, line={"dash": dash},
                                       hovertemplate="%{x:.4s}/s offered: %{y:.3s}s<extra></extra>"))
        fig.add_trace(plot.Scatter(x=x, y=[load.service_s["p99"] for load in pts], mode="lines+markers",
                                   name=esc(f"{name} service p99"), legendgroup=name, line={"dash": "dashdot", "width": 1},
                                   hovertemplate="%{x:.4s}/s offered: %{y:.3s}s<extra></extra>"))
    name = entries[0].name if entries else ""
    return layout(fig, f"{name}: response time against offered load (from each request's due time)",
                  "offered rate (requests/s, each client)", "seconds", log_y=True)


def achieved_vs_offered(entries: list[PatternResult]) -> plot.Figure | None:
    """The achieved rate (median over trials, with its interval) against the offered one; the diagonal is a rate
    kept."""
    lines = _lines(entries)
    if not lines:
        return None
    fig = plot.Figure()
    top = max(load.offered_per_s for pts in lines.values() for load in pts)
    fig.add_trace(plot.Scatter(x=[0, top], y=[0, top], mode="lines", name="offered = achieved",
                               line={"dash": "dot", "color": "#999"}, hoverinfo="skip"))
    for line, pts in lines.items():
        fig.add_trace(plot.Scatter(
            x=[load.offered_per_s for load in pts], y=[load.achieved.estimate for load in pts], mode="lines+markers",
            name=esc(_line_name(line)),
            error_y={"type": "data", "symmetric": False,
                     "array": [_above(load) for load in pts], "arrayminus": [_below(load) for load in pts]},
            hovertemplate="%{x:.4s}/s offered: %{y:.4s}/s achieved<extra></extra>"))
    name = entries[0].name if entries else ""
    return layout(fig, f"{name}: achieved against offered rate", "offered rate (requests/s, each client)",
                  "achieved rate (requests/s)")


def _lines(entries: list[PatternResult]) -> dict[Line, list[Load]]:
    lines: dict[Line, list[Load]] = {}
    for e, p, load in _loaded(entries):
        lines.setdefault(_line(e, p), []).append(load)
    return {k: sorted(v, key=lambda load: load.offered_per_s) for k, v in lines.items()}


def _above(load: Load) -> float:
    """The interval's reach above the achieved rate (0 where there is none: one trial)."""
    a = load.achieved
    return max(a.high - a.estimate, 0.0) if math.isfinite(a.high) else 0.0


def _below(load: Load) -> float:
    a = load.achieved
    return max(a.estimate - a.low, 0.0) if math.isfinite(a.low) else 0.0


def _target_words(targets: dict[str, float]) -> str:
    """p99 <= 2 ms and max <= 50 ms"""
    names = {"p999": "p99.9"}
    return " and ".join(f"response {names.get(k, k)} <= {format_seconds(v)}" for k, v in targets.items())


def _judged_words(j: Judged) -> str:
    """the trials' p99 1.7 ms [1.5 ms, 1.9 ms] (the median of the trials' percentiles, with its interval)"""
    names = {"p999": "p99.9"}
    return "the trials' " + ", ".join(
        f"{names.get(k, k)} {estimate_text(e, lambda v: format_seconds(v) if v is not None else '-')}"
        for k, e in j.by_target.items())


def answer_label(test: str, op: str, a: SloAnswer) -> str:
    """A search for people: "knee read random 4 KiB Q8T1: response p99 <= 1 ms"."""
    access, gran, _stride, depth, threads, mix, _fill = a.shape
    shape = " ".join(v for v in (op_label(op, mix), access, format_size(gran), in_flight_label(depth, threads)
                                 or "Q1T1") if v)
    return f"{test} {shape}: {_target_words(a.targets)}"


def answer_line(e: PatternResult, a: SloAnswer) -> str:
    """A search's answer in one sentence: the highest rate that met the target and the lowest that did not."""
    met, missed = a.met, a.missed
    head = answer_label(e.name, e.op, a)
    searched = f"{len(a.searched)} rate{'s' if len(a.searched) != 1 else ''} searched"
    if met is None and missed is not None:
        return (f"{head} was not met even at {format_per_s_short(missed.rate_per_s)}, the lowest rate searched "
                f"({_judged_words(missed)}); {searched}")
    if met is None:
        return f"{head}: no rate was measured"
    if missed is None:
        return (f"{head} held up to {format_per_s_short(met.rate_per_s)} ({_judged_words(met)}), the highest rate "
                f"searched (slo.highest {format_per_s_short(a.highest_allowed_per_s)}); {searched}")
    return (f"{head} held up to {format_per_s_short(met.rate_per_s)} ({_judged_words(met)}), not at "
            f"{format_per_s_short(missed.rate_per_s)} ({_judged_words(missed)}); {searched}")


def answer_lines(e: PatternResult) -> list[str]:
    """Each search's answer for the terminal; one that met the target at no rate is the run's warning instead."""
    return [answer_line(e, a) for a in e.slo if a.met is not None or a.missed is None]


def answer_section(entries: list[PatternResult]) -> str:
    lines = [answer_line(e, a) for e in entries for a in e.slo]
    if not lines:
        return ""
    return ("<h3>The most it carries within the target</h3><p class=\"muted\">The rate was searched: from the lowest, "
            "doubled while the target was met, then the gap between the highest met and the lowest missed halved "
            "until they were 1/16 of an octave apart. A rate met the target where, for each percentile, the upper "
            "end of the interval of the median of the trials' percentiles was under it (the load table's percentiles "
            "are of every trial's requests together).</p>"
            + "".join(f"<p>{esc(line)}.</p>" for line in lines))


def _bracket(a: SloAnswer) -> str:
    """held up to 38k/s (not 40k/s)"""
    met, missed = a.met, a.missed
    if met is None:
        return "met at no rate" + (f" (not {format_per_s_short(missed.rate_per_s)})" if missed is not None else "")
    return (f"held up to {format_per_s_short(met.rate_per_s)}"
            + (f" (not {format_per_s_short(missed.rate_per_s)})" if missed is not None else " (every rate searched)"))


def _ratio(p: TargetPair) -> str:
    low, high = p.low, p.high
    if low is None and high is None:
        return "no bound"
    if low is None:
        return f"below {high:.3g}"
    if high is None:
        return f"at least {low:.3g}"
    return f"between {low:.3g} and {high:.3g}"


def compare_lines(pairs: list[TargetPair], a: str, b: str) -> list[str]:
    """Each search both sides ran: each side's bracket and B / A of the most it carries within the target."""
    out = []
    for p in pairs:
        access, gran, _stride, depth, threads, mix, _fill = p.a.shape
        shape = " ".join(v for v in (op_label(p.op, mix), access, format_size(gran),
                                     in_flight_label(depth, threads) or "Q1T1") if v)
        out.append(f"{p.test} {shape}, {_target_words(p.a.targets)} (each side's first run): {a} {_bracket(p.a)}, "
                   f"{b} {_bracket(p.b)}; {b} / {a} of the most carried {_ratio(p)}: {p.verdict}")
    return out


def compare_section(pairs: list[TargetPair], label_a: str, label_b: str) -> str:
    if not pairs:
        return ""
    return ("<h2>The most each side carries within a target</h2><p>Each search's answer is a bracket: the highest "
            "rate that met the target and the lowest that did not; B / A of the most carried lies between B's highest "
            f"met over A's lowest missed and B's lowest missed over A's highest met. A: {esc(label_a)}; B: "
            f"{esc(label_b)}.</p>" + "".join(f"<p>{esc(line)}.</p>" for line in compare_lines(pairs, "A", "B")))
