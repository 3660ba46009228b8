"""Two sides' stream tests side by side (`stibium compare`): per test and op, each side's most streams without a
drop in every trial, with every trial's own most (of every run of the side), and whether one side carried more
streams beyond the trials' spread. A count is the streams on the store (the clients times each one's count), so
that runs of different client counts compare by what the store carried."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...analysis.settings import Settings
from ...rundir.table import Table
from .analysis import results_of_run
from .words import described


@dataclass(frozen=True)
class StreamPair:
    """One test's capture or playback on both sides."""

    name: str
    action: str                     # capture | playback
    what: str                       # its format (or frame and rate), in words
    a: list[int]                    # side A: each trial's most streams on the store, every run's trials
    b: list[int]

    @property
    def test(self) -> str:
        return self.name

    @property
    def a_most(self) -> int:
        return min(self.a)

    @property
    def b_most(self) -> int:
        return min(self.b)

    @property
    def verdict(self) -> str:
        """more: B's every trial carried more than A's every trial; fewer: the other way; same range: the trials'
        spreads overlap, no difference is shown."""
        if min(self.b) > max(self.a):
            return "more"
        if max(self.b) < min(self.a):
            return "fewer"
        return "same range"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.action, "format": self.what, "a_most_streams": self.a_most,
                "b_most_streams": self.b_most, "a_by_trial": self.a, "b_by_trial": self.b, "verdict": self.verdict}


@dataclass(frozen=True)
class _Side:
    what: str
    frame: tuple[int, float]
    mosts: list[int]


def _side(runs: list[Table]) -> dict[tuple[str, str], _Side]:
    """Each (test, op) of the runs' stream tests: its format, frame, and every trial's most on the store."""
    out: dict[tuple[str, str], _Side] = {}
    for rows in runs:
        for e in results_of_run(rows).values():
            if e is None:
                continue
            key = (e.name, e.action)
            before = out.get(key)
            mosts = [m * e.clients for m in e.most_by_trial]
            if before is not None and before.frame == (e.frame_bytes, e.fps):
                mosts = before.mosts + mosts
            out[key] = _Side(described(e), (e.frame_bytes, e.fps), mosts)
    return out


def pairs(a_runs: list[Table], b_runs: list[Table], s: Settings) -> tuple[list[StreamPair], list[str], list[str]]:
    """The stream tests both sides ran with the same frame and rate, and the ones only one side did (in words);
    the counts need no settings (no interval: every trial's count is shown)."""
    a, b = _side(a_runs), _side(b_runs)
    matched = [k for k in a if k in b and a[k].frame == b[k].frame]
    unmatched = lambda one, other: [f"{n} {op} streams" for (n, op) in one if (n, op) not in matched]   # noqa: E731
    return ([StreamPair(n, op, a[(n, op)].what, a[(n, op)].mosts, b[(n, op)].mosts) for n, op in matched],
            unmatched(a, b), unmatched(b, a))
