"""A pattern test: requests of one granularity and access in a span of a laid-out file, a point per access,
granularity, stride, requests in flight and read share, its rate the median throughput over trials (or the
steady window of its rounds), fio beside it where the plan asks."""

from __future__ import annotations

from ...registry import KindSpec, Later
from .model import PatternTest

SPEC = KindSpec(
    name="pattern", home=__name__, model=PatternTest, expand=Later(f"{__name__}.expand", "expand_test"), spanned=True,
    order=Later(f"{__name__}.order", "ORDER"), plan_note=None,
    summarise=Later(f"{__name__}.analysis", "summarise"), points=Later(f"{__name__}.analysis", "POINTS"),
    warnings=Later(f"{__name__}.analysis", "add_warnings"), view=Later(f"{__name__}.view", "VIEW"),
    overlay=Later(f"{__name__}.view", "overlay"))
