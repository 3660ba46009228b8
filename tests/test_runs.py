"""Repeated runs: the interval across runs includes the variance between them (simulation with a fixed
seed), compare says when a verdict is about these runs only, and the series layout: run, report,
resume within a series, a damaged run among several."""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from click.testing import CliRunner

from bench.bench_runs_coverage import coverage
from stibium_py.cli import main
from stibium_py.analysis.rates import by_point, draws_per_run, ready_to_draw
from stibium_py.analysis.settings import Settings
from stibium_py.results.compare import EARLY_POOL_BYTES, compare_runs, draws_pool, load_side, measured_bytes
from stibium_py.analysis.pool import WhenWorthIt, start_method, workers
from stibium_py.results.series import summarize_series
from synthetic import make_run

def test_two_level_interval_covers_the_true_ratio_with_5_runs_per_side():
    two = coverage(5, 400, seed=20261122, two_level=True)
    one = coverage(5, 400, seed=20261122, two_level=False)
    print(f"coverage with 5 runs per side: two-level {two:.3f}, one-level {one:.3f}")
    assert 0.93 <= two <= 0.97
    assert one < 0.60          # the interval from inside runs cannot see the variance between them


def test_one_run_per_side_is_a_verdict_about_these_runs(tmp_path):
    a = load_side(make_run(tmp_path / "a", rate_bytes_per_s=500e6, seed=1, repeats=4, trials=5))
    b = load_side(make_run(tmp_path / "b", rate_bytes_per_s=550e6, seed=2, repeats=4, trials=5))
    result = compare_runs(a, b, settings=Settings(resamples=500, seed=2024)).to_json()
    assert result["scope"] == "these runs only"
    assert all(r["scope"] == "these runs only" and r["runs_a"] == r["runs_b"] == 1 for r in result["rows"])
    assert result["advice"] == ("one run on a side: the intervals cannot see the variance between runs (the host's "
                                "cache, background work, the drive's temperature), so the verdicts are about these "
                                "runs only; run each side with --runs 5 (at least 3) to compare the machines")
    assert result["same_machine"] is False      # synthetic runs carry no machine facts beyond a host name


def _series(path, rates, seed):
    """A series folder of synthetic complete runs (what `stibium run --runs N` writes)."""
    path.mkdir()
    for i, rate in enumerate(rates, 1):
        make_run(path / f"run-{i}", rate_bytes_per_s=rate, seed=seed + i, repeats=3, trials=5)
    (path / "series.json").write_text(json.dumps({"format": "stibium-series/1", "plan": "synthetic",
                                                  "runs": len(rates), "source": "x", "status": "complete"}))
    return path


def test_the_bootstraps_run_in_processes_that_are_not_forks_of_this_one_and_draw_as_it_does(tmp_path, monkeypatch):
    """compare and a series draw in a pool whose workers come from a fork server (Linux) or are spawned
    (macOS: pool.py): this process, which runs native threads by then (pyarrow's reader, BLAS), is never
    forked; the draws are those made here without a pool."""
    series = _series(tmp_path / "s", [500e6, 520e6], 40)
    side = load_side(series)
    points = [by_point(run.rows) for run in side.runs]
    keys = list(dict.fromkeys(k for p in points for k in p))
    settings = Settings(resamples=300, seed=7)
    here = draws_per_run(points, keys, settings)

    def no_fork():
        raise AssertionError("this process was forked")
    monkeypatch.setattr(os, "fork", no_fork)
    with workers() as pool:         # the pool's workers themselves (these jobs are too quick to start them)
        pooled = draws_per_run(points, keys, settings, pool)
    assert pooled.keys() == here.keys() and len(here) == 2 * len(keys)
    for job, d in here.items():
        assert (pooled[job].rate, pooled[job].n, pooled[job].refused) == (d.rate, d.n, d.refused)
        assert np.array_equal(pooled[job].draws, d.draws)
    assert summarize_series(series, settings)["runs"] == ["run-1", "run-2"]
    assert compare_runs(side, load_side(series), settings=settings).to_json()["scope"] == "machines"
    assert (start_method("linux"), start_method("darwin")) == ("forkserver", "spawn")


def test_the_pool_starts_only_once_the_jobs_have_run_as_long_as_its_start():
    """Quick jobs run here and never start the workers (a second's start for a comparison of quick runs);
    slow ones run here from the first while the pool, once started, takes them from the last; results in
    order either way."""
    started = []

    def threads():
        started.append(ThreadPoolExecutor(2))
        return started[-1]

    with WhenWorthIt(threads, start_seconds=0.2, width=2) as pool:
        assert list(pool.map(pow, range(50), [2] * 50)) == [i * i for i in range(50)]
    assert started == []

    def slow(i):
        time.sleep(0.05)
        return i, threading.current_thread().name
    with WhenWorthIt(threads, start_seconds=0.2, width=2) as pool:
        done = list(pool.map(slow, range(20)))
    assert [i for i, _ in done] == list(range(20)) and len(started) == 1
    # the front: this thread and one beside it (width 2), from the first job on; the pool from the last
    front = sorted(i for i, name in done if name == threading.current_thread().name or name.startswith("stibium-front"))
    assert front == list(range(len(front))) and 8 <= len(front) < 20       # 0.2 s on two threads, then both ends
    assert {name for i, name in done if i < 2} == {threading.current_thread().name, "stibium-front-0"}

    def fails(i):
        if i == 1:
            raise ValueError("job 1")
        return i
    with WhenWorthIt(threads, start_seconds=0.2, width=2) as pool:
        with pytest.raises(ValueError, match="job 1"):
            list(pool.map(fails, range(5)))


def _where(seconds):
    """A job that takes `seconds` and says which process ran it."""
    time.sleep(seconds)
    return os.getpid()


def test_a_pool_begun_early_takes_jobs_from_the_last_while_this_thread_takes_them_from_the_first(tmp_path):
    """begin(): the workers start at once (one a core but this one, each made ready as it starts), and the jobs go
    to this thread from the first and to the workers from the last at once, without waiting for the pool to prove
    worth its start; the draws are those made here, in order. On one core nothing begins."""
    with WhenWorthIt(width=2) as pool:
        pool.begin(os.getpid)
        assert pool.begun
        ran = list(pool.map(_where, [0.2] * 6))
    here = os.getpid()
    assert ran[0] == here and ran[-1] != here and len(set(ran)) == 2
    assert ran == sorted(ran, key=lambda pid: pid != here)      # this thread's jobs first, then the worker's

    series = _series(tmp_path / "s", [500e6, 520e6], 40)
    points = [by_point(run.rows) for run in load_side(series).runs]
    keys = list(dict.fromkeys(k for p in points for k in p))
    settings = Settings(resamples=300, seed=7)
    with WhenWorthIt(width=2) as pool:
        pool.begin(ready_to_draw)
        pooled = draws_per_run(points, keys, settings, pool)
    here_drawn = draws_per_run(points, keys, settings)
    assert pooled.keys() == here_drawn.keys()
    assert all(np.array_equal(pooled[job].draws, d.draws) and pooled[job].rate == d.rate
               for job, d in here_drawn.items())

    with WhenWorthIt(width=1) as pool:
        pool.begin(os.getpid)
        assert not pool.begun and list(pool.map(_where, [0.0] * 3)) == [here] * 3


def test_a_comparison_begins_its_pool_with_the_reading_only_for_large_runs(tmp_path):
    """The runs' measurement files, as their folders list them, decide: a link counts nothing (it is refused when
    read), a series counts every run of it; from EARLY_POOL_BYTES on (at compare's resamples, more for fewer),
    the pool begins beside the reading."""
    small = make_run(tmp_path / "small", rate_bytes_per_s=500e6, seed=1, repeats=3, trials=2)
    series = _series(tmp_path / "s", [500e6, 520e6], 40)
    size = (small / "measurements.csv").stat().st_size
    in_series = sum((series / f"run-{i}" / "measurements.csv").stat().st_size for i in (1, 2))
    assert measured_bytes([small, series, tmp_path / "missing"]) == size + in_series
    large = tmp_path / "large"
    large.mkdir()
    (large / "measurements.csv").write_bytes(b"x" * EARLY_POOL_BYTES)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "measurements.csv").symlink_to(large / "measurements.csv")
    assert measured_bytes([linked]) == 0 and measured_bytes([large]) == EARLY_POOL_BYTES
    with draws_pool([small, linked]) as pool:
        assert not pool.begun
    with draws_pool([small, large]) as pool:
        assert pool.begun == ((os.cpu_count() or 1) > 1)
    with draws_pool([large], resamples=2000) as pool:       # a fifth of compare's draws: five times the bytes
        assert not pool.begun


def test_series_against_series_uses_the_variance_between_runs(tmp_path):
    rng = np.random.default_rng(5)
    a = _series(tmp_path / "a", [500e6 * math.exp(rng.normal(0, 0.2)) for _ in range(4)], 10)
    b = _series(tmp_path / "b", [550e6 * math.exp(rng.normal(0, 0.2)) for _ in range(4)], 20)
    result = compare_runs(load_side(a), load_side(b), settings=Settings(resamples=1000, seed=2024)).to_json()
    files = next(r for r in result["rows"] if r["kind"] == "files" and r["op"] == "read")
    one_a, one_b = load_side(a / "run-1"), load_side(b / "run-1")
    single = next(r for r in compare_runs(one_a, one_b, settings=Settings(resamples=1000, seed=2024)).to_json()["rows"]
                  if r["kind"] == "files" and r["op"] == "read")
    assert result["scope"] == "machines" and files["runs_a"] == files["runs_b"] == 4
    width = math.log(files["ratio"]["high"] / files["ratio"]["low"])
    assert width > 3 * math.log(single["ratio"]["high"] / single["ratio"]["low"])
    assert files["verdict"] not in ("faster", "slower") or files["ratio"]["low"] > 1 or files["ratio"]["high"] < 1


def test_a_series_run_cut_by_a_signal_is_left_out_with_what_stopped_it(tmp_path):
    series = _series(tmp_path / "s", [500e6, 200e6, 500e6], 30)
    record = json.loads((series / "run-2" / "run.json").read_text())
    record.update(status="interrupted", stopped_by="SIGINT at rank 0")
    (series / "run-2" / "run.json").write_text(json.dumps(record))
    result = CliRunner().invoke(main, ["report", str(series)])
    assert result.exit_code == 0, result.output
    summary = json.loads((series / "summary.json").read_text())
    assert summary["runs"] == ["run-1", "run-3"]
    assert "left out run-2: interrupted (SIGINT at rank 0)" in [w["message"] for w in summary["warnings"]]
    assert "left out run-2: interrupted (SIGINT at rank 0)" in " ".join(result.output.split())


def test_series_report_shows_runs_side_by_side_and_a_damaged_run_is_left_out(tmp_path):
    series = _series(tmp_path / "s", [500e6, 200e6, 500e6], 30)
    (series / "run-2" / "run.json").write_text("{ damaged")
    result = CliRunner().invoke(main, ["report", str(series)])
    assert result.exit_code == 0, result.output
    summary = json.loads((series / "summary.json").read_text())
    assert summary["runs"] == ["run-1", "run-3"]
    assert any(w["message"].startswith("left out run-2: ") for w in summary["warnings"])
    files = next(t for t in summary["tests"] if t["label"] == "files read")
    assert [r["run"] for r in files["per_run"]] == ["run-1", "run-3"]
    html = (series / "report.html").read_text()
    assert "run-1/report.html" in html and "rate across runs" in html
    assert (series / "run-1" / "report.html").is_file()


def test_runs_that_differ_are_flagged(tmp_path):
    series = _series(tmp_path / "s", [500e6, 250e6], 40)
    result = CliRunner().invoke(main, ["report", str(series)])
    assert result.exit_code == 0, result.output
    summary = json.loads((series / "summary.json").read_text())
    files = next(t for t in summary["tests"] if t["label"] == "files write")
    assert files["runs_differ"] is True
    assert any(w["message"].startswith("runs differ: results depend on when you measure") for w in summary["warnings"])


SMALL_PLAN = """name: small
tests:
  - name: seq
    kind: pattern
    op: [read, write]
    access: sequential
    granularities: [1MiB]
    bytes: 4MiB
    span: 4MiB
    trials: 3
"""


def test_run_with_runs_makes_a_series_that_resumes_run_by_run(disk_dir):
    plan = disk_dir / "small.yaml"
    plan.write_text(SMALL_PLAN)
    out = disk_dir / "reports"
    result = CliRunner().invoke(main, ["run", str(plan), "--runs", "3", "--target", str(disk_dir / "t"),
                                       "--out", str(out)])
    assert result.exit_code == 0, result.output
    series = next(out.iterdir())
    assert sorted(p.name for p in series.iterdir()) == ["report.html", "run-1", "run-2", "run-3", "series.json",
                                                        "summary.json"]
    assert json.loads((series / "series.json").read_text())["status"] == "complete"
    # an interruption in run 2 (its last rows lost), and run 3 never started: resume finishes both
    run2 = series / "run-2"
    lines = (run2 / "measurements.csv").read_text().splitlines(keepends=True)
    (run2 / "measurements.csv").write_text("".join(lines[:3]))
    meta = json.loads((run2 / "run.json").read_text())
    meta["status"] = "interrupted"
    (run2 / "run.json").write_text(json.dumps(meta))
    shutil.rmtree(series / "run-3")
    meta = json.loads((series / "series.json").read_text())
    meta["status"] = "interrupted"
    (series / "series.json").write_text(json.dumps(meta))
    result = CliRunner().invoke(main, ["resume", str(series)])
    assert result.exit_code == 0, result.output
    for name in ("run-2", "run-3"):
        assert json.loads((series / name / "run.json").read_text())["status"] == "complete"
        assert len((series / name / "measurements.csv").read_text().splitlines()) == 1 + 6
    assert json.loads((series / "series.json").read_text())["status"] == "complete"
    assert not any(p.name.startswith("stibium-") for p in (disk_dir / "t").iterdir())
