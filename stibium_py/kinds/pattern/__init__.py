"""A pattern test: requests of one granularity and access in a span of a laid-out file, a point per access,
granularity, stride, requests in flight and read share, its rate the median throughput over trials (or the
steady window of its rounds), fio beside it where the plan asks."""

from __future__ import annotations

from ...registry import KindSpec
from ...report import bench, mix, steady
from ...report.build import KindView
from ...run.orders import Order
from . import analysis, view
from .expand import expand_test
from .model import PatternTest
from .order import order

SPEC = KindSpec(
    name="pattern", home=__name__, model=PatternTest, expand=expand_test, spanned=True,
    order=Order(order, files_wait_for_end=True, wears_drive=False),
    plan_note=None, summarise=analysis.summarise, points=analysis.POINTS, warnings=analysis.add_warnings,
    view=KindView(view.headline, lambda e: ["0", "0", str(len(e.below_cache)), "0"], lambda e: "-", view.sections,
                  lambda e: steady.terminal_lines(e) + mix.terminal_lines(e) + bench.terminal_lines(e)),
    overlay=view.overlay)
