"""A kind that exists only for tests/test_toy_kind.py, to show that a kind is one folder: `kind: toy` writes
`repeats` files of one size and reads them back uncached, a point per op whose rate is the median throughput.
Nothing outside this folder names it; the test registers SPEC and takes it back."""

from __future__ import annotations

from stibium_py.registry import KindSpec
from stibium_py.report.build import KindView
from stibium_py.run.orders import Order

from . import analysis, view
from .expand import expand_test
from .model import ToyTest
from .order import order

SPEC = KindSpec(
    name="toy", home=__name__, model=ToyTest, expand=expand_test, spanned=False, aggregated=True,
    order=Order(order, files_wait_for_end=True, wears_drive=False, kept_when_cut=False),
    plan_note=view.plan_note, summarise=analysis.summarise, points=analysis.POINTS, warnings=analysis.add_warnings, below=None,
    view=KindView(view.headline, lambda e: ["0", "0", "0", "0"], lambda e: "-", view.sections, view.lines),
    overlay=view.overlay, compare=None, series=None, history=None, rated=None, refusal=None)
