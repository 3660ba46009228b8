"""A stream test as operations (Op), in run order: for each stream count and trial, its streams' captures (each one
file written frame by frame), then their playbacks (each file read back, evicted first). The streams of a count run at
once (order.py); each is an operation of its own, a row per frame."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from ...rundir.op import Frames, Op
from ...plan.expand import ExpandedTest, check_count, counts_of, seconds_of, size_of
from ...plan.model import Where
from . import formats
from .model import MAX_STREAMS, StreamTest

# a frame's bytes are rounded up to whole 16 KiB, the kernel page of Apple Silicon: so every frame (one request at
# a page-aligned offset) is uncached on a Mac as on Linux (docs/platforms.md)
FRAME_ALIGN_BYTES = 16 * 1024
MIN_FRAMES = 2
DEFAULT_SECONDS = 10
OPS = {"capture": "write", "playback": "read"}
_RATE = re.compile(r"\d{1,6}(\.\d{1,6})?|\d{1,9}/0*[1-9]\d{0,8}")


def frame_rate(value: Any, where: Where) -> Fraction:
    """Frames a second as an exact ratio: video's decimal names (29.97, 23.976) are the NTSC ratios they stand
    for (30000/1001, 24000/1001), a text N/D is that ratio."""
    text = str(value).strip()
    # digits only, few of them: Fraction would build any number a text of exponents names (1e999999999)
    if not _RATE.fullmatch(text):
        raise where.error(f"frames a second such as 24, 29.97 or 30000/1001, not {value!r}")
    fps = formats.RATES.get(text) or (Fraction(*map(int, text.split("/"))) if "/" in text else Fraction(text))
    if not Fraction(1, 100) <= fps <= 1000:
        raise where.error(f"frames a second from 0.01 to 1000, not {value!r}")
    return fps


def frame_of(test: StreamTest, units: str, where: Where) -> tuple[int, Fraction]:
    """The test's frame: its bytes (rounded up to whole 16 KiB) and its rate."""
    if test.format is not None:
        f = formats.FORMATS[test.format]
        frame, fps = f.frame_bytes, f.fps
    else:
        assert test.frame_bytes is not None
        frame, fps = size_of(test.frame_bytes, units, where / "frame_bytes"), frame_rate(test.fps, where / "fps")
    if frame < 1:
        raise (where / "frame_bytes").error("a frame holds at least one byte")
    return -(-frame // FRAME_ALIGN_BYTES) * FRAME_ALIGN_BYTES, fps


def expand_test(test: StreamTest, where: Where, s: dict[str, Any], seq0: int,
                free_bytes: int | None) -> ExpandedTest:
    frame, fps = frame_of(test, s["units"], where)
    length = test.seconds if test.seconds is not None else DEFAULT_SECONDS
    frames = test.frames if test.frames is not None else round(seconds_of(length, where / "seconds") * fps)
    if frames < MIN_FRAMES:
        raise (where / "seconds").error(f"{length} holds {frames} frames at {float(fps):g} a second; give at "
                                        f"least {MIN_FRAMES}")
    search = isinstance(test.streams, str)        # "most": the search for the most streams without a drop
    # a search may ask for any count: each has its operations, and those the search does not ask for are skipped
    counts = list(range(1, MAX_STREAMS + 1)) if isinstance(test.streams, str) else \
        counts_of(test.streams, MAX_STREAMS, where / "streams")
    extension = formats.FORMATS[test.format].extension if test.format is not None else ""
    if test.layout is not None:
        extension = "" if test.layout == "movie" else extension or "frame"
    ops: list[Op] = []
    for n in counts:
        for t in range(test.trials):
            for name in test.ops:
                for i in range(n):
                    ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="stream", op=OPS[name],
                                  access="sequential", size_bytes=frames * frame, granularity_bytes=frame,
                                  stride_bytes=0, trial=t,
                                  file=f"{test.name}/{n}x-t{t}-s{i}" + ("" if extension else ".mov"),
                                  bytes=frames * frame, engine=s["engine"], fill=s["fill"],
                                  # a movie is synced once, after its last frame (outside every frame's time); a
                                  # sequence's frames are not synced one by one, as a render or a scan writes them
                                  sync=s["sync"] if name == "capture" and not extension else "none",
                                  seed=s["seed"], data_seed=s["seed"], existing=False, chunk_bytes=frame,
                                  frames=Frames(float(fps), n, i, test.buffer_frames, extension)))
    check_count(len(ops), where / "streams")
    return ExpandedTest(name=test.name, kind="stream", ops=ops, files_bytes=max(counts) * frames * frame,
                        search_most=search)
