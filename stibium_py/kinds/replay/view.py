"""How a replay test is drawn: its row of the summary table, its terminal lines, its section of the page (the
replay's elapsed time and time in calls with their intervals, a table by kind of call, the time by kind), its figure
on the compare page and what `plan show` says of it. Draws only: every number comes from ReplayResult."""

from __future__ import annotations

import math
from typing import Any

from ...analysis.comparison import Drawn, PointRatio, TwoRuns
from ...analysis.estimate import estimate_text, ratio_text
from ...report import plot
from ...report.build import KindView
from ...report.compare_page import COLORS
from ...report.figures import layout
from ...report.page import esc, figure, table
from ...report.terminal import Column, fitted_table, with_caption
from ...units import format_bytes, format_per_s, format_seconds
from .compare import ReplayPair, TimeRatio
from .result import ReplayResult

TIMINGS = {"as-fast": "each thread's next call as soon as its last returned (the program's time between calls "
                      "left out: the disk's part alone)",
           "as-fast-think": "each thread waiting the recorded time between its calls, as the program did",
           "as-recorded": "each call at its recorded time after the replay's start (a call whose thread was behind "
                          "went at once, counted late)"}


def headline(e: ReplayResult, compact: bool) -> tuple[str, str, str]:
    """The replay's elapsed time and its share in calls."""
    elapsed = estimate_text(e.elapsed_s, format_seconds, compact=compact)
    share = e.in_calls_s.estimate / (e.elapsed_s.estimate * e.threads * e.clients) if e.elapsed_s.estimate > 0 \
        else math.nan
    in_calls = f"{share:.0%} in calls" if math.isfinite(share) else "-"
    if compact:
        return "replay", elapsed, in_calls
    return f"{e.name} replay", f"{elapsed} elapsed", in_calls


def _summary(e: ReplayResult) -> str:
    spaced = [f"waiting on the recorded gaps {format_seconds(e.think_s)}"] if e.think_s > 0 else []
    if e.waited_s > 0:
        spaced.append(f"on other threads' calls {format_seconds(e.waited_s)}")
    late = (f"; {e.late_calls:,} calls issued late (the latest by {format_seconds(e.late_max_s)})"
            if e.late_calls and e.late_max_s is not None else "")
    threads = f"{e.threads} thread{'s' if e.threads > 1 else ''}"
    who = (f"{e.calls:,} calls by {e.clients} clients together ({e.calls // e.clients:,} each, on {threads} each; a "
           f"trial's elapsed time the slowest client's)" if e.clients > 1 else f"{e.calls:,} calls on {threads}")
    groups = ", ".join(f"{name} {share:.0%}" for name, share in e.by_group)
    return (f"{e.name}: {who} ({e.timing}) in "
            f"{estimate_text(e.elapsed_s, format_seconds)} over {e.n} trial{'s' if e.n > 1 else ''}; in calls "
            f"{estimate_text(e.in_calls_s, format_seconds)} ({groups})" + (f"; {', '.join(spaced)}" if spaced else "")
            + late)


def _row(e: ReplayResult, k: Any, full: bool) -> list[str]:
    lat = k.latency_s
    return [e.name, k.call, f"{k.count:,}", format_bytes(k.bytes) if k.bytes else "",
            estimate_text(k.in_calls_s, format_seconds, compact=not full), f"{k.share:.0%}",
            *(format_seconds(lat.get(q)) if lat.get(q) is not None else "-" for q in ("lat_p50_s", "lat_p99_s",
                                                                                       "lat_max_s"))]


def lines(results: list[ReplayResult], width: int) -> list[Any]:
    """Per replay test: what it replayed in how long, then a table a kind of call (the most time first)."""
    out: list[Any] = []
    for e in results:
        out.append(_summary(e))
        columns = [Column("test", shortened=True), Column("call"), Column("calls a trial", justify="right"),
                   Column("bytes", justify="right", drop=2), Column("in calls (95% interval)", justify="right"),
                   Column("share", justify="right"), Column("p50", justify="right"),
                   Column("p99", justify="right", drop=1), Column("max", justify="right", drop=3)]
        variants = [[_row(e, k, full) for k in e.kinds] for full in (True, False)]
        shown, dropped, _ = fitted_table(f"{e.name}: the calls by kind, time in calls a trial (median over trials)",
                                         columns, variants, width)
        out.append(with_caption(shown, dropped))
        if e.slowest:
            out.append(f"{e.name}: the slowest calls (index in the trace): " + ", ".join(
                f"{k} ({format_seconds(s)})" for k, s in e.slowest[:5]))
    return out


def _figure(e: ReplayResult) -> plot.Figure:
    """The time in calls by kind a trial (median, its interval)."""
    fig = plot.Figure()
    ys = [k.in_calls_s.estimate for k in e.kinds]
    fig.add_trace(plot.Bar(
        x=[k.call for k in e.kinds], y=ys, name="time in calls",
        error_y={"type": "data", "symmetric": False,
                 "array": [max(k.in_calls_s.high - y, 0.0) if math.isfinite(k.in_calls_s.high) else 0.0
                           for k, y in zip(e.kinds, ys)],
                 "arrayminus": [max(y - k.in_calls_s.low, 0.0) if math.isfinite(k.in_calls_s.low) else 0.0
                                for k, y in zip(e.kinds, ys)]}))
    return layout(fig, f"{e.name}: time in calls a trial by kind of call (median over trials, its interval)",
                  "kind of call", "seconds")


def section(results: list[ReplayResult], n: int) -> tuple[list[str], int]:
    sections = []
    header = ["call", "calls a trial", "bytes a trial", "in calls a trial (95% interval)", "share", "p50", "p99",
              "max", "outcome differed"]
    for e in results:
        rows = [[*_row(e, k, True)[1:], f"{k.mismatched:,}" if k.mismatched else ""] for k in e.kinds]
        slow = ("<p>The slowest calls (their index in the trace's calls, the longest of any trial): "
                + esc(", ".join(f"{k} ({format_seconds(s)})" for k, s in e.slowest)) + ".</p>") if e.slowest else ""
        sections.append(f"<h2>{esc(e.name)}: a recorded program replayed</h2><p>{esc(_summary(e))}.</p>"
                        f"<p>Timing: {esc(e.timing)}, {esc(TIMINGS.get(e.timing, ''))}. Before each trial the "
                        f"files the program met were laid out ({esc(format_bytes(e.layout_bytes))}), untimed. The "
                        f"calls are the program's own, buffered, as it made them.</p>"
                        + table(header, rows) + slow + figure(_figure(e), f"fig{n}"))
        n += 1
    return sections, n


def overlay(result: TwoRuns, drawn: Drawn, first: PointRatio) -> plot.Figure:
    """A replay test's points (the whole replay, each kind of call): calls per second, both runs."""
    fig = plot.Figure()
    test = first.key.test
    points = [p for p in result.points if p.key.test == test]
    labels = [p.key.access or "replay" for p in points]
    for side, name in zip(("a", "b"), drawn.labels):
        fig.add_trace(plot.Bar(x=labels, y=[getattr(p, f"rate_{side}_bytes_per_s") for p in points],
                               name=f"{side.upper()}: {esc(name)}", marker={"color": COLORS[side]}))
    return layout(fig, f"{test}: calls per second, the replay (of its elapsed time) and each kind of call (of its "
                  f"time in calls), both runs", "", "calls/s", log_y=True)


def plan_note(test: Any) -> str:
    replaying = test.replay
    script = replaying.script
    left = (f"; {script.left_out:,} mapped-file calls left out (a mapping's reads and writes are page faults, which "
            f"no call shows)" if script.left_out else "")
    laid = (f"{script.layout_files:,} file{'s' if script.layout_files != 1 else ''} "
            f"({format_bytes(script.layout_bytes)}) laid out before each of {len(test.ops)} trial"
            f"{'s' if len(test.ops) != 1 else ''}{', their pages dropped' if test.between == 'evict' else ''}"
            if script.layout_files else f"no file of the folder there before the program ran, none laid out before "
            f"its {len(test.ops)} trial{'s' if len(test.ops) != 1 else ''}")
    return (f"  {test.name}: the trace {replaying.trace}: {script.calls:,} calls on {script.threads} thread"
            f"{'s' if script.threads > 1 else ''} ({', '.join(script.kinds)}){left}; {laid}; timing "
            f"{replaying.timing}.")


def _time(r: TimeRatio) -> str:
    return f"{r.what} {ratio_text(r.ratio, 'x')}, {r.verdict}"


def _first_runs(p: ReplayPair) -> str:
    return " (each side's first run)" if p.runs_a > 1 or p.runs_b > 1 else ""


def compare_lines(pairs: list[ReplayPair], a: str, b: str) -> list[str]:
    """Each replay both sides ran, in time (above 1: B took longer): its elapsed time B / A, then each kind of call's
    time in calls, the one that moved most first (a, b: the sides' names)."""
    out = []
    for p in pairs:
        e = p.elapsed
        out.append(f"{p.test}, replay{_first_runs(p)}, {b} / {a} in time (above 1: {b} took longer; the calls per "
                   f"second above are its inverse): {_time(e)} ({b} {format_seconds(e.b.estimate)}, {a} "
                   f"{format_seconds(e.a.estimate)})")
        if p.kinds:
            out.append(f"  time in calls by kind, {b} / {a}, the most moved first: "
                       + "; ".join(_time(k) for k in p.kinds))
    return out


def compare_section(pairs: list[ReplayPair], label_a: str, label_b: str) -> str:
    """Each replay both sides ran: a table of its times, A's, B's and B / A."""
    out = []
    for p in pairs:
        rows = [[r.what, estimate_text(r.a, format_seconds), estimate_text(r.b, format_seconds),
                 ratio_text(r.ratio, "x"), r.verdict] for r in (p.elapsed, *p.kinds)]
        out.append(f"<h2>{esc(p.test)}: the replay in time{esc(_first_runs(p))}</h2><p>B / A of the replay's elapsed "
                   f"time and of each kind of call's time in calls (a trial's, the median over trials): above 1, "
                   f"{esc(label_b)} took longer. The calls per second above are their inverse.</p>"
                   + table(["time", f"A: {label_a}", f"B: {label_b}", "B / A (95% interval)", "verdict"], rows))
    return "".join(out)


VIEW = KindView(headline, lambda e: ["0", "0", "0", "0"], lambda e: "-", section, lines, compare_lines,
                compare_section)
