"""A stream test: streams of video frames at a frame rate, each frame an uncached write (capture) or read (playback)
issued at its time and no earlier, counted on time, late or dropped against a player's buffer: how many streams of a
format this disk or store sustains (docs/methods.md, "Streams and deadlines"). Its counts compare side by side
(compare.py) and a series sets each run's beside the others (series.py)."""

from __future__ import annotations

from dataclasses import replace

from ...registry import Later, folder_spec
from .model import StreamTest

# its notices are in words.py with its sentence, beside the analysis that makes its results
SPEC = replace(folder_spec(__name__, model=StreamTest, spanned=False, plan_note=True, points=False,
                           aggregated=False, compare=True, series=True),
               warnings=Later(f"{__name__}.words", "add_warnings"))
