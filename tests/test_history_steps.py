"""The history's steps by simulation, with a fixed seed and the noise of this machine's disk
(tests/history_simulation.py): few false alarms without a step, a step of 20 % found at its place, and the
exact answers on series whose truth leaves no doubt."""

from __future__ import annotations

import math

from history_simulation import simulate
from stibium_py.analysis.history import Entry, check_latest, find_steps


def test_without_a_step_at_most_3_percent_of_series_claim_one():
    """1,000 series of 30 runs: the rate of false steps, and of `check` flagging the latest run, at most 3 %
    (the bench measured 0.8 % and 0.8 %); a true rate of 5 % would pass this with a chance of 0.2 % (2.9 standard errors)."""
    r = simulate(0.0, 1000, seed=11)
    assert r.claimed <= 0.03 and r.check_flagged <= 0.03, r


def test_a_step_of_20_percent_is_found_at_its_place_in_most_series():
    """The bench measured 45 % within one run of the true place with this disk's noise (sd of a run's log rate
    0.153): the test asks for 35 % over 300 series (3.5 standard errors below)."""
    r = simulate(-0.2, 300, seed=12)
    assert r.found >= 0.35, r


def _entries(logs: list[float], own: float = 0.005) -> list[Entry]:
    return [Entry(f"r{i}", f"2026-01-01T00:{i:02d}:00Z", (f"r{i}",), y, own) for i, y in enumerate(logs)]


def test_a_clear_step_is_found_exactly_with_its_size_and_interval():
    logs = [math.log(100 + (i % 2)) for i in range(8)] + [math.log(80 + (i % 2)) for i in range(8)]
    [step] = find_steps(_entries(logs))
    assert (step.at, step.name, step.before, step.after) == (8, "r8", 8, 8)
    assert abs(step.change - (80.5 / 100.5 - 1) * 100) < 0.1 and step.ratio.low < step.ratio.estimate < step.ratio.high < 1


def test_a_step_the_intervals_do_not_bear_out_is_not_claimed():
    """Runs whose own intervals are wide (each +-40 %) do not make a step of their small consistent shift."""
    logs = [math.log(100 + (i % 2) * 0.1) for i in range(8)] + [math.log(97 + (i % 2) * 0.1) for i in range(8)]
    assert find_steps(_entries(logs, own=0.2)) == []
    assert find_steps(_entries(logs, own=0.0001)) != []


def test_the_latest_run_is_checked_against_the_level_since_the_last_step():
    logs = [math.log(200)] * 6 + [math.log(100 + (i % 2)) for i in range(6)] + [math.log(90)]
    latest = check_latest(_entries(logs))
    assert len(latest.baseline) == 6 and latest.step_down(0.05) and not latest.step_down(0.10)
    assert check_latest(_entries(logs[:1])) is None
    no_interval = check_latest([Entry("a", "t0", ("a",), 0.0, math.nan), Entry("b", "t1", ("b",), -0.5, math.nan)])
    assert math.isnan(no_interval.ratio.low) and not no_interval.step_down(0.05)
