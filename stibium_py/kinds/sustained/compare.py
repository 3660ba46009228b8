"""Two sides' sustained tests side by side (`stibium compare`): per test and op, the first run of each side (a curve
of one uninterrupted write), stretch by stretch: the fast rate, the rate after the cliff and the cliff's place, each
as B / A with its interval (compare_sustained)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...analysis.comparison import ratio_of_intervals, verdict
from ...analysis.estimate import Estimate
from ...analysis.settings import Settings
from .result import SustainedTestResult, sustained_results
from ...rundir.table import Table


@dataclass(frozen=True)
class SustainedRatio:
    """One number of two sustained results (the fast rate, the rate after the cliff, the cliff's place) with
    B / A and its interval."""

    test: str
    op: str
    what: str
    a: Estimate
    b: Estimate
    ratio: Estimate
    verdict: str

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "op": self.op, "what": self.what, "a": self.a.as_dict(), "b": self.b.as_dict(),
                "ratio": self.ratio.as_dict(), "verdict": self.verdict}


def compare_sustained(a: SustainedTestResult, b: SustainedTestResult, s: Settings) -> list[SustainedRatio]:
    """The fast rate (the first stretch), the rate after the cliff and the cliff's place, where both sides
    have them: a side without a cliff compares its one steady rate as its fast rate."""
    steady = a.result.cliff_bytes is None and b.result.cliff_bytes is None
    pairs = [("steady rate" if steady else "fast rate (first stretch)", a.result.stretches[0].rate_bytes_per_s,
              b.result.stretches[0].rate_bytes_per_s)]
    if a.result.cliff_bytes is not None and b.result.cliff_bytes is not None:
        pairs += [("rate after the cliff", a.result.stretches[1].rate_bytes_per_s,
                   b.result.stretches[1].rate_bytes_per_s),
                  ("cliff at (bytes)", a.result.cliff_bytes, b.result.cliff_bytes)]
    out = []
    for what, ea, eb in pairs:
        ratio = ratio_of_intervals(ea, eb)
        word = verdict(ratio, s.noise_band)[0]
        if what.startswith("cliff"):
            word = {"faster": "later", "slower": "earlier"}.get(word, word)
        out.append(SustainedRatio(a.name, a.op, what, ea, eb, ratio, word))
    return out


@dataclass(frozen=True)
class SustainedPair:
    """A sustained test both sides ran: each side's result (its first run) and the ratios of its numbers."""

    a: SustainedTestResult
    b: SustainedTestResult
    ratios: list[SustainedRatio]

    @property
    def test(self) -> str:
        return self.a.name

    def to_json(self) -> dict[str, Any]:
        return {"test": self.a.name, "op": self.a.op, "a": self.a.to_json(), "b": self.b.to_json(),
                "ratios": [r.to_json() for r in self.ratios]}


def pairs(a_runs: list[Table], b_runs: list[Table], s: Settings) -> tuple[list[SustainedPair], list[str], list[str]]:
    """The sustained tests both sides ran, and the ones only one side did (in words)."""
    a = sustained_results(a_runs[0], s.confidence, s.seed)
    b = sustained_results(b_runs[0], s.confidence, s.seed)
    unmatched = lambda one, other: [f"{t} {op} sustained" for t, op in one if (t, op) not in other]   # noqa: E731
    return ([SustainedPair(a[key], b[key], compare_sustained(a[key], b[key], s)) for key in a if key in b],
            unmatched(a, b), unmatched(b, a))
