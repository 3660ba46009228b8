"""What a plan says of a verify test: its pydantic model, every key described (docs/plan-format.md is made from it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...plan.model import Size, TestBase, bytes_or_share, not_shared


class VerifyTest(TestBase):
    """Fills the target with files whose every block is signed, empties the page cache, and reads every block back:
    whether the drive keeps what it is given, and its rates along the fill (`stibium verify` as a plan's test)."""

    kind: Literal["verify"] = Field(description="verify: every block signed, written, read back and checked")
    bytes: Size | None = Field(None, description="bytes to fill, such as 64GB, rounded down to whole 64 KiB (give "
                               "bytes or fraction_of_free)")
    fraction_of_free: float | None = Field(
        None, gt=0, le=0.98, description="or this part of the target's free space when the run starts, such as 0.95, "
        "and at most what leaves 5 % of the fill and 64 MB free (the file system's room to work)")
    max_bytes: Size | None = Field(None, description="with fraction_of_free: fill at most this much, such as 500GB")
    file_size: Size = Field("1GiB", description="the fill goes into files of this size (whole chunks, at least one), "
                            "one after another, the last one the rest (a run cut short writes at most one file again)")
    chunk: Size = Field("4MiB", description="bytes per request, and a row of the rate curves after every this many; "
                        "64 KiB to 64 MiB, whole blocks of the file system")

    _how_much = model_validator(mode="after")(bytes_or_share)
    _own_files = model_validator(mode="after")(lambda self: not_shared(self, "verify"))

    @model_validator(mode="after")
    def _its_own_way(self) -> "VerifyTest":
        given = [k for k in ("engine", "fill", "sync") if getattr(self, k) is not None]
        if given:
            raise ValueError(f"a verify writes signed blocks uncached and ends each file with a full sync: "
                             f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} not its to choose; leave "
                             f"{'it' if len(given) == 1 else 'them'} out")
        return self
