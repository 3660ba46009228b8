"""Byte sizes: parsing the plan's sizes and formatting them for people.

Sizes are decimal by default, as in the Stibium articles (1 KB = 1000 B); a plan
may set `units: binary` to read KB/MB/GB as powers of 1024. KiB, MiB, GiB and TiB
are always powers of 1024.
"""

from __future__ import annotations

import math

import re

from .errors import SizeError  # noqa: F401 (raised here, declared apart)

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_DECIMAL = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_BINARY = {"": 1, "B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
_BINARY_ALWAYS = {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_BINARY_ALWAYS_NAMES = ("KiB", "MiB", "GiB", "TiB")


def parse_bytes(value: int | str, units: str = "decimal") -> int:
    """Bytes for a size such as 4096, "10KB", "4KiB" or "1.5GB".

    `units` says what KB/MB/GB/TB mean: "decimal" (1000^n) or "binary" (1024^n).
    """
    if isinstance(value, bool):
        raise SizeError(f"{value!r} is not a size; write a number with a unit, such as 10MB")
    if isinstance(value, int):
        if value < 0:
            raise SizeError(f"{value} is negative; sizes are positive")
        return value
    if not isinstance(value, str):
        raise SizeError(f"{value!r} is not a size; write a number with a unit, such as 10MB")
    match = _SIZE.match(value)
    if not match:
        raise SizeError(f"cannot read the size {value!r}; write a number with a unit, such as 10MB or 4KiB")
    number, unit = match.groups()
    key = "KB" if unit == "kB" else unit          # kB: the SI symbol of the kilobyte
    if key in _BINARY_ALWAYS_NAMES:
        factor = _BINARY_ALWAYS[key.upper()]
    elif key in _DECIMAL:
        factor = (_DECIMAL if units == "decimal" else _BINARY)[key]
    elif unit.upper() in _DECIMAL or unit.upper() in _BINARY_ALWAYS:
        # mb, Mb, mib: a lower-case m is milli and a lower-case b a bit; say which was meant rather than guess
        decimal = unit.upper().replace("IB", "B")
        meant = f"{number}B" if decimal == "B" else f"{number}{decimal} or {number}{decimal[0]}iB"
        raise SizeError(f"unit {unit!r} in {value!r} is not one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (a lower-case "
                        f"m is milli, a lower-case b a bit): did you mean {meant}?")
    else:
        raise SizeError(f"unknown unit {unit!r} in {value!r}; use B, KB, MB, GB, TB or KiB, MiB, GiB, TiB")
    result = float(number) * factor
    if result != int(result):
        raise SizeError(f"{value!r} is not a whole number of bytes")
    return int(result)


_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|min|h)?\s*$")
_SECONDS_FACTOR = {None: 1, "us": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600}


def parse_seconds(value: int | float | str) -> float:
    """Seconds for a time such as 30, 2.5, "30s", "5min", "1h", "2ms" or "500us" (a plan's duration and warm-up, a
    target's response time)."""
    if isinstance(value, bool):
        raise SizeError(f"{value!r} is not a time; write seconds, such as 30s or 5min")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _SECONDS.match(value) if isinstance(value, str) else None
        if not match:
            raise SizeError(f"cannot read the time {value!r}; write seconds such as 30 or 30s, or 5min, 1h, 2ms or 500us")
        seconds = float(match.group(1)) * _SECONDS_FACTOR[match.group(2)]
    if not (math.isfinite(seconds) and seconds > 0):
        raise SizeError(f"{value!r} is not a time above zero")
    return seconds


_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(k|K|M)?\s*(IOPS|iops|/s)\s*$")
_RATE_BYTES = re.compile(r"^\s*(\d+(?:\.\d+)?\s*[A-Za-z]*)\s*/\s*s\s*$")
_RATE_PREFIX = {None: 1, "k": 10**3, "K": 10**3, "M": 10**6}


def parse_rate(value: int | float | str, units: str = "decimal") -> tuple[float, str]:
    """A rate of requests as a plan gives it: "20000 IOPS", "20k IOPS", "500/s" (requests a second), a bare number
    (requests a second too), or "200MB/s", "1.5 GiB/s" (bytes a second, which a granularity makes requests).
    Returns the number a second and what it counts: "requests" or "bytes"."""
    if isinstance(value, bool):
        raise SizeError(f"{value!r} is not a rate; write requests a second, such as 20000 IOPS, or bytes, such as "
                        f"200MB/s")
    if isinstance(value, (int, float)):
        number, what = float(value), "requests"
    elif isinstance(value, str) and (m := _RATE.match(value)):
        number, what = float(m.group(1)) * _RATE_PREFIX[m.group(2)], "requests"
    elif isinstance(value, str) and (m := _RATE_BYTES.match(value)):
        number, what = float(parse_bytes(m.group(1).replace(" ", ""), units)), "bytes"
    else:
        raise SizeError(f"cannot read the rate {value!r}; write requests a second, such as 20000 IOPS, 20k IOPS or "
                        f"500/s, or bytes a second, such as 200MB/s")
    if not (math.isfinite(number) and number > 0):
        raise SizeError(f"{value!r} is not a rate above zero")
    return number, what


def format_per_s_short(count_per_s: float) -> str:
    """Requests a second for a table: 20000 -> "20k/s", 1500 -> "1.5k/s", 250 -> "250/s"."""
    for factor, prefix in ((1e6, "M"), (1e3, "k")):
        if count_per_s >= factor:
            return f"{count_per_s / factor:.4g}{prefix}/s"
    return f"{count_per_s:.4g}/s"


def mix_label(read_fraction: float) -> str:
    """A mixed load's reads and writes as the disk-mark tools write them: "70/30" (per cent read / write)."""
    read = round(read_fraction * 100, 1)
    return f"{read:g}/{100 - read:g}"


def op_label(op: str, read_fraction: float | None) -> str:
    """An operation for people: read, write, or "mixed 70/30" (per cent read / write)."""
    return f"mixed {mix_label(read_fraction)}" if op == "mixed" and read_fraction is not None else op


def format_bytes(n_bytes: float, units: str = "decimal") -> str:
    """A short human form: 10 KB, 1.5 GB (or KiB, GiB with units="binary")."""
    base, names = (1000, ["B", "KB", "MB", "GB", "TB"]) if units == "decimal" else (1024, ["B", "KiB", "MiB", "GiB", "TiB"])
    value = float(n_bytes)
    for name in names:
        if abs(value) < base or name == names[-1]:
            if name == "B":
                return f"{int(value)} B"
            return f"{value:.3g} {name}"
        value /= base
    raise AssertionError("unreachable")


def format_size(n_bytes: float) -> str:
    """A size in the units it was most likely given in: the one of decimal (10 MB, 635 MB) and binary (4 KiB,
    64 MiB) that writes it exactly in three digits, decimal first; where neither does, binary for a whole number of
    KiB (a sum of binary sizes), else decimal."""
    for units in ("decimal", "binary"):
        if _exact(n_bytes, 1000 if units == "decimal" else 1024):
            return format_bytes(n_bytes, units)
    return format_bytes(n_bytes, "binary" if n_bytes and n_bytes % 1024 == 0 else "decimal")


def format_exact_size(n_bytes: int) -> str:
    """A size that must be read exactly (a test point's name): 4 KiB, 1 MB where three digits hold it whole, else
    every byte: 4,096,001 B."""
    if _exact(n_bytes, 1000) or _exact(n_bytes, 1024):
        return format_size(n_bytes)
    return f"{int(n_bytes):,} B"


def _exact(n_bytes: float, base: int) -> bool:
    """n_bytes written with format_bytes's three significant digits in powers of base loses nothing."""
    value, power = float(n_bytes), 0
    while abs(value) >= base and power < 4:
        value /= base
        power += 1
    return float(f"{value:.3g}") * base ** power == n_bytes


def format_rate(bytes_per_s: float | None) -> str:
    """A transfer rate in decimal units, as storage vendors and the articles quote it; "-" where there is
    none (a files test of one size)."""
    if bytes_per_s is None or not math.isfinite(bytes_per_s):
        return "-"
    return format_bytes(bytes_per_s) + "/s"


def format_per_s(count_per_s: float | None, what: str = "files") -> str:
    """A count per second in three significant digits with thousands marked: 12,300 files/s, 45.6 names/s; "-"
    where there is none."""
    if count_per_s is None or not math.isfinite(count_per_s):
        return "-"
    v = float(f"{count_per_s:.3g}")
    return f"{v:,.0f} {what}/s" if v >= 100 else f"{v:.3g} {what}/s"


def format_seconds(seconds: float) -> str:
    """A duration with a unit that suits it: 12.3 us, 4.56 ms, 7.89 s, 2 h 3 min."""
    if seconds != seconds:  # NaN
        return "n/a"
    a = abs(seconds)
    if a < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if a < 1:
        return f"{seconds * 1e3:.3g} ms"
    if a < 120:
        return f"{seconds:.3g} s"
    if a < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"


def in_flight_label(queue_depth: int, threads: int) -> str:
    """Requests in flight as CrystalDiskMark names them (Q8T1); empty at one request in flight."""
    return "" if queue_depth == threads == 1 else f"Q{queue_depth}T{threads}"


def middle_cut(text: str, chars: int) -> str:
    """A name cut to `chars` characters in the middle, where names differ least: "rand-write-4k-q4t2" -> "rand-…4t2"."""
    if len(text) <= chars:
        return text
    head = chars // 2
    tail = chars - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail > 0 else "")
