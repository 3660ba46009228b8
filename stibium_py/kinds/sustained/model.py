"""What a plan says of a sustained test: its pydantic model, every key described (docs/plan-format.md is made from
it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt, model_validator

from ...plan.model import Size, TestBase, bytes_or_share, not_shared


class SustainedTest(TestBase):
    """Writes without a pause, one file after another, timed chunk by chunk: where the fast cache ends."""

    kind: Literal["sustained"] = Field(description="sustained: a long write without pauses, a row per chunk")
    bytes: Size | None = Field(None, description="bytes to write, such as 50GB (give bytes or fraction_of_free)")
    fraction_of_free: float | None = Field(
        None, gt=0, le=0.9, description="or this part of the target's free space when the run starts, such as 0.5, "
        "and at most what leaves 5 % of the bytes and 64 MB free (the file system's room to work)")
    max_bytes: Size | None = Field(None, description="with fraction_of_free: write at most this much, such as 100GB")
    file_size: Size = Field("2GiB", description="the bytes go into files of this size, one after another")
    granularity: Size = Field("1MiB", description="bytes per request, 4 KB to 2 GiB")
    chunk: Size = Field("256MiB", description="a row (rate, latency, temperature) after every this many bytes")
    queue_depth: StrictInt = Field(1, description="requests in flight per thread, 1 to 256")
    threads: StrictInt = Field(1, description="threads, each with its own part of every file's requests, 1 to 64")
    read_back: bool = Field(False, description="afterwards, read the files back the same way")

    _how_much = model_validator(mode="after")(bytes_or_share)
    _own_files = model_validator(mode="after")(lambda self: not_shared(self, "sustained"))
