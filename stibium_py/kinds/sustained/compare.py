"""Two sides' sustained tests side by side (`stibium compare`): per test and op, the first run of each side (a curve
of one uninterrupted write), stretch by stretch: the fast rate, the rate after the cliff and the cliff's place, each
as B / A with its interval (analysis/comparison.compare_sustained)."""

from __future__ import annotations

from ...analysis.comparison import SustainedPair, compare_sustained
from ...analysis.settings import Settings
from ...analysis.sustained import sustained_results
from ...table import Table


def pairs(a_runs: list[Table], b_runs: list[Table], s: Settings) -> tuple[list[SustainedPair], list[str], list[str]]:
    """The sustained tests both sides ran, and the ones only one side did (in words)."""
    a = sustained_results(a_runs[0], s.confidence, s.seed)
    b = sustained_results(b_runs[0], s.confidence, s.seed)
    unmatched = lambda one, other: [f"{t} {op} sustained" for t, op in one if (t, op) not in other]   # noqa: E731
    return ([SustainedPair(a[key], b[key], compare_sustained(a[key], b[key], s)) for key in a if key in b],
            unmatched(a, b), unmatched(b, a))
