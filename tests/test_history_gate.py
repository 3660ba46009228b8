"""A gate people believe: `history check --confirm N` calls a step only where runs made to confirm it agree, a
person's note marks a change as expected (shown on the pages, not an alarm), and `--format markdown` writes the
lines a pull request's comment shows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from stibium_py.analysis.history import confirmed, entry_of
from stibium_py.cli import main
from stibium_py.history.actions import Slower, confirm_check
from stibium_py.history.db import History

from test_history import _at_width, _day, _entry

LEVEL = [100e6, 101e6, 99e6, 100e6, 100.5e6, 99.5e6, 100e6, 101e6]


def _history(path: Path, rates: list[float]) -> None:
    with History(path) as history:
        history.add_many([_entry(f"run-{i}", _day(i), r) for i, r in enumerate(rates)])


def _rerun_at(path: Path, rates: list[float]):
    """A stand-in for running the plan again: each call records the next rate as a new run of the drive."""
    made = []

    def rerun(s: Slower) -> None:
        i = len(LEVEL) + 1 + len(made)
        made.append(rates[len(made)])
        with History(path) as history:
            history.add(replace(_entry(f"run-{i}", _day(i), made[-1]), drive=s.drive.drive))
    return rerun, made


def test_confirmed_needs_every_new_entry_below_the_level_before_the_suspect():
    def entries(rates):
        return [entry_of(f"r{i}", _day(i), [(f"r{i}", r, r * 0.99, r * 1.01)]) for i, r in enumerate(rates)]
    assert confirmed(entries(LEVEL + [80e6, 80.5e6, 79e6]), 2, 0.05)
    assert not confirmed(entries(LEVEL + [80e6, 100e6, 80e6]), 2, 0.05)
    assert not confirmed(entries(LEVEL + [80e6]), 2, 0.05)          # too few entries to confirm with


def test_confirm_2_does_not_call_a_transient_and_calls_a_step_the_new_runs_repeat(tmp_path):
    transient, step = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _history(transient, LEVEL + [80e6])
    rerun, made = _rerun_at(transient, [100.2e6, 99.8e6])
    result = confirm_check(transient, 0.05, 2, rerun)
    assert made == [100.2e6, 99.8e6]
    assert (result.slower, [s.point.point for s in result.transient]) == ([], ["seq read sequential 1 MiB"])
    _history(step, LEVEL + [80e6])
    rerun, made = _rerun_at(step, [80.4e6, 79.6e6])
    result = confirm_check(step, 0.05, 2, rerun)
    assert [s.latest_run.name for s in result.slower] == ["run-10"] and result.confirmed_by == 2


def test_check_line_says_what_confirm_found(tmp_path):
    from stibium_py.report.history_text import check_line
    path = tmp_path / "h.sqlite"
    _history(path, LEVEL + [80e6])
    rerun, _ = _rerun_at(path, [100e6, 100e6])
    line = check_line(confirm_check(path, 0.05, 2, rerun), 5)
    assert line.startswith("history check: no step down beyond 5 % in the latest run of 1 drive")
    assert "; not confirmed by 2 more runs: M (serial S): seq read sequential 1 MiB" in line


def test_confirm_refuses_a_run_this_machine_did_not_make(tmp_path):
    path = tmp_path / "h.sqlite"
    _history(path, LEVEL + [80e6])
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check", "--confirm", "2"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "stibium: history check --confirm: the latest run of M (serial S) (run-8) is not one this machine ran and "
        "still holds, so it is not run again here; run its plan on that drive, then `stibium history check` again"]


def test_an_expected_note_is_named_and_not_an_alarm(tmp_path, monkeypatch):
    _at_width(monkeypatch, 300)
    path = tmp_path / "h.sqlite"
    _history(path, LEVEL + [80e6])
    check = ["history", "--history", str(path), "check"]
    assert CliRunner().invoke(main, check).exit_code == 1
    plain = CliRunner().invoke(main, ["history", "--history", str(path), "note", "run-8", "disk was busy"])
    assert plain.output.strip() == f"history: noted of the run run-8 (M (serial S)) in {path}"
    assert CliRunner().invoke(main, check).exit_code == 1          # a note that is not --expected changes nothing
    noted = CliRunner().invoke(main, ["history", "--history", str(path), "note", "serial S", "firmware 2.0",
                                      "--expected"])
    assert noted.output.strip() == f"history: noted as expected of the drive M (serial S) in {path}"
    result = CliRunner().invoke(main, check)
    assert result.exit_code == 0
    assert "; expected (firmware 2.0): M (serial S): seq read sequential 1 MiB: -20." in result.output
    pages = CliRunner().invoke(main, ["history", "--history", str(path), "--out", str(tmp_path / "p")])
    assert "note: disk was busy (of the run run-8, written " in pages.output
    assert "note: firmware 2.0 (of the drive, written " in pages.output and "; expected: not an alarm)" in pages.output
    [page] = (tmp_path / "p").glob("*.html")
    assert "<h2>Notes</h2>" in page.read_text() and "firmware 2.0" in page.read_text()
    # the notes outlive a rebuild (made from folders: these runs have none, so they are gone, the notes are not)
    CliRunner().invoke(main, ["history", "--history", str(path), "rebuild", str(tmp_path / "none")])
    with History(path) as history:
        assert [n.text for n in history.notes()] == ["disk was busy", "firmware 2.0"]


def test_an_expected_note_on_an_earlier_level_does_not_hide_a_new_step(tmp_path):
    path = tmp_path / "h.sqlite"
    _history(path, LEVEL)
    CliRunner().invoke(main, ["history", "--history", str(path), "note", "run-2", "new cable", "--expected"])
    with History(path) as history:
        history.add(_entry("run-8", _day(8), 80e6))
    assert CliRunner().invoke(main, ["history", "--history", str(path), "check"]).exit_code == 1


def test_a_note_names_something_the_history_holds(tmp_path):
    path = tmp_path / "h.sqlite"
    _history(path, LEVEL)
    for about, text, said in [("nothing-like-it", "x", "'nothing-like-it': no run or drive of the history has that "
                                                      "name; `stibium history` lists them"),
                              ("run-1", "   ", 'a note needs its text: stibium history note RUN|DRIVE "what changed"')]:
        result = CliRunner().invoke(main, ["history", "--history", str(path), "note", about, text])
        assert (result.exit_code, result.output.strip()) == (2, f"stibium: {said}")


def test_markdown_gives_the_rows_a_pull_request_shows(tmp_path):
    path = tmp_path / "h.sqlite"
    _history(path, LEVEL + [80e6])
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check", "--format", "markdown",
                                       "--pages", "https://ci.lab/history/"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[0] == "### stibium history check: slower beyond 5 % on 1 drive"
    assert lines[2:4] == ["| drive | point | change [interval] | run | why | page |",
                          "| --- | --- | --- | --- | --- | --- |"]
    assert lines[4].startswith("| M (serial S) | seq read sequential 1 MiB | -20.")
    assert lines[4].endswith("| run-8 | slower | [page](https://ci.lab/history/M-serial-S-"
                             + lines[4].rsplit("M-serial-S-", 1)[1])
    passing = CliRunner().invoke(main, ["history", "--history", str(path), "check", "--format", "markdown",
                                        "--threshold", "50"])
    assert passing.output.strip() == "### stibium history check: no step down beyond 50 % (1 point of 1 drive)"
