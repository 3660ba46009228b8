"""What a plan says of a stream test: its pydantic model, every key described (docs/plan-format.md is made from
it)."""

from __future__ import annotations

from typing import Literal, Union

from pydantic import Field, StrictFloat, StrictInt, model_validator

from ...plan.model import Seconds, Size, TestBase, not_shared
from . import formats

MAX_STREAMS = 32


class StreamTest(TestBase):
    """Streams of frames at a frame rate, each frame issued at its time: how many streams play or record."""

    kind: Literal["stream"] = Field(description="stream: video streams of frames with deadlines, a row per frame")
    format: str | None = Field(None, description=f"a format of the built-in table ({formats.listed()}); or give "
                                                 f"frame_bytes and fps")
    frame_bytes: Size | None = Field(None, description="bytes a frame, such as 3.7MB (with fps, instead of format)")
    fps: Union[StrictInt, StrictFloat, str, None] = Field(
        None, description="frames a second, such as 24, 29.97 or 30000/1001 (with frame_bytes, instead of format)")
    streams: Union[StrictInt, list[StrictInt]] = Field(
        [1, 2, 4], description=f"how many streams at once, a count or a list of counts, each 1 to {MAX_STREAMS}")
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

    _own_files = model_validator(mode="after")(lambda self: not_shared(self, "stream"))

    @model_validator(mode="after")
    def _what_frames(self) -> "StreamTest":
        custom = self.frame_bytes is not None or self.fps is not None
        if (self.format is None) == (not custom):
            raise ValueError("give format, or frame_bytes and fps")
        if custom and (self.frame_bytes is None or self.fps is None):
            raise ValueError("give both frame_bytes and fps")
        if self.format is not None and self.format not in formats.FORMATS:
            raise ValueError(f"format {self.format!r} is not in the table; the formats are {formats.listed()}, or "
                             f"give frame_bytes and fps")
        if self.seconds is not None and self.frames is not None:
            raise ValueError("give seconds or frames, not both")
        if not self.ops or len(set(self.ops)) < len(self.ops):
            raise ValueError("ops: give capture, playback or both, each once")
        return self
