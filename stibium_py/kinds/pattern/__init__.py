"""A pattern test: requests of one granularity and access in a span of a laid-out file, a point per access,
granularity, stride, requests in flight and read share, its rate the median throughput over trials (or the
steady window of its rounds), fio beside it where the plan asks."""

from __future__ import annotations

from ...registry import folder_spec
from .model import PatternTest

SPEC = folder_spec(__name__, model=PatternTest, spanned=True, plan_note=False, points=True, aggregated=True, below=True, rated=True,
                  compare=True, history=True)
