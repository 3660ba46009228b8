"""Flush honesty: each flush the platform has, timed after a small uncached write, against the time that write
takes to reach the drive. A flush that promises the drive's cache is emptied (durability.flushes_drive_cache)
and returns faster than the drive takes to write the same bytes uncached cannot have waited for the medium:
the drive does not flush, or it has power-loss protection (a capacitor that makes its cache durable). Timing
suggests; it cannot prove what a power loss would keep (docs/methods.md, "Flushes"). Pure: seconds in."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

from ..units import format_seconds, format_size
from .durability import flushes_drive_cache

# the flushes of each platform, as the helper's --sync names them, and what the helper reports it used
PLATFORM_FLUSHES = {"linux": ("fsync", "data", "dsync"), "darwin": ("fsync", "barrier", "full")}


@dataclass(frozen=True)
class FlushTime:
    sync: str                 # the helper's --sync: fsync, data, dsync, barrier, full
    used: str                 # what it made: fsync, fdatasync, O_DSYNC, F_BARRIERFSYNC, F_FULLFSYNC, ...
    flush_s: float            # the median time of the flush (a synchronous write: its time beyond a plain write's)
    durable: bool | None      # whether it promises the drive's cache flushed on this platform

    def faster_than(self, write_s: float) -> bool:
        return bool(self.durable) and self.flush_s < write_s


def flush_time(platform: str, sync: str, used: str, write_s: Sequence[float], synced_s: Sequence[float]) -> FlushTime:
    """A flush's median time: the sync's own seconds, or for a synchronous write (dsync: its writes carry the
    flush) the median write's time beyond a plain write's median."""
    seconds = statistics.median(synced_s)
    if sync == "dsync":
        seconds = max(0.0, seconds - statistics.median(write_s))
    return FlushTime(sync, used, seconds, flushes_drive_cache(platform, used))


@dataclass(frozen=True)
class FlushVerdict:
    write_bytes: int
    write_s: float            # the median uncached write of write_bytes
    flushes: tuple[FlushTime, ...]

    @property
    def suspicious(self) -> tuple[FlushTime, ...]:
        return tuple(f for f in self.flushes if f.faster_than(self.write_s))

    @property
    def text(self) -> str:
        size = format_size(self.write_bytes)
        times = ", ".join(f"{f.used} {format_seconds(f.flush_s)}" + ("" if f.durable else " (not a flush of the drive's "
                                                                                       "cache here)")
                          for f in self.flushes)
        fast = self.suspicious
        if fast:
            names = " and ".join(f.used for f in fast)
            return (f"{names} return{'s' if len(fast) == 1 else ''} in {format_seconds(min(f.flush_s for f in fast))}, "
                    f"faster than this drive writes {size} uncached ({format_seconds(self.write_s)}): the drive does "
                    f"not flush to its medium, or it has power-loss protection ({times})")
        return f"flushes wait for the medium: {times}, against {format_seconds(self.write_s)} for a {size} uncached write"
