"""A tree test: a tree of many small files made, stat'ed, listed, read, copied, renamed and deleted phase by
phase, each phase at each thread count a point of files per second."""

from __future__ import annotations

from ...registry import folder_spec
from .model import TreeTest

SPEC = folder_spec(__name__, model=TreeTest, spanned=False, plan_note=True, points=True, aggregated=True, refusal=True)
