"""A sustained test: one long stream of writes (then reads) measured chunk by chunk, the stretches of its
rate found along the bytes written; a curve, not points (compare matches its stretches: compare_sustained)."""

from __future__ import annotations

from ...registry import KindSpec, Later
from .model import SustainedTest

SPEC = KindSpec(
    name="sustained", home=__name__, model=SustainedTest, expand=Later(f"{__name__}.expand", "expand_test"), spanned=False,
    order=Later(f"{__name__}.order", "ORDER"), plan_note=Later(f"{__name__}.view", "plan_note"),
    summarise=Later(f"{__name__}.analysis", "summarise"), points=None,
    warnings=Later(f"{__name__}.analysis", "add_warnings"), view=Later(f"{__name__}.view", "VIEW"),
    overlay=None)
