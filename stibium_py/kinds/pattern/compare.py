"""Two sides' searches for a target's rate side by side (`stibium compare`): the most each side carried within the
target, and B / A of it. A search's answer is a bracket, not an estimate with an interval: the side's rate lies at
or above the highest rate that met the target and below the lowest that did not, so B / A lies between B's highest
met over A's lowest missed and B's lowest missed over A's highest met (without an upper end where a side met every
rate it searched). The points (analysis.py) compare each rate both sides measured; this compares the answers. Each
side's first run, as a search's trials are its repeats."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...analysis.settings import Settings
from ...rundir.table import Table
from .load import SloAnswer, slo_answers


@dataclass(frozen=True)
class TargetPair:
    """One search both sides ran (a test, op, point shape and target): each side's bracket and B / A's."""

    test: str
    op: str
    a: SloAnswer
    b: SloAnswer

    @property
    def low(self) -> float | None:
        """B / A at least this; None where there is no lower end (B met no rate, or A met every rate it searched)."""
        met_b, missed_a = self.b.met, self.a.missed
        if met_b is None or missed_a is None:
            return None
        return met_b.rate_per_s / missed_a.rate_per_s

    @property
    def high(self) -> float | None:
        """B / A below this; None where there is no upper end (B met every rate it searched, or A met none)."""
        missed_b, met_a = self.b.missed, self.a.met
        if missed_b is None or met_a is None:
            return None
        return missed_b.rate_per_s / met_a.rate_per_s

    @property
    def verdict(self) -> str:
        if self.a.missed is None and self.b.missed is None:
            return "both met every rate they searched: raise slo.highest to tell them apart"
        if self.a.met is None and self.b.met is None:
            return "neither met the target at any rate it searched: lower slo.lowest to tell them apart"
        low, high = self.low, self.high
        if low is not None and low >= 1:
            return "B carries more" if low > 1 else "B carries at least as much"
        if high is not None and high <= 1:
            return "B carries less"
        return "the brackets overlap: neither carries more within the target's steps"

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "op": self.op, "a": self.a.to_json(), "b": self.b.to_json(), "low": self.low,
                "high": self.high, "verdict": self.verdict}


def pairs(a_runs: list[Table], b_runs: list[Table], s: Settings) -> tuple[list[TargetPair], list[str], list[str]]:
    """The searches both sides' first runs hold, matched by test, op, point shape and target. A search only one side
    ran is said by its points already."""
    a, b = _answers(a_runs[0], s), _answers(b_runs[0], s)
    return [TargetPair(key[0], key[1], a[key], b[key]) for key in a if key in b], [], []


def _answers(rows: Table, s: Settings) -> dict[tuple, SloAnswer]:
    rows = rows.valid()
    mine = rows.take(np.flatnonzero((np.asarray(rows.kind).astype(str) == "pattern")
                                    & (np.asarray(rows.instrument).astype(str) == "helper")))
    out = {}
    for (test, op), idx in mine.groups("test", "op").items():
        for answer in slo_answers(mine.take(idx), s.confidence):
            key = (str(test), str(op), answer.shape, tuple(sorted(answer.targets.items())))
            if answer.searched and all(math.isfinite(j.rate_per_s) for j in answer.searched):
                out[key] = answer
    return out
