"""The CLI end to end with the real helper, on small plans in a temporary folder:
the run directory is complete, one CSV row per operation, the test files are
gone, the space figure of `plan show` equals the bytes written, and a run stopped
for a reboot resumes without repeating anything."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import measured_rows
from stibium_py.cli import main

PLAN = """\
name: small
description: a small plan for tests
defaults:
  engine: direct
  seed: 3
tests:
  - name: files
    kind: files
    sizes: [10KB, 100KB, 1MB]
    repeats: 2
    between: {between}
  - name: pat
    kind: pattern
    op: [read, write]
    access: [random, sequential]
    granularities: [4KiB, 64KiB]
    bytes: 256KiB
    span: 1MiB
    trials: 2
  - name: fresh
    kind: pattern
    op: write
    access: random
    granularities: [4KiB]
    bytes: 64KiB
    span: 256KiB
    trials: 2
    layout: fresh
"""
N_OPS = 12 + 2 * 2 * 2 * 2 + 2


def _plan(d: Path, between: str = "evict") -> Path:
    p = d / "small.yaml"
    p.write_text(PLAN.format(between=between))
    return p


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def _run_dir(out: str) -> Path:
    return Path(re.search(r"run directory: (\S+)", out).group(1))


def test_run_writes_a_complete_run_directory_and_cleans_up(disk_dir):
    target = disk_dir / "target"
    code, out = _run("run", str(_plan(disk_dir)), "--target", str(target), "--out", str(disk_dir / "reports"))
    assert code == 0, out
    run_dir = _run_dir(out)
    assert sorted(p.name for p in run_dir.iterdir()) == ["measurements.csv", "report.html", "run.json", "summary.json"]
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "complete" and run["ended_utc"]
    rows = measured_rows(run_dir)
    assert len(rows) == N_OPS == run["expanded"]["ops_count"]
    assert [int(r["seq"]) for r in rows] == list(range(N_OPS))
    assert all(r["error"] == "" and float(r["seconds"]) > 0 for r in rows)
    assert list(target.iterdir()) == []  # every test file and the run's folder are gone
    # the bytes written are what `plan show` promised
    written = sum(int(r["bytes"]) for r in rows if r["op"] == "write") + sum(
        t["layout_bytes"] for t in run["expanded"]["tests"])
    code, shown = _run("plan", "show", str(_plan(disk_dir)))
    assert code == 0
    assert f"bytes written: {written} " in shown
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [(t["name"], t["op"]) for t in summary["tests"]][:2] == [("files", "write"), ("files", "read")]
    assert {(t["name"], t["op"]) for t in summary["tests"][2:]} == {("pat", "read"), ("pat", "write"), ("fresh", "write")}
    files_read = summary["tests"][1]
    assert files_read["n"] == 6 and files_read["rate_bytes_per_s"]["estimate"] > 0
    assert files_read["cache_suspects"] == []  # direct engine, evicted


def test_keep_files_leaves_the_test_files(disk_dir):
    target = disk_dir / "target"
    code, out = _run("run", str(_plan(disk_dir)), "--target", str(target), "--out", str(disk_dir / "r"), "--keep-files")
    assert code == 0, out
    work = next(target.iterdir())
    assert len(list((work / "files").iterdir())) == 6
    assert (work / "pat" / "data.bin").stat().st_size == 2**20


def test_reboot_stops_after_the_writes_and_resume_finishes(disk_dir):
    target = disk_dir / "target"
    code, out = _run("run", str(_plan(disk_dir, "reboot")), "--target", str(target), "--out", str(disk_dir / "r"))
    assert code == 0, out
    run_dir = _run_dir(out)
    assert "Restart the machine, then run" in out
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "waiting-for-reboot"
    rows = measured_rows(run_dir)
    assert [r["op"] for r in rows] == ["write"] * 6
    work = Path(run["work_dir"])
    assert len(list((work / "files").iterdir())) == 6  # kept for the reads after the restart

    code, out = _run("resume", str(run_dir))
    assert code == 2
    assert "waits for a reboot and this machine has not restarted since" in out

    run["machine"]["boot_id"] = "simulated-earlier-boot"
    (run_dir / "run.json").write_text(json.dumps(run))
    code, out = _run("resume", str(run_dir))
    assert code == 0, out
    rows = measured_rows(run_dir)
    assert sorted(int(r["seq"]) for r in rows) == list(range(N_OPS))  # nothing repeated, nothing missing
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert not work.exists()


def test_report_json_prints_the_summary(disk_dir):
    code, out = _run("run", str(_plan(disk_dir)), "--target", str(disk_dir / "t"), "--out", str(disk_dir / "r"))
    run_dir = _run_dir(out)
    code, out = _run("report", str(run_dir), "--json")
    assert code == 0
    assert json.loads(out)["tests"][0]["name"] == "files"


@pytest.mark.parametrize("setup,message", [
    ("file", "target {t} is a file, not a folder; choose a folder with --target"),
    ("nonempty", "target {t} holds files stibium did not create (mine.txt, ...); use an empty folder or pass "
                 "--allow-nonempty"),
])
def test_bad_targets_are_refused_before_anything_is_written(disk_dir, setup, message):
    t = disk_dir / "t"
    if setup == "file":
        t.write_text("x")
    else:
        t.mkdir()
        (t / "mine.txt").write_text("x")
    code, out = _run("run", str(_plan(disk_dir)), "--target", str(t), "--out", str(disk_dir / "r"))
    assert code == 2
    assert out.strip() == "stibium: " + message.format(t=t)
    assert not (disk_dir / "r").exists()


def test_plans_lists_the_builtin_plans():
    code, out = _run("plans")
    assert code == 0 and "quick" in out and "articles-140" in out


def test_info_reports_the_target(disk_dir):
    code, out = _run("info", "--target", str(disk_dir), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["target"]["fs_type"] and data["clock"]


def test_info_says_each_fact_in_words_in_order_and_cuts_none(disk_dir, monkeypatch):
    """`stibium info`, which users send with a bug report: no Python (no {'ops': ...}, True, None), the facts in
    their names' order, sizes with their unit, the helper's path whole at 80 columns, no clock reading."""
    from stibium_py.run.helper import find_helper
    from stibium_py.report.facts import fact_rows
    assert fact_rows({"translated": False, "now_ns": 5, "io_method_reason": "", "page_size_bytes": 16384,
                      "engine_capabilities": {"direct": {"ops": ["read", "write"], "uncached": True}},
                      "target": {"fs_type": "apfs", "direct_honoured": None}}) == [
        ("engine_capabilities.direct", "ops: read, write; uncached: yes"), ("page_size_bytes", "16,384 bytes"),
        ("target.fs_type", "apfs"), ("translated", "no")]
    from click.testing import CliRunner
    from stibium_py.cli import main
    from stibium_py.commands.common import console
    # the console's width is fixed from COLUMNS when it is made (at its first use): a terminal of 80 columns,
    # whatever runs the tests (a fresh Debian container's was 100)
    monkeypatch.setattr(console.made(), "_width", 80)
    out = CliRunner().invoke(main, ["info", "--target", str(disk_dir)]).output
    cells = [[c.strip() for c in line.split("│")[1:3]] for line in out.splitlines() if line.startswith("│")]
    names = [c[0] for c in cells if c[0]]
    assert names == sorted(names) and "now_ns" not in names
    text = "".join(c[1] for c in cells)
    assert str(find_helper()) in text and "{" not in text and "True" not in text and "False" not in text
    assert max(len(line) for line in out.splitlines()) <= 80


def test_the_installed_console_script_runs(tmp_path):
    import subprocess
    proc = subprocess.run(["stibium", "plans"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "articles-400" in proc.stdout


def test_every_help_fits_80_columns_and_no_description_is_cut():
    from click.testing import CliRunner
    from stibium_py.cli import main
    groups = [[], ["plan"], ["import"]]
    commands = [[c] for c in main.list_commands(None)] + [["plan", "check"], ["plan", "show"], ["import", "fio"]]
    for args in groups + commands:
        out = CliRunner().invoke(main, [*args, "--help"], terminal_width=80).output
        assert all(len(line) <= 80 for line in out.splitlines()), (args, out)
        described = [line for line in out.splitlines() if not line.startswith("Usage:")]
        assert not any("..." in line for line in described), (args, out)   # click cuts a long description with ...


@pytest.mark.parametrize("args, said", [
    (["--nope"], "stibium: No such option '--nope'; see `stibium --help`"),
    (["run"], "stibium: Missing argument 'PLAN'; see `stibium run --help`"),
    (["history", "check", "--threshold", "x"],
     "stibium: Invalid value for '--threshold': 'x' is not a valid float range; see `stibium history check --help`"),
])
def test_a_mistake_in_the_command_line_is_one_line_with_status_2(args, said):
    """click's own errors (an unknown option, a missing argument, a value of the wrong type) in stibium's one
    line, where click wrote its usage, a hint and the error on three lines."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'stibium'; "
                           "from stibium_py.cli import command_line; command_line()", *args],
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == said + "\n"


def test_report_open_without_a_browser_says_where_the_page_is(tmp_path, monkeypatch):
    import webbrowser
    from synthetic import make_run
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    monkeypatch.setattr(webbrowser, "open", lambda uri: False)
    result = CliRunner().invoke(main, ["report", str(run), "--open"])
    assert result.exit_code == 0
    assert (f"stibium: no browser could be started here to open {run / 'report.html'}; open that file in one "
            f"yourself") in result.output


def test_the_deferred_console_draws_a_progress_bar_on_a_terminal(tmp_path):
    """rich's progress bar enters its console (`with console:`) on a terminal: the console the commands share is
    made at its first use and must be entered as the console itself is (a run on a terminal ended in `internal
    error: TypeError: '_Deferred' object does not support the context manager protocol`)."""
    import io
    from stibium_py.commands.common import _Deferred
    from stibium_py.run.progress import ProgressBar
    console = _Deferred()
    real = console.made()
    real._force_terminal = True
    real._file = io.StringIO()
    with console:
        console.print("inside")
    with ProgressBar([], console, True) as bar:
        bar.progress.refresh()
    assert "inside" in real._file.getvalue() and "done" in real._file.getvalue()
