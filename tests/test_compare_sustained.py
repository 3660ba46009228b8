"""Two sustained results compared number by number (comparison.compare_sustained, ratio_of_intervals) and the
advice under a comparison: the words and figures a user reads, checked exactly in the test process (the
mutation run's selection: docs/mutation.md)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from stibium_py.analysis.comparison import advice, ratio_of_intervals, runs_needed
from stibium_py.kinds.sustained.compare import compare_sustained
from stibium_py.analysis.estimate import Estimate
from stibium_py.analysis.settings import Settings
from stibium_py.analysis.stats import norm_ppf
from stibium_py.kinds.sustained.result import Stretch, SustainedResult

Z = norm_ppf(0.975)


def _e(point: float, low: float, high: float, n: int = 10) -> Estimate:
    return Estimate(point, low, high, "bootstrap", n)


def test_the_ratio_of_two_intervals_is_log_normal_with_the_spreads_in_quadrature():
    a, b = _e(100.0, 90.0, 110.0, 7), _e(200.0, 150.0, 260.0, 9)
    r = ratio_of_intervals(a, b)
    # each side's spread is its log half-width over the normal quantile; the ratio's half-width is that quantile
    # times the spreads added in quadrature
    spread = math.hypot(math.log(110 / 90) / (2 * Z), math.log(260 / 150) / (2 * Z))
    assert r.estimate == 2.0 and r.n == 16
    assert r.low == pytest.approx(2.0 * math.exp(-Z * spread), rel=1e-12)
    assert r.high == pytest.approx(2.0 * math.exp(Z * spread), rel=1e-12)
    assert r.method == "ratio of two independent bootstrap estimates, log-normal from their intervals"
    small = ratio_of_intervals(_e(0.5, 0.45, 0.55), _e(0.25, 0.2, 0.3))      # rates below 1 (a unit of GB/s)
    assert small.estimate == 0.5 and small.low == pytest.approx(0.5 * math.exp(-math.hypot(
        math.log(0.55 / 0.45) / 2, math.log(0.3 / 0.2) / 2)), rel=1e-12)


@pytest.mark.parametrize("a,b", [
    (_e(100.0, math.nan, math.nan), _e(200.0, 150.0, 260.0)),     # a side without an interval
    (_e(100.0, 90.0, 110.0), _e(200.0, 0.0, 260.0)),              # a bound at zero: no log
    (_e(100.0, 90.0, 110.0), _e(200.0, 260.0, 150.0)),            # bounds the wrong way round
    (_e(0.0, 90.0, 110.0), _e(200.0, 150.0, 260.0)),              # no ratio of a zero
    (_e(100.0, 90.0, 110.0), _e(0.0, 150.0, 260.0)),
])
def test_a_ratio_without_two_intervals_says_so_and_has_none(a, b):
    r = ratio_of_intervals(a, b)
    assert math.isnan(r.low) and math.isnan(r.high) and r.method == "no interval: a side has none"
    assert r.n == a.n + b.n
    if a.estimate > 0 and b.estimate > 0:
        assert r.estimate == b.estimate / a.estimate          # the ratio itself is still said


def test_equal_bounds_are_an_interval_of_no_width():
    r = ratio_of_intervals(_e(100.0, 100.0, 100.0), _e(100.0, 100.0, 100.0))
    assert (r.estimate, r.low, r.high) == (1.0, 1.0, 1.0)


def _side(name: str, first: Estimate, after: Estimate | None = None, cliff: Estimate | None = None):
    stretches = [Stretch(0, 10, 0, 10 << 20, first)] + ([Stretch(10, 20, 10 << 20, 20 << 20, after)] if after else [])
    return SimpleNamespace(name=name, op="write", result=SustainedResult(20, 20 << 20, stretches, cliff))


def test_two_steady_drives_compare_their_one_rate_as_the_steady_rate():
    a, b = _side("s", _e(100e6, 99e6, 101e6)), _side("s", _e(150e6, 149e6, 151e6))
    (r,) = compare_sustained(a, b, Settings())
    assert (r.test, r.op, r.what, r.verdict) == ("s", "write", "steady rate", "faster")
    assert r.a is a.result.stretches[0].rate_bytes_per_s and r.b is b.result.stretches[0].rate_bytes_per_s
    assert r.ratio.estimate == 1.5


def test_two_cliffs_compare_the_fast_rate_the_rate_after_and_the_cliff_said_earlier_or_later():
    a = _side("s", _e(2e9, 1.9e9, 2.1e9), _e(5e8, 4.99e8, 5.01e8), _e(8e9, 7.9e9, 8.1e9))
    b = _side("s", _e(1e9, 0.99e9, 1.01e9), _e(5e8, 4.99e8, 5.01e8), _e(4e9, 3.9e9, 4.1e9))
    fast, after, cliff = compare_sustained(a, b, Settings())
    assert (fast.what, fast.verdict) == ("fast rate (first stretch)", "slower")
    assert (after.what, after.verdict) == ("rate after the cliff", "same within noise")
    assert (cliff.what, cliff.verdict, cliff.ratio.estimate) == ("cliff at (bytes)", "earlier", 0.5)
    later = compare_sustained(b, a, Settings())[2]
    assert (later.verdict, later.ratio.estimate) == ("later", 2.0)


def test_a_cliff_on_one_side_only_compares_the_first_stretches_as_fast_rates():
    a = _side("s", _e(2e9, 1.9e9, 2.1e9), _e(5e8, 4.9e8, 5.1e8), _e(8e9, 7.9e9, 8.1e9))
    b = _side("s", _e(2e9, 1.9e9, 2.1e9))
    (r,) = compare_sustained(a, b, Settings())
    assert (r.what, r.verdict) == ("fast rate (first stretch)", "inconclusive")
    (r,) = compare_sustained(b, a, Settings())
    assert r.what == "fast rate (first stretch)"
    assert r.to_json() == {"test": "s", "op": "write", "what": "fast rate (first stretch)",
                           "a": b.result.stretches[0].rate_bytes_per_s.as_dict(),
                           "b": a.result.stretches[0].rate_bytes_per_s.as_dict(), "ratio": r.ratio.as_dict(),
                           "verdict": "inconclusive"}


def test_a_cliff_s_inconclusive_verdict_keeps_its_word():
    a = _side("s", _e(2e9, 1.9e9, 2.1e9), _e(5e8, 4.9e8, 5.1e8), _e(8e9, 4e9, 16e9))
    b = _side("s", _e(2e9, 1.9e9, 2.1e9), _e(5e8, 4.9e8, 5.1e8), _e(8.1e9, 4e9, 16e9))
    assert compare_sustained(a, b, Settings())[2].verdict == "inconclusive"


def _comparison(log_rates, ratios):
    points = [SimpleNamespace(ratio=_e(r, r * 0.9, r * 1.1)) for r in ratios]
    return SimpleNamespace(log_rates=log_rates, points=points)


def test_advice_with_several_runs_a_side_is_about_the_machines():
    said = advice(3, 2, _comparison({}, [1.0]), Settings(), 5)
    assert said == ("3 and 2 runs: the intervals include the variance between runs, so the verdicts are about the "
                    "machines")


BASE = ("one run on a side: the intervals cannot see the variance between runs (the host's cache, background work, "
        "the drive's temperature), so the verdicts are about these runs only")


def test_advice_with_one_run_a_side_and_no_spread_asks_for_runs():
    assert advice(1, 3, _comparison({}, [1.2]), Settings(), 5) == \
        f"{BASE}; run each side with --runs 5 (at least 3) to compare the machines"
    assert advice(3, 1, _comparison({"k": ([1.0], [2.0])}, [1.2]), Settings(), 4) == \
        f"{BASE}; run each side with --runs 4 (at least 3) to compare the machines"


def test_advice_with_one_run_a_side_counts_the_runs_the_measured_spread_needs():
    logs = {"k": ([0.0, 0.1, 0.2], [0.0, 0.3]), "j": ([1.0, 1.4], [5.0])}
    spreads = [0.1, math.sqrt(0.045), math.sqrt(0.08)]               # np.std(ddof=1) of each list of two or more
    ratios = [1.5, 2.0, 0.0, math.inf, 1.2]                          # the zero and inf are left out
    ratio = 1.5                                                      # the median of 1.5, 2.0 and 1.2
    needed = runs_needed(sorted(spreads)[1], ratio, 0.02, 0.95)
    said = advice(1, 1, _comparison(logs, ratios), Settings(), 5)
    assert said == (f"{BASE}; with the spread between runs measured here, about {needed} runs per side would tell "
                    f"a ratio of {ratio:.2f} from 1")


def test_advice_caps_the_runs_it_names_at_a_thousand_and_says_more():
    logs = {"k": ([0.0, 2.0], [0.0, 2.0])}
    said = advice(1, 1, _comparison(logs, [1.001]), Settings(), 5)
    assert said.endswith("about 1000+ runs per side would tell a ratio of 1.00 from 1")
    with_no_ratio = advice(1, 1, _comparison({"k": ([0.0, 0.01], [0.0, 0.01])}, [0.0]), Settings(), 5)
    assert with_no_ratio.endswith("runs per side would tell a ratio of 1.00 from 1")


@pytest.mark.parametrize("spread,ratio,needed", [(None, 1.5, None), (math.nan, 1.5, None), (0.0, 1.5, None),
                                                 (-0.1, 1.5, None)])
def test_runs_needed_is_unknown_without_a_spread(spread, ratio, needed):
    assert runs_needed(spread, ratio, 0.02, 0.95) is needed


def test_runs_needed_counts_for_the_larger_of_the_difference_and_the_band():
    assert runs_needed(0.1, 1.5, 0.02, 0.95) == max(2, math.ceil(2 * (Z * 0.1 / math.log(1.5)) ** 2))
    assert runs_needed(0.1, 1.0, 0.02, 0.95) == math.ceil(2 * (Z * 0.1 / math.log(1.02)) ** 2)
    assert runs_needed(0.1, 0.0, 0.02, 0.95) == runs_needed(0.1, math.inf, 0.02, 0.95) == \
        math.ceil(2 * (Z * 0.1 / math.log(1.02)) ** 2)
    assert runs_needed(0.001, 3.0, 0.02, 0.95) == 2                   # at least two


MIXED = """name: both
tests:
  - name: f
    kind: files
    sizes: [64KiB, 256KiB]
    repeats: 3
  - name: s
    kind: sustained
    bytes: 6MiB
    file_size: 2MiB
    granularity: 128KiB
    chunk: 256KiB
"""


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """Three runs of a files and a sustained test (the helper streams the sustained test's chunks), each with
    its own seed; about a second each."""
    import shutil
    import tempfile
    from click.testing import CliRunner
    from stibium_py.cli import main
    base = tmp_path_factory.mktemp("three")
    (base / "both.yaml").write_text(MIXED)
    disk = Path(tempfile.mkdtemp(prefix="stibium-test-", dir="/var/tmp"))     # direct I/O: not a RAM file system
    try:
        runs = []
        for k in range(3):
            done = CliRunner().invoke(main, ["run", str(base / "both.yaml"), "--target", str(disk / f"t{k}"),
                                             "--out", str(base / f"r{k}"), "--seed", str(k + 1)])
            assert done.exit_code == 0, done.output
            (run,) = (base / f"r{k}").iterdir()
            runs.append(run)
    finally:
        shutil.rmtree(disk, ignore_errors=True)
    return runs


def test_a_sustained_test_is_summarised_with_the_settings_of_the_run(three_runs):
    from stibium_py import registry
    from stibium_py.analysis.summary import SummaryContext
    from stibium_py.kinds.sustained.result import sustained_results
    from stibium_py.rundir.csvread import read_measurements
    rows, _ = read_measurements(three_runs[0])
    rows = rows.take(rows.kind == "sustained")
    s = Settings(resamples=300, seed=7, confidence=0.8)
    found = registry.spec("sustained").summarise("s", "write", rows, SummaryContext(s, None, {}, None, {}))()
    expected = list(sustained_results(rows, 0.8, 7).values())
    assert [e.to_json() for e in found] == [e.to_json() for e in expected] and len(found) == 1
    wider = list(sustained_results(rows, 0.95, 7).values())[0].result.stretches[0].rate_bytes_per_s
    narrower = found[0].result.stretches[0].rate_bytes_per_s
    assert wider.high - wider.low > narrower.high - narrower.low


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def test_the_many_runs_json_says_what_the_typed_comparison_holds(three_runs):
    from stibium_py.results.compare import compare_many, load_side
    s = Settings(resamples=200, seed=3)
    many = compare_many([load_side(r) for r in three_runs], settings=s)
    data = many.to_json()
    assert data["format"] == "stibium-compare-many/2" and data["reference"] == many.reference.to_json()
    assert data["runs"] == [p.b.to_json() for p in many.pairs] and [r["run"] for r in data["runs"]] == \
        [r.name for r in three_runs[1:]]
    assert data["settings"] == s.to_json()
    assert len(data["rows"]) == len(many.rows) > 0
    for row, typed in zip(data["rows"], many.rows):
        p = typed.point
        assert row["run"] == typed.run.run and row["label"] == typed.run.label
        # a side without a rate (a fit of two small sizes can come out flat on a loaded machine) is null
        assert row["rate_bytes_per_s"] == _finite_or_none(p.rate_b_bytes_per_s)
        assert row["reference_rate_bytes_per_s"] == _finite_or_none(p.rate_a_bytes_per_s)
        assert row["ratio"] == p.ratio.as_dict() and row["verdict"] == p.verdict and row["scope"] == p.scope
        assert row["runs"] == p.runs_b and row["caution"] == typed.caution
        assert (row["test"], row["op"], row["kind"]) == (p.key.test, p.key.op, p.key.kind)
    assert data["summaries"] == [{**g.to_json(), "run": pair.b.run} for pair in many.pairs for g in pair.groups]
    assert data["advice"] == [pair.advice for pair in many.pairs] and all(data["advice"])
    assert data["differences"] == sorted({d for pair in many.pairs for d in pair.differences})
    sustained = data["sustained"]
    assert [(x["test"], x["op"], x["run"], x["label"]) for x in sustained] == \
        [("s", "write", pair.b.run, pair.b.label) for pair in many.pairs]
    for x, pair in zip(sustained, many.pairs):
        (sp,) = pair.sustained
        assert x["headline"] == sp.b.result.headline and x["reference_headline"] == sp.a.result.headline
        assert x["ratios"] == [r.to_json() for r in sp.ratios] and x["ratios"]


def test_two_runs_json_carries_each_side_s_sustained_curve_and_ratios(three_runs):
    from stibium_py.results.compare import compare_runs, load_side
    pair = compare_runs(load_side(three_runs[0]), load_side(three_runs[1]), settings=Settings(resamples=200, seed=3))
    (sp,) = pair.sustained
    data = sp.to_json()
    assert data == {"test": "s", "op": "write", "a": sp.a.to_json(), "b": sp.b.to_json(),
                    "ratios": [r.to_json() for r in sp.ratios]}
    assert data["a"]["name"] == data["b"]["name"] == "s" and data["a"] != data["b"]
    assert pair.to_json()["sustained"] == [data]
