"""A tree test: a tree of many small files made, stat'ed, listed, read, copied, renamed and deleted phase by
phase, each phase at each thread count a point of files per second."""

from __future__ import annotations

from ...registry import KindSpec
from ...report import tree as tree_view
from ...report.build import KindView
from ...run.orders import Order
from . import analysis, view
from .expand import expand_test
from .model import TreeTest
from .order import order

SPEC = KindSpec(
    name="tree", home=__name__, model=TreeTest, expand=expand_test, spanned=False,
    # each tree is removed when its phases are done (its files are many inodes, whatever their bytes)
    order=Order(order, files_wait_for_end=False, wears_drive=False),
    plan_note=view.plan_note, summarise=analysis.summarise, points=analysis.POINTS, warnings=analysis.add_warnings,
    view=KindView(tree_view.headline, lambda e: ["0", "0", "0", "0"], lambda e: "-", tree_view.section,
                  tree_view.lines),
    overlay=view.overlay)
