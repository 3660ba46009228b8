"""A files test: whole files of several sizes written and read, each a measurement, the rate the Theil-Sen
slope of seconds against size (docs/methods.md)."""

from __future__ import annotations

from ...registry import folder_spec
from .model import FilesTest

SPEC = folder_spec(__name__, model=FilesTest, spanned=False, plan_note=False, points=True, aggregated=True, below=True)
