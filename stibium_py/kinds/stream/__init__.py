"""A stream test: streams of video frames at a frame rate, each frame an uncached write (capture) or read (playback)
issued at its time and no earlier, counted on time, late or dropped against a player's buffer: how many streams of a
format this disk or store sustains (docs/methods.md, "Streams and deadlines"). Its counts compare side by side
(compare.py) and a series sets each run's beside the others (series.py)."""

from __future__ import annotations

from ...registry import folder_spec
from .model import StreamTest

SPEC = folder_spec(__name__, model=StreamTest, spanned=False, plan_note=True, points=False,
                   aggregated=False, compare=True, series=True)
