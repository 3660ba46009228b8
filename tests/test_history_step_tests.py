"""The step searches' tests kept between commands (history/step_tests.py): the same steps with them as without,
no segment tested twice, nothing taken that no test could have answered, and a file of them that is damaged or
in the way costing nothing but the time it would have saved."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from stibium_py.analysis import history
from stibium_py.analysis.history import Entry, check_latest, find_steps
from stibium_py.cli import main
from stibium_py.history.step_tests import StepTests
from stibium_py.history.where import step_tests_path

from test_history import _history_of


def _entries(levels: list[tuple[float, int]]) -> list[Entry]:
    logs = [math.log(rate) + (0.003 if i % 2 else -0.003) for rate, count in levels for i in range(count)]
    return [Entry(f"r{i}", f"2026-01-01T00:{i:02d}:00Z", (f"r{i}",), y, 0.001) for i, y in enumerate(logs)]


def _counting(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = history._split

    def counted(z, *args, **kw):
        calls.append(len(z))
        return real(z, *args, **kw)
    monkeypatch.setattr(history, "_split", counted)
    return calls


def test_kept_tests_give_the_same_steps_and_no_segment_is_tested_twice(monkeypatch):
    entries = _entries([(100, 8), (70, 8), (140, 8)])
    more = [*entries, Entry("r24", "2026-01-01T00:24:00Z", ("r24",), math.log(140), 0.001)]
    fresh, latest, fresh_more = find_steps(entries), check_latest(more), find_steps(more)
    calls = _counting(monkeypatch)
    kept: dict[str, tuple[int, float]] = {}
    assert find_steps(entries, kept=kept) == fresh and sorted(calls) == [8, 8, 8, 16, 24] and len(kept) == 5
    calls.clear()
    assert find_steps(entries, kept=kept) == fresh and calls == []
    # a run more: its check searches the runs before it, all kept; its own search tests again only the segments
    # that reach it (the whole, then the last level's: the first two levels' are kept)
    assert check_latest(more, kept=kept) == latest and calls == []
    assert find_steps(more, kept=kept) == fresh_more and sorted(calls) == [9, 25]


def test_a_kept_test_that_no_test_of_its_segment_could_give_is_not_taken(monkeypatch):
    entries = _entries([(100, 8), (70, 8)])
    fresh = find_steps(entries)
    kept: dict[str, tuple[int, float]] = {}
    find_steps(entries, kept=kept)
    for key in kept:                    # a split outside its segment, a p-value finer than 499 orderings give
        kept[key] = (0, 1e-9)
    calls = _counting(monkeypatch)
    assert find_steps(entries, kept=kept) == fresh and len(calls) == len(kept)


def test_the_file_keeps_the_tests_between_commands_and_holds_no_row_of_another_shape(tmp_path):
    path = tmp_path / "cache" / "stibium" / "step-tests.sqlite"
    with StepTests(path) as kept:
        assert kept.get("a") is None
        kept["a"] = (5, 0.002)
    with StepTests(path) as kept:
        assert kept.get("a") == (5, 0.002)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO tests (key, tau, p) VALUES ('b', 'five', 0.5), ('c', 3, 'low')")
    db.close()
    with StepTests(path) as kept:
        assert kept.get("b") is None and kept.get("c") is None


def test_a_damaged_file_of_kept_tests_costs_nothing_but_time(tmp_path, monkeypatch):
    """A file that is not SQLite where the tests are kept, and a folder that cannot be made: the check says what it
    says with a file of its own."""
    path = tmp_path / "h.sqlite"
    _history_of(path, [100e6, 101e6, 99e6, 100e6, 80e6])
    check = ["history", "--history", str(path), "check", "--threshold", "5"]
    clean = tmp_path / "clean"
    clean.mkdir()
    monkeypatch.setenv("STIBIUM_HOME", str(clean))
    expected = CliRunner().invoke(main, check)
    assert expected.exit_code == 1 and (clean / "step-tests.sqlite").is_file()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "step-tests.sqlite").write_bytes(b"not a database " * 100)
    monkeypatch.setenv("STIBIUM_HOME", str(damaged))
    result = CliRunner().invoke(main, check)
    assert (result.exit_code, result.output) == (expected.exit_code, expected.output)
    assert (damaged / "step-tests.sqlite").read_bytes() == b"not a database " * 100
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("STIBIUM_HOME", str(tmp_path / "a-file" / "below"))
    result = CliRunner().invoke(main, check)
    assert (result.exit_code, result.output) == (expected.exit_code, expected.output)


def test_where_the_tests_are_kept():
    home = Path("/home/u")
    assert step_tests_path("linux", {}, home) == home / ".cache" / "stibium" / "step-tests.sqlite"
    assert step_tests_path("linux", {"XDG_CACHE_HOME": "/x"}, home) == Path("/x/stibium/step-tests.sqlite")
    assert step_tests_path("linux", {"XDG_CACHE_HOME": "rel"}, home) == home / ".cache" / "stibium" / "step-tests.sqlite"
    assert step_tests_path("darwin", {}, home) == home / "Library" / "Caches" / "stibium" / "step-tests.sqlite"
    assert step_tests_path("darwin", {"STIBIUM_HOME": "/s"}, home) == Path("/s/step-tests.sqlite")
