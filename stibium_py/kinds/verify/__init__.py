"""A verify test: the fill of a plan's `bytes` (or a share of the free space) written as files whose every block
carries a signature, the page cache emptied, every block read back uncached and checked: whether the drive keeps what
it is given (a fake capacity, corrupted or unreadable blocks), with the rate of every chunk along the fill. The plan's
form of `stibium verify` (docs/methods.md, "Does this drive keep what it is given?")."""

from __future__ import annotations

from ...registry import folder_spec
from .model import VerifyTest

SPEC = folder_spec(__name__, model=VerifyTest, spanned=False, plan_note=True, points=False, aggregated=False)
