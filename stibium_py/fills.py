"""What a write puts on the disk (a test's `fill`), as plans say it, as the run keeps it and as the helper is told.

A fill is one of: `random` (incompressible data from the seed), a byte repeated (`0x41`), or data of a stated
compressibility and share of repeated blocks (`{compressible: 50%, dedupe: 25%}`, fio's buffer_compress_percentage
and dedupe_percentage). The last is kept as one text, `compressible=50%,dedupe=25%` (the parts that are not 0, in
that order), so that an operation, a measurement row and a point carry it as they carry any other text, and a plan
that says `random` or a byte keeps the text it always had (the resume digest of its operations is unchanged).

The helper makes such data in blocks of `BLOCK_BYTES` (docs/methods.md, "Fills"): in each unique block the first
(100 - compressible) % of its bytes come from the seed and the rest are zeros; `dedupe` % of the blocks, spread
evenly, are copies of an earlier block. The data stream repeats every 64 MiB (the helper's write buffer), as the
random fill's does."""

from __future__ import annotations

import re
from typing import Any

RANDOM = "random"
BLOCK_BYTES = 4096
_PERCENT = re.compile(r"^\s*(\d{1,3})\s*%\s*$")
_PARTS = ("compressible", "dedupe")
# a byte as plans write it, 0x41 or 65, and nothing around it (the text is printed in labels as it stands)
_BYTE = re.compile(r"^(?:0[xX][0-9a-fA-F]{1,2}|[1-9][0-9]{0,2}|0)$")
_KEPT = re.compile(r"^compressible=(\d{1,3})%(?:,dedupe=(\d{1,3})%)?$|^dedupe=(\d{1,3})%$")


def canonical(value: Any) -> str:
    """A fill as the run keeps it, from what a plan says; ValueError says what a fill may be."""
    if isinstance(value, dict):
        return _mixed(value)
    if isinstance(value, str):
        if value == RANDOM or _KEPT.fullmatch(value):
            return value
        if _BYTE.fullmatch(value) and int(value, 0) <= 255:
            return value
    raise ValueError(f"fill must be random, a byte such as 0x41, or {{compressible: 50%, dedupe: 25%}}, "
                     f"not {value!r}")


def kept(text: Any) -> bool:
    """A fill as a run keeps it (a text read from a stranger's file is held to this)."""
    try:
        return canonical(text) == text
    except ValueError:
        return False


def _mixed(value: dict[Any, Any]) -> str:
    unknown = sorted(str(k) for k in value if k not in _PARTS)
    if unknown:
        raise ValueError(f"a fill of stated ratios takes compressible and dedupe (each a percent such as 50%), "
                         f"not {', '.join(unknown)}")
    if not value:
        raise ValueError("give compressible, dedupe or both, such as {compressible: 50%}")
    shares = {k: _percent(k, value[k]) for k in _PARTS if k in value}
    text = ",".join(f"{k}={shares[k]}%" for k in _PARTS if shares.get(k))
    return text or RANDOM


def _percent(name: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, str) and (m := _PERCENT.fullmatch(value)):
        n = int(m.group(1))
    else:
        raise ValueError(f"fill.{name} is a whole percent from 0% to 100%, such as 50%, not {value!r}")
    if not 0 <= n <= 100:
        raise ValueError(f"fill.{name} is a whole percent from 0% to 100%, not {n}%")
    return n


def shares(fill: str) -> tuple[int, int] | None:
    """(compressible, dedupe) in percent of a fill of stated ratios; None for random data or a byte."""
    m = _KEPT.fullmatch(fill or "")
    if m is None:
        return None
    c, d, only_d = m.groups()
    return (int(c), int(d or 0)) if c is not None else (0, int(only_d))


def helper_text(fill: str) -> str:
    """The helper's --fill: random, the byte, or compressible=50,dedupe=25."""
    s = shares(fill)
    return fill if s is None else f"compressible={s[0]},dedupe={s[1]}"


def same(answered: Any, planned: str) -> bool:
    """The helper's echo of a fill is the planned one (it spells a byte its own way: 0x41 or 65)."""
    if str(answered) == helper_text(planned):
        return True
    try:
        return int(str(answered), 0) == int(str(planned), 0)
    except ValueError:
        return False


def describe(fill: str) -> str:
    """A fill for people: "random data", "the byte 0x41", "50 % compressible, 25 % repeated blocks"."""
    s = shares(fill)
    if s is None:
        return "random data" if fill in (RANDOM, "", None) else f"the byte {fill}"
    parts = ([f"{s[0]} % compressible"] if s[0] else []) + ([f"{s[1]} % repeated blocks"] if s[1] else [])
    return ", ".join(parts)


def short(fill: str) -> str:
    """A fill in a point's label: "" for random data (every point's fill unless a plan says otherwise),
    "fill 0x41", "c50% d25%"."""
    s = shares(fill)
    if s is None:
        return "" if fill in (RANDOM, "", None) else f"fill {fill}"
    return " ".join(([f"c{s[0]}%"] if s[0] else []) + ([f"d{s[1]}%"] if s[1] else []))


def fio_lines(fill: str) -> list[str]:
    """fio's options for the same data: buffer_pattern for a byte; buffer_compress_percentage (in chunks of
    BLOCK_BYTES, zeros filling the compressible part) and dedupe_percentage for stated ratios."""
    s = shares(fill)
    if s is None:
        return [] if fill == RANDOM else [f"buffer_pattern={int(fill, 0)}"]
    return [f"buffer_compress_percentage={s[0]}", f"buffer_compress_chunk={BLOCK_BYTES}",
            f"dedupe_percentage={s[1]}"]
