"""Waiting for the drive to be quiet before a playback: a playback measures a drive that is idle when it starts,
not one still writing out what the layout gave it (a drive that takes writes into a cache or a bucket and drains
them afterwards reads slowly meanwhile: frames of 30-300 ms for the first second of a stream, counted as drops).

Quiet, on Linux: no request in flight on the target's disk (/sys/block/DISK/inflight) and its written sectors
unchanged (/sys/block/DISK/stat) over QUIET_SAMPLES samples in a row. The wait is bounded: STIBIUM_QUIET_WAIT_S
seconds (the person's environment; 10 by default, 0: no wait); a disk another program keeps busy never goes quiet,
and the report says so. How long it took is kept on the playback's rows (`quiet_wait_s`). Where the counters
cannot be read (macOS, a network file system without a disk of this machine) no wait is made and the rows say
nothing (None)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

SAMPLE_S = 0.05
QUIET_SAMPLES = 4               # 150 ms without a request in flight or a sector written
DEFAULT_MAX_WAIT_S = 10.0
ENV_VAR = "STIBIUM_QUIET_WAIT_S"


def max_wait_s() -> float:
    """The bound on the wait: STIBIUM_QUIET_WAIT_S where it is a number of seconds (0 or more), else 10."""
    try:
        value = float(os.environ.get(ENV_VAR, DEFAULT_MAX_WAIT_S))
    except ValueError:
        return DEFAULT_MAX_WAIT_S
    return value if value >= 0 else DEFAULT_MAX_WAIT_S


@dataclass(frozen=True)
class Counters:
    inflight: int               # reads and writes in flight on the disk
    sectors_written: int


def read_counters(disk: Path) -> Counters | None:
    """The disk's counters now, or None where they cannot be read."""
    try:
        inflight = sum(int(v) for v in (disk / "inflight").read_text().split())
        sectors_written = int((disk / "stat").read_text().split()[6])
    except (OSError, ValueError, IndexError):
        return None
    return Counters(inflight, sectors_written)


def is_quiet(samples: list[Counters]) -> bool:
    """The last QUIET_SAMPLES samples: nothing in flight, nothing written."""
    last = samples[-QUIET_SAMPLES:]
    return (len(last) == QUIET_SAMPLES and all(c.inflight == 0 for c in last)
            and len({c.sectors_written for c in last}) == 1)


@dataclass(frozen=True)
class Waited:
    seconds: float              # from the first sample to the quiet one (QUIET_SAMPLES' time at the least)
    quiet: bool                 # False: the bound passed first


def wait_quiet(read: Callable[[], Counters | None], bound_s: float, sleep: Callable[[float], None] = time.sleep,
               clock: Callable[[], float] = time.monotonic) -> Waited | None:
    """Sample until quiet or bound_s; None where the counters cannot be read or no wait is asked (bound 0)."""
    if bound_s <= 0:
        return None
    start = clock()
    samples: list[Counters] = []
    while True:
        found = read()
        if found is None:
            return None
        samples.append(found)
        if is_quiet(samples):
            return Waited(clock() - start, True)
        if clock() - start >= bound_s:
            return Waited(clock() - start, False)
        sleep(SAMPLE_S)
