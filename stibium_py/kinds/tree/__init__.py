"""A tree test: a tree of many small files made, stat'ed, listed, read, copied, renamed and deleted phase by
phase, each phase at each thread count a point of files per second."""

from __future__ import annotations

from ...registry import KindSpec, Later
from .model import TreeTest

SPEC = KindSpec(
    name="tree", home=__name__, model=TreeTest, expand=Later(f"{__name__}.expand", "expand_test"), spanned=False,
    order=Later(f"{__name__}.order", "ORDER"), plan_note=Later(f"{__name__}.view", "plan_note"),
    summarise=Later(f"{__name__}.analysis", "summarise"), points=Later(f"{__name__}.analysis", "POINTS"),
    warnings=Later(f"{__name__}.analysis", "add_warnings"), view=Later(f"{__name__}.view", "VIEW"),
    overlay=Later(f"{__name__}.view", "overlay"))
