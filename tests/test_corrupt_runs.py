"""Run directories fed corrupt or truncated files: a clear one-line error, or a
report from the rows that are whole; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from synthetic import make_run


def _report(run_dir: Path, *extra: str):
    return CliRunner().invoke(main, ["report", str(run_dir), *extra])


def _reported_skipping(run_dir: Path, damaged: int) -> dict:
    """The report's summary of a run of 180 measurements of which `damaged` rows were skipped, and its warning."""
    result = _report(run_dir, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["damaged_rows"] == damaged and summary["measurements"] == 140 + 40 - damaged
    rows = "row of measurements.csv was" if damaged == 1 else "rows of measurements.csv were"
    assert {"level": "warning", "test": "all", "message": f"{damaged} damaged {rows} skipped",
            "what_to_do": "the report uses the rows that are whole"} in summary["warnings"]
    return summary


def _set_cells(run_dir: Path, cells: dict[tuple[int, str], str]) -> None:
    """Edits measurements.csv by hand: {(line, column name): new text}, line 0 being the header."""
    import csv
    rows = list(csv.reader((run_dir / "measurements.csv").read_text().splitlines()))
    for (line, name), text in cells.items():
        rows[line][rows[0].index(name)] = text
    with open(run_dir / "measurements.csv", "w", newline="") as f:
        csv.writer(f).writerows(rows)


@pytest.fixture(params=["rows", "columns"])
def reader(request, monkeypatch):
    """Both readers of measurements.csv: a file this small is read row by row; the columnar reader (pyarrow)
    is made to read it too."""
    if request.param == "columns":
        import stibium_py.rundir.csvread
        monkeypatch.setattr(stibium_py.rundir.csvread, "ROW_READER_MAX_BYTES", 0)
    return request.param


def test_a_csv_cut_mid_row_gives_a_report_from_the_whole_rows(tmp_path, reader):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    data = (run / "measurements.csv").read_bytes()
    (run / "measurements.csv").write_bytes(data[: len(data) - 40])     # the last row cut
    _reported_skipping(run, 1)
    assert (run / "report.html").exists()


def test_a_row_with_garbage_is_skipped(tmp_path, reader):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    lines = (run / "measurements.csv").read_text().splitlines(keepends=True)
    lines[5] = "5,files,write,files,sequential,not-a-number,,,,,,,,\n"
    (run / "measurements.csv").write_text("".join(lines))
    result = _report(run, "--json")
    assert result.exit_code == 0
    assert json.loads(result.output)["damaged_rows"] == 1


@pytest.mark.parametrize("damage,message", [
    ("missing", "stibium: {r}: no run.json; this is not a stibium run directory, or it was damaged"),
    ("garbage", "stibium: {r}/run.json: damaged (Expecting value: line 1 column 1 (char 0)); restore it from a copy "
                "of the run"),
    ("foreign", "stibium: {r}/run.json: not a stibium run.json (stibium-run/1 or stibium-run/2); was it written by "
                "stibium?"),
    ("header", "stibium: {r}/measurements.csv: the header is not stibium's; restore the file from a copy of the run"),
    ("empty", "stibium: {r}: no measurements yet; nothing to report"),
    ("nofolder", "stibium: run directory {r} does not exist; give a folder that `stibium run` wrote (reports/...)"),
])
def test_damaged_run_directories_get_one_line(tmp_path, damage, message):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    if damage == "missing":
        (run / "run.json").unlink()
    elif damage == "garbage":
        (run / "run.json").write_text("<<<not json")
    elif damage == "foreign":
        (run / "run.json").write_text(json.dumps({"format": "something-else"}))
    elif damage == "header":
        (run / "measurements.csv").write_text("a,b,c\n1,2,3\n")
    elif damage == "empty":
        (run / "measurements.csv").write_text("")
    elif damage == "nofolder":
        run = tmp_path / "nowhere"
    result = _report(run)
    assert result.exit_code == 2
    assert result.output.strip() == message.format(r=run)
    assert "Traceback" not in result.output


def test_compare_with_a_damaged_run_gets_one_line(tmp_path):
    a = make_run(tmp_path / "a", rate_bytes_per_s=2e8)
    b = make_run(tmp_path / "b", rate_bytes_per_s=2e8)
    (b / "run.json").write_text("{")
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 2
    assert result.output.startswith(f"stibium: {b}/run.json: damaged (")
    assert not (tmp_path / "c.html").exists()


def test_resume_of_a_complete_run_is_refused(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    result = CliRunner().invoke(main, ["resume", str(run)])
    assert result.exit_code == 2
    assert result.output.strip() == f"stibium: {run} is already complete; `stibium report {run}` shows it"


def test_resume_of_an_edited_run_json_gets_one_line(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    data = json.loads((run / "run.json").read_text())
    data["status"] = "interrupted"
    (run / "run.json").write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["resume", str(run)])
    assert result.exit_code == 2
    assert result.output.strip() == (f"stibium: {run}/run.json: the run in it cannot be read again (KeyError: "
                                     f"'plan.source'); restore it from a copy of the run")


# -- run directories from strangers: resume writes and removes only in the test folder it made for the run

STRANGER_PLAN = """name: fake
tests:
  - name: f
    kind: files
    sizes: [64KiB, 256KiB]
    repeats: 2
"""


def _interrupted(tmp_path: Path) -> tuple[Path, list[str]]:
    """An interrupted run (the fake helper), and the names of its test files."""
    from rich.console import Console
    from stibium_py.plan import load_and_expand
    from stibium_py.run.preflight import RunError
    from stibium_py.run import LoadedPlan, RunOptions, start_run
    from fake_helper import FakeHelpers
    plan = tmp_path / "fake.yaml"
    plan.write_text(STRANGER_PLAN)
    with pytest.raises(RunError):
        start_run(LoadedPlan.read(plan), RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False),
                  Console(quiet=True), FakeHelpers(interrupt_at=3))
    run_dir = next((tmp_path / "r").iterdir())
    return run_dir, sorted({o.file for o in load_and_expand(plan)[2].ops})


def _victim(folder: Path, names: list[str]) -> dict[str, bytes]:
    """A folder of someone's files that bear the test files' names."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"not stibium's " + name.encode())
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("where, why", [
    ("victim", "its name is not a stibium test folder's (stibium-<run>)"),
    ("victim/stibium-{run}", "it holds no .stibium-run marker"),
    ("victim/stibium-other", "its .stibium-run marker is not this run's"),
    ("victim/../victim/stibium-{run}", "not an absolute path written plainly"),
])
def test_resume_of_a_run_json_pointing_work_dir_elsewhere_removes_nothing_there(tmp_path, where, why):
    from rich.console import Console
    from stibium_py.run.preflight import RunError
    from stibium_py.run import RunOptions, resume_run
    from fake_helper import FakeHelpers
    run_dir, names = _interrupted(tmp_path)
    folder = tmp_path / where.format(run=run_dir.name)
    folder.mkdir(parents=True, exist_ok=True)
    if where.endswith("other"):
        (folder / ".stibium-run").write_text("stibium test files of run someone-else; safe to delete\n")
    before = _victim(folder, names)
    run = json.loads((run_dir / "run.json").read_text())
    work_dir = str(tmp_path) + "/" + where.format(run=run_dir.name)
    run.update(work_dir=work_dir, target=str(Path(work_dir).parent))
    (run_dir / "run.json").write_text(json.dumps(run))
    with pytest.raises(RunError) as e:
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers())
    assert e.value.exit_code == 2
    assert str(e.value) == (f"{run_dir}/run.json: its work_dir {work_dir} is not the test folder stibium made for "
                            f"this run ({why}); nothing was written or removed. Resume a run you started here, or "
                            f"start the plan again with stibium run")
    assert {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_resume_into_an_empty_folder_of_the_run_s_name_marks_it_and_completes(tmp_path):
    """An empty test folder without its marker (a clean-up that emptied it but could not remove it) holds nothing
    to lose: the resume marks it as this run's and goes on; the completed run removes it."""
    import shutil
    from rich.console import Console
    from stibium_py.run import RunOptions, resume_run
    from fake_helper import FakeHelpers
    run_dir, _ = _interrupted(tmp_path)
    work = Path(json.loads((run_dir / "run.json").read_text())["work_dir"])
    shutil.rmtree(work, ignore_errors=True)      # the interrupted run removed its files and the folder
    work.mkdir()
    resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers())
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert not work.exists()


def test_resume_into_a_work_dir_outside_the_recorded_target_is_refused_and_creates_nothing(tmp_path):
    from rich.console import Console
    from stibium_py.run.preflight import RunError
    from stibium_py.run import RunOptions, resume_run
    from fake_helper import FakeHelpers
    run_dir, _ = _interrupted(tmp_path)
    run = json.loads((run_dir / "run.json").read_text())
    run["work_dir"] = str(tmp_path / "nowhere" / f"stibium-{run_dir.name}")
    (run_dir / "run.json").write_text(json.dumps(run))
    with pytest.raises(RunError, match=r"\(it is not directly inside the run's target\); nothing was written"):
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers())
    assert not (tmp_path / "nowhere").exists()


def test_resume_of_its_own_test_folder_goes_on(tmp_path):
    from rich.console import Console
    from stibium_py.run import RunOptions, resume_run
    from fake_helper import FakeHelpers
    run_dir, _ = _interrupted(tmp_path)
    assert resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers()).status == "complete"


def _edited_run_json(run: Path, edit) -> None:
    data = json.loads((run / "run.json").read_text())
    edit(data)
    (run / "run.json").write_text(json.dumps(data))


@pytest.mark.parametrize("damage, message", [
    (lambda r: (r / "run.json").write_text('{"format": "stibium-run/2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"),
     "{r}/run.json: nested deeper than 64 levels; restore it from a copy of the run"),
    (lambda r: (r / "run.json").write_text((r / "run.json").read_text().replace('"status":', '"x": 1e400, "status":', 1)),
     "{r}/run.json: holds the number 1e400, too large for a float; restore it from a copy of the run"),
    (lambda r: (r / "run.json").write_text((r / "run.json").read_text().replace('"status":', '"x": NaN, "status":', 1)),
     "{r}/run.json: holds NaN, which is not a number; restore it from a copy of the run"),
    (lambda r: _edited_run_json(r, lambda d: d.update(started_epoch_s=-5)),
     "{r}/run.json: its started_epoch_s is -5, not a time in seconds of 0 or more; restore it from a copy of the run"),
    (lambda r: _edited_run_json(r, lambda d: d.update(seed="x")),
     "{r}/run.json: its seed is 'x', not a whole number of 0 or more; restore it from a copy of the run"),
    (lambda r: _edited_run_json(r, lambda d: d.update(expanded={"ops_count": -1})),
     "{r}/run.json: its expanded.ops_count is -1, not a whole number of 0 or more; restore it from a copy of the run"),
    (lambda r: _edited_run_json(r, lambda d: d.update(expanded={"ops_count": 3, "memory_shapes": "all"})),
     "{r}/run.json: its expanded.memory_shapes is 'all', not a whole number of 0 or more; restore it from a copy of "
     "the run"),
    (lambda r: _edited_run_json(r, lambda d: d.update(status="done!")),
     "{r}/run.json: its status is 'done!', not one of running, complete, interrupted, failed, waiting-for-reboot; "
     "restore it from a copy of the run"),
    (lambda r: _edited_run_json(r, lambda d: d.update(keep_files="yes")),
     "{r}/run.json: its keep_files is 'yes', not true or false; restore it from a copy of the run"),
])
@pytest.mark.parametrize("command", ["report", "compare", "resume"])
def test_a_run_json_no_stibium_writes_is_refused_in_one_line(tmp_path, damage, message, command):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    damage(run)
    args = {"report": ["report", str(run)], "resume": ["resume", str(run)],
            "compare": ["compare", str(make_run(tmp_path / "a", rate_bytes_per_s=2e8)), str(run), "--out",
                        str(tmp_path / "c.html")]}[command]
    before = sorted(p.name for p in run.iterdir())
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert result.output == "stibium: " + message.format(r=run) + "\n"
    assert sorted(p.name for p in run.iterdir()) == before and not (tmp_path / "c.html").exists()


def test_rows_with_a_negative_or_infinite_count_or_time_are_skipped_as_damaged(tmp_path, reader):
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    _set_cells(run, {(3, "seconds"): "-5", (4, "bytes"): "-100", (5, "seconds"): "1e400", (6, "lat_p99_s"): "-0.001"})
    _reported_skipping(run, 4)


def test_rows_of_a_kind_this_stibium_does_not_know_are_skipped_as_damaged(tmp_path, reader):
    """A row's kind edited by hand (or written by a plug-in this stibium has not loaded): nothing here can
    summarise it, so report and compare count it with the damaged rows instead of ending in an internal error."""
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    _set_cells(run, {(3, "kind"): "disk", (7, "kind"): ""})
    _reported_skipping(run, 2)
    other = make_run(tmp_path / "o", rate_bytes_per_s=2e8)
    compared = CliRunner().invoke(main, ["compare", str(run), str(other), "--out", str(tmp_path / "c.html")])
    assert compared.exit_code == 0 and "internal error" not in compared.output, compared.output


def test_rows_whose_names_or_fill_no_plan_could_say_are_skipped_as_damaged(tmp_path, reader):
    """The terminal's tables and a point's label print a row's test, op, engine, host and fill, so those are held to what
    stibium writes there (a name's characters; a fill's forms: random, a byte such as 0x41, stated ratios): rich
    markup, a newline or an escape sequence in a stranger's file counts as damage, and the report still comes."""
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    _set_cells(run, {(3, "fill"): "[/]", (4, "fill"): "[red]boom", (5, "fill"): "0x41\n", (6, "fill"): "010",
                     (7, "fill"): "compressible=50%", (8, "fill"): "0x41", (9, "fill"): "",
                     (10, "test"): "[/]boom", (11, "engine"): "direct\x1b[31m", (12, "op"): "read\nwrite",
                     (13, "host"): "[/]boom", (14, "host"): "bay-2.studio.local",
                     (15, "host"): "127.0.0.1:8765", (16, "host"): "[::1]:8766"})
    _reported_skipping(run, 8)                # a client's host too (a straggler's sentence names it), not a valid one
    shown = _report(run)
    assert shown.exit_code == 0 and "boom" not in shown.output and "\x1b" not in shown.output


def test_a_run_json_whose_plan_says_a_fill_no_plan_could_say_leaves_those_older_rows_out(tmp_path):
    from stibium_py.results.pipeline import load_run
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    names = load_run(run).measurements.test.tolist()
    doc = json.loads((run / "run.json").read_text())
    other = next(n for n in names if n != names[0])
    doc["plan"]["as_given"] = {"defaults": {"fill": "0x41"},
                               "tests": [{"name": names[0], "fill": "[red]boom"}, {"name": other}]}
    (run / "run.json").write_text(json.dumps(doc))
    _set_cells(run, {(k + 1, "fill"): "" for k in range(len(names))})       # a file older than the fill column
    after = load_run(run)
    assert after.damaged_rows == names.count(names[0]) > 0
    fill = dict(zip(after.measurements.test.tolist(), after.measurements.fill.tolist()))
    assert fill == {other: "0x41"}          # the plan's default
