"""What a plan says of a toy test."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stibium_py.plan.model import Size, TestBase


class ToyTest(TestBase):
    """Files of one size written, then read back uncached."""

    kind: Literal["toy"] = Field(description="toy: files of one size written, then read back")
    size: Size = Field(description="the size of each file, such as 64KiB")
    repeats: int = Field(3, ge=1, le=100, description="files written and read")
