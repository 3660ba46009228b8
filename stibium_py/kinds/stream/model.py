"""What a plan says of a stream test: its pydantic model, every key described (docs/plan-format.md is made from
it)."""

from __future__ import annotations

import difflib
from typing import Literal, Union

from pydantic import Field, StrictFloat, StrictInt, field_validator, model_validator

from ...plan.model import Seconds, Size, TestBase, not_shared
from . import formats

MAX_STREAMS = 32


class StreamTest(TestBase):
    """Streams of frames at a frame rate, each frame issued at its time: how many streams play or record."""

    kind: Literal["stream"] = Field(description="stream: video streams of frames with deadlines, a row per frame")
    format: str | None = Field(None, description=f"a format of the built-in table ({formats.families()}); or give "
                                                 f"frame_bytes and fps")
    frame_bytes: Size | None = Field(None, description="bytes a frame, such as 3.7MB (with fps, instead of format)")
    fps: Union[StrictInt, StrictFloat, str, None] = Field(
        None, description="frames a second, such as 24, 29.97 or 30000/1001 (with frame_bytes, instead of format)")
    streams: Union[StrictInt, list[StrictInt], Literal["most"]] = Field(
        [1, 2, 4], description=f"how many streams at once, a count or a list of counts, each 1 to {MAX_STREAMS}; "
        f"or most: the most that run without a drop, found in each trial by search (1, 2, 4, ... until a count "
        f"drops, then halving the gap), up to {MAX_STREAMS}")
    seconds: Seconds | None = Field(None, description="how long each stream runs, such as 10 or 30s (default 10; or "
                                                      "give frames)")
    frames: StrictInt | None = Field(None, ge=2, le=10_000_000, description="or how many frames each stream moves")
    ops: list[Literal["capture", "playback"]] = Field(
        ["capture", "playback"], description="capture (each stream writes its file frame by frame) and playback "
                                             "(reads it back uncached)")
    layout: Literal["movie", "sequence"] | None = Field(
        None, description="movie: each stream one file, frame after frame (ProRes, DNxHR, H.264) | sequence: each "
        "frame a file of its own in the stream's folder (DPX, EXR, TIFF); default: the format's, else movie")
    buffer_frames: StrictInt = Field(2, ge=0, le=1000, description="frames the player or recorder holds: a frame "
                                     "done later than this many frame times after its own is dropped")
    trials: StrictInt = Field(3, ge=1, le=20, description="times each stream count runs")

    @field_validator("streams", mode="before")
    @classmethod
    def _count_or_most(cls, value: object) -> object:
        if isinstance(value, str) and value != "most":
            raise ValueError(f"streams: a count, a list of counts or most, not {value!r}")
        return value

    _own_files = model_validator(mode="after")(lambda self: not_shared(self, "stream"))

    @model_validator(mode="after")
    def _what_frames(self) -> "StreamTest":
        custom = self.frame_bytes is not None or self.fps is not None
        if (self.format is None) == (not custom):
            raise ValueError("give format, or frame_bytes and fps")
        if custom and (self.frame_bytes is None or self.fps is None):
            raise ValueError("give both frame_bytes and fps")
        if self.format is not None and self.format not in formats.FORMATS:
            near = difflib.get_close_matches(self.format, formats.FORMATS, n=3, cutoff=0.6)
            said = f"did you mean {' or '.join(near)}? " if near else ""
            raise ValueError(f"format {self.format!r} is not in the table; {said}the table holds "
                             f"{formats.families()}; or give frame_bytes and fps")
        if self.seconds is not None and self.frames is not None:
            raise ValueError("give seconds or frames, not both")
        if not self.ops or len(set(self.ops)) < len(self.ops):
            raise ValueError("ops: give capture, playback or both, each once")
        return self
