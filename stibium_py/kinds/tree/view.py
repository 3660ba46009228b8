"""How a tree test is drawn beyond report/tree.py: its figure on the compare page and what `plan show` says of it.
Draws only."""

from __future__ import annotations

from typing import Any

from ...analysis.comparison import Drawn, PointRatio, TwoRuns
from ...report import plot
from . import figures as tree_view
from ...report.build import KindView
from ...report.compare_page import COLORS
from ...report.figures import layout
from ...report.page import esc
from .shape import rate_unit
from ...units import format_size


def overlay(result: TwoRuns, drawn: Drawn, first: PointRatio) -> plot.Figure:
    """A tree test's phase: its rate at each thread count, both runs."""
    fig = plot.Figure()
    test, op = first.key.test, first.key.op
    points = sorted((p for p in result.points if (p.key.test, p.key.op) == (test, op)), key=lambda p: p.key.threads)
    for side, name in zip(("a", "b"), drawn.labels):
        fig.add_trace(plot.Scatter(x=[p.key.threads for p in points],
                                   y=[getattr(p, f"rate_{side}_bytes_per_s") for p in points], mode="lines+markers",
                                   name=f"{side.upper()}: {esc(name)}", line={"color": COLORS[side]}))
    what = rate_unit(op)
    return layout(fig, f"{test} {op}: {what} per second against threads, both runs", "threads", f"{what}/s")


def plan_note(test: Any) -> str:
    """A tree test's tree and phases in words."""
    shape = test.tree
    sizes = (format_size(shape.choices[0]) if len(shape.choices) == 1 else
             "drawn from " + ", ".join(format_size(c) for c in shape.choices) if shape.choices else
             f"log-uniform from {format_size(shape.low_bytes)} to {format_size(shape.high_bytes)}")
    first = [o for o in test.ops if o.file == test.ops[0].file]
    phases = ", ".join(o.op + (f" (sync {o.sync})" if o.op == "create" else "") for o in first)
    threads = sorted({o.threads for o in test.ops})
    warm = ("the kernel's caches are dropped before each phase after create (root)" if test.between == "drop-caches"
            else "each phase after create meets the folders and inodes the one before left in memory (metadata "
                 "warm; the read phase evicts each file's data first)")
    return (f"  {test.name}: a tree of {shape.files:,} files ({sizes}; {format_size(shape.total_bytes)} in all) in "
            f"{shape.dirs:,} folder{'s' if shape.dirs > 1 else ''} {shape.depth} deep (fan-out {shape.fan_out}), "
            f"names of {shape.name_bytes} bytes; phases {phases}; a tree of its own for every trial at "
            f"{' and '.join(map(str, threads))} thread{'s' if threads != [1] else ''}; {warm}.")


VIEW = KindView(tree_view.headline, lambda e: ["0", "0", "0", "0"], lambda e: "-", tree_view.section, tree_view.lines)
