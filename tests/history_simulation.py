"""Histories of runs simulated with the noise of this machine's disk (tests/fixtures/history_noise.json: each
point's log rate about its median over repeated `quick` runs, and the runs' own interval widths), with and
without a step at a known place: how often analysis/history.py finds the step, finds one where there is none,
and how often `history check` flags the latest run. Shared by tests/test_history_steps.py and
tests/bench/bench_history_steps.py (which writes the figures in docs/history.md)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stibium_py.analysis.history import Entry, check_latest, find_steps

NOISE = Path(__file__).parent / "fixtures" / "history_noise.json"
RUNS = 30


def noise() -> tuple[np.ndarray, np.ndarray]:
    data = json.loads(NOISE.read_text())
    return np.array(data["log_deviations"]), np.array(data["own_se"])


def _series(rng: np.random.Generator, step: float, at: int, runs: int, deviations: np.ndarray,
            own: np.ndarray) -> list[Entry]:
    logs = rng.choice(deviations, runs) + np.where(np.arange(runs) >= at, math.log1p(step), 0.0)
    ses = rng.choice(own, runs)
    return [Entry(f"run-{i}", f"2026-01-01T00:{i:02d}:00Z", (f"run-{i}",), float(y), float(s))
            for i, (y, s) in enumerate(zip(logs, ses))]


@dataclass(frozen=True)
class Rates:
    series: int
    found: float          # series whose step was found within one run of its place, in its direction
    claimed: float        # series with any step claimed (without a step: the false alarms)
    check_flagged: float  # series whose latest run `history check` flags (threshold 5 %); the step at the last run


def simulate(step: float, series: int, seed: int, runs: int = RUNS, threshold: float = 0.05) -> Rates:
    """`series` histories of `runs` runs, the step (-0.2: 20 % slower) at a place drawn in the middle half."""
    deviations, own = noise()
    rng = np.random.default_rng(seed)
    found = claimed = flagged = 0
    for k in range(series):
        at = int(rng.integers(runs // 4, 3 * runs // 4 + 1))
        entries = _series(rng, step, at, runs, deviations, own)
        steps = find_steps(entries, seed=k)
        near = [s for s in steps if abs(s.at - at) <= 1 and (s.ratio.estimate < 1) == (step < 0)]
        found += bool(near)
        claimed += bool(steps)
        last = _series(rng, step, runs - 1, runs, deviations, own)
        latest = check_latest(last, seed=k)
        flagged += latest is not None and latest.step_down(threshold)
    return Rates(series, found / series, claimed / series, flagged / series)
