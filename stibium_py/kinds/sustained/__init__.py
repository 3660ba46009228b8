"""A sustained test: one long stream of writes (then reads) measured chunk by chunk, the stretches of its
rate found along the bytes written; a curve, not points (compare matches its stretches: compare_sustained)."""

from __future__ import annotations

from ...registry import KindSpec
from ...report.build import KindView
from ...run.orders import Order
from ...units import format_bytes
from . import analysis, view
from .expand import expand_test
from .model import SustainedTest
from .order import order

SPEC = KindSpec(
    name="sustained", home=__name__, model=SustainedTest, expand=expand_test, spanned=False,
    # its files can fill most of the disk: they never wait for the end of the run
    order=Order(order, files_wait_for_end=False, wears_drive=True),
    plan_note=view.plan_note, summarise=analysis.summarise, points=None, warnings=analysis.add_warnings,
    view=KindView(view.headline, lambda e: ["0", "0", "0", "0"], view.drift, view.sections,
                  lambda e: [f"{e.name} ({e.op}s, {format_bytes(e.result.bytes_written)}): {e.result.headline}"]),
    overlay=None)
