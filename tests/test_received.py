"""A stranger's run directory, series, verify folder or export is data (received.py): links planted where
stibium writes, FIFOs and devices where it reads, records that choose a target or claim endless counts. Each is
answered in one line with exit status 2, the victim's bytes unchanged, quickly, and nothing written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from synthetic import make_run


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _victim(tmp_path: Path, name: str = "victim.txt") -> Path:
    victim = tmp_path / name
    victim.write_text("the person's own file\n")
    return victim


def _one_line(result, *, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stibium: ") and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.mark.parametrize("planted", [
    "report.html.tmp", "summary.json.tmp",          # the temporaries of stibium's writes before received.py
    ".stibium-report.html.tmp",
])
def test_a_link_planted_under_a_temporary_name_is_never_written_through(tmp_path, planted):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    victim = _victim(tmp_path)
    before = _digest(victim)
    (run / planted).symlink_to(victim)
    result = _invoke("report", str(run))
    assert result.exit_code == 0, result.output
    assert _digest(victim) == before
    assert (run / "report.html").is_file() and not (run / "report.html").is_symlink()
    assert (run / planted).is_symlink()                         # left as it was, not followed, not removed
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp") and p.name != planted]


@pytest.mark.parametrize("name", ["report.html", "summary.json"])
def test_a_link_where_stibium_s_own_file_belongs_is_refused_naming_it(tmp_path, name):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    victim = _victim(tmp_path)
    before = _digest(victim)
    (run / name).unlink(missing_ok=True)
    (run / name).symlink_to(victim)
    line = _one_line(_invoke("report", str(run)))
    assert line == (f"stibium: {run}: holds {name} (a symbolic link) where stibium keeps its own file; nothing was "
                    f"written. Remove it, or restore the folder from a copy")
    assert _digest(victim) == before


def test_a_run_of_a_series_that_links_out_of_it_is_refused(tmp_path):
    series = tmp_path / "series"
    series.mkdir()
    elsewhere = make_run(tmp_path / "elsewhere", rate_bytes_per_s=2e8)
    (series / "series.json").write_text(json.dumps({"format": "stibium-series/1", "plan": "quick", "runs": 1,
                                                    "status": "complete"}))
    (series / "run-1").symlink_to(elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    line = _one_line(_invoke("report", str(series)))
    assert line.startswith(f"stibium: {series / 'run-1'}: a symbolic link where stibium keeps a folder of its own")
    assert sorted(p.name for p in elsewhere.iterdir()) == before      # no report written there
    assert not (series / "report.html").exists()


@pytest.mark.parametrize("name", ["run.json", "measurements.csv"])
def test_a_fifo_in_a_run_directory_is_refused_at_once(tmp_path, name):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    (run / name).unlink()
    os.mkfifo(run / name)
    started = time.monotonic()
    line = _one_line(_invoke("report", str(run)))
    assert time.monotonic() - started < 10
    assert line.startswith(f"stibium: {run / name}: a FIFO where stibium keeps a file of its own; nothing was read")


@pytest.mark.parametrize("name", ["run.json", "measurements.csv"])
def test_a_link_to_a_device_in_a_run_directory_is_refused(tmp_path, name):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    (run / name).unlink()
    (run / name).symlink_to("/dev/zero")
    line = _one_line(_invoke("report", str(run)))
    assert line.startswith(f"stibium: {run / name}: a symbolic link where stibium keeps a file of its own")


def test_a_device_named_as_a_history_export_or_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "export.json"
    os.mkfifo(fifo)
    database = tmp_path / "h.sqlite"
    started = time.monotonic()
    line = _one_line(_invoke("history", "import", str(fifo), "--history", str(database)))
    assert time.monotonic() - started < 10
    assert line == (f"stibium: {fifo}: a FIFO where stibium keeps a file of its own; nothing was read or written "
                    f"there. Remove it, or restore the folder from a copy; give the file `stibium history export` "
                    f"wrote")
    line = _one_line(_invoke("history", "import", "/dev/zero", "--history", str(database)))
    assert "/dev/zero: a device where stibium keeps a file of its own" in line


def test_an_endless_count_of_runs_in_series_json_is_refused(tmp_path):
    series = tmp_path / "series"
    series.mkdir()
    (series / "series.json").write_text(json.dumps({"format": "stibium-series/1", "plan": "quick",
                                                    "runs": 10 ** 12}))
    for command in (("report", str(series)), ("resume", str(series)),
                    ("history", "add", str(series), "--history", str(tmp_path / "h.sqlite"))):
        started = time.monotonic()
        result = _invoke(*command)
        assert time.monotonic() - started < 10
        assert result.exit_code == 2, (command, result.output)
        assert (f"{series / 'series.json'}: its runs is 1000000000000, not a count from 1 to 100 (as stibium run "
                f"--runs takes); restore it from a copy of the series") in result.output


@pytest.mark.parametrize("clients, message", [
    ({"ranks": 10 ** 12}, "its clients.ranks is 1000000000000, not a count of clients from 1 to 10,000"),
    ({"ranks": 2, "hosts": "a,b"}, "its clients.hosts is 'a,b', not a list of at most 10,000 host names"),
    ({"ranks": 2, "launches": [{"clocks": "x"}]}, "its clients.launches is [{\"clocks\": \"x\"}], not a list of "
                                                  "launches, each with a record per client's clock"),
])
def test_a_record_s_clients_held_to_their_shape_and_size(tmp_path, clients, message):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    record = json.loads((run / "run.json").read_text())
    record["clients"] = clients
    (run / "run.json").write_text(json.dumps(record))
    line = _one_line(_invoke("report", str(run)))
    assert line == f"stibium: {run / 'run.json'}: {message}; restore it from a copy of the run"


def test_integers_past_sqlite_s_range_are_refused_in_one_line(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    record = json.loads((run / "run.json").read_text())
    record["target_device"] = 2 ** 63
    (run / "run.json").write_text(json.dumps(record))
    line = _one_line(_invoke("report", str(run)))
    assert line == (f"stibium: {run / 'run.json'}: its target_device is 9223372036854775808, not a whole number of "
                    f"0 or more; restore it from a copy of the run")


def test_a_dangling_measurements_link_is_refused_and_nothing_is_made_outside(tmp_path):
    from stibium_py.rundir.received import Refused
    from stibium_py.rundir.store import MeasurementLog
    run = tmp_path / "r"
    run.mkdir()
    outside = tmp_path / "outside.csv"
    (run / "measurements.csv").symlink_to(outside)
    with pytest.raises(Refused, match="measurements.csv: a symbolic link where stibium keeps a file of its own"):
        MeasurementLog(run)
    assert not outside.exists()


def test_a_half_written_row_is_cut_at_its_line_and_rows_append_after_it(tmp_path):
    from stibium_py.rundir.received import cut_to_last_line
    path = tmp_path / "m.csv"
    path.write_bytes(b"a,b\n1,2\n3,")
    cut_to_last_line(path)
    assert path.read_bytes() == b"a,b\n1,2\n"
    path.write_bytes(b"x" * 200_000)            # no line at all, and longer than a block of the search
    cut_to_last_line(path)
    assert path.read_bytes() == b""


def test_a_hard_link_among_a_verify_s_fill_is_never_written_through(tmp_path):
    """A verify's test folder with a fill file hard-linked to a file of the person's (not whole: it is written
    again on resume): the write removes the name first and writes a file of its own."""
    from rich.console import Console
    from stibium_py.errors import RunError
    from stibium_py.run.helper import CompiledHelper, find_helper
    from stibium_py.kinds.verify.command import verify_plan
    from stibium_py.run import RunOptions, resume_run, start_run
    from test_verify import MiB, _CutAtEviction
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    with pytest.raises(RunError):
        start_run(verify_plan(8 * MiB, 4 * MiB), options, Console(quiet=True), _CutAtEviction())
    (run_dir,) = (tmp_path / "r").iterdir()
    second = sorted((tmp_path / "t").rglob("v*.bin"))[1]
    victim = _victim(tmp_path)
    before = _digest(victim)
    second.unlink()
    os.link(victim, second)
    finished = resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), CompiledHelper(find_helper()))
    assert finished.status == "complete"
    assert _digest(victim) == before and victim.stat().st_nlink == 1


def test_a_received_run_whose_test_folder_is_gone_writes_only_where_the_person_says(tmp_path):
    """run.json names an existing folder of the person's as its target; its own test folder is not there: the
    resume refuses (nothing made in that folder), and goes on inside --target when the person gives it."""
    from test_corrupt_runs import _interrupted
    run_dir, _ = _interrupted(tmp_path)
    record = json.loads((run_dir / "run.json").read_text())
    shutil.rmtree(record["work_dir"])                  # as received: the test folder was on the stranger's disk
    before = sorted(p.name for p in (tmp_path / "t").iterdir())
    line = _one_line(_invoke("resume", str(run_dir), "--no-history"))
    assert line.startswith(f"stibium: {run_dir}: nothing on this machine shows that this run was started here")
    assert line.endswith(f"Say where: stibium resume {run_dir} --target FOLDER")
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == before
    result = _invoke("resume", str(run_dir), "--no-history", "--target", str(tmp_path / "t"))
    assert result.exit_code == 0, result.output               # the person said where: the run goes on there
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == before     # its test folder made and removed


def test_a_resumed_run_keeps_its_files_only_where_the_person_says_so(tmp_path):
    from stibium_py.run.resume import _resumed
    from stibium_py.run import RunOptions
    from stibium_py.rundir.record import RunRecord
    run = RunRecord(keep_files=True, status="interrupted")
    assert _resumed(run, RunOptions()).keep_files is False
    assert _resumed(run, RunOptions(keep_files=True)).keep_files is True


def test_a_series_resumes_with_its_first_run_s_plan_never_the_file_series_json_names(tmp_path):
    """series.json's source names a file of the person's: it is never read (nor quoted); the plan is the one the
    first run kept. Without a run of it begun, there is no plan, said in one line."""
    secret = tmp_path / "secret.txt"
    secret.write_text("password: hunter2\n")
    series = tmp_path / "series"
    series.mkdir()
    (series / "series.json").write_text(json.dumps({"format": "stibium-series/1", "plan": "quick", "runs": 2,
                                                    "source": str(secret), "target": str(tmp_path)}))
    result = _invoke("resume", str(series), "--no-history")
    line = _one_line(result)
    assert "hunter2" not in result.output and str(secret) not in result.output
    assert line == (f"stibium: {series}: no run of it began (no run-1 with its run.json), so there is no plan to "
                    f"carry on with; start a new series with stibium run PLAN --runs N")


def test_compare_out_naming_a_folder_is_one_line_and_writes_nothing(tmp_path):
    a, b = make_run(tmp_path / "a", rate_bytes_per_s=2e8), make_run(tmp_path / "b", rate_bytes_per_s=2e8)
    folder = tmp_path / "pages"
    folder.mkdir()
    line = _one_line(_invoke("compare", str(a), str(b), "--out", str(folder)))
    assert line == (f"stibium: --out {folder}: a folder; give the comparison page's file name, such as "
                    f"{folder / 'compare.html'}")
    assert list(folder.iterdir()) == [] and not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("flag", ["--file-size", "--size"])
def test_a_verify_of_size_zero_is_refused_not_taken_for_the_default(tmp_path, flag):
    line = _one_line(_invoke("verify", str(tmp_path), flag, "0", "--out", str(tmp_path / "r")))
    assert line == f"stibium: {flag}: 0 is no size to fill; give a size above 0 (such as 1GB)"
    assert not (tmp_path / "r").exists()


def test_a_hostname_that_is_not_text_is_the_run_s_fault_not_the_history_s(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    record = json.loads((run / "run.json").read_text())
    record.setdefault("machine", {})["hostname"] = ["not", "text"]
    (run / "run.json").write_text(json.dumps(record))
    result = _invoke("history", "add", str(run), "--history", str(tmp_path / "h.sqlite"))
    assert result.exit_code == 0, result.output
    assert "damaged" not in result.output and "history: 1 run added" in result.output


def test_a_verify_s_bad_block_outside_its_file_is_not_believed(tmp_path):
    """An earlier stibium's verify record (tests/fixtures) naming a bad block outside its file."""
    from stibium_py.errors import RunDirError
    from stibium_py.kinds.verify.earlier.record import read_state
    run_dir = tmp_path / "v"
    shutil.copytree(Path(__file__).parent / "fixtures" / "verify-earlier-interrupted", run_dir)
    record = json.loads((run_dir / "verify.json").read_text())
    record["files"][0]["checked"] = {"ok": 0, "moved": 0, "corrupt": 1, "unreadable": 0, "period_blocks": 0,
                                     "bad": [{"block": 10 ** 9, "kind": "corrupt", "bits": 1}], "seconds": 0.1}
    (run_dir / "verify.json").write_text(json.dumps(record))
    with pytest.raises(RunDirError, match=r"files\[0\] names block 1,000,000,000 as bad, which is not one of its "
                                          r"blocks \(0 to 1,023\)"):
        read_state(run_dir)


@pytest.mark.parametrize("streams", ["1000000000", "0"])
def test_a_stream_row_claiming_endless_streams_or_none_is_no_frame(tmp_path, streams):
    import csv
    import io
    from test_stream_kind import CUSTOM, _plan, _run
    run = _run(tmp_path, _plan(CUSTOM), lambda name, k: 0.010)
    path = run / "measurements.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    frame = next(i for i, r in enumerate(rows) if r["streams"] not in ("", None) and r["chunk"] not in ("", None))
    rows[frame]["streams"] = streams
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    started = time.monotonic()
    result = _invoke("report", str(run))
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert time.monotonic() - started < 30


def test_a_drive_label_with_markup_is_printed_as_text_when_the_run_is_recorded(tmp_path, monkeypatch):
    from stibium_py.commands import common
    from stibium_py.history import remember
    monkeypatch.setattr(remember, "remember", lambda run_dir, where: ["history: recorded in h ([/x] \x1b[2J)"])
    import io
    out = io.StringIO()
    monkeypatch.setattr(common.console.made(), "_file", out)    # the attribute itself: restored to None, sys.stdout again
    monkeypatch.setattr(common.console.made(), "_width", 200)
    common.recorder(str(tmp_path / "h.sqlite"))(tmp_path)
    assert out.getvalue().strip() == "history: recorded in h ([/x] \\x1b[2J)"


@pytest.mark.parametrize("column, value", [("bytes", "9" * 400), ("bytes", str(2 ** 64)), ("size_bytes", str(2 ** 70)),
                                           ("seq", "9" * 40), ("trial", "-" + "9" * 30)])
@pytest.mark.parametrize("columnar", [False, True])
def test_a_count_past_a_64_bit_integer_in_a_row_is_a_damaged_row(tmp_path, monkeypatch, column, value, columnar):
    import csv
    import io
    if columnar:                              # the columnar reader (pyarrow) reads it first, then the row reader
        import stibium_py.rundir.csvread
        monkeypatch.setattr(stibium_py.rundir.csvread, "ROW_READER_MAX_BYTES", 0)
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    path = run / "measurements.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    rows[3][column] = value
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    result = _invoke("report", str(run), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["damaged_rows"] == 1 and summary["measurements"] == 179


def test_a_received_database_with_a_run_of_endless_points_is_refused(tmp_path):
    import sqlite3
    from stibium_py.history.db import History
    from test_history import _day, _entry
    path = tmp_path / "h.sqlite"
    with History(path) as history:
        history.add(_entry("run-1", _day(1), 100e6))
    db = sqlite3.connect(path)
    db.executemany("INSERT INTO points (run_id, point, key_json, unit, estimate, low, high, n) VALUES "
                   "(1, ?, '{}', 'bytes', 1.0, 0.9, 1.1, 3)", [(f"p{i}",) for i in range(100_000)])
    db.commit()
    db.close()
    started = time.monotonic()
    line = _one_line(_invoke("history", "--history", str(path), "--out", str(tmp_path / "pages")))
    assert time.monotonic() - started < 20
    assert line == (f"stibium: {path}: a run in it holds 100,001 test points, more than stibium keeps of a run "
                    f"(2,000); this is not a history stibium wrote: move it away")


def test_a_record_s_facts_of_the_wrong_type_read_as_absent():
    from stibium_py.rundir.record import facts_held
    given = {"ram_bytes": "x", "cpu_count": [1], "cpu": "Apple M1", "virtualization": None, "boot_id": {"a": 1},
             "clock_resolution_ns": 2 ** 64, "direct_honoured": "yes", "direct_how": "O_DIRECT",
             "drive": {"model": "M", "capacity_bytes": "big", "serial": "S"}, "stack": [{"kind": "loop"}],
             "uptime_s": float("inf"), "link": {"server": "nas", "interface": None, "bytes_per_s": None,
                                                "source": "unknown"}}
    assert facts_held(given) == {"cpu": "Apple M1", "virtualization": None, "direct_how": "O_DIRECT",
                                 "drive": {"model": "M", "serial": "S"}, "stack": [{"kind": "loop"}],
                                 "link": given["link"]}


@pytest.mark.parametrize("where, value, said", [
    (("plan", "as_given", "defaults"), "x", "its plan.as_given.defaults is 'x', not what a plan holds there"),
    (("plan", "as_given", "tests"), [1, 2], "its plan.as_given.tests is [1, 2], not what a plan holds there"),
    (("plan", "as_given", "ceiling_bytes_per_s"), "x",
     "its plan.as_given.ceiling_bytes_per_s is 'x', not what a plan holds there"),
    (("expanded", "ops_sha256"), 2 ** 63, "its expanded.ops_sha256 is 9223372036854775808, not a SHA-256 digest"),
])
def test_a_plan_and_digest_in_a_record_are_held_to_their_shapes(tmp_path, where, value, said):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    record = json.loads((run / "run.json").read_text())
    node = record
    for key in where[:-1]:
        node = node.setdefault(key, {})
    node[where[-1]] = value
    (run / "run.json").write_text(json.dumps(record))
    line = _one_line(_invoke("report", str(run)))
    assert line == f"stibium: {run / 'run.json'}: {said}; restore it from a copy of the run"
