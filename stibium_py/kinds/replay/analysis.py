"""A replay test's analysis: its summary (result.py), its warnings and its points: the replay's calls per second
(the trace's calls over its elapsed time) and, for each kind of call, its calls per second of time in calls (the
inverse of its mean latency), which compare, a series and a history set side by side."""

from __future__ import annotations

from typing import Any, Callable

from ...analysis.rates import PointKey, PointRule, median_rate
from ...analysis.summary import Pending, SummaryContext
from ...rundir.table import Table
from ...units import format_per_s, format_seconds
from .result import replay_result


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    result = replay_result(name, rows, ctx.s.resamples, ctx.s.seed, ctx.s.confidence)
    return lambda: [result] if result is not None else []


def add_warnings(e: Any, add: Callable[..., None]) -> None:
    label = f"{e.name} (replay)"
    if e.mismatched:
        first = f"; the first is call {e.first_mismatch} of the trace" if e.first_mismatch is not None else ""
        calls = f"{e.mismatched:,} call{'s' if e.mismatched != 1 else ''} over {e.n} trial{'s' if e.n != 1 else ''}"
        add("warning", label, f"{calls} came out otherwise than recorded (failed "
            f"where the program's succeeded, or the other way round){first}: the replay did not do all the program "
            f"did", "the program met files this replay could not make as they were (a trace cut short, or files "
            "outside the recorded folder); record again with --folder set to the folder it works in")
    if e.timing == "as-recorded" and e.late_calls and e.late_max_s is not None:
        add("info", label, f"up to {e.late_calls:,} calls a trial were issued after their recorded time (the latest "
            f"{format_seconds(e.late_max_s)} late): the calls before them on their thread took longer here than "
            f"when the program was recorded", "that is this target being slower than the recording's; timing: "
            "as-fast measures how fast it can go")


def _key(test: str, op: str, access: str, gran: int, stride: int, depth: int, threads: int, *_: Any) -> PointKey:
    return PointKey(test, op, "replay", access, 0, 0, 1, int(threads))


# the whole replay (access empty): the trace's calls per second of its elapsed time; a kind of call: its calls per
# second of its own time in calls
POINTS = PointRule(_key, "requests", median_rate, "median calls per second",
                   op_rank=lambda op: op, rate_format=lambda op: lambda v: format_per_s(v, "calls"),
                   unit=lambda op: "calls", flight=lambda depth, threads: f"T{threads}" if threads > 1 else "")

