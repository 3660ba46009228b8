"""A history database or export from someone else is data: no schema code of it runs, nothing of it is written
where stibium did not mean to write, its text reaches a page or a terminal as text, and the step search takes
bounded memory at a lab's size."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from stibium_py.history.db import History
from stibium_py.history.schema import MIGRATIONS, SCHEMA
from stibium_py.history.entry import Drive
from test_history import _day, _entry


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def _one_line(result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def _schema(path: Path, extra: str) -> None:
    db = sqlite3.connect(path)
    for migration in MIGRATIONS:
        db.executescript(migration)
    db.execute(f"PRAGMA user_version = {SCHEMA}")
    db.executescript(extra)
    db.commit()
    db.close()


def test_a_database_whose_runs_is_an_endless_recursive_view_is_refused_at_once(tmp_path):
    path = tmp_path / "h.sqlite"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE drives (id INTEGER PRIMARY KEY, key TEXT, label TEXT);"
                     "CREATE VIEW runs AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
                     "SELECT i AS id FROM n;")
    db.commit()
    db.close()
    started = time.monotonic()
    line = _one_line(_invoke("history", "--history", str(path)))
    assert time.monotonic() - started < 10
    assert line == (f"stibium: {path}: not a stibium history: it holds a view 'runs', which stibium never makes; "
                    f"give a history stibium wrote (or move this one away)")


def test_a_database_with_a_trigger_of_its_own_runs_none_of_it(tmp_path):
    path = tmp_path / "h.sqlite"
    _schema(path, "CREATE TRIGGER forever AFTER INSERT ON runs BEGIN "
                  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n; END;")
    run = tmp_path / "r"
    from synthetic import make_run
    make_run(run, rate_bytes_per_s=2e8)
    started = time.monotonic()
    line = _one_line(_invoke("history", "add", str(run), "--history", str(path)))
    assert time.monotonic() - started < 10
    assert line == (f"stibium: {path}: not a stibium history: it holds a trigger 'forever', which stibium never "
                    f"makes; give a history stibium wrote (or move this one away)")


def test_a_statement_that_runs_too_long_is_ended_in_one_line(tmp_path, monkeypatch):
    from stibium_py.errors import HistoryError
    from stibium_py.history import db as history_db
    monkeypatch.setattr(history_db, "STATEMENT_LIMIT_S", 0.2)
    with History(tmp_path / "h.sqlite") as history:
        with pytest.raises(HistoryError, match="ran past 0.2 s and was ended"):
            history._read("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n")


def test_rebuild_never_replaces_a_file_that_is_not_a_history(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("the person's notes\n")
    line = _one_line(_invoke("history", "rebuild", str(tmp_path / "reports"), "--history", str(text)))
    assert line == (f"stibium: {text}: not a stibium history database (not a file SQLite wrote); rebuild replaces "
                    f"only a history: give another path with --history PATH")
    assert text.read_text() == "the person's notes\n"


def test_a_device_as_the_history_is_refused_and_nothing_is_left_beside_it(tmp_path):
    fifo = tmp_path / "h.sqlite"
    os.mkfifo(fifo)
    for command in (("history", "--history", str(fifo)), ("history", "rebuild", str(tmp_path), "--history", str(fifo))):
        result = _invoke(*command)
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.sqlite"]
    line = _one_line(_invoke("history", "--history", "/dev/null"))
    assert line == "stibium: /dev/null: a device, not a history database; give a file's path with --history PATH"
    assert not os.path.exists("/dev/null-journal")


def _history_of(tmp_path: Path, entries) -> Path:
    path = tmp_path / "h.sqlite"
    with History(path) as history:
        history.add_many(entries)
    return path


def test_a_hostile_run_name_stays_text_in_the_page_s_script(tmp_path):
    name = "<!--<script>x</script>"
    entries = [replace(_entry(f"run-{i}", _day(i), 100e6), name=name if i == 3 else f"run-{i}") for i in range(8)]
    path = _history_of(tmp_path, entries)
    result = _invoke("history", "--history", str(path), "--out", str(tmp_path / "pages"))
    assert result.exit_code == 0, result.output
    page, = (tmp_path / "pages").glob("*.html")
    html = page.read_text()
    scripts = html.split("<script")[1:]
    assert all("<!--" not in s.split("</script>")[0] for s in scripts)      # no comment opened inside a script
    assert html.count("&lt;!--&lt;script&gt;x&lt;") >= 2          # the runs' table and the hover text, as text
    from stibium_py.report.plot import to_json
    assert to_json({"name": name}) == '{"name":"\\u003c!--\\u003cscript>x\\u003c\\u002fscript>"}'
    assert json.loads(to_json({"name": name})) == {"name": name}


def test_markup_and_escape_sequences_from_a_record_are_printed_as_text(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    drive = Drive("serial:[/x]:S", "[/x] \x1b]0;owned\x07 drive", "[/x]", "S", "F1")
    path = _history_of(tmp_path, [_entry(f"run-{i}", _day(i), 100e6, drive=drive) for i in range(4)])
    result = _invoke("history", "--history", str(path), "--out", str(tmp_path / "pages"))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "[/x] \\x1b]0;owned\\x07 drive" in result.output


def test_two_drives_whose_labels_make_one_file_name_get_a_page_each(tmp_path):
    a, b = Drive("serial:A:1", "Disk A", "Disk", "1", "F"), Drive("serial:A:2", "Disk-A", "Disk", "2", "F")
    path = _history_of(tmp_path, [_entry(f"{d.serial}-{i}", _day(i), 100e6, drive=d) for d in (a, b) for i in range(3)])
    result = _invoke("history", "--history", str(path), "--out", str(tmp_path / "pages"))
    assert result.exit_code == 0, result.output
    pages = sorted(p.name for p in (tmp_path / "pages").glob("*.html"))
    assert len(pages) == 2 and all(p.startswith("Disk-A-") for p in pages)


def test_an_export_s_counts_past_their_bounds_are_refused_in_one_line(tmp_path):
    from dataclasses import asdict
    run = asdict(_entry("run-1", _day(1), 100e6))
    run["drive"]["capacity_bytes"] = 2 ** 63
    export = tmp_path / "x.json"
    export.write_text(json.dumps({"format": "stibium-history/1", "runs": [run]}))
    line = _one_line(_invoke("history", "import", str(export), "--history", str(tmp_path / "h.sqlite")))
    assert line.startswith(f"stibium: {export}: not a stibium history export (stibium-history/1): "
                           f"runs.0.drive.capacity_bytes: Input should be less than or equal to 9223372036854775807")
    run["drive"]["capacity_bytes"] = 1
    run["points"] = run["points"] * 2001
    export.write_text(json.dumps({"format": "stibium-history/1", "runs": [run]}))
    line = _one_line(_invoke("history", "import", str(export), "--history", str(tmp_path / "h.sqlite")))
    assert "runs.0.points: List should have at most 2000 items" in line
    export.write_text('{"format": "stibium-history/1", "runs": [' + "[" * 100 + "]" * 100 + "]}")
    line = _one_line(_invoke("history", "import", str(export), "--history", str(tmp_path / "h.sqlite")))
    assert line == (f"stibium: {export}: nested deeper than 64 levels; give the file `stibium history export` "
                    f"wrote")


def test_the_distance_sums_of_the_step_search_are_those_of_every_pair():
    from stibium_py.analysis.history import _prefix_within
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 8, 9, 33):
        z = np.round(rng.normal(size=(4, n)), 1)             # ties among the values
        got = _prefix_within(z)
        want = np.array([[sum(abs(row[i] - row[j]) for j in range(t) for i in range(j)) for t in range(n + 1)]
                         for row in z])
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_step_search_over_a_lab_s_history_takes_bounded_memory():
    """499 orderings of 5,000 runs: the distance matrices' prefix sums asked for 93 GiB; now a block at a time."""
    import tracemalloc
    from stibium_py.analysis.history import _energy
    rng = np.random.default_rng(7)
    z = rng.normal(size=5000)
    shuffled = rng.permuted(np.broadcast_to(z, (499, len(z))), axis=1)
    tracemalloc.start()
    _energy(shuffled, 3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 400 * 2 ** 20, peak
