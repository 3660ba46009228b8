"""The team's history on PostgreSQL, against a real server the tests start (tests/pg_server.py): its migrations,
many writers at once, push, a server that is down or goes away mid-run, rows held to their types; and where the
history lives (a path or a URL, from a flag or the environment, never a plan)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from stibium_py.errors import HistoryError
from stibium_py.history.db import History, open_at
from stibium_py.history.entry import Drive, Note, RunEntry
from stibium_py.history.schema import SCHEMA, migration
from stibium_py.history.team import TeamHistory
from stibium_py.history.where import TeamUrl, locate

from pg_server import PgServer
from test_history import PLAN, _at_width, _day, _entry


def _run_entry(name: str, i: int, rate: float = 100e6, drive_key: str = "serial:M:S") -> RunEntry:
    return replace(_entry(name, _day(i), rate), drive=Drive(drive_key, f"drive {drive_key}", "M", drive_key[-1], "F1"))


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as c:
        return c.execute(sql).fetchone()[0]


# -- where the history lives
def test_a_url_names_the_teams_database_and_the_machine_keeps_its_file(tmp_path):
    home = tmp_path / "home"
    where = locate("linux", {"STIBIUM_HISTORY": "postgresql://lab:secret@db.lab:5433/bench"}, home)
    assert where.team == TeamUrl("postgresql://lab:secret@db.lab:5433/bench")
    assert where.local == home / ".local" / "share" / "stibium" / "history.sqlite"
    assert where.read == where.team and where.team.shown == "postgresql://lab@db.lab:5433/bench"
    assert "secret" not in str(where.team)
    given = locate("darwin", {"STIBIUM_HISTORY": "postgresql://x/y"}, home, str(tmp_path / "mine.sqlite"))
    assert (given.local, given.team) == (tmp_path / "mine.sqlite", None)      # the flag wins over the environment
    assert locate("linux", {"STIBIUM_HISTORY": str(tmp_path / "h.sqlite")}, home).read == tmp_path / "h.sqlite"
    with pytest.raises(HistoryError, match=r"^--history mysql://...: a history is a SQLite file's path or a "
                                           r"PostgreSQL URL"):
        locate("linux", {}, home, "mysql://db/x")


def test_a_plan_cannot_name_a_history(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN + "history: postgresql://attacker@evil/db\n")
    result = CliRunner().invoke(main, ["run", str(plan), "--target", str(tmp_path / "t"), "--dry-run"])
    assert result.exit_code == 2 and "history" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


# -- the schema
def test_an_empty_database_gets_the_schema_and_keeps_a_run_as_the_file_does(team_url, tmp_path):
    entries = [_run_entry(f"run-{i}", i, 100e6 + i) for i in range(3)]
    with open_at(TeamUrl(team_url)) as team:
        team.add_many(entries)
        assert team.runs() == entries
        assert [d.runs for d in team.drives()] == [3]
    with History(tmp_path / "h.sqlite") as mine:
        mine.add_many(entries)
        assert mine.runs() == entries
    assert _count(team_url, "SELECT version FROM stibium_schema") == SCHEMA


def test_a_database_of_the_first_schema_is_brought_up_to_date(team_url):
    with psycopg.connect(team_url, autocommit=True) as old:
        for statement in migration(0, "postgresql"):
            old.execute(statement)
        old.execute("CREATE TABLE stibium_schema (version BIGINT NOT NULL)")
        old.execute("INSERT INTO stibium_schema VALUES (1)")
        old.execute("INSERT INTO drives (key, label) VALUES ('k', 'a drive')")
        old.execute("INSERT INTO runs (drive_id, run_key, path, name, started_utc, status, ranks) VALUES "
                    "(1, 'r', '/p', 'run-a', '2026-01-01T00:00:00Z', 'complete', 1)")
        old.execute("INSERT INTO points (run_id, point, key_json, unit, estimate, low, high, n) VALUES "
                    "(1, 'pt', '{}', 'bytes', 5.0, 4.0, 6.0, 3)")
    with TeamHistory(TeamUrl(team_url)) as team:
        [run] = team.runs()
        assert (run.name, run.series, run.points[0].estimate) == ("run-a", None, 5.0)
        team.add(_entry("run-b", _day(1), 7.0, series="s"))
        assert [r.series for r in team.runs()] == [None, "s"]
    assert _count(team_url, "SELECT version FROM stibium_schema") == SCHEMA


def test_a_database_holding_other_tables_named_so_is_refused(team_url):
    with psycopg.connect(team_url, autocommit=True) as c:
        c.execute("CREATE TABLE runs (x TEXT)")
    with pytest.raises(HistoryError, match="holds a table 'runs' but not stibium's schema"):
        TeamHistory(TeamUrl(team_url))


WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from test_history_team import _run_entry
from stibium_py.history.team import TeamHistory
from stibium_py.history.where import TeamUrl
url, prefix, start = sys.argv[1], sys.argv[2], Path(sys.argv[3])
while not start.exists():
    time.sleep(0.001)
for i in range(20):
    with TeamHistory(TeamUrl(url)) as team:
        # its own runs on a drive of its own and on the shared one, and the runs every writer writes (a retry)
        team.add_many([_run_entry(f"{prefix}-{i}", i, drive_key=f"serial:M:{prefix}"),
                       _run_entry(f"{prefix}-shared-{i}", i), _run_entry(f"all-{i}", i)])
"""


@pytest.mark.parametrize("writers", [2, 8])
def test_writers_at_once_keep_every_run_once(team_url, tmp_path, writers):
    """Processes writing at once, each its own runs and the same shared runs, to one database (an empty one: they
    make its schema at once too): every run is there once, with its one point."""
    start = tmp_path / "start"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, team_url, f"w{w}", str(start), str(Path(__file__).parent)],
                              stderr=subprocess.PIPE, text=True) for w in range(writers)]
    start.touch()
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    expected = {f"w{w}-{i}" for w in range(writers) for i in range(20)} | \
        {f"w{w}-shared-{i}" for w in range(writers) for i in range(20)} | {f"all-{i}" for i in range(20)}
    with TeamHistory(TeamUrl(team_url)) as team:
        runs = team.runs()
    assert sorted(r.name for r in runs) == sorted(expected)
    assert all(len(r.points) == 1 for r in runs)
    assert _count(team_url, "SELECT count(*) FROM points") == len(expected)
    assert _count(team_url, "SELECT count(*) FROM drives") == writers + 1


# -- push
def test_push_sends_what_the_team_lacks_and_twice_sends_nothing_again(team_url, tmp_path, monkeypatch):
    _at_width(monkeypatch, 300)
    local = tmp_path / "h.sqlite"
    with History(local) as mine:
        mine.add_many([_run_entry(f"run-{i}", i) for i in range(5)])
        mine.add_note(Note(None, "serial:M:S", "moved to the new NAS", True, "2026-11-02T00:00:00Z"))
    push = ["history", "--history", str(local), "push", "--to", team_url]
    first = CliRunner().invoke(main, push)
    assert (first.exit_code, first.output.strip()) == (0, f"history: 5 runs sent to {TeamUrl(team_url).shown}, 1 note")
    again = CliRunner().invoke(main, push)
    assert again.output.strip() == f"history: 0 runs sent to {TeamUrl(team_url).shown}, 5 there already"
    with History(local) as mine:
        mine.add(_run_entry("run-5", 5))
        mine.add(replace(_run_entry("run-0", 0), status="interrupted", stopped_by="SIGINT"))   # read again, changed
    third = CliRunner().invoke(main, push)
    assert third.output.strip() == f"history: 2 runs sent to {TeamUrl(team_url).shown}, 4 there already"
    assert _count(team_url, "SELECT count(*) FROM runs") == 6
    assert _count(team_url, "SELECT count(*) FROM notes") == 1
    shown = CliRunner().invoke(main, ["history", "--history", team_url, "--out", str(tmp_path / "pages")])
    assert shown.exit_code == 0 and "note: moved to the new NAS (of the drive" in shown.output


def test_push_needs_a_url(tmp_path):
    result = CliRunner().invoke(main, ["history", "--history", str(tmp_path / "h.sqlite"), "push"])
    assert (result.exit_code, result.output.strip()) == (2, "stibium: history push: name the team's database with "
                                                             "--to postgresql://user@host/database (or STIBIUM_HISTORY)")


# -- a server that is down
@pytest.fixture
def own_server():
    server = PgServer()
    try:
        yield server
    finally:
        server.close()


def test_a_server_that_is_down_is_one_line(own_server, tmp_path):
    url = own_server.url().replace("stibium@", "stibium:hunter2@")
    own_server.stop()
    for args in (["history", "--history", url], ["history", "--history", url, "check"],
                 ["history", "--history", str(tmp_path / "h.sqlite"), "push", "--to", url]):
        if args[-1] == url and "push" in args:
            with History(tmp_path / "h.sqlite") as mine:
                mine.add(_run_entry("run-0", 0))
        result = CliRunner().invoke(main, args)
        lines = result.output.strip().splitlines()
        assert result.exit_code == 1 and len(lines) == 1, result.output
        assert lines[0].startswith("stibium: postgresql://stibium@/postgres: cannot reach the team's history (")
        assert lines[0].endswith("); check the URL and that its server runs")
        assert "hunter2" not in result.output


def test_a_run_whose_server_went_away_is_kept_and_pushed_later(own_server, disk_dir):
    """The server stops while the run measures: the run ends as it would, one line says the run was not sent and
    is kept, and the next push sends it."""
    import time
    url = own_server.new_database()
    local = disk_dir / "home" / "history.sqlite"
    env = {**os.environ, "COLUMNS": "300", "STIBIUM_HISTORY": url, "STIBIUM_HOME": str(local.parent)}
    (disk_dir / "slow.yaml").write_text(PLAN.replace("repeats: 3", "repeats: 60"))
    proc = subprocess.Popen([sys.executable, "-m", "stibium_py", "run", str(disk_dir / "slow.yaml"), "--target",
                             str(disk_dir / "t"), "--out", str(disk_dir / "r")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not list((disk_dir / "r").glob("*/measurements.csv")):
        time.sleep(0.02)
    own_server.stop()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"history: recorded in {local} (" in out
    [line] = [e for e in err.splitlines() if e.startswith("history:")]
    assert line.startswith("history: not sent: postgresql://stibium@/") and line.endswith(
        f"; the run is kept in {local}, and `stibium history push` sends it")
    own_server.start()
    with History(local) as mine:
        [run] = mine.runs()
    pushed = CliRunner().invoke(main, ["history", "--history", str(local), "push", "--to", url])
    assert pushed.output.strip().startswith("history: 1 run sent to")
    with TeamHistory(TeamUrl(url)) as team:
        assert team.runs() == [run]


def test_a_run_is_sent_to_the_team_as_it_ends(team_url, disk_dir):
    local = disk_dir / "home" / "history.sqlite"
    (disk_dir / "tiny.yaml").write_text(PLAN)
    done = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(disk_dir / "tiny.yaml"), "--target",
                           str(disk_dir / "t"), "--out", str(disk_dir / "r"), "--history", team_url],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "300", "STIBIUM_HOME": str(local.parent)})
    assert done.returncode == 0, done.stderr
    assert f"history: sent to {TeamUrl(team_url).shown}" in done.stdout
    with History(local) as mine, TeamHistory(TeamUrl(team_url)) as team:
        assert mine.runs() == team.runs() and len(team.runs()) == 1


# -- what is read is data
@pytest.mark.parametrize("sql, said", [
    ("UPDATE points SET estimate = -1", "points.0.estimate: Value error, a rate is a positive number"),
    ("UPDATE runs SET status = 'running'", "status: Input should be 'complete' or 'interrupted'"),
    ("UPDATE runs SET ranks = 1000000000", "ranks: Input should be less than or equal to"),
    ("UPDATE runs SET started_utc = 'yesterday'", "started_utc: String should match pattern"),
])
def test_a_row_not_as_stibium_writes_it_is_refused_in_one_line(team_url, sql, said):
    with TeamHistory(TeamUrl(team_url)) as team:
        team.add(_run_entry("run-0", 0))
    with psycopg.connect(team_url, autocommit=True) as c:
        c.execute(sql)
    result = CliRunner().invoke(main, ["history", "--history", team_url, "check"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "is not as stibium writes a run (" in result.output and said in result.output


def test_a_key_that_is_not_json_is_refused(team_url):
    with TeamHistory(TeamUrl(team_url)) as team:
        team.add(_run_entry("run-0", 0))
    with psycopg.connect(team_url, autocommit=True) as c:
        c.execute("UPDATE points SET key_json = repeat('[', 100000)")
    with pytest.raises(HistoryError, match="a point's key in it is not the JSON object stibium writes"):
        with TeamHistory(TeamUrl(team_url)) as team:
            team.runs()


def test_the_database_may_be_named_by_libpqs_service_file(team_url, tmp_path, monkeypatch):
    """The person's own libpq set-up names the server: a service file (PGSERVICEFILE) and a URL that names the
    service only; the line that says where shows what the URL says, nothing of the file."""
    from urllib.parse import parse_qs, urlsplit
    parts = urlsplit(team_url)
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[lab]\nhost={parse_qs(parts.query)['host'][0]}\nport={parse_qs(parts.query)['port'][0]}\n"
                        f"user=stibium\ndbname={parts.path.lstrip('/')}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    monkeypatch.setenv("STIBIUM_HISTORY", "postgresql:///?service=lab")
    local = tmp_path / "h.sqlite"
    with History(local) as mine:
        mine.add(_run_entry("run-0", 0))
    pushed = CliRunner().invoke(main, ["history", "--history", str(local), "push", "--to", "postgresql:///?service=lab"])
    assert pushed.output.strip() == "history: 1 run sent to postgresql:///"
    assert CliRunner().invoke(main, ["history", "check"]).output.startswith("history check: no step down")


def test_a_newer_schema_is_refused_in_one_line(team_url):
    with TeamHistory(TeamUrl(team_url)):
        pass
    with psycopg.connect(team_url, autocommit=True) as c:
        c.execute("UPDATE stibium_schema SET version = version + 1")
    result = CliRunner().invoke(main, ["history", "--history", team_url, "check"])
    assert (result.exit_code, result.output.strip()) == (
        2, f"stibium: {TeamUrl(team_url).shown}: the history was written by a newer stibium (schema {SCHEMA + 1}, this "
           f"one knows {SCHEMA}); upgrade stibium")
