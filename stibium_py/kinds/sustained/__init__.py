"""A sustained test: one long stream of writes (then reads) measured chunk by chunk, the stretches of its
rate found along the bytes written; a curve, not points (its compare matches the stretches: compare.py; a series
shows each run's: series.py; a history keeps its first and last stretch's rates: history.py)."""

from __future__ import annotations

from ...registry import folder_spec
from .model import SustainedTest

SPEC = folder_spec(__name__, model=SustainedTest, spanned=False, plan_note=True, points=False, aggregated=True,
                   compare=True, series=True, history=True)
