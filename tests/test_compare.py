"""stibium compare on synthetic runs of known ratio, and on real ones."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner


from stibium_py import cli
from stibium_py.cli import main
from stibium_py.analysis.settings import Settings
from stibium_py.results.compare import CompareError, compare_runs, load_side
from synthetic import make_run


def test_a_known_ratio_is_covered_by_the_interval(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=200e6 * 2.97, seed=2)
    result = compare_runs(load_side(a), load_side(b)).to_json()
    assert len(result["rows"]) == 2 + 4
    for row in result["rows"]:
        q = row["ratio"]
        assert q["low"] <= 2.97 <= q["high"], row
        assert q["estimate"] == pytest.approx(2.97, rel=0.05)
        assert row["verdict"] == "faster"
    pat = next(s for s in result["summaries"] if s["test"] == "pat")
    assert pat["ratio"]["low"] <= 2.97 <= pat["ratio"]["high"] and pat["verdict"] == "faster"
    assert result["unmatched"] == {"only_in_a": [], "only_in_b": []}


def test_one_trial_a_side_gives_no_interval_and_no_verdict(tmp_path, monkeypatch):
    """The summary gives a point of one trial no interval; compare says the same, in the same words, and draws
    no verdict (it used to print a zero-width "95 %" interval and "faster")."""
    import numpy as np
    from stibium_py.results.pipeline import summarize_run
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1, trials=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=200e6 * 1.06, seed=2, trials=1)
    result = compare_runs(load_side(a), load_side(b)).to_json()
    pattern = [r for r in result["rows"] if r["kind"] == "pattern"]
    assert len(pattern) == 4
    for row in pattern:
        assert (row["verdict"], row["refused"]) == ("inconclusive: one trial", "one trial")
        assert (row["ratio"]["low"], row["ratio"]["high"], row["ratio"]["method"]) == (None, None,
                                                                                       "no interval: one trial")
    pat = next(s for s in result["summaries"] if s["test"] == "pat")
    assert pat["verdict"] == "inconclusive: one trial" and pat["ratio"]["low"] is None
    # the files test has ten repeats of seven sizes: its ratio keeps its interval and verdict
    assert all(r["ratio"]["low"] is not None for r in result["rows"] if r["kind"] == "files")
    _, _, summary = summarize_run(a)
    point = next(e for e in summary.tests if e.kind == "pattern").points[0]
    assert np.isnan(point.throughput.low) and np.isnan(point.throughput.high)
    assert point.throughput.method == "median of throughput; no interval: one trial"
    monkeypatch.setattr(cli.console.made(), "_width", 80)     # a terminal of 80 columns, whatever runs the tests
    out = CliRunner().invoke(main, ["compare", str(a), str(b), "--out", str(tmp_path / "c.html")])
    assert out.exit_code == 0, out.output
    q = pattern[0]["ratio"]["estimate"]
    line = next(ln for ln in out.output.splitlines() if ln.startswith("pat ") and f"{q:.3f} (no interval)" in ln)
    assert line.split()[:4] == ["pat", "read", "rand", "4"] and line.rstrip().endswith("inconclusive: one trial")


def test_a_files_test_of_one_size_compares_without_a_crash(tmp_path, monkeypatch):
    """One size gives a files test no rate (the summary warns "one size: a rate needs two sizes"); compare
    says so instead of failing inside the bootstrap of lines."""
    import numpy as np
    from stibium_py.results.pipeline import summarize_run
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1, sizes=np.array([4e6]))
    b = make_run(tmp_path / "b", rate_bytes_per_s=300e6, seed=2, sizes=np.array([4e6]))
    result = compare_runs(load_side(a), load_side(b)).to_json()
    files = [r for r in result["rows"] if r["kind"] == "files"]
    assert [(r["op"], r["verdict"], r["rate_a_bytes_per_s"], r["ratio"]["estimate"]) for r in files] == [
        ("read", "inconclusive: one size", None, None), ("write", "inconclusive: one size", None, None)]
    _, _, summary = summarize_run(a)
    assert [w.message for w in summary.warnings if w.test == "files (read)"] == [
        "one size: a rate needs two sizes or more (time against size), so there is none"]
    monkeypatch.setattr(cli.console.made(), "_width", 80)     # a terminal of 80 columns, whatever runs the tests
    out = CliRunner().invoke(main, ["compare", str(a), str(b), "--out", str(tmp_path / "c.html")])
    assert out.exit_code == 0, out.output
    line = next(ln for ln in out.output.splitlines() if ln.startswith("files ") and " read " in ln)
    assert line.split()[:2] == ["files", "read"] and line.split()[-4:] == ["-", "inconclusive:", "one", "size"]
    assert (tmp_path / "c.html").is_file()


def test_files_of_two_repeats_a_size_give_no_interval_as_in_the_summary(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1, repeats=2)
    b = make_run(tmp_path / "b", rate_bytes_per_s=300e6, seed=2, repeats=2)
    files = [r for r in compare_runs(load_side(a), load_side(b)).to_json()["rows"] if r["kind"] == "files"]
    assert [(r["verdict"], r["ratio"]["low"]) for r in files] == [("inconclusive: few repeats", None)] * 2
    assert all(r["ratio"]["estimate"] == pytest.approx(1.5, rel=0.1) for r in files)


def test_the_page_shows_facts_in_units_and_no_empty_table(tmp_path):
    """Memory in GiB, not raw bytes; unknown facts as "unknown"; without two granularities of a test no
    geometric-mean table (it was a header without rows)."""
    a = make_run(tmp_path / "a", rate_bytes_per_s=2e8, seed=1, granularities=(4096,), ram_bytes=25276063744)
    b = make_run(tmp_path / "b", rate_bytes_per_s=3e8, seed=2, granularities=(4096,), ram_bytes=17179869184)
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "c.html").read_text()
    assert "<td>memory</td><td>23.5 GiB</td><td>16 GiB</td>" in page and "25276063744" not in page
    assert "<td>device</td><td>unknown</td><td>unknown</td>" in page
    assert "geometric mean B / A" not in page


def test_identical_runs_are_the_same_within_noise(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=300e6, seed=5, noise=0.002)
    b = make_run(tmp_path / "b", rate_bytes_per_s=300e6, seed=6, noise=0.002)
    result = compare_runs(load_side(a), load_side(b)).to_json()
    assert {r["verdict"] for r in result["rows"]} == {"same within noise"}


def test_a_one_percent_difference_is_not_called_faster(tmp_path):
    for noise, allowed in ((0.002, {"same within noise"}), (0.05, {"same within noise", "inconclusive"})):
        a = make_run(tmp_path / f"a{noise}", rate_bytes_per_s=300e6, seed=7, noise=noise)
        b = make_run(tmp_path / f"b{noise}", rate_bytes_per_s=303e6, seed=8, noise=noise)
        verdicts = {r["verdict"] for r in compare_runs(load_side(a), load_side(b)).to_json()["rows"]}
        assert verdicts <= allowed, (noise, verdicts)


def test_different_plans_are_refused_unless_allowed(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=1e8, plan="quick")
    b = make_run(tmp_path / "b", rate_bytes_per_s=1e8, plan="quartet")
    with pytest.raises(CompareError) as e:
        compare_runs(load_side(a), load_side(b))
    assert str(e.value) == ("the runs are of different plans (quick and quartet); compare runs of one plan, "
                            "or pass --allow-different-plans")
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 2
    assert result.output.strip() == "stibium: " + str(e.value)
    assert not (tmp_path / "c.html").exists()


def test_tests_without_a_partner_are_listed(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=1e8)
    b = make_run(tmp_path / "b", rate_bytes_per_s=1e8)
    lines = (b / "measurements.csv").read_text().splitlines(keepends=True)
    (b / "measurements.csv").write_text("".join(line for line in lines if ",pat,read,pattern,random,268435456,4096," not in line))
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--json", "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["unmatched"] == {"only_in_a": ["pat read random 4 KiB"], "only_in_b": []}
    assert (tmp_path / "c.html").read_text().count("Plotly.newPlot") == 1 + 3   # forest + files write, read, pattern


def test_runs_copied_elsewhere_compare(tmp_path):
    import shutil
    a = make_run(tmp_path / "a", rate_bytes_per_s=1e8)
    b = make_run(tmp_path / "b", rate_bytes_per_s=2e8)
    moved = tmp_path / "elsewhere" / "b-copy"
    shutil.copytree(b, moved)
    shutil.rmtree(b)
    result = CliRunner().invoke(main, ["compare", str(a), str(moved), "--json", "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 0
    assert json.loads(result.output)["rows"][0]["verdict"] == "faster"


def _with_plan(run, name, files_engine="direct", repeats=10, trials=10, files_sync=None):
    """Give a synthetic run the plan it would have carried (run.json plan.as_given)."""
    meta = json.loads((run / "run.json").read_text())
    meta["plan"] = {"name": name, "description": "", "as_given": {
        "name": name, "defaults": {"engine": "direct", "fill": "random", "sync": "fsync", "units": "decimal"},
        "tests": [{"name": "files", "kind": "files", "engine": files_engine, "fill": None, "sync": files_sync,
                   "sizes": {"from": "1MB", "to": "64MB", "count": 7}, "repeats": repeats},
                  {"name": "pat", "kind": "pattern", "engine": None, "fill": None, "sync": None, "op": "read",
                   "access": "random", "granularities": ["4KiB", "64KiB", "1MiB", "16MiB"], "trials": trials}]}}
    (run / "run.json").write_text(json.dumps(meta))
    return run


def test_the_same_plan_under_another_name_compares(tmp_path):
    a = _with_plan(make_run(tmp_path / "a", rate_bytes_per_s=1e8, plan="mine"), "mine")
    b = _with_plan(make_run(tmp_path / "b", rate_bytes_per_s=1e8, plan="mine-renamed"), "mine-renamed", trials=7)
    result = compare_runs(load_side(a), load_side(b), settings=Settings(resamples=500, seed=2024)).to_json()
    assert result["rows"] and result["differences"] == ["test pat: trials 10 in A, 7 in B"]


@pytest.mark.parametrize("changed, differs", [({"files_engine": "buffered"}, "engine direct in A, buffered in B"),
                                              ({"files_sync": "none"}, "sync fsync in A, none in B")])
def test_a_different_engine_or_sync_is_refused_with_what_differs(tmp_path, changed, differs):
    a = _with_plan(make_run(tmp_path / "a", rate_bytes_per_s=1e8), "p")
    b = _with_plan(make_run(tmp_path / "b", rate_bytes_per_s=1e8), "p", **changed)
    with pytest.raises(CompareError) as e:
        compare_runs(load_side(a), load_side(b), settings=Settings(resamples=500, seed=2024))
    assert str(e.value) == (f"the runs measured different things: test files: {differs}; "
                            "compare like with like, or pass --allow-different-plans")
    allowed = compare_runs(load_side(a), load_side(b), allow_different_plans=True, settings=Settings(resamples=500, seed=2024)).to_json()
    assert allowed["differences"] == [f"test files: {differs}"]


def test_many_machines_in_one_table(tmp_path):
    runs = [make_run(tmp_path / name, rate_bytes_per_s=rate, seed=seed)
            for name, rate, seed in (("ref", 1e8, 1), ("twice", 2e8, 2), ("thrice", 3e8, 3))]
    result = CliRunner().invoke(main, ["compare", *map(str, runs), "--json", "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["reference"]["run"] == "ref" and [r["run"] for r in data["runs"]] == ["twice", "thrice"]
    files = {(r["run"], r["op"]): r["ratio"] for r in data["rows"] if r["kind"] == "files"}
    for (run, op), ratio in files.items():
        truth = {"twice": 2.0, "thrice": 3.0}[run]
        assert ratio["low"] <= truth <= ratio["high"] and abs(ratio["estimate"] / truth - 1) < 0.03, (run, op)
    page = (tmp_path / "c.html").read_text()
    assert "3 runs against" in page and "(reference)" in page
    # --reference picks another run; the table is then against it
    result = CliRunner().invoke(main, ["compare", *map(str, runs), "--reference", str(runs[2]), "--json",
                                       "--out", str(tmp_path / "d.html")])
    data = json.loads(result.output)
    assert data["reference"]["run"] == "thrice"
    twice = next(r for r in data["rows"] if r["run"] == "twice" and r["kind"] == "files" and r["op"] == "read")
    assert abs(twice["ratio"]["estimate"] / (2 / 3) - 1) < 0.03


def test_the_ratio_averaged_across_granularities_heads_the_page(tmp_path):
    from stibium_py.results.compare import drawn
    from stibium_py.report.compare_page import render
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=200e6 * 2.97, seed=2)
    side_a, side_b = load_side(a), load_side(b)
    typed = compare_runs(side_a, side_b, settings=Settings(resamples=500, seed=2024))
    page = render(typed, drawn(side_a, side_b))
    pat = next(s for s in typed.to_json()["summaries"] if s["test"] == "pat")["ratio"]
    head = page.index("B / A averaged across all granularities")
    assert head < page.index("<h2>Machines</h2>")
    assert f"<b>pat reads: {pat['estimate']:.2f}x [{pat['low']:.2f}x, {pat['high']:.2f}x]</b>, faster" in page


@pytest.mark.parametrize("mac_sync,caution", [
    ("fsync", "synced differently: A's writes include a flush of the drive's cache and B's do not (fsync on macOS "
              "leaves the data in the drive's cache); use sync: full (F_FULLFSYNC) for the Mac's writes to compare "
              "like with like"),
    ("F_FULLFSYNC", None),
    ("fsync (F_FULLFSYNC refused)", "synced differently: A's writes include a flush of the drive's cache and B's "
                                    "do not (fsync on macOS leaves the data in the drive's cache); use sync: full "
                                    "(F_FULLFSYNC) for the Mac's writes to compare like with like"),
])
def test_a_macs_fsync_writes_against_linux_fsync_writes_carry_a_caution(tmp_path, mac_sync, caution):
    # xnu's fsync(2) man page: fsync leaves the data in the drive's cache; F_FULLFSYNC flushes it. Linux's fsync does
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1, platform="linux", sync_used="fsync")
    b = make_run(tmp_path / "b", rate_bytes_per_s=200e6, seed=2, platform="darwin", sync_used=mac_sync)
    rows = compare_runs(load_side(a), load_side(b)).to_json()["rows"]
    assert [r["caution"] for r in rows if r["op"] == "write"] == [caution]
    assert all(r["caution"] is None for r in rows if r["op"] == "read")


def test_two_macs_with_fsync_compare_without_a_caution(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1, platform="darwin", sync_used="fsync")
    b = make_run(tmp_path / "b", rate_bytes_per_s=200e6, seed=2, platform="darwin", sync_used="fsync")
    assert all(r["caution"] is None for r in compare_runs(load_side(a), load_side(b)).to_json()["rows"])


def test_a_macs_fsync_writes_are_a_notice_of_the_run(tmp_path):
    from stibium_py.results.pipeline import summarize_run
    run = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1, platform="darwin", sync_used="fsync")
    _, _, summary = summarize_run(run)
    notices = [n for n in summary.warnings if "drive's write cache" in n.message]
    assert [(n.level, n.message, n.what_to_do) for n in notices] == [(
        "info", "70 write measurements were synced with fsync, which on macOS leaves the data in the drive's write "
        "cache (Linux's fsync flushes it)", "these compare with other Macs' fsync writes, not with Linux's; use "
        "sync: full (F_FULLFSYNC) for the Mac's writes to compare like with like")]
    linux = make_run(tmp_path / "b", rate_bytes_per_s=200e6, seed=1, platform="linux", sync_used="fsync")
    assert not [n for n in summarize_run(linux)[2].warnings if "drive's write cache" in n.message]


def test_rows_that_do_not_say_their_sync_carry_no_sync_caution(tmp_path):
    # runs from before sync_used was recorded: nothing is known, so nothing is claimed
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1, platform="linux")
    b = make_run(tmp_path / "b", rate_bytes_per_s=200e6, seed=2, platform="linux", sync_used="fsync")
    assert all(r["caution"] is None for r in compare_runs(load_side(a), load_side(b)).to_json()["rows"])


def test_a_test_of_one_granularity_a_line_is_compared_in_the_table_not_a_one_point_figure(tmp_path):
    from stibium_py.kinds.pattern.view import one_granularity
    a = make_run(tmp_path / "a", rate_bytes_per_s=200e6, seed=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=210e6, seed=2)
    result = compare_runs(load_side(a), load_side(b))
    # the synthetic pattern test has several granularities a line: a figure; one granularity: none
    assert not one_granularity(result, "pat", "read")
    from dataclasses import replace
    least = min(q.key.granularity_bytes for q in result.points if q.key.kind == "pattern")
    one = replace(result, comparison=replace(result.comparison, points=[
        p for p in result.points if p.key.kind != "pattern" or p.key.granularity_bytes == least]))
    assert one_granularity(one, "pat", "read")


@pytest.mark.parametrize("low, high, word", [
    (1.05, 1.20, "faster"), (0.80, 0.95, "slower"), (0.99, 1.01, "same within noise"), (0.95, 1.05, "inconclusive"),
    (1.021, 1.05, "faster"), (0.95, 0.979, "slower"), (1.02, 1.05, "inconclusive"), (0.98, 1.02, "same within noise"),
])
def test_each_verdict_is_said_where_its_interval_lies_against_the_noise_band(low, high, word):
    """B / A beyond the 2 % noise band above: faster; below: slower; inside it: the same; across its edge:
    inconclusive (the band's edges themselves are inside)."""
    from stibium_py.analysis.comparison import verdict
    from stibium_py.analysis.estimate import Estimate
    assert verdict(Estimate((low + high) / 2, low, high, "test", 10), 0.02)[0] == word


def test_a_b_slower_than_a_is_said_slower_end_to_end(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=300e6, seed=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=150e6, seed=2)
    rows = compare_runs(load_side(a), load_side(b)).to_json()["rows"]
    files = [r for r in rows if r["kind"] == "files"]
    assert files and all(r["verdict"] == "slower" and r["ratio"]["high"] < 0.98 for r in files)


def test_the_verdicts_say_where_they_are_printed_that_a_difference_inside_the_noise_band_is_not_called(tmp_path):
    """`1.045 [1.005, 1.141]` inconclusive beside `0.810 [0.747, 0.854]` slower: the line under the table and the
    page say why, with the band's width; so does a table of many runs."""
    a = make_run(tmp_path / "a", rate_bytes_per_s=300e6, seed=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=150e6, seed=2)
    c = make_run(tmp_path / "c", rate_bytes_per_s=310e6, seed=3)
    said = ("verdicts: faster or slower only where the whole 95 % interval lies beyond the noise band of 2 % (0.98 to "
            "1.02); same within noise where it lies inside it; inconclusive where it reaches across its edge: a "
            "difference smaller than 2 % is not called")
    for runs, page in (([a, b], "two.html"), ([a, b, c], "many.html")):
        result = CliRunner().invoke(main, ["compare", *map(str, runs), "--out", str(tmp_path / page)])
        assert result.exit_code == 0, result.output
        assert said in " ".join(result.output.split())
        assert said[0].upper() + said[1:] + "." in (tmp_path / page).read_text()


def test_a_key_left_to_its_kind_s_default_is_not_a_difference_from_the_same_value_written():
    """A test that leaves trials out ran the kind's default, 3: compare said "trials None in A, 3 in B"."""
    from stibium_py.results.definitions import differences, test_definitions
    a = test_definitions({"tests": [{"name": "clips", "kind": "stream", "trials": 3, "buffer_frames": 2}]})
    b = test_definitions({"tests": [{"name": "clips", "kind": "stream"}]})
    assert differences(a, b, {"clips"}) == ([], [])
    c = test_definitions({"tests": [{"name": "clips", "kind": "stream", "trials": 5}]})
    assert differences(a, c, {"clips"}) == ([], ["test clips: trials 3 in A, 5 in B"])
