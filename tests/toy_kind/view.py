"""How a toy test is drawn: a line of the summary table, a section of the page, its figure on the compare page
and what `plan show` says of it."""

from __future__ import annotations

from typing import Any

from stibium_py.analysis.comparison import Drawn, PointRatio, TwoRuns
from stibium_py.report import plot
from stibium_py.report.figures import layout
from stibium_py.report.page import esc, table
from stibium_py.units import format_rate, format_size


def headline(e: Any, compact: bool) -> tuple[str, str, str]:
    return (f"{e.op} of toy files", format_rate(e.rate.estimate), "-")


def sections(results: list[Any], n: int) -> tuple[list[str], int]:
    if not results:
        return [], n
    rows = [[e.name, e.op, str(e.n), format_rate(e.rate.estimate)] for e in results]
    return ["<h2>Toy tests</h2>" + table(["test", "op", "files", "median rate"], rows)], n


def lines(results: list[Any], width: int) -> list[str]:
    return [f"{e.name} ({e.op}): toy files at {format_rate(e.rate.estimate)}" for e in results]


def overlay(result: TwoRuns, drawn: Drawn, first: PointRatio) -> plot.Figure:
    fig = plot.Figure()
    for side, name in zip(("a", "b"), drawn.labels):
        fig.add_trace(plot.Bar(x=[esc(name)], y=[getattr(first, f"rate_{side}_bytes_per_s")], name=side.upper()))
    return layout(fig, f"{first.key.test} {first.key.op}: toy files, both runs", "run", "bytes/s")


def plan_note(test: Any) -> str:
    return f"  {test.name}: {len(test.ops) // 2} toy files of {format_size(test.ops[0].size_bytes)}, written then read."
