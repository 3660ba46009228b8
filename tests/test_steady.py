"""Steady state judged with intervals (analysis/steady.py), by simulation with a fixed seed: Sen's interval
covers the slope, a flat noisy series is found steady and a slowly drifting one is not, and PTS's own window of
five rounds cannot tell the two apart (why stibium's window is ten)."""

from __future__ import annotations

import numpy as np
import pytest

from stibium_py.kinds.pattern.steady import PTS_WINDOW, STEADY_WINDOW, first_steady, judge
from stibium_py.analysis.stats.theil_sen import sen_interval

SERIES = 600
ROUNDS = 25


def _series(rng: np.random.Generator, drift_per_round: float, noise: float) -> np.ndarray:
    """A figure of 100 that grows by drift_per_round of it each round, with log-normal noise."""
    return 100 * (1 + drift_per_round * np.arange(ROUNDS)) * np.exp(rng.normal(0, noise, ROUNDS))


def _steady_share(drift: float, noise: float, window: int, seed: int, **bounds) -> float:
    rng = np.random.default_rng(seed)
    return float(np.mean([first_steady(_series(rng, drift, noise), window=window, **bounds).steady
                          for _ in range(SERIES)]))


def test_sens_interval_of_five_rounds_is_the_smallest_to_the_largest_slope():
    """Of the 120 orders of five values, only the two monotone ones reject no trend at 95 % (2/120 = 1.7 %; with
    one pair out of order it is 2/24 = 8.3 %): the interval is every pairwise slope."""
    y = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    assert sen_interval(y, 0.95) == (0.5, -3.0, 4.0)


def test_sens_interval_covers_the_slope_at_its_confidence():
    """2000 windows of ten rounds, a slope of 0.3 in noise of 1: the interval holds it in 95 % of them (measured
    95.25 %; the bounds 93-98.5 % are more than three standard errors, 0.5 %, from 95 %)."""
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(2000):
        y = rng.normal(0, 1, 10) + 0.3 * np.arange(10)
        slope, low, high = sen_interval(y, 0.95)
        assert low <= slope <= high
        hits += low <= 0.3 <= high
    assert 0.93 <= hits / 2000 <= 0.985


def test_a_flat_noisy_figure_is_steady_and_a_drift_of_two_percent_a_round_is_not():
    """Within 25 rounds, at 1 % noise, over 600 series each (seeded): flat series are found steady in all of
    them, series drifting 2 % of their start a round in none (measured: 100 % and 0.0 %; at 2 % noise 100 % and
    0.5 %). The bounds hold with room: a share of 600 that is truly 100 % or 0 % cannot cross them by chance."""
    assert _steady_share(0.0, 0.01, STEADY_WINDOW, seed=1) >= 0.98
    assert _steady_share(0.02, 0.01, STEADY_WINDOW, seed=2) <= 0.02


def test_pts_window_of_five_calls_a_drifting_figure_steady():
    """Why the window is ten: across PTS's five rounds a 2 % drift moves 8 %, inside the 10 % bound, so the
    point criteria pass (92 % of the series were called steady, the interval rule included)."""
    assert _steady_share(0.02, 0.01, PTS_WINDOW, seed=3) >= 0.8


def test_a_window_whose_line_passes_but_whose_interval_does_not_says_so():
    # ten rounds moving about 0.7 % a round in noise: the line inside 10 % across the window, its interval not
    v = judge([100.2, 100.7, 102.8, 102.9, 102.8, 105.1, 107.5, 107.8, 106.1, 106.1])
    assert v.range_fraction <= 0.2 and v.excursion_fraction <= 0.1
    assert not v.steady
    assert v.why == ("the slope's 95% interval reaches 10.2% of the mean across the window, above 10%: the figure "
                     "may still be moving")
    flat = judge(np.full(10, 50.0))
    assert flat.steady and flat.why == "" and flat.excursion_interval == (0.0, 0.0)
    assert judge([100, 130, 100, 100, 100]).why == "the range is 28.3% of the mean, above 20%"


def test_a_figure_that_changes_once_is_steady_only_after_the_change():
    """A rate switched after round 8 (from 100 to 60): the first steady window lies wholly after it, and its
    mean is the second rate."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        y = np.where(np.arange(ROUNDS) < 8, 100.0, 60.0) * np.exp(rng.normal(0, 0.01, ROUNDS))
        v = first_steady(y)
        assert v.steady and v.first_round > 8
        assert v.mean == pytest.approx(60, rel=0.02)


# -- a test by rounds: the verdict on measurements, the runner's early stop, preconditioning, compare

def _rows(rates_mb_s: list[float], window: int, max_rounds: int, op: str = "write"):
    """A test by rounds of one point whose round k moved 10 MB at rates_mb_s[k]."""
    from stibium_py.rundir.measurement import Measurement
    from stibium_py.rundir.table import Table
    return Table.from_rows(Measurement(seq=k, test="t", op=op, kind="pattern", access="random", size_bytes=10**7,
                                       granularity_bytes=4096, stride_bytes=0, trial=k, file="t/data.bin",
                                       bytes=10**7, seconds=10 / r, steady_window=window, steady_max_rounds=max_rounds)
                           for k, r in enumerate(rates_mb_s))


def test_a_rate_switched_mid_run_is_steady_only_in_rounds_after_the_switch():
    """Eight rounds at 100 MB/s, then 50 MB/s, 1 % noise (seed 3): the first steady window begins after the
    switch, and the rates are of it alone."""
    from stibium_py.kinds.pattern.steady import steadiness, window_rows
    rng = np.random.default_rng(3)
    rates = [100.0] * 8 + [50.0] * 22
    rows = _rows([r * np.exp(rng.normal(0, 0.01)) for r in rates], window=10, max_rounds=30)
    judged = steadiness(rows)
    assert judged.steady and judged.rounds == 30
    first, last = judged.window_rounds
    assert first == 9 and last == 18 and judged.steady_round == 18       # the first window wholly after it
    kept = window_rows(rows, {"t": judged})
    assert sorted(kept.trial.tolist()) == list(range(8, 18))
    assert judged.points[0].verdict.mean == pytest.approx(50e6, rel=0.01)


def test_rounds_count_only_while_every_point_has_its_measurement():
    from stibium_py.kinds.pattern.steady import steadiness
    from stibium_py.rundir.table import Table
    reads = _rows([100.0] * 6, window=4, max_rounds=10, op="read")
    writes = _rows([100.0] * 4, window=4, max_rounds=10)         # the writes of rounds 5 and 6 are missing
    judged = steadiness(Table.concat([reads, writes]))
    assert judged.rounds == 4 and judged.steady_round == 4 and len(judged.points) == 2


RUN_PLAN = """name: rounds
tests:
  - name: p
    kind: pattern
    op: [read, write]
    access: random
    granularities: [4KiB]
    bytes: 64KiB
    span: 256KiB
    steady: {{window: 4, max_rounds: 9}}{extra}
"""


def _run(tmp_path, helpers, extra: str = "", name: str = "r"):
    from rich.console import Console

    from stibium_py.run import LoadedPlan, RunOptions, start_run
    path = tmp_path / f"{name}.yaml"
    path.write_text(RUN_PLAN.format(extra=extra))
    return start_run(LoadedPlan.read(path), RunOptions(target=tmp_path / f"t-{name}", out_dir=tmp_path / name,
                                                       progress=False), Console(quiet=True), helpers)


def test_the_rounds_stop_at_the_first_steady_window(tmp_path):
    """The fake helper's rate does not move: every window is steady, so the run stops after the first four
    rounds of its nine, complete, and the report says where."""
    from fake_helper import FakeHelpers

    from stibium_py.results.pipeline import summarize_run
    finished = _run(tmp_path, FakeHelpers())
    assert finished.status == "complete"
    _, rows, summary = summarize_run(finished.path)
    assert sorted(rows.trial.tolist()) == [0, 0, 1, 1, 2, 2, 3, 3]
    e = next(t for t in summary.tests if t.op == "write")
    assert e.steady.steady and e.steady.window_rounds == (1, 4) and e.points[0].trials == 4
    assert not [w for w in summary.warnings if "steady" in w.message]


def test_an_interrupted_run_by_rounds_resumes_and_stops_where_it_would_have(tmp_path):
    from fake_helper import FakeHelpers

    from rich.console import Console
    from stibium_py.run.preflight import RunError
    from stibium_py.run import RunOptions, resume_run
    from stibium_py.rundir.csvread import read_measurements
    helpers = FakeHelpers(interrupt_at=3)
    with pytest.raises(RunError):
        _run(tmp_path, helpers)
    run_dir = next((tmp_path / "r").iterdir())
    finished = resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), helpers)
    rows, _ = read_measurements(run_dir)
    assert finished.status == "complete" and sorted(rows.valid().trial.tolist()) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_rate_that_keeps_falling_runs_every_round_and_is_not_steady(tmp_path):
    """Each measurement 6 % slower than the one before: no window of four rounds is steady; the warning says
    how far the rounds went and what to do, and compare says the comparison is not of steady-state rates."""
    from fake_helper import FakeHelpers

    from stibium_py.results.compare import compare_runs, load_side
    from stibium_py.results.pipeline import summarize_run
    finished = _run(tmp_path, FakeHelpers(slower=lambda k: 1.06 ** k))
    _, rows, summary = summarize_run(finished.path)
    assert len(rows) == 18
    found = [w for w in summary.warnings if "steady" in w.message]
    assert sorted(w.test for w in found) == ["p (read)", "p (write)"]
    said = next(w for w in found if w.test == "p (write)")
    assert said.message.startswith("not steady after 9 rounds: p write random 4 KiB: the range is ")
    assert said.message.endswith("; its rates are of rounds 6-9, which still move")
    assert said.what_to_do == ("raise steady.max_rounds, precondition the span (precondition: true) so that "
                                   "writes meet a written device, or quote these rates as not steady")
    assert next(t for t in summary.tests if t.op == "write").points[0].trials == 4
    steady_run = _run(tmp_path, FakeHelpers(), name="s")
    result = compare_runs(load_side(steady_run.path), load_side(finished.path), allow_different_plans=True)
    assert len(result.cautions) == 2 and all(c.endswith(       # (the fake's memory speed may caution too)
        "not steady on B (the rates are of the last rounds, still moving): not a comparison of steady-state rates")
        for c in result.cautions.values())


def test_preconditioning_writes_the_span_twice_before_the_first_measurement(tmp_path):
    from fake_helper import FakeHelpers
    helpers = FakeHelpers()
    _run(tmp_path, helpers, extra="\n    precondition: true")
    calls = helpers.sessions[0].calls
    first = next(i for i, c in enumerate(calls) if c[0] in ("read", "write") and "--latency" not in c)
    before = [c for c in calls[:first] if c[0] == "write" and "--existing" in c]
    assert len(before) == 2
    for c in before:
        flags = dict(zip(c[1::2], c[2::2]))
        assert flags["--bytes"] == flags["--span"] == str(256 * 1024)
        assert flags["--granularity"] == str(128 * 1024) and flags["--sync"] == "fsync"


PLAN = """\
name: q
tests:
  - name: a
    kind: pattern
    op: [read, write]
    granularities: [4KiB]
    bytes: 64KiB
{extra}"""


def _expanded(tmp_path, extra: str):
    from stibium_py.plan import load_and_expand
    path = tmp_path / "plan.yaml"
    path.write_text(PLAN.format(extra=extra))
    return load_and_expand(path)[2]


def test_a_test_by_rounds_expands_to_its_most_rounds_and_preconditioning_is_counted(tmp_path):
    e = _expanded(tmp_path, "    steady: {window: 5, max_rounds: 7}\n    precondition: true\n")
    assert len(e.ops) == 2 * 7 and sorted({o.trial for o in e.ops}) == list(range(7))
    assert {(o.steady_window, o.steady_max_rounds) for o in e.ops} == {(5, 7)}
    assert e.tests[0].precondition_bytes == 2 * 65536
    assert e.bytes_written == 7 * 65536 + 65536 + 2 * 65536       # the writes, the layout, preconditioning
    # a plan of trials keeps its ops' form: runs made before rounds existed still resume
    assert "steady_window" not in _expanded(tmp_path, "    trials: 3\n").ops_as_dicts()[0]


@pytest.mark.parametrize("extra,message", [
    ("    trials: 3\n    steady: {window: 5}\n", "plan.yaml:3: tests[0]: give trials or steady, not both: with steady, "
                                                 "the rounds are the trials (steady.max_rounds at most)"),
    ("    steady: {window: 10, max_rounds: 5}\n", "plan.yaml:8: tests[0].steady: max_rounds (5) is smaller than window "
                                                 "(10): raise max_rounds to at least the window"),
    ("    steady: {window: 2}\n", "plan.yaml:8: tests[0].steady.window: Input should be greater than or equal to 3 (got 2)"),
    ("    layout: fresh\n    precondition: true\n", "plan.yaml:3: tests[0]: precondition writes the laid-out file; it "
                                                    "needs layout: laid-out"),
])
def test_rounds_and_preconditioning_plan_errors(tmp_path, extra, message):
    from stibium_py.plan.model import PlanError
    with pytest.raises(PlanError) as e:
        _expanded(tmp_path, extra)
    assert str(e.value).replace(str(tmp_path) + "/", "") == message


def test_a_tests_points_are_judged_in_the_reports_order():
    from stibium_py.kinds.pattern.steady import steadiness
    from stibium_py.rundir.table import Table
    rows = [_rows([100.0] * 4, window=4, max_rounds=4)]
    for g in (16384, 1 << 20):
        rows.append(Table.from_rows(m._replace(granularity_bytes=g) for m in _rows([100.0] * 4, window=4, max_rounds=4)))
    judged = steadiness(Table.concat(rows))
    assert [p.fields["granularity_bytes"] for p in judged.points] == [4096, 16384, 1 << 20]
