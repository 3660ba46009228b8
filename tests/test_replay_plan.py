"""A replay test in a plan (kinds/replay): its trace read beside the plan as a stranger's file, refused in one line
where it cannot be replayed, run with the compiled helper to its report and compare, kept in the run directory and
read back from there by a resume."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from stibium_py.errors import PlanError, RunDirError, RunError
from stibium_py.plan.load import load_and_expand
from stibium_py.run.resume import _expand_again

TRACE = Path(__file__).parent / "fixtures" / "replay" / "save.trace"      # a Python program recorded here


def _plan(folder: Path, **test: object) -> Path:
    spec = {"name": "app", "kind": "replay", "trace": "save.trace", "trials": 2, **test}
    path = folder / "plan.yaml"
    path.write_text(json.dumps({"name": "r", "tests": [spec]}))
    return path


@pytest.mark.parametrize("given, setup, message", [
    ("missing.trace", None, "plan.yaml:1: tests[0] (app).trace: missing.trace: no such file; give the trace's path "
                            "relative to the plan's folder"),
    ("../out.trace", "outside", "outside the plan's folder"),
    ("link.trace", "link", "outside the plan's folder"),
    ("bad.trace", "bad", "plan.yaml:1: tests[0] (app).trace: bad.trace: not JSON; give a trace that stibium record "
                         "wrote"),
    ("fifo.trace", "fifo", "plan.yaml:1: tests[0] (app).trace: fifo.trace: a FIFO, not a trace; give a trace that "
                           "stibium record wrote"),
])
def test_a_trace_that_cannot_be_read_is_refused_in_one_line(tmp_path, given, setup, message):
    folder = tmp_path / "plans"
    folder.mkdir()
    if setup == "outside":
        shutil.copy(TRACE, tmp_path / "out.trace")
    elif setup == "link":
        shutil.copy(TRACE, tmp_path / "out.trace")
        (folder / "link.trace").symlink_to(tmp_path / "out.trace")
    elif setup == "bad":
        (folder / "bad.trace").write_text("{not json")
    elif setup == "fifo":
        os.mkfifo(folder / "fifo.trace")
    with pytest.raises(PlanError) as e:
        load_and_expand(_plan(folder, trace=given))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_think_goes_with_as_fast_only(tmp_path):
    shutil.copy(TRACE, tmp_path / "save.trace")
    with pytest.raises(PlanError) as e:
        load_and_expand(_plan(tmp_path, timing="as-recorded", think="keep"))
    assert "think is for timing: as-fast (as-recorded keeps every call's recorded time); leave think out" in \
        str(e.value)


def test_a_plan_shows_what_its_replay_will_do(tmp_path):
    shutil.copy(TRACE, tmp_path / "save.trace")
    _, _, expanded = load_and_expand(_plan(tmp_path))
    (test,) = expanded.tests
    assert [o.file for o in test.ops] == ["app/replay-0", "app/replay-1"]
    assert test.replay.script.calls == 108 and test.replay.script.threads == 3
    assert test.layout_bytes == 2 * 300_000 and test.kept_bytes == TRACE.read_bytes()


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_a_replay_runs_to_its_report_and_compare_and_keeps_its_trace(disk_dir, tmp_path):
    shutil.copy(TRACE, tmp_path / "save.trace")
    plan = _plan(tmp_path, trials=3)
    runs = []
    for i in range(2):
        code, out = _cli("run", str(plan), "--target", str(disk_dir / "t"), "--out", str(tmp_path / f"r{i}"))
        assert code == 0 and "internal error" not in out, out
        assert "app: 108 calls on 3 threads (as-fast) in " in out
        (run,) = (tmp_path / f"r{i}").iterdir()
        runs.append(run)
    rows = list(csv.DictReader((runs[0] / "measurements.csv").open()))
    trials = [r for r in rows if not r["access"]]
    assert len(trials) == 3 and all(r["requests"] == "108" and r["replay_timing"] == "as-fast" for r in trials)
    assert all(r["mismatched_calls"] == "0" for r in trials), [r["first_mismatch"] for r in trials]
    fsyncs = [r for r in rows if r["access"] == "fsync"]
    assert len(fsyncs) == 3 and all(r["requests"] == "10" for r in fsyncs)
    assert (runs[0] / "traces" / "app.trace").read_bytes() == TRACE.read_bytes()
    assert not (disk_dir / "t").exists() or not any((disk_dir / "t").rglob("replay-*"))     # each trial's removed
    summary = json.loads((runs[0] / "summary.json").read_text())
    (result,) = [t for t in summary["tests"] if t["kind"] == "replay"]
    assert result["calls"] == 108 and result["threads"] == 3 and result["elapsed_s"]["estimate"] > 0
    assert {k["call"] for k in result["kinds"]} == {"open", "close", "read", "write", "seek", "fsync", "rename",
                                                    "unlink", "mkdir", "stat", "list"}
    assert "a recorded program replayed" in (runs[0] / "report.html").read_text()
    code, out = _cli("compare", str(runs[0]), str(runs[1]), "--out", str(tmp_path / "c.html"))
    assert code == 0 and "app   replay" in out and "fsync" in out, out
    said = " ".join(out.split())
    assert "app, replay, B / A in time (above 1: B took longer; the calls per second above are its inverse): " \
           "elapsed time " in said and "time in calls by kind, B / A, the most moved first: " in said, out
    assert "app: the replay in time</h2>" in (tmp_path / "c.html").read_text()
    code, out = _cli("compare", str(runs[0]), str(runs[1]), "--json")
    (pair,) = json.loads(out)["kinds"]["replay"]
    assert pair["test"] == "app" and pair["elapsed"]["what"] == "elapsed time" and pair["elapsed"]["ratio"]["low"] > 0
    assert {k["what"] for k in pair["kinds"]} == {k["call"] for k in result["kinds"]}


def test_a_resume_reads_the_trace_the_run_directory_kept(tmp_path):
    shutil.copy(TRACE, tmp_path / "save.trace")
    plan = _plan(tmp_path)
    run_dir = tmp_path / "run"
    (run_dir / "traces").mkdir(parents=True)
    shutil.copy(TRACE, run_dir / "traces" / "app.trace")
    (tmp_path / "save.trace").unlink()              # the plan's folder has changed since; the run's copy counts
    expanded = _expand_again(str(plan), plan.read_text(), 1, {}, run_dir)
    assert expanded.tests[0].replay.script.calls == 108
    shutil.rmtree(run_dir / "traces")
    (run_dir / "traces").symlink_to(tmp_path)       # a link where the copies should be: nothing read through it
    with pytest.raises(RunDirError) as e:
        _expand_again(str(plan), plan.read_text(), 1, {}, run_dir)
    assert str(e.value) == (f"{run_dir}/traces: a symbolic link where stibium keeps a folder of its own; nothing was "
                            f"read or written there. Remove it, or restore the folder from a copy")
    shutil.rmtree(run_dir)
    run_dir.mkdir()
    with pytest.raises(RunError) as e:
        _expand_again(str(plan), plan.read_text(), 1, {}, run_dir)
    assert str(e.value) == (f"{run_dir}/traces/app.trace: missing; the run directory lost its copy of the trace: "
                            f"restore the run from a copy")


def test_run_files_from_replays_the_trace_a_run_directory_kept_never_the_one_beside_the_plan(disk_dir, tmp_path):
    """`run --files-from RUN_DIR` (what `history check --confirm` runs, and a series resumed) reads the trace from
    the run directory's kept copy, whatever the plan's folder holds now; without the copy, one line and nothing
    written."""
    shutil.copy(TRACE, tmp_path / "save.trace")
    plan = _plan(tmp_path, trials=1)
    target = str(disk_dir / "t")
    code, out = _cli("run", str(plan), "--target", target, "--out", str(tmp_path / "r1"), "--no-history")
    assert code == 0, out
    (first,) = (tmp_path / "r1").iterdir()
    (tmp_path / "save.trace").write_text("{not a trace any more")
    code, out = _cli("run", str(plan), "--target", target, "--out", str(tmp_path / "r2"), "--no-history",
                     "--files-from", str(first))
    assert code == 0 and "app: 108 calls on 3 threads (as-fast) in " in out, out
    (second,) = (tmp_path / "r2").iterdir()
    assert (second / "traces" / "app.trace").read_bytes() == TRACE.read_bytes()
    shutil.rmtree(first / "traces")
    code, out = _cli("run", str(plan), "--target", target, "--out", str(tmp_path / "r3"), "--no-history",
                     "--files-from", str(first))
    assert code == 2 and out.strip() == (f"stibium: {first}/traces/app.trace: missing; the run directory lost its "
                                         f"copy of the trace: restore the run from a copy")
    assert not (tmp_path / "r3").exists()


def test_a_series_of_a_replay_resumes_with_the_trace_its_first_run_kept(disk_dir, tmp_path):
    """A series resumed reads its trace from its first run's kept copy, never beside the path that run's record
    names (which a received series could point anywhere)."""
    shutil.copy(TRACE, tmp_path / "save.trace")
    plan = _plan(tmp_path, trials=1)
    code, out = _cli("run", str(plan), "--runs", "2", "--target", str(disk_dir / "t"), "--out",
                     str(tmp_path / "r"), "--no-history")
    assert code == 0, out
    (series,) = (tmp_path / "r").iterdir()
    shutil.rmtree(series / "run-2")
    meta = json.loads((series / "series.json").read_text())
    meta["status"] = "interrupted"
    (series / "series.json").write_text(json.dumps(meta))
    (tmp_path / "save.trace").write_text("{not a trace any more")
    code, out = _cli("resume", str(series), "--target", str(disk_dir / "t"), "--no-history")
    assert code == 0, out
    assert (series / "run-2" / "traces" / "app.trace").read_bytes() == TRACE.read_bytes()
    assert json.loads((series / "series.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("change, said", [
    (lambda d: d["files"].append({"path": "../escape", "folder": False, "size_bytes": 1}), "file 22's path"),
    (lambda d: d["files"].append({"path": "/etc/passwd", "folder": False, "size_bytes": 1}), "file 22's path"),
    (lambda d: d["files"][1].update(size_bytes=-5), "size_bytes"),
    (lambda d: d["calls"][0].__setitem__(0, 10 ** 6), "thread"),
    (lambda d: d.update(calls=[[0, 0, 0, "exec", -1, -1, -1, -1, 0, 0, ""]]), "call 0"),
    (lambda d: d.update(files=[[["nested"]]]), "file 0"),
])
def test_a_hostile_trace_is_refused_in_one_line_and_nothing_is_written(tmp_path, disk_dir, change, said):
    doc = json.loads(TRACE.read_text())
    change(doc)
    (tmp_path / "save.trace").write_text(json.dumps(doc))
    plan = _plan(tmp_path)
    code, out = _cli("run", str(plan), "--target", str(disk_dir / "t"), "--out", str(tmp_path / "r"))
    assert code == 2 and out.count("\n") == 1 and out.startswith("stibium: ") and said in out, out
    assert "give a trace that stibium record wrote" in out
    assert not (disk_dir / "t").exists() and not (tmp_path / "r").exists() and not (tmp_path.parent / "escape").exists()
