"""What a group of streams that fell behind shows of the drive, and the answers that go the wrong way.

A drive with a burst (a token bucket, an SLC cache, a controller's buffer) serves frames faster than it can
sustain until the burst is spent, then at its sustained rate. A group that fell behind shows both: its frames
came on time until the first came late, and after that every stream's frames together came at about the
sustained rate (the drive's whole rate, shared). A count that ran without a drop but needs more than that rate
ran on the burst alone: a longer playback would drop. Measured on the burst device (nbdkit's rate filter at
52.4 MB/s with its default bucket of 2 s, tests/truth/test_truth_streams.py): 3 streams of 30 MB/s fell behind
2.75 s in, after 244 MB, and then came at 53.7 MB/s; 2 streams (60 MB/s) ran 3 s clean on the burst.

A count that ran clean in a trial where a smaller count dropped is an answer that goes the wrong way: the
drive was not in the same state for both (a burst refilled, a cache, writes still draining). Each playback
begins on a quiet drive (run/quiet.py); a wait that was long, or a drive that never went quiet, is said too."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any, Sequence

import numpy as np

# a clean count is said to have run on the burst only where it needs more than the sustained rate by this much:
# the rate is measured over the part of a playback after its first late frame, a fraction of a second of frames
BEYOND_SUSTAINED = 1.05
# a group that fell behind from its first frames shows a drive too slow for it, not a burst spent: its frames must
# have come on time this long first (a slower aggregate under more streams, a disk's seeks, is no burst)
MIN_SERVED_S = 0.5
NOTED_WAIT_S = 0.5              # a wait for a quiet drive said in the report (the shortest is 0.15 s)


@dataclass(frozen=True)
class Burst:
    """The smallest count that dropped: until its first late frame (the median over its trials), and the rate all
    its streams' frames came at after it."""

    streams: int
    served_s: float                 # from the group's first frame to its first late one
    served_bytes: float             # the bytes of the frames done by then
    sustained_bytes_per_s: float    # every stream's bytes after that, over the time they took

    def to_json(self) -> dict[str, Any]:
        return {"streams": self.streams, "served_s": self.served_s, "served_bytes": self.served_bytes,
                "sustained_bytes_per_s": self.sustained_bytes_per_s}


def _one_trial(start_ns: np.ndarray, end_ns: np.ndarray, late_s: np.ndarray,
               frame_bytes: int) -> tuple[float, float, float] | None:
    """(served_s, served_bytes, sustained) of one trial's frames (every stream's), or None where none was late or
    too few frames came after the first late one to time."""
    if not (late_s > 0).any():
        return None
    first_late = end_ns[late_s > 0].min()
    after = end_ns > first_late
    span_s = (end_ns.max() - first_late) / 1e9
    if after.sum() < 2 or span_s <= 0:
        return None
    return ((first_late - start_ns.min()) / 1e9, float((~after).sum() * frame_bytes),
            float(after.sum() * frame_bytes / span_s))


def burst_of(streams: int, trials: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
             frame_bytes: int) -> Burst | None:
    """The Burst of a count that dropped, from each of its trials' frames (start_ns, end_ns, lateness), or None."""
    found = [f for f in (_one_trial(s, e, late, frame_bytes) for s, e, late in trials)
             if f is not None and f[0] >= MIN_SERVED_S]
    if not found:
        return None
    return Burst(streams, median(f[0] for f in found), median(f[1] for f in found), median(f[2] for f in found))


def carried_by_burst(clean: Sequence[int], stream_bytes_per_s: float, burst: Burst | None) -> list[int]:
    """The counts that ran without a drop though they need more than the rate the drive sustained."""
    if burst is None:
        return []
    return [n for n in clean if n * stream_bytes_per_s > BEYOND_SUSTAINED * burst.sustained_bytes_per_s]


def wrong_way(drops: dict[tuple[int, int], int]) -> list[tuple[int, int, int]]:
    """(trial, the smaller count that dropped, the larger that did not) where a trial's answer goes the wrong
    way; drops: each (count, trial) measured and its frames dropped."""
    out = []
    for trial in sorted({t for _, t in drops}):
        counts = sorted(n for n, t in drops if t == trial)
        dropped = [n for n in counts if drops[(n, trial)]]
        if dropped:
            larger = [n for n in counts if n > dropped[0] and not drops[(n, trial)]]
            if larger:
                out.append((trial, dropped[0], larger[-1]))
    return out


def add_findings(e: Any, label: str, add: Any) -> None:
    """The notices of a stream result's burst and wrong-way answers (e: analysis.StreamResult)."""
    from ...units import format_bytes, format_rate, format_seconds
    b, each = e.burst, e.stream_bytes_per_s * e.clients
    if b is not None:
        served = (f"{b.streams} streams' frames came on time for {format_seconds(b.served_s)} "
                  f"({format_bytes(b.served_bytes)}), then all together at about "
                  f"{format_rate(b.sustained_bytes_per_s)}")
        carried = e.carried_by_burst
        if carried:
            sustained = int(b.sustained_bytes_per_s // each)
            add("warning", label, f"{', '.join(map(str, carried))} streams ran without a drop, but {carried[-1]} "
                f"need {format_rate(carried[-1] * each)}, more than the drive sustained once a burst was spent "
                f"({served})", f"a playback longer than the burst lasts may drop at that count: make the test longer "
                f"(seconds) to measure past it, and count on {sustained} stream{'s' if sustained != 1 else ''} at "
                f"the sustained rate")
        else:
            add("info", label, f"a burst or a cache served the first frames: {served}",
                "nothing to do: the counts that ran clean need no more than the rate after it")
    busy = [(n, t, secs) for n, t, secs, quiet in e.quiet_waits if not quiet]
    if busy:
        n, t, secs = busy[0]
        add("warning", label, f"the drive did not go quiet before {len(busy)} playback{'s' if len(busy) > 1 else ''} "
            f"(the first: {n} stream{'s' if n != 1 else ''}, trial {t + 1}, after {format_seconds(secs)}): their "
            f"frames met a drive still busy, with the layout's writes or another program's",
            "stop what else uses the drive and run again, or give the wait longer (STIBIUM_QUIET_WAIT_S)")
    longest = max((w for w in e.quiet_waits if w[3]), key=lambda w: w[2], default=None)
    if longest is not None and longest[2] >= NOTED_WAIT_S:
        add("info", label, f"a playback waited up to {format_seconds(longest[2])} for the drive to go quiet after "
            f"its layout ({longest[0]} stream{'s' if longest[0] != 1 else ''}, trial {longest[1] + 1})",
            "nothing to do: it began once the drive was quiet")
    for trial, dropped, clean in e.wrong_way:
        add("warning", label, f"the answer goes the wrong way in trial {trial + 1}: {clean} streams ran without a "
            f"drop where {dropped} dropped", "the drive was not in the same state for both (a burst refilled "
            "between them, a cache, writes still draining): run more trials or a longer playback before trusting "
            "the count")
