"""A series' sustained tests: a curve per run, not a point, so each run's result (its headline, stretches and cliff)
side by side, per test and op."""

from __future__ import annotations

from typing import Any

from ...analysis.settings import Settings
from .result import sustained_results
from ...rundir.table import Table


def across_runs(runs: list[tuple[str, Table]], s: Settings) -> list[dict[str, Any]]:
    """Per test and op, each run's result with the run's name."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for name, rows in runs:
        for key, e in sustained_results(rows, s.confidence, s.seed).items():
            found.setdefault(key, []).append({"run": name, **e.result.to_json()})
    return [{"test": t, "op": op, "runs": each} for (t, op), each in found.items()]
