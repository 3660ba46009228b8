"""A files test: whole files of several sizes written and read, each a measurement, the rate the Theil-Sen
slope of seconds against size (docs/methods.md)."""

from __future__ import annotations

from ...registry import KindSpec
from ...report.build import KindView
from ...run.orders import Order
from . import analysis, view
from .expand import expand_test
from .model import FilesTest
from .order import order

SPEC = KindSpec(
    name="files", home=__name__, model=FilesTest, expand=expand_test, spanned=False,
    order=Order(order, files_wait_for_end=True, wears_drive=False),
    plan_note=None, summarise=analysis.summarise, points=analysis.POINTS, warnings=analysis.add_warnings,
    view=KindView(view.headline,
                  lambda e: [str(len(e.outliers)), str(len(e.cache_suspects)), str(len(e.below_cache)),
                             str(len(e.fast_outliers))],
                  view.drift, view.sections, lambda e: []),
    overlay=view.overlay)
