"""What a plan says of a files test: its pydantic model, every key described (docs/plan-format.md is made from it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...plan.model import Sizes, TestBase, not_shared


class FilesTest(TestBase):
    """Whole-file writes of many sizes, then reads of the same files."""

    kind: Literal["files"] = Field(description="files: whole-file writes, then reads")
    sizes: Sizes = Field(description="file sizes: a list such as [10KB, 1MB] or {from, to, count|factor}")
    repeats: int = Field(1, ge=1, le=100000, description="files written per size")
    write_order: Literal["as-listed", "cycle", "random"] = Field(
        "random", description="as-listed (size by size) | cycle (all sizes, then again) | random")
    read_order: Literal["as-written", "random", "directory"] = Field(
        "random", description="as-written | random | directory (file-name order)")
    between: Literal["none", "evict", "drop-caches", "reboot"] = Field(
        "evict", description="what happens between the writes and the reads")

    _own_files = model_validator(mode="after")(lambda self: not_shared(self, "files"))
