"""A pattern test at a stated load (rate:, arrivals:): the plan's rates, each a point of its own; the rows' response
times and lateness; the points' response percentiles from histograms merged exactly across trials and clients; the
load table on the terminal and the page; compare and the history's keys with the rate in them."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from stibium_py.analysis import rates
from stibium_py.analysis.clients import aggregate
from stibium_py.analysis.histogram import LatencyHistogram
from stibium_py.cli import main
from stibium_py.errors import SizeError
from stibium_py.plan import PlanError, load_and_expand
from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.record import ops_digest
from stibium_py.rundir.table import Table
from stibium_py.units import parse_rate
from test_report_browser import CHROMIUM, open_in_chromium

PLAN = """\
name: load
tests:
  - name: lat
    kind: pattern
    op: read
    access: random
    granularities: [4KiB]
    span: 1MiB
    bytes: 256KiB
    trials: 3
{extra}"""


def _plan(tmp_path: Path, extra: str, name: str = "plan.yaml") -> Path:
    p = tmp_path / name
    p.write_text(PLAN.format(extra=extra))
    return p


def test_rates_read_as_requests_or_bytes_a_second():
    assert parse_rate("20000 IOPS") == (20000.0, "requests")
    assert parse_rate("20k IOPS") == (20000.0, "requests")
    assert parse_rate("500/s") == (500.0, "requests")
    assert parse_rate(1500) == (1500.0, "requests")
    assert parse_rate("200MB/s") == (200e6, "bytes")
    assert parse_rate("1 MiB/s") == (2.0**20, "bytes")
    for bad, message in (("fast", "cannot read the rate 'fast'; write requests a second, such as 20000 IOPS, 20k IOPS "
                                  "or 500/s, or bytes a second, such as 200MB/s"),
                         ("0 IOPS", "'0 IOPS' is not a rate above zero"),
                         (True, "True is not a rate; write requests a second, such as 20000 IOPS, or bytes, such as "
                                "200MB/s")):
        with pytest.raises(SizeError) as e:
            parse_rate(bad)
        assert str(e.value) == message


def test_each_rate_is_a_point_and_a_rate_of_bytes_is_each_granularitys_requests(tmp_path):
    _, _, e = load_and_expand(_plan(tmp_path, "    rate: [1000 IOPS, 8MB/s]\n    arrivals: poisson\n"))
    assert sorted({o.rate_per_s for o in e.ops}) == [1000.0, 8e6 / 4096]
    assert {o.arrivals for o in e.ops} == {"poisson"}
    assert len(e.ops) == 2 * 3 and len({o.seed for o in e.ops}) == len(e.ops)
    assert e.ops_as_dicts()[0]["arrivals"] == "poisson"


def test_a_closed_loop_plan_keeps_its_digest_and_seeds(tmp_path):
    """Plans written before rates existed: the same operations, so their runs still resume."""
    _, _, before = load_and_expand(_plan(tmp_path, ""))
    _, _, now = load_and_expand(_plan(tmp_path, "    rate: null\n", "b.yaml"))
    assert "rate_per_s" not in before.ops_as_dicts()[0] and "arrivals" not in before.ops_as_dicts()[0]
    assert [o.seed for o in before.ops] == [o.seed for o in now.ops]
    assert ops_digest(before.ops_as_dicts()) == ops_digest(now.ops_as_dicts())


@pytest.mark.parametrize("extra, message", [
    ("    rate: 1000 IOPS\n    stonewall: 10s\n",
     "plan.yaml:3: tests[0]: rate issues each request at its due time; a stonewall cuts a "
     "measurement of its bytes short: give one or the other (duration bounds a trial by time)"),
    ("    rate: 1000 IOPS\n    bench: fio\n",
     "plan.yaml:3: tests[0]: bench: fio does not go with a rate: fio times a rated request's completion when it "
     "reaps it, after its sleep until the next one's time (docs/load.md); leave out bench or rate"),
    ("    arrivals: poisson\n",
     "plan.yaml:3: tests[0]: arrivals say how a rate's requests are spaced; give rate or slo too, "
     "or leave arrivals out"),
    ("    rate: []\n",
     "plan.yaml:3: tests[0]: the list of rates is empty; give a rate such as 20000 IOPS, or leave "
     "rate out"),
    ("    rate: 20M IOPS\n",
     "plan.yaml:11: tests[0] (lat).rate: 2e+07 requests a second; the helper issues at most 1e+07 a second: lower rate"),
    ("    rate: [1000, 50GB/s]\n",
     "plan.yaml:11: tests[0] (lat).rate: 50 GB/s in requests of 4.1 KB is 1.2207e+07 requests a second; the helper "
     "issues at most 1e+07 a second: lower rate"),
    ("    rate: [1000, lots]\n",
     "plan.yaml:11: tests[0] (lat).rate[1]: cannot read the rate 'lots'; write requests a second, such as 20000 IOPS, "
     "20k IOPS or 500/s, or bytes a second, such as 200MB/s"),
    ("    rate: 1000\n    engine: app\n",
     "plan.yaml:11: tests[0] (lat).rate: the app engine moves one request at a time from the calling thread; a rate "
     "issues each request from a thread of its own: use engine: direct or buffered"),
    ("    slo: {p99: 2ms}\n    rate: 1000\n",
     "plan.yaml:3: tests[0]: give rate (the rates to measure) or slo (a target whose rate is searched), not both"),
    ("    slo: {lowest: 1k IOPS}\n",
     "plan.yaml:11: tests[0].slo: give a target: p50, p90, p99, p99.9 or max, such as {p99: 2ms}"),
    ("    slo: {p99: 2ms, lowest: 5k IOPS, highest: 1k IOPS}\n",
     "plan.yaml:11: tests[0] (lat).slo: slo.lowest (5000 requests a second) is above slo.highest (1000): lower "
     "lowest or raise highest"),
    ("    slo: {p99: soon}\n",
     "plan.yaml:11: tests[0] (lat).slo.p99: cannot read the time 'soon'; write seconds such as 30 or 30s, or 5min, "
     "1h, 2ms or 500us"),
])
def test_a_rate_or_target_the_plan_cannot_have_is_one_line(tmp_path, monkeypatch, extra, message):
    assert _refusal(tmp_path, monkeypatch, extra) == message


def _refusal(tmp_path: Path, monkeypatch, extra: str) -> str:
    """The one line a plan with these lines added is refused with."""
    monkeypatch.chdir(tmp_path)
    _plan(tmp_path, extra)
    with pytest.raises(PlanError) as e:
        load_and_expand(Path("plan.yaml"))
    return str(e.value)


def _text_bins(values_ns: np.ndarray) -> str:
    """The helper's histogram text (sb_hist_format): exact below 128 ns, above it 16 bins an octave."""
    counts: dict[tuple[int, int], int] = {}
    for v in values_ns.astype(np.int64):
        if v < 128:
            lo, width = int(v), 1
        else:
            width = 1 << (int(v).bit_length() - 1 - 4)
            lo = int(v) & ~(width - 1)
        counts[(lo, lo + width)] = counts.get((lo, lo + width), 0) + 1
    return " ".join(f"{a}-{b}:{c}" for (a, b), c in sorted(counts.items()))


def test_two_clients_merged_histogram_has_the_percentiles_of_their_requests_pooled():
    """Merged bin by bin, two clients' response times give exactly the percentiles of all their requests in one
    histogram (never an average of the two clients' percentiles), each within a bin (1/16) above the exact one."""
    rng = np.random.default_rng(70)
    a = rng.lognormal(np.log(200e3), 0.4, 20_000)          # a fast client: 200 us
    b = rng.lognormal(np.log(2e6), 0.8, 5_000)             # a slow one: 2 ms, a long tail
    merged = LatencyHistogram.merged([_text_bins(a), _text_bins(b)])
    pooled = LatencyHistogram.parse(_text_bins(np.concatenate([a, b])))
    assert merged is not None and merged.to_text() == pooled.to_text()
    both = np.sort(np.concatenate([a, b]).astype(np.int64))
    for q in (0.5, 0.9, 0.99, 0.999):
        exact_s = float(np.quantile(both, q, method="inverted_cdf")) / 1e9
        assert merged.quantile_s(q) == pooled.quantile_s(q)
        assert exact_s <= merged.quantile_s(q) <= exact_s * (1 + 1 / 16) + 1e-9
    averaged = (LatencyHistogram.parse(_text_bins(a)).quantile_s(0.99)
                + LatencyHistogram.parse(_text_bins(b)).quantile_s(0.99)) / 2
    assert abs(averaged / merged.quantile_s(0.99) - 1) > 0.1       # what averaging would have said instead


def _row(rank: int, values_ns: np.ndarray, **extra) -> Measurement:
    return Measurement(seq=0, test="lat", op="read", kind="pattern", access="random", size_bytes=1 << 20,
                       granularity_bytes=4096, stride_bytes=0, trial=0, file="lat/data.bin", bytes=4096 * len(values_ns),
                       seconds=1.0, requests=len(values_ns), run_start_s=0.0, run_end_s=1.0, rank=rank, started_s=0.0,
                       lat_hist_ns=_text_bins(values_ns / 2), rate_per_s=1000.0, arrivals="poisson",
                       resp_hist_ns=_text_bins(values_ns), resp_max_s=float(values_ns.max()) / 1e9,
                       resp_mean_s=float(values_ns.mean()) / 1e9, late_issues=extra.get("late", 0), unscheduled=0,
                       issue_late_max_s=extra.get("late_max", 1e-5), issue_late_p99_s=1e-5)


def test_many_clients_response_times_are_merged_as_their_service_times_are():
    rng = np.random.default_rng(71)
    a, b = rng.lognormal(np.log(3e5), 0.5, 3000), rng.lognormal(np.log(9e5), 0.5, 1000)
    (step,) = aggregate(Table.from_rows([_row(0, a), _row(1, b, late=7, late_max=0.25)]), 2)
    pooled = LatencyHistogram.parse(_text_bins(np.concatenate([a, b])))
    load = step.load
    assert load.resp_hist_ns == pooled.to_text()
    assert load.resp_p99_s == pooled.quantile_s(0.99) and load.resp_p50_s == pooled.quantile_s(0.5)
    assert load.resp_max_s == pytest.approx(max(a.max(), b.max()) / 1e9)
    assert load.resp_mean_s == pytest.approx(np.concatenate([a, b]).mean() / 1e9)
    assert load.late_issues == 7 and load.issue_late_max_s == 0.25 and step.requests == 4000
    assert load.rate_per_s == 1000.0      # each client's offered rate, as the point's key has it


def test_the_rate_is_in_a_points_key_and_its_label_and_a_closed_loops_key_is_unchanged():
    closed = rates.PointKey("lat", "read", "pattern", "random", 4096, 0, 4, 1)
    opened = closed._replace(rate_per_s=20000.0)
    assert "rate_per_s" not in rates.key_json(closed)
    assert rates.key_of(rates.key_json(opened)) == opened and rates.key_of(rates.key_json(closed)) == closed
    assert rates.label(opened) == "lat read random 4 KiB Q4T1 at 20k/s"
    assert rates.describe(opened) == "lat read random 4 KiB Q4T1 at 20k/s"


@pytest.mark.timeout(300)
def test_a_run_at_stated_rates_reports_response_beside_service_times(disk_dir):
    plan = disk_dir / "plan.yaml"
    plan.write_text(PLAN.format(extra="    rate: [2000 IOPS, 4000 IOPS]\n    arrivals: poisson\n    queue_depth: 2\n"))
    runner = CliRunner()
    result = runner.invoke(main, ["run", str(plan), "--target", str(disk_dir / "t"), "--out", str(disk_dir / "r")],
)
    assert result.exit_code == 0, result.output
    (run,) = (disk_dir / "r").iterdir()
    with open(run / "measurements.csv") as f:
        rows = [r for r in csv.DictReader(f)]
    assert len(rows) == 6 and {float(r["rate_per_s"]) for r in rows} == {2000.0, 4000.0}
    for r in rows:
        assert r["arrivals"] == "poisson" and int(r["requests"]) == 64 and int(r["unscheduled"]) == 0
        assert float(r["resp_p99_s"]) >= float(r["lat_p99_s"]) and float(r["resp_max_s"]) >= float(r["lat_max_s"])
        # 64 requests at 2000/s are due over about 32 ms: the trial cannot be shorter than its schedule
        assert float(r["seconds"]) > 0.5 * 64 / float(r["rate_per_s"])
        assert r["resp_hist_ns"] and LatencyHistogram.parse(r["resp_hist_ns"]).n == 64
    summary = json.loads((run / "summary.json").read_text())
    (test,) = summary["tests"]
    loads = sorted((p["load"] for p in test["points"]), key=lambda x: x["offered_per_s"])
    assert [x["offered_per_s"] for x in loads] == [2000.0, 4000.0]
    for x in loads:
        assert x["requests"] == 3 * 64 and x["arrivals"] == "poisson"
        assert LatencyHistogram.parse(x["resp_hist_ns"]).n == 3 * 64
        assert x["resp_p99_s"] >= x["service_p99_s"] > 0 and x["achieved_per_s"]["estimate"] > 0
    out = result.output
    assert "lat read at a stated load (response times from each request's due time; achieved: median over trials, " \
           "95 % interval)" in " ".join(out.split())
    header = next(line for line in out.splitlines() if line.startswith("point"))
    # resp p99.9 and service p99 are left out (and said so) where the terminal is narrow, the rest never
    shown = [w for w in ["point", "offered", "achieved", "resp p50", "resp p99", "resp p99.9", "service p99",
                         "late issues", "kept"] if f" {w} " in f" {' '.join(header.split())} "]
    assert [w for w in shown if w not in ("resp p99.9", "service p99")] == [
        "point", "offered", "achieved", "resp p50", "resp p99", "late issues", "kept"]
    if len(shown) < 9:
        assert "left out at this width: service p99" in " ".join(out.split())
    table = [line.split() for line in out.splitlines() if "Q2T1" in line and line.split()[-1] in ("yes", "no")]
    assert [r for r in table if "2k/s" in r] and [r for r in table if "4k/s" in r] and len(table) == 2
    page = (run / "report.html").read_text()
    assert "At a stated load" in page and "response time against offered load" in page
    assert "achieved against offered rate" in page
    if CHROMIUM is not None:        # the load's figures render (./install.sh --test installs Chromium)
        dom, log = open_in_chromium(run / "report.html", ["--dump-dom"])
        figures = re.findall(r'<div id="fig\d+"[^>]*class="([^"]*)"', dom)
        assert len(figures) == 2 and all("js-plotly-plot" in classes for classes in figures), figures
        console = [line for line in log.splitlines() if ":CONSOLE" in line]
        assert not [line for line in console if "Uncaught" in line or "Error" in line], console

    code = runner.invoke(main, ["compare", str(run), str(run), "--out", str(disk_dir / "c.html")])
    assert code.exit_code == 0, code.output
    ratios = [line.split() for line in code.output.splitlines() if line.startswith("lat ")]
    assert [r[6] for r in ratios[:2]] == ["2k/s", "4k/s"] and "offered" in code.output


# --- a target's search ----------------------------------------------------------------------------------------------

from stibium_py.kinds.pattern.load import next_rate_index, parse_slo, rate_grid, slo_text  # noqa: E402


def test_the_grid_is_sixteen_rates_an_octave_from_the_lowest_to_the_highest():
    grid = rate_grid(100.0, 1000.0)
    assert grid[:3] == [100.0, 106.25, 112.5] and grid[16] == 200.0 and grid[48] == 800.0
    assert grid[-1] <= 1000.0 < grid[-1] * (1 + 1 / 16) and grid == sorted(grid)


@pytest.mark.parametrize("capacity", [50.0, 100.0, 150.0, 777.0, 3100.0, 99_999.0, 190_000.0, 250_000.0])
def test_the_search_doubles_then_halves_the_gap_to_neighbours_around_the_truth(capacity):
    """A drive that meets the target below a rate and misses it above: the search ends with the highest met and the
    lowest missed neighbours on the grid, the truth between them, in a handful of steps."""
    grid = rate_grid(100.0, 200_000.0)
    tried: dict[int, bool] = {}
    while (i := next_rate_index(tried, len(grid))) is not None:
        assert i not in tried
        tried[i] = grid[i] <= capacity
    met = max((i for i, ok in tried.items() if ok), default=None)
    missed = min((i for i, ok in tried.items() if not ok), default=None)
    if capacity >= grid[-1]:
        assert missed is None and met == len(grid) - 1       # up to the grid's top, which ends inside an octave
        return
    if capacity < grid[0]:
        assert met is None and missed == 0
        return
    assert missed == met + 1 and grid[met] <= capacity < grid[missed]
    assert len(tried) <= int(np.log2(capacity / 100)) + 2 + 4      # octaves up, then four halvings


def test_a_search_that_misses_at_the_first_rate_stops_there():
    assert next_rate_index({}, 50) == 0 and next_rate_index({0: False}, 50) is None
    # a grid that ends inside its first octave: its top, then halving below it where the top missed
    assert next_rate_index({0: True}, 10) == 9 and next_rate_index({0: True, 9: True}, 10) is None
    assert next_rate_index({0: True, 9: False}, 10) == 4


def test_a_target_in_a_row_reads_back_only_as_stibium_writes_it():
    text = slo_text({"p99": 0.002, "max": 0.05}, 51200.0)
    assert text == "p99=0.002 max=0.05 highest=51200.0" and parse_slo(text) == ({"p99": 0.002, "max": 0.05}, 51200.0)
    for stranger in ("p99=-1 highest=5", "p99=0.002", "rm=1 highest=5", "p99=nan highest=5", "p99=1 p99=2 highest=5",
                     "x" * 300, "", None, "p99=0.002 highest=inf"):
        assert parse_slo(stranger) is None


def test_a_target_of_the_999th_percentile_is_written_either_way(tmp_path):
    for key in ("p99.9", "p999"):
        _, _, e = load_and_expand(_plan(tmp_path, f"    slo: {{{key}: 5ms, p99: 2ms, lowest: 1k IOPS}}\n", f"{key}.yaml"))
        assert {o.slo.rsplit(" ", 1)[0] for o in e.tests[0].ops} == {"p99=0.002 p999=0.005"}


def test_plan_show_names_the_offered_rates_and_what_a_search_skips(tmp_path):
    plan = _plan(tmp_path, "    slo: {p99: 2ms, lowest: 500/s, highest: 4k IOPS}\n")
    out = CliRunner().invoke(main, ["plan", "show", str(plan)]).output
    said = " ".join(out.split())
    assert "lat: 12 measurements where every rate meets the target (of 147 a search may ask for)" in said
    assert "measurements: 12 (147 expanded: a search skips the rates it does not ask for)" in said
    header = next(line for line in out.splitlines() if line.startswith("seq"))
    assert "offered" in header.split()
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit() and " lat " in line]
    assert len(rows) == 6 and all(any(re.fullmatch(r"[0-9.]+k?/s", t) for t in r) for r in rows), rows


def test_a_search_plans_each_octave_and_expects_only_those(tmp_path):
    _, _, e = load_and_expand(_plan(tmp_path, "    slo: {p99: 2ms, lowest: 500/s, highest: 4k IOPS}\n"))
    (test,) = e.tests
    rates = sorted({o.rate_per_s for o in test.ops})
    assert rates == rate_grid(500.0, 4000.0) and len(test.ops) == 3 * len(rates)
    assert {o.slo for o in test.ops} == {"p99=0.002 highest=4000.0"}
    assert sorted({o.rate_per_s for o in test.planned_ops}) == [500.0, 1000.0, 2000.0, 4000.0]
    _, _, inside = load_and_expand(_plan(tmp_path, "    slo: {p99: 2ms, lowest: 500/s, highest: 3k IOPS}\n", "b.yaml"))
    # the grid ends inside an octave: its top is asked after 2k/s
    assert sorted({o.rate_per_s for o in inside.tests[0].planned_ops}) == [500.0, 1000.0, 2000.0, 3000.0]


@pytest.mark.timeout(300)
def test_a_search_runs_only_the_rates_it_asks_for_and_says_its_answer(disk_dir):
    """A target every rate meets: the search goes up an octave at a time to slo.highest and says so; one no rate
    meets: it stops at the first, and the warning says so."""
    runner = CliRunner()
    outs = {}
    for name, slo in (("easy", "{max: 30s, lowest: 250/s, highest: 1k IOPS}"), ("hard", "{p50: 1us, lowest: 500/s}")):
        plan = disk_dir / f"{name}.yaml"
        plan.write_text(PLAN.format(extra=f"    slo: {slo}\n    trials: 2\n").replace("    trials: 3\n", "")
                        .replace("bytes: 256KiB", "bytes: 32KiB"))
        result = runner.invoke(main, ["run", str(plan), "--target", str(disk_dir / "t"), "--out", str(disk_dir / name)])
        assert result.exit_code == 0, result.output
        (run,) = (disk_dir / name).iterdir()
        with open(run / "measurements.csv") as f:
            rows = list(csv.DictReader(f))
        outs[name] = (" ".join(result.output.split()), sorted({float(r["rate_per_s"]) for r in rows}), run)
    said, rates, run = outs["easy"]
    assert rates == [250.0, 500.0, 1000.0]
    assert "lat read random 4 KiB Q1T1: response max <= 30 s held up to 1k/s (the trials' max" in said
    assert "the highest rate searched (slo.highest 1k/s); 3 rates searched" in said
    (test,) = json.loads((run / "summary.json").read_text())["tests"]
    (answer,) = test["slo"]
    assert answer["met"]["rate_per_s"] == 1000.0 and answer["missed"] is None and len(answer["searched"]) == 3
    from stibium_py.history.entry import read_entry
    (kept,) = [p for p in read_entry(run).points if "slo" in p.key]
    assert kept.point == "lat read random 4 KiB Q1T1: response max <= 30 s" and kept.unit == "requests"
    assert kept.key["slo"] == "max=30.0" and (kept.estimate, kept.low, kept.high, kept.n) == (1000.0, None, None, 3)
    compared = runner.invoke(main, ["compare", str(run), str(run), "--out", str(disk_dir / "c.html")])
    assert compared.exit_code == 0, compared.output
    assert ("lat read random 4 KiB Q1T1, response max <= 30 s (each side's first run): A held up to 1k/s (every "
            "rate searched), B held up to 1k/s (every rate searched); B / A of the most carried no bound: both met "
            "every rate they searched: raise slo.highest to tell them apart") in " ".join(compared.output.split())
    said, rates, _ = outs["hard"]
    assert rates == [500.0]
    assert ("warning: lat (read): lat read random 4 KiB Q1T1: response p50 <= 1 us was not met even at 500/s, the "
            "lowest rate searched (the trials' p50") in said


def _answer(met: float | None, missed: float | None):
    from stibium_py.analysis.estimate import Estimate
    from stibium_py.kinds.pattern.load import Judged, SloAnswer
    e = Estimate(1e-3, 9e-4, 1.1e-3, "median", 3)
    searched = [Judged(r, {"p99": e}, ok) for r, ok in ((met, True), (missed, False)) if r is not None]
    return SloAnswer({"p99": 0.002}, ("random", 4096, 0, 8, 1, None, "random"), searched, 1e6)


def test_two_searches_compare_by_their_brackets():
    from stibium_py.kinds.pattern.compare import TargetPair
    slower = TargetPair("knee", "read", _answer(544e3, 576e3), _answer(38e3, 40e3))
    assert slower.low == pytest.approx(38e3 / 576e3) and slower.high == pytest.approx(40e3 / 544e3)
    assert slower.verdict == "B carries less"
    faster = TargetPair("knee", "read", _answer(38e3, 40e3), _answer(544e3, 576e3))
    assert faster.verdict == "B carries more" and faster.low == pytest.approx(544e3 / 40e3)
    overlap = TargetPair("knee", "read", _answer(38e3, 40e3), _answer(39e3, 41e3))
    assert overlap.verdict == "the brackets overlap: neither carries more within the target's steps"
    assert TargetPair("k", "read", _answer(1e6, None), _answer(2e6, None)).verdict.startswith("both met every rate")
    assert TargetPair("k", "read", _answer(None, 9.0), _answer(None, 5.0)).verdict.startswith("neither met")
    # a side that met every rate it searched has no upper end; one that met none, no lower end
    assert TargetPair("k", "read", _answer(38e3, 40e3), _answer(1e6, None)).high is None
    assert TargetPair("k", "read", _answer(38e3, 40e3), _answer(1e6, None)).verdict == "B carries more"
    assert TargetPair("k", "read", _answer(38e3, 40e3), _answer(None, 100.0)).low is None
    assert TargetPair("k", "read", _answer(38e3, 40e3), _answer(None, 100.0)).verdict == "B carries less"


def test_a_list_of_rates_says_up_to_which_the_rate_was_kept():
    from types import SimpleNamespace as NS
    from stibium_py.analysis.estimate import Estimate
    from stibium_py.kinds.pattern.load import Load
    from stibium_py.kinds.pattern.load_view import knee_lines

    def point(offered: float, late: int, p99: float) -> NS:
        load = Load(offered, "poisson", Estimate(offered, offered, offered, "median", 3),
                    {"p50": 1e-4, "p90": 2e-4, "p99": p99, "p999": 4e-4, "max": 5e-4}, {}, 10_000, late, 2e-5, 1e-3, 0)
        return NS(access="random", granularity_bytes=4096, stride_bytes=0, queue_depth=8, threads=1,
                  read_fraction=None, fill="random", load=load)

    e = NS(name="curve", op="read", slo=[], points=[point(20e3, 160, 377e-6), point(10e3, 20, 205e-6),
                                                   point(40e3, 820, 1.05e-3)])
    assert knee_lines(e) == ["curve read random 4 KiB Q8T1: kept up to 10k/s, not at 20k/s, where 1.6% of the requests "
                             "were issued over 100 us late (all slots busy, or the instrument late); response p99 "
                             "205 us and 377 us"]
    e.points = [point(10e3, 20, 2e-4), point(20e3, 30, 3e-4)]
    assert knee_lines(e) == ["curve read random 4 KiB Q8T1: every offered rate kept, up to 20k/s"]
    e.points = [point(10e3, 200, 2e-4), point(20e3, 300, 3e-4)]
    assert knee_lines(e) == ["curve read random 4 KiB Q8T1: not kept even at 10k/s, the lowest offered"]


def test_a_rate_of_one_trial_is_judged_by_its_value_and_given_no_interval():
    from stibium_py.kinds.pattern.load import judge
    rows = Table.from_rows([_row(0, np.array([1e5, 2e5, 3e5]))._replace(resp_p99_s=0.001)])
    judged = judge(rows, 1000.0, {"p99": 0.002}, 0.95)
    assert judged.met and judged.by_target["p99"].estimate == 0.001
    assert not np.isfinite(judged.by_target["p99"].low) and not np.isfinite(judged.by_target["p99"].high)
    assert not judge(rows, 1000.0, {"p99": 0.0005}, 0.95).met
