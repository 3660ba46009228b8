"""A files test: whole files of several sizes written and read, each a measurement, the rate the Theil-Sen
slope of seconds against size (docs/methods.md)."""

from __future__ import annotations

from ...registry import KindSpec, Later
from .model import FilesTest

SPEC = KindSpec(
    name="files", home=__name__, model=FilesTest, expand=Later(f"{__name__}.expand", "expand_test"), spanned=False,
    order=Later(f"{__name__}.order", "ORDER"), plan_note=None,
    summarise=Later(f"{__name__}.analysis", "summarise"), points=Later(f"{__name__}.analysis", "POINTS"),
    warnings=Later(f"{__name__}.analysis", "add_warnings"), view=Later(f"{__name__}.view", "VIEW"),
    overlay=Later(f"{__name__}.view", "overlay"))
