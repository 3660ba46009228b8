"""Two sides' replays side by side (`stibium compare`), in the terms a replay is read in: the elapsed time B / A
with its interval, and each kind of call's time in calls B / A, the one that moved most first. The points
(analysis.py) compare the same replay as calls per second, higher faster; these are times, higher slower, so their
verdict words are turned round. Each side's first run: a replay's trials are its repeats."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...analysis.comparison import ratio_of_intervals, verdict
from ...analysis.estimate import Estimate
from ...analysis.settings import Settings
from ...rundir.table import Table
from .result import ReplayResult, replay_result

# a time's ratio above 1 is the slower side: the word a rate's ratio would earn, turned round
_TIME_WORDS = {"faster": "slower", "slower": "faster"}


@dataclass(frozen=True)
class TimeRatio:
    """One time of two replays (the elapsed time, a kind of call's time in calls) and B / A with its verdict."""

    what: str
    a: Estimate
    b: Estimate
    ratio: Estimate
    verdict: str

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "a": self.a.as_dict(), "b": self.b.as_dict(), "ratio": self.ratio.as_dict(),
                "verdict": self.verdict}


@dataclass(frozen=True)
class ReplayPair:
    """A replay test both sides ran: its elapsed time B / A, and its kinds of call both made, the one whose time in
    calls moved most first."""

    test: str
    elapsed: TimeRatio
    kinds: list[TimeRatio]
    runs_a: int
    runs_b: int

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "elapsed": self.elapsed.to_json(), "kinds": [k.to_json() for k in self.kinds],
                "runs_a": self.runs_a, "runs_b": self.runs_b}


def _time_ratio(what: str, a: Estimate, b: Estimate, s: Settings) -> TimeRatio:
    if min(a.n, b.n) < 2:       # one trial's range is a point, no interval: no verdict, as the points say
        point = b.estimate / a.estimate if a.estimate > 0 else math.nan
        return TimeRatio(what, a, b, Estimate(point, math.nan, math.nan, "no interval: one trial", 2),
                         "inconclusive: one trial")
    ratio = ratio_of_intervals(a, b)
    word = verdict(ratio, s.noise_band)[0]
    return TimeRatio(what, a, b, ratio, _TIME_WORDS.get(word, word))


def compare_replays(a: ReplayResult, b: ReplayResult, s: Settings, runs_a: int = 1, runs_b: int = 1) -> ReplayPair:
    theirs = {k.call: k for k in b.kinds}
    kinds = [_time_ratio(k.call, k.in_calls_s, theirs[k.call].in_calls_s, s) for k in a.kinds
             if k.call in theirs and k.in_calls_s.estimate > 0 and theirs[k.call].in_calls_s.estimate > 0]
    kinds.sort(key=lambda r: -abs(math.log(r.ratio.estimate)) if r.ratio.estimate > 0 else 0.0)
    return ReplayPair(a.name, _time_ratio("elapsed time", a.elapsed_s, b.elapsed_s, s), kinds, runs_a, runs_b)


def _results(rows: Table, s: Settings) -> dict[str, ReplayResult]:
    mine = rows.take(np.flatnonzero(np.asarray(rows.kind).astype(str) == "replay"))
    out = {}
    for (name,), idx in mine.groups("test").items():
        result = replay_result(str(name), mine.take(idx), s.resamples, s.seed, s.confidence)
        if result is not None and result.elapsed_s.estimate > 0:
            out[str(name)] = result
    return out


def pairs(a_runs: list[Table], b_runs: list[Table], s: Settings) -> tuple[list[ReplayPair], list[str], list[str]]:
    """The replay tests both sides' first runs hold. A test only one side ran is said by the points already."""
    a, b = _results(a_runs[0], s), _results(b_runs[0], s)
    return [compare_replays(a[t], b[t], s, len(a_runs), len(b_runs)) for t in a if t in b], [], []
