"""What a history keeps of a sustained test: the rate of its first stretch (the fast cache, where one ends) and of
its last (what the drive sustains after); one rate where the whole test is one stretch."""

from __future__ import annotations

from typing import Any

from ...analysis.estimate import Estimate
from ...analysis.settings import Settings
from .result import sustained_results
from ...rundir.table import Table


def rates(rows: Table, s: Settings) -> list[tuple[str, dict[str, Any], str, Estimate, int]]:
    """Per test and op, its stretches' rates, each with its label, key, unit and count of chunks."""
    out = []
    for (name, op), e in sustained_results(rows, s.confidence, s.seed).items():
        stretches = e.result.stretches
        if not stretches:
            continue
        ends = [("", stretches[0])] if len(stretches) == 1 else [(", first stretch", stretches[0]),
                                                                  (", last stretch", stretches[-1])]
        for part, stretch in ends:
            out.append((f"{name} {op} sustained{part}", {"test": name, "op": op, "kind": "sustained",
                                                         "stretch": part.strip(", ") or "whole"},
                        "bytes", stretch.rate_bytes_per_s, stretch.end - stretch.first))
    return out
