"""The history's step search (analysis/history.py) against the textbook, number by number: the energy statistic
and its within-side sums against their definitions summed pair by pair, the permutation p-value against the same
shuffles scored the slow way, the levels, ratios and the latest run's check against formulas written out here.
The simulation of its error rates is tests/test_history_steps.py; these are the exact answers beneath it."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
import warnings

import numpy as np
import pytest
from scipy import stats

from stibium_py.analysis import history
from stibium_py.analysis.history import (Entry, _energy, _level, _prefix_within, _quantile, _se_from_interval,
                                         _split, check_latest, entry_of, find_steps, ratio_between)


def _within(values) -> float:
    return float(sum(abs(a - b) for a, b in itertools.combinations(values, 2)))


def _energy_by_definition(z, min_size: int) -> tuple[int, float]:
    """Matteson and James's statistic for each split t (the first t values against the rest), the first largest."""
    n, best = len(z), None
    for t in range(min_size, n - min_size + 1):
        x, y = z[:t], z[t:]
        m, k = len(x), len(y)
        cross = sum(abs(a - b) for a in x for b in y) / (m * k)
        e = 2 * cross - _within(x) / (m * (m - 1) / 2) - _within(y) / (k * (k - 1) / 2)
        q = m * k / n * e
        if best is None or q > best[1] + 1e-12:
            best = (t, q)
    return best


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9, 16, 17])
def test_the_within_side_sums_are_the_pairs_summed_one_by_one(n):
    rng = np.random.default_rng(n)
    z = np.vstack([rng.normal(size=n), rng.integers(0, 3, size=n).astype(float), np.zeros(n)])  # ties, all equal
    got = _prefix_within(z)
    assert got.shape == (3, n + 1)
    for row, values in zip(got, z):
        assert list(row) == pytest.approx([_within(values[:t]) for t in range(n + 1)], abs=1e-9)


@pytest.mark.parametrize("n, min_size", [(6, 3), (7, 3), (10, 3), (13, 2), (16, 4), (9, 2)])
def test_the_best_split_and_its_statistic_are_the_definition_s(n, min_size):
    rng = np.random.default_rng(100 + n)
    z = np.vstack([rng.normal(size=n), np.r_[np.zeros(n // 2), np.ones(n - n // 2)] + rng.normal(0, 0.1, n)])
    taus, qs = _energy(z, min_size)
    for tau, q, row in zip(taus, qs, z):
        want_tau, want_q = _energy_by_definition(list(row), min_size)
        assert (int(tau), float(q)) == (want_tau, pytest.approx(want_q, rel=1e-9, abs=1e-12))


def test_the_orderings_taken_a_block_at_a_time_give_what_one_block_gives(monkeypatch):
    rng = np.random.default_rng(7)
    z = rng.normal(size=(11, 12))
    whole = _energy(z, 3)
    monkeypatch.setattr(history, "ENERGY_BLOCK_VALUES", 16 * 3)       # 3 rows of 16 a block: 4 blocks
    parts = _energy(z, 3)
    assert list(parts[0]) == list(whole[0]) and list(parts[1]) == pytest.approx(list(whole[1]), rel=1e-12)
    monkeypatch.setattr(history, "ENERGY_BLOCK_VALUES", 1)            # fewer values than a row: a row a block
    assert list(_energy(z, 3)[0]) == list(whole[0])


def test_a_split_s_p_value_counts_the_shuffles_that_beat_it_and_itself():
    z = np.array([0.0, 0.1, -0.1, 0.05, 1.0, 1.1, 0.9, 1.05])
    tau, p = _split(z, np.random.default_rng(3), 3, 99, alpha=1.0)      # alpha 1: every ordering drawn
    rng = np.random.default_rng(3)          # drawn as the test draws them: 50 orderings, then the 49 left
    shuffled = np.concatenate([rng.permuted(np.broadcast_to(z, (k, len(z))), axis=1) for k in (50, 49)])
    q = _energy_by_definition(list(z), 3)[1]
    beaten = sum(_energy_by_definition(list(row), 3)[1] >= q - 1e-9 for row in shuffled)
    assert (tau, p) == (4, pytest.approx((beaten + 1) / 100))
    assert p <= 0.05
    # a segment shorter than two sides of min_size is not split; one just long enough is
    assert _split(z[:5], np.random.default_rng(3), 3, 99) is None
    assert _split(z[:6], np.random.default_rng(3), 3, 99) is not None
    # every ordering of a constant segment ties it: p is 1, and no warning of a division by its statistic
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _split(np.ones(8), np.random.default_rng(3), 3, 99, alpha=1.0)[1] == 1.0
        # at a level of 0.05, the test stops at its first look (50 orderings beat it, more than the 4 it may have):
        # its p-value is the least it could have ended with, above the level
        assert _split(np.ones(8), np.random.default_rng(3), 3, 99, alpha=0.05)[1] == 51 / 100


def test_an_ordering_that_ties_the_split_is_counted_whatever_its_rounding():
    """A segment with no step at all has a statistic of about 0, the size of the rounding of its sums, and many
    orderings tie it exactly (the same three values first, or last, or other sets whose sums agree). Each is
    counted as beating it, as in exact arithmetic (tenths as integers, the statistic as a fraction); a tolerance
    relative to the statistic alone left them to the rounding (it counted 22 of these 99 orderings, not 23)."""
    z = np.array([0.4, 2.1, -0.3, 0.3, -0.4, -0.9])

    def exact(row) -> Fraction:
        tenths = [round(v * 10) for v in row]
        x, y = tenths[:3], tenths[3:]
        cross = Fraction(sum(abs(a - b) for a in x for b in y), 9)
        within = [sum(abs(a - b) for a, b in itertools.combinations(side, 2)) for side in (x, y)]
        return Fraction(9, 6) * (2 * cross - Fraction(within[0], 3) - Fraction(within[1], 3))

    rng = np.random.default_rng(3)
    shuffled = np.concatenate([rng.permuted(np.broadcast_to(z, (k, len(z))), axis=1) for k in (50, 49)])
    beaten = sum(exact(row) >= exact(z) for row in shuffled)
    assert _split(z, np.random.default_rng(3), 3, 99, alpha=1.0) == (3, pytest.approx((beaten + 1) / 100))


def test_a_run_s_uncertainty_is_the_log_width_of_its_interval_over_two_normal_quantiles():
    z95 = stats.norm.ppf(0.975)
    assert _se_from_interval(100.0, 90.0, 110.0, 0.95) == pytest.approx((math.log(110) - math.log(90)) / (2 * z95))
    assert _se_from_interval(100.0, 90.0, 110.0, 0.90) == pytest.approx(
        (math.log(110) - math.log(90)) / (2 * stats.norm.ppf(0.95)))
    # an interval at its estimate is no width; one that does not hold its estimate, or is not positive, is none
    assert _se_from_interval(100.0, 100.0, 100.0, 0.95) == 0.0
    for low, high in [(None, 110.0), (90.0, None), (0.0, 110.0), (-1.0, 110.0), (101.0, 110.0), (90.0, 99.0)]:
        assert math.isnan(_se_from_interval(100.0, low, high, 0.95))
    # a rate below 1 (a slow drive's MB/s, a tree's files a second) has its width all the same
    assert _se_from_interval(0.5, 0.4, 0.6, 0.95) == pytest.approx((math.log(0.6) - math.log(0.4)) / (2 * z95))


def test_an_entry_is_a_run_or_a_series_mean_with_the_larger_of_its_scatter_and_its_runs_intervals():
    one = entry_of("r1", "t", [("r1", 100.0, 90.0, 110.0)])
    assert one == Entry("r1", "t", ("r1",), math.log(100.0), _se_from_interval(100.0, 90.0, 110.0, 0.95))
    assert one.rate == pytest.approx(100.0)
    assert math.isnan(entry_of("r1", "t", [("r1", 100.0, None, None)]).own_se)
    assert math.isnan(entry_of("r1", "t", [("r1", 100.0, 101.0, 110.0)]).own_se)     # not holding its estimate
    # a series: the mean log rate; its scatter (var of 2 logs, ddof 1) over the runs' own (tight intervals)
    tight = entry_of("s", "t", [("a", 100.0, 99.9, 100.1), ("b", 121.0, 120.9, 121.1)])
    logs = [math.log(100.0), math.log(121.0)]
    assert (tight.name, tight.started_utc, tight.runs) == ("s", "t", ("a", "b"))
    assert tight.log_rate == pytest.approx(sum(logs) / 2)
    assert tight.own_se == pytest.approx(math.sqrt(np.var(logs, ddof=1) / 2))
    # the runs' own intervals wider than their scatter: their mean square, one of them without any
    wide = entry_of("s", "t", [("a", 100.0, 50.0, 200.0), ("b", 101.0, None, None), ("c", 100.5, 50.0, 201.0)])
    own = np.nanmean([_se_from_interval(100.0, 50.0, 200.0, 0.95) ** 2, _se_from_interval(100.5, 50.0, 201.0,
                                                                                         0.95) ** 2])
    assert wide.own_se == pytest.approx(math.sqrt(own / 3))
    # no interval at all: the scatter alone (and no warning of an empty mean)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bare = entry_of("s", "t", [("a", 100.0, None, None), ("b", 110.0, None, None), ("c", 90.0, None, None)])
    assert bare.own_se == pytest.approx(math.sqrt(np.var(np.log([100.0, 110.0, 90.0]), ddof=1) / 3))
    assert entry_of("s", "t", [("a", 100.0, 90.0, 110.0)], confidence=0.5).own_se == pytest.approx(
        (math.log(110) - math.log(90)) / (2 * stats.norm.ppf(0.75)))


def _e(log_rate: float, own: float = math.nan, i: int = 0) -> Entry:
    return Entry(f"r{i}", f"2026-01-01T00:{i:02d}:00Z", (f"r{i}",), log_rate, own)


def test_a_level_is_the_mean_with_the_larger_of_its_scatter_and_its_entries_intervals():
    assert _level([_e(1.0, 0.2)]) == (1.0, pytest.approx(0.2), 0)
    assert _level([_e(1.0)]) == (1.0, math.inf, 0)
    scatter = [_e(1.0, 0.001), _e(1.2, 0.001), _e(1.1)]
    assert _level(scatter) == (pytest.approx(1.1), pytest.approx(math.sqrt(0.01 / 3)), 2)
    own = [_e(1.0, 0.5), _e(1.2, 0.3), _e(1.1)]
    assert _level(own) == (pytest.approx(1.1), pytest.approx(math.sqrt((0.25 + 0.09) / 2 / 3)), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _level([_e(1.0), _e(1.2)]) == (pytest.approx(1.1), pytest.approx(math.sqrt(0.02 / 2)), 1)


def test_the_quantile_is_student_s_with_degrees_of_freedom_and_the_normal_without():
    assert _quantile(0, 0.95) == pytest.approx(stats.norm.ppf(0.975))
    assert _quantile(1, 0.95) == pytest.approx(stats.t.ppf(0.975, 1))
    assert _quantile(7, 0.90) == pytest.approx(stats.t.ppf(0.95, 7))


def test_a_ratio_between_two_levels_has_their_errors_in_quadrature_and_the_smaller_degrees_of_freedom():
    before = [_e(math.log(100) + d, 0.001) for d in (-0.02, 0.0, 0.02, 0.0)]
    after = [_e(math.log(80) + d, 0.001) for d in (-0.01, 0.01, 0.0)]
    r = ratio_between(before, after)
    sb, sa = math.sqrt(np.var([-0.02, 0, 0.02, 0], ddof=1) / 4), math.sqrt(np.var([-0.01, 0.01, 0], ddof=1) / 3)
    d, se, q = math.log(0.8), math.hypot(sb, sa), stats.t.ppf(0.975, 2)
    assert (r.estimate, r.low, r.high, r.n) == (pytest.approx(0.8), pytest.approx(math.exp(d - q * se)),
                                                pytest.approx(math.exp(d + q * se)), 7)
    assert r.method == "ratio of the mean log rates after and before"
    assert ratio_between(before, after, 0.5).high == pytest.approx(math.exp(d + stats.t.ppf(0.75, 2) * se))


def _steps(levels: list[tuple[float, int]], own: float = 0.001) -> list[Entry]:
    logs = [math.log(rate) + (0.003 if i % 2 else -0.003) for rate, count in levels for i in range(count)]
    return [_e(y, own, i) for i, y in enumerate(logs)]


def test_two_steps_are_found_in_their_places_oldest_first_with_the_segments_around_each():
    entries = _steps([(100, 6), (70, 6), (140, 6)])
    first, second = find_steps(entries)
    assert (first.at, first.name, first.started_utc, first.before, first.after) == (6, "r6", entries[6].started_utc,
                                                                                    6, 6)
    assert (second.at, second.name, second.before, second.after) == (12, "r12", 6, 6)
    assert first.ratio == ratio_between(entries[:6], entries[6:12])
    assert second.ratio == ratio_between(entries[6:12], entries[12:])
    assert first.change == pytest.approx(-30.0, abs=0.2) and second.change == pytest.approx(100.0, abs=0.5)
    # the same step with the runs' own intervals swallowing it: the split is not borne out
    assert [s.at for s in find_steps(_steps([(100, 6), (97, 6), (150, 6)]))] == [6, 12]
    # a lower level of the permutation test keeps fewer splits: at 1 %, 99 orderings can never reach p <= 0.01
    assert find_steps(entries, permutations=99, alpha=0.001) == []
    assert [s.at for s in find_steps(entries, permutations=99, alpha=0.05)] == [6, 12]


def test_a_split_the_intervals_do_not_bear_out_is_dropped_the_weakest_first():
    # the runs' own intervals (+-0.2 on the log scale) swallow a 3 % step but not a 50 % one
    entries = _steps([(100, 6), (97, 6), (150, 6)], own=0.2)
    steps = find_steps(entries)
    assert [s.at for s in steps] == [12]
    assert steps[0].before == 12 and steps[0].ratio == ratio_between(entries[:12], entries[12:])
    assert find_steps(entries, confidence=0.9)[0].ratio == ratio_between(entries[:12], entries[12:], 0.9)


def test_the_latest_run_is_held_against_the_level_since_the_last_step_by_the_formula():
    entries = _steps([(200, 6), (100, 6)]) + [_e(math.log(90), 0.01, 12)]
    latest = check_latest(entries)
    base = entries[6:12]
    logs = np.array([e.log_rate for e in base])
    level, level_se, df = logs.mean(), math.sqrt(max(np.var(logs, ddof=1), 0.001 ** 2) / 6), 5
    d = math.log(90) - level
    se = math.sqrt(max(np.var(logs, ddof=1), 0.01 ** 2) + level_se ** 2)
    q = stats.t.ppf(0.975, df)
    assert latest.baseline == tuple(base) and latest.entry == entries[-1]
    assert (latest.ratio.estimate, latest.ratio.low, latest.ratio.high) == (
        pytest.approx(math.exp(d)), pytest.approx(math.exp(d - q * se)), pytest.approx(math.exp(d + q * se)))
    assert latest.ratio.n == 7 and latest.ratio.method == "latest rate / the level since the last step"
    assert latest.change == pytest.approx((math.exp(d) - 1) * 100)
    # a step down beyond a threshold: the whole interval below 1 - threshold
    assert latest.step_down(1 - latest.ratio.high - 1e-9) and not latest.step_down(1 - latest.ratio.high + 1e-9)
    at_edge = history.Latest(latest.entry, latest.baseline, history.Estimate(0.9, 0.85, 1.0 - 0.05, "m", 7))
    assert not at_edge.step_down(0.05)            # an interval that reaches the threshold is not beyond it
    # no step before it: every earlier run is the baseline
    flat = _steps([(100, 5)]) + [_e(math.log(100), 0.001, 5)]
    assert check_latest(flat).baseline == tuple(flat[:5]) and not check_latest(flat).step_down(0.0)


def test_the_latest_run_against_one_run_before_it_has_only_their_intervals():
    # one entry of baseline: no scatter; the latest's own interval and the level's, with the normal quantile
    latest = check_latest([_e(0.0, 0.03), _e(-0.2, 0.04, 1)])
    se, q = math.sqrt(0.04 ** 2 + 0.03 ** 2), stats.norm.ppf(0.975)
    assert (latest.ratio.low, latest.ratio.high) == (pytest.approx(math.exp(-0.2 - q * se)),
                                                    pytest.approx(math.exp(-0.2 + q * se)))
    assert latest.ratio.estimate == pytest.approx(math.exp(-0.2)) and latest.step_down(0.05)
    # the latest without an interval beside a level of runs: the level's scatter stands for it
    runs = [_e(0.0, 0.001, 0), _e(0.02, 0.001, 1), _e(-0.02, 0.001, 2), _e(-0.3, math.nan, 3)]
    got = check_latest(runs)
    spread = np.var([0.0, 0.02, -0.02], ddof=1)
    se = math.sqrt(spread + spread / 3)
    assert got.ratio.high == pytest.approx(math.exp(-0.3 + stats.t.ppf(0.975, 2) * se))
    # neither a level's scatter nor the run's interval: no interval, and so no step called
    none = check_latest([_e(0.0), _e(-0.5, math.nan, 1)])
    assert math.isnan(none.ratio.low) and math.isnan(none.ratio.high) and not none.step_down(0.05)
    # the level's own interval but none of the latest's: still no interval (the run could be anywhere)
    assert math.isnan(check_latest([_e(0.0, 0.01), _e(-0.5, math.nan, 1)]).ratio.high)
    assert check_latest([]) is None and check_latest([_e(0.0, 0.01)]) is None
    assert check_latest([_e(0.0, 0.03), _e(-0.2, 0.04, 1)], confidence=0.5).ratio.high == pytest.approx(
        math.exp(-0.2 + stats.norm.ppf(0.75) * math.sqrt(0.04 ** 2 + 0.03 ** 2)))


def test_a_step_in_the_first_runs_is_found_from_the_very_first_run():
    # three runs at 100, then twelve at 70: the split leaves the first three on their side
    assert [s.at for s in find_steps(_steps([(100, 3), (70, 12)]))] == [3]


def test_a_split_is_kept_where_its_p_value_is_at_the_level_and_not_above_it():
    entries = _steps([(100, 6), (97, 6)], own=0.0001)
    z = np.array([e.log_rate for e in entries])
    p = _split(z, np.random.default_rng([history.SEED, 0, len(z)]), 3, 499, alpha=1.0)[1]     # every ordering drawn
    assert p > 1 / 500
    assert [s.at for s in find_steps(entries, alpha=p)] == [6]
    assert find_steps(entries, alpha=p - 1e-9) == []


def test_the_search_draws_its_orderings_from_the_seed_it_is_given(monkeypatch):
    states = []
    real = history._split

    def watched(z, rng, min_size, permutations, alpha):
        states.append(rng.bit_generator.state["state"]["state"])
        return real(z, rng, min_size, permutations, alpha)
    monkeypatch.setattr(history, "_split", watched)
    find_steps(_steps([(100, 6), (70, 6)]), seed=5)
    # each segment's orderings from a generator of the seed and the segment's bounds: the whole history first
    assert states[0] == np.random.default_rng([5, 0, 12]).bit_generator.state["state"]["state"]


def test_the_latest_run_s_check_searches_the_steps_at_its_own_seed_and_confidence(monkeypatch):
    asked = []
    real = history.find_steps

    def watched(entries, **kw):
        asked.append(kw)
        return real(entries, **kw)
    monkeypatch.setattr(history, "find_steps", watched)
    check_latest(_steps([(100, 6), (70, 6)]), confidence=0.9, seed=8)
    assert asked == [{"seed": 8, "confidence": 0.9, "kept": None}]


def test_of_two_splits_the_intervals_do_not_bear_out_the_weaker_goes_first():
    """Levels 100, 104 and 106 with wide own intervals: both splits are weak at first; the weaker (104 -> 106) is
    dropped, after which 100 against the rest stands. Dropping the first split instead would keep 12."""
    entries = _steps([(100, 6), (104, 6), (106, 6)], own=0.03)
    first, second = ratio_between(entries[:6], entries[6:12]), ratio_between(entries[6:12], entries[12:])
    assert first.low <= 1.0 <= first.high and second.low <= 1.0 <= second.high
    assert [s.at for s in find_steps(entries)] == [6]


def test_two_runs_before_the_latest_scatter_as_a_level_does():
    runs = [_e(0.0, 0.001, 0), _e(0.04, 0.001, 1), _e(-0.3, math.nan, 2)]
    got = check_latest(runs)
    spread = np.var([0.0, 0.04], ddof=1)
    se = math.sqrt(spread + spread / 2)
    assert got.ratio.high == pytest.approx(math.exp(-0.3 - 0.02 + stats.t.ppf(0.975, 1) * se))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_latest([_e(0.0, 0.03), _e(-0.2, 0.04, 1)])


def test_steps_in_both_halves_are_each_found_the_stronger_first():
    # 100, 60, 30, 15: the middle split first, then one in each half of the same round
    entries = _steps([(100, 6), (60, 6), (30, 6), (15, 6)])
    assert [s.at for s in find_steps(entries)] == [6, 12, 18]
