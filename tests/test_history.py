"""The history: where it lives, the drive's identity, the database (migrations, damage, locks, two writers at
once), runs recorded as they end (complete, interrupted, on a read-only home), add, rebuild, export and
import, the table, the page and `history check`."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from stibium_py.errors import HistoryError
from stibium_py.history import db as history_db
from stibium_py.history.db import History
from stibium_py.history.schema import MIGRATIONS, SCHEMA
from stibium_py.history.entry import Drive, PointEntry, RunEntry, drive_of, read_entry
from stibium_py.history.where import database_path
from stibium_py.rundir.record import RunRecord
from stibium_py.machine.sysinfo import linux_drive
from stibium_py.machine.parse import parse_diskutil_drive, parse_system_profiler_drive

from conftest import interruptible, is_root

PLAN = """\
name: tiny
tests:
  - name: files
    kind: files
    sizes: [64KB, 256KB]
    repeats: 3
  - name: seq
    kind: pattern
    op: read
    access: sequential
    granularities: [64KiB]
    bytes: 1MiB
    trials: 3
"""


# -- where, and which drive
def test_the_database_lives_where_the_platform_keeps_an_applications_data():
    home = Path("/Users/ann")
    assert database_path("darwin", {}, home) == home / "Library/Application Support/stibium/history.sqlite"
    assert database_path("linux", {}, Path("/home/ann")) == Path("/home/ann/.local/share/stibium/history.sqlite")
    assert database_path("linux", {"XDG_DATA_HOME": "/data"}, home) == Path("/data/stibium/history.sqlite")
    assert database_path("linux", {"XDG_DATA_HOME": "rel"}, Path("/h")) == Path("/h/.local/share/stibium/history.sqlite")
    assert database_path("darwin", {"STIBIUM_HOME": "/s"}, home) == Path("/s/history.sqlite")
    assert database_path("linux", {"STIBIUM_HOME": "/s"}, home, Path("/x.db")) == Path("/x.db")


def test_a_linux_drive_is_named_by_sysfs_then_udev(tmp_path):
    nvme = tmp_path / "nvme0n1"
    (nvme / "device").mkdir(parents=True)
    (nvme / "device/model").write_text("Samsung SSD 980 PRO 1TB   \n")
    (nvme / "device/serial").write_text("S5GXNF0R123456\n")
    (nvme / "device/firmware_rev").write_text("5B2QGXA7\n")
    (nvme / "size").write_text("1953525168\n")
    (nvme / "queue").mkdir()
    (nvme / "queue/write_cache").write_text("write back\n")
    assert linux_drive(nvme, tmp_path / "udev") == {"disk": "nvme0n1", "model": "Samsung SSD 980 PRO 1TB",
                                                   "serial": "S5GXNF0R123456", "firmware": "5B2QGXA7",
                                                   "capacity_bytes": 1953525168 * 512, "write_cache": "write back"}
    sda = tmp_path / "sda"                       # SATA behind libata: the serial only in udev's database
    (sda / "device").mkdir(parents=True)
    (sda / "device/model").write_text("CT1000MX500SSD1\n")
    (sda / "device/rev").write_text("M3CR\n")
    (sda / "dev").write_text("8:0\n")
    (tmp_path / "udev").mkdir()
    (tmp_path / "udev/b8:0").write_text("S:disk/by-id/ata-x\nE:ID_SERIAL_SHORT=2206E607A2B1\nE:ID_MODEL=CT1000\n")
    assert linux_drive(sda, tmp_path / "udev") == {"disk": "sda", "model": "CT1000MX500SSD1", "serial": "2206E607A2B1",
                                                  "firmware": "M3CR"}
    assert linux_drive(None) == {}


def test_a_macs_drive_is_named_by_diskutil_and_system_profiler():
    import plistlib
    info = plistlib.dumps({"MediaName": "APPLE SSD AP0512Q", "TotalSize": 500277790720, "DeviceIdentifier": "disk0"})
    assert parse_diskutil_drive(info) == {"model": "APPLE SSD AP0512Q", "capacity_bytes": 500277790720}
    assert parse_diskutil_drive(b"not a plist") == {}
    profiler = {"SPNVMeDataType": [{"_name": "Generic SSD Controller", "_items": [
                    {"_name": "APPLE SSD AP0512Q", "bsd_name": "disk0", "device_serial": "0ba01234c5d6e7f8",
                     "device_revision": "874.100.1"}]}],
                "SPUSBDataType": [{"_name": "USB31Bus", "_items": [
                    {"_name": "Extreme SSD", "serial_num": "31393438", "Media": [{"bsd_name": "disk4"}]}]}]}
    text = json.dumps(profiler)
    assert parse_system_profiler_drive(text, "disk0") == {"serial": "0ba01234c5d6e7f8", "firmware": "874.100.1"}
    assert parse_system_profiler_drive(text, "disk9") == {}
    assert parse_system_profiler_drive("garbage", "disk0") == {}


def test_a_drive_is_its_serial_else_its_volume_else_its_host_and_device():
    def record(facts: dict) -> RunRecord:
        return RunRecord(machine={"hostname": "studio"}, target_facts=facts)
    assert drive_of(record({"drive": {"model": "X", "serial": "S1"}, "volume_uuid": "U"})).key == "serial:X:S1"
    assert drive_of(record({"device_model": "virtio disk", "volume_uuid": "U-1"})).key == "volume:U-1"
    named = drive_of(record({"device": "/dev/loop3", "device_model": "loop device"}))
    assert (named.key, named.label) == ("host:studio:/dev/loop3", "loop device /dev/loop3 on studio")
    unknown = drive_of(RunRecord(machine={"hostname": "studio"}, target="/data/t", target_facts={}))
    assert (unknown.key, unknown.label) == ("host:studio:/data/t", "the drive of /data/t on studio")


# -- the database
def _entry(name: str, started: str, rate: float, status: str = "complete", series: str | None = None,
           drive: Drive = Drive("serial:M:S", "M (serial S)", "M", "S", "F1"), firmware: str = "F1",
           width: float = 0.01) -> RunEntry:
    point = PointEntry("seq read sequential 1 MiB", {"test": "seq"}, "bytes", rate, rate * (1 - width),
                       rate * (1 + width), 8)
    return RunEntry(f"h/{started}/{name}", f"/runs/{name}", name, series, started, started, status,
                    "SIGINT" if status == "interrupted" else None, "h", "Linux 6.1", "p", "a" * 64, "b" * 64, "0.1.0",
                    "0.1.0", "ext4", None, 1, replace(drive, firmware=firmware), (point,))


def _day(i: int) -> str:
    return f"2026-11-{1 + i // 24:02d}T{i % 24:02d}:00:00Z"


def test_a_database_of_the_first_schema_is_brought_up_to_date(tmp_path):
    path = tmp_path / "h.sqlite"
    old = sqlite3.connect(path)
    old.executescript(MIGRATIONS[0])
    old.execute("PRAGMA user_version = 1")
    old.execute("INSERT INTO drives (key, label) VALUES ('k', 'a drive')")
    old.execute("INSERT INTO runs (drive_id, run_key, path, name, started_utc, status, ranks) VALUES "
                "(1, 'r', '/p', 'run-a', '2026-01-01T00:00:00Z', 'complete', 1)")
    old.execute("INSERT INTO points (run_id, point, key_json, unit, estimate, low, high, n) VALUES "
                "(1, 'pt', '{}', 'bytes', 5.0, 4.0, 6.0, 3)")
    old.commit()
    old.close()
    with History(path) as history:
        assert history.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA == 3
        [run] = history.runs()
        assert (run.name, run.series, run.points[0].estimate) == ("run-a", None, 5.0)
        history.add(_entry("run-b", _day(1), 7.0, series="s"))
        assert [r.series for r in history.runs()] == [None, "s"]
        assert history.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert history.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_a_newer_schema_is_refused_in_one_line(tmp_path):
    path = tmp_path / "h.sqlite"
    with History(path):
        pass
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA + 1}")
    con.close()
    with pytest.raises(HistoryError, match=r"written by a newer stibium \(schema 4, this one knows 3\)"):
        History(path)


def test_the_same_run_added_twice_is_one_run_read_again(tmp_path):
    with History(tmp_path / "h.sqlite") as history:
        history.add(_entry("a", _day(0), 10.0))
        history.add(_entry("a", _day(0), 11.0))
        [run] = history.runs()
        assert run.points[0].estimate == 11.0
        assert history.db.execute("SELECT count(*) FROM points").fetchone()[0] == 1


def test_a_truncated_database_gives_one_line_and_exit_2(tmp_path):
    path = tmp_path / "h.sqlite"
    with History(path) as history:
        history.add_many([_entry(f"r{i}", _day(i), 10.0) for i in range(20)])
        history.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    result = CliRunner().invoke(main, ["history", "--history", str(path)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"stibium: {path}: the history database is damaged (database disk image is malformed); move it away, then "
        f"`stibium history rebuild FOLDER...` makes it again from the run directories"]
    path.write_bytes(b"garbage" * 100)
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check"])
    assert result.exit_code == 2 and "the history database is damaged (file is not a database)" in result.output


def test_a_locked_database_gives_one_line_and_exit_1(tmp_path, monkeypatch):
    path = tmp_path / "h.sqlite"
    with History(path) as history:
        history.add(_entry("a", _day(0), 10.0))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(history_db, "BUSY_TIMEOUT_S", 0.2)
    try:
        with pytest.raises(HistoryError) as e:
            with History(path) as history:
                history.add(_entry("b", _day(1), 10.0))
        assert e.value.exit_code == 1
        assert str(e.value) == (f"{path}: the history database stayed locked by another program for 0.2 s; try again "
                                f"when it has finished")
    finally:
        holder.execute("ROLLBACK")
        holder.close()


WRITER = """
import sys, time
from dataclasses import replace
from pathlib import Path
from stibium_py.history.db import History
from stibium_py.history.entry import Drive, PointEntry, RunEntry
db, prefix, start = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
while not start.exists():
    time.sleep(0.001)
for i in range(50):
    point = PointEntry("p", {}, "bytes", 10.0 + i, 9.0 + i, 11.0 + i, 3)
    name = f"{prefix}{i}"
    started = f"2026-11-01T00:{i:02d}:00Z"
    with History(db) as history:
        history.add(RunEntry(f"h/{started}/{name}", f"/runs/{name}", name, None, started, started, "complete", None,
                             "h", None, "p", None, None, None, None, None, None, 1, Drive("k", "a drive"), (point,)))
"""


def test_two_writers_at_once_both_land(tmp_path):
    """Two processes recording runs at the same moment, fifty each: every run lands (WAL, BEGIN IMMEDIATE and the
    busy timeout make the second wait for the first)."""
    path, start = tmp_path / "h.sqlite", tmp_path / "start"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), p, str(start)], stderr=subprocess.PIPE,
                              text=True) for p in ("a", "b")]
    start.touch()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with History(path) as history:
        assert sorted(r.name for r in history.runs()) == sorted([f"a{i}" for i in range(50)] + [f"b{i}" for i in range(50)])


# -- check, the table, export and import
def _history_of(path: Path, rates: list[float], **kw) -> None:
    with History(path) as history:
        history.add_many([_entry(f"run-{i}", _day(i), r, **kw) for i, r in enumerate(rates)])


def test_check_exits_1_for_a_step_down_beyond_the_threshold_and_names_the_run(tmp_path):
    path = tmp_path / "h.sqlite"
    _history_of(path, [100e6, 101e6, 99e6, 100e6, 80e6])
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check", "--threshold", "5"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "history check: M (serial S): seq read sequential 1 MiB: -20.0 % [-22.3 %, -17.6 %] at run-4 (2026-11-01 04:00) "
        "against the 4 entries since the last step: slower beyond 5 %")
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check", "--threshold", "25"])
    assert result.exit_code == 0
    assert result.output.strip() == ("history check: no step down beyond 25 % in the latest run of 1 drive (1 point "
                                     "checked against the runs since their last step); no step in any point's history")


def test_a_check_that_passes_after_a_step_some_runs_back_names_that_step(tmp_path):
    """A -20 % step six runs back: the latest run is level with the runs since it (the check passes), and the
    line says the step's size, run and age, which `stibium history` lists. (Six runs on each side: of five and five,
    about one ordering in 125 splits as well, a p-value at the level itself, which a seed may put either side.)"""
    path = tmp_path / "h.sqlite"
    _history_of(path, [100e6, 101e6, 99e6, 100e6, 100.5e6, 99.5e6, 80e6, 80.5e6, 79.5e6, 80e6, 80.2e6, 79.8e6])
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check"])
    assert result.exit_code == 0, result.output
    assert " ".join(result.output.split()) == (
        "history check: no step down beyond 5 % in the latest run of 1 drive (1 point checked against the runs since "
        "their last step); the last step: M (serial S): seq read sequential 1 MiB: -20.0 % [-20.7 %, -19.3 %] at "
        "run-6 (2026-11-01 06:00); 6 entries before, 6 after")


def test_check_exits_0_for_the_same_rate_and_2_without_a_history(tmp_path):
    path = tmp_path / "h.sqlite"
    _history_of(path, [100e6, 100.5e6])
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check"])
    assert result.exit_code == 0, result.output
    missing = tmp_path / "none.sqlite"
    result = CliRunner().invoke(main, ["history", "--history", str(missing), "check"])
    assert result.exit_code == 2
    assert result.output.strip() == (f"stibium: {missing}: no history yet (runs are recorded as they end; `stibium "
                                     f"history add DIR...` adds earlier ones)")
    assert not missing.exists()
    result = CliRunner().invoke(main, ["history", "--history", str(path), "check", "--since", "yesterday"])
    assert result.exit_code == 2 and "--since 'yesterday': give a date or a time" in result.output


def test_check_since_leaves_the_older_runs_out(tmp_path):
    path = tmp_path / "h.sqlite"
    _history_of(path, [60e6, 100e6, 100e6, 100e6, 100e6])
    cli = ["history", "--history", str(path), "check", "--since", "2026-11-01T01:00"]
    assert CliRunner().invoke(main, cli).exit_code == 0


def _at_width(monkeypatch, width: int) -> None:
    """The command line's console at a width of the test's, whatever COLUMNS the test session was started with
    (rich fixes a console's width from COLUMNS when it is made, at its first use)."""
    import stibium_py.cli
    monkeypatch.setattr(stibium_py.cli.console.made(), "_width", width)


def test_the_table_and_page_mark_steps_series_interrupted_runs_and_version_changes(tmp_path, monkeypatch):
    path = tmp_path / "h.sqlite"
    entries = [_entry(f"run-{i}", _day(i), 100e6 * (1 + 0.003 * (-1) ** i)) for i in range(6)]
    entries += [_entry(f"run-{i}", _day(i), 70e6 * (1 + 0.003 * (-1) ** i), firmware="F2") for i in range(6, 12)]
    entries += [_entry("cut", _day(12), 50e6, status="interrupted", firmware="F2")]
    entries += [_entry(f"run-{i}", _day(i), 70e6, series="s1", firmware="F2") for i in range(13, 16)]
    with History(path) as history:
        history.add_many(entries)
    _at_width(monkeypatch, 200)
    result = CliRunner().invoke(main, ["history", "--history", str(path), "--out", str(tmp_path / "pages")])
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines()]
    assert "M (serial S): 15 complete runs and 1 interrupted (drawn, not in any step)" in lines
    assert ("step: seq read sequential 1 MiB: -30.0 % [-30.5 %, -29.5 %] at run-6 (2026-11-01 06:00); 6 entries before, "
            "7 after") in lines
    assert "changed: firmware F1 -> F2 at run-6 (2026-11-01 06:00)" in lines
    page, = (tmp_path / "pages").glob("M-serial-S-*.html")     # the label, then a digest of the drive's key
    page = page.read_text()
    assert "interrupted run (not in any step)" in page and "firmware F1 -&gt; F2" in page and "s1" in page


def test_export_and_import_carry_every_run_and_a_strangers_file_is_data(tmp_path):
    path, other, file = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "h.json"
    _history_of(path, [100e6, 90e6])
    assert CliRunner().invoke(main, ["history", "--history", str(path), "export", str(file)]).exit_code == 0
    result = CliRunner().invoke(main, ["history", "--history", str(other), "import", str(file)])
    assert result.output.strip() == f"history: 2 new runs imported into {other}"
    again = CliRunner().invoke(main, ["history", "--history", str(other), "import", str(file)])
    assert again.output.strip() == f"history: 0 new runs imported into {other} (2 were there already, read again)"
    with History(path) as a, History(other) as b:
        ours, theirs = a.runs(), b.runs()
    assert [replace(r, path="") for r in ours] == [replace(r, path="") for r in theirs]
    assert [r.path for r in theirs] == ["imported:h:/runs/run-0", "imported:h:/runs/run-1"]
    data = json.loads(file.read_text())
    for broken, said in [({**data, "format": "x"}, "format: Input should be 'stibium-history/1'"),
                         ({**data, "runs": [{**data["runs"][0], "shell": "rm -rf /"}]}, "runs.0.shell: Extra inputs"),
                         ({**data, "runs": [{**data["runs"][0], "points": [{**data["runs"][0]["points"][0],
                                                                            "estimate": -1.0}]}]},
                          "runs.0.points.0.estimate: Value error, a rate is a positive number below 1e+30 or null")]:
        file.write_text(json.dumps(broken))
        result = CliRunner().invoke(main, ["history", "--history", str(tmp_path / "c.sqlite"), "import", str(file)])
        assert result.exit_code == 2
        assert result.output.startswith(f"stibium: {file}: not a stibium history export (stibium-history/1): {said}")
        assert not (tmp_path / "c.sqlite").exists() or not History(tmp_path / "c.sqlite").runs()


# -- real runs
def _run(d: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    (d / "tiny.yaml").write_text(PLAN)
    return subprocess.run([sys.executable, "-m", "stibium_py", "run", str(d / "tiny.yaml"), "--target", str(d / "t"),
                           "--out", str(d / "r"), *extra], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "300", **(env or {})}, timeout=300)


def test_a_run_is_recorded_as_it_ends_and_rebuild_gives_the_same_rows(disk_dir):
    db = disk_dir / "home" / "history.sqlite"
    for _ in range(2):
        done = _run(disk_dir, "--history", str(db))
        assert done.returncode == 0, done.stderr
        assert f"history: recorded in {db} (" in done.stdout
    skipped = _run(disk_dir, "--history", str(db), "--no-history")
    assert skipped.returncode == 0 and "history:" not in skipped.stdout
    with History(db) as history:
        live = history.runs()
    assert len(live) == 2 and all(len(r.points) == 3 and r.status == "complete" for r in live)
    assert live[0].drive == live[1].drive and live[0].plan_name == "tiny"
    rebuilt = CliRunner().invoke(main, ["history", "--history", str(db), "rebuild", str(disk_dir / "r")])
    assert rebuilt.output.strip() == f"history: {db} made again with 3 runs"
    with History(db) as history:
        again = history.runs()
    assert again[:2] == live                               # the same rows, and the run left out by --no-history
    assert not list(db.parent.glob("*.rebuild-*"))


def test_an_interrupted_run_is_recorded_and_marked(disk_dir, monkeypatch):
    import signal
    import time
    db = disk_dir / "history.sqlite"
    slow = PLAN.replace("trials: 3", "trials: 400")
    (disk_dir / "slow.yaml").write_text(slow)
    proc = interruptible([sys.executable, "-m", "stibium_py", "run", str(disk_dir / "slow.yaml"), "--target",
                          str(disk_dir / "t"), "--out", str(disk_dir / "r"), "--history", str(db)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        rows = list((disk_dir / "r").glob("*/measurements.csv"))
        if rows and len(rows[0].read_text().splitlines()) > 12:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"history: recorded (marked interrupted) in {db}" in out
    with History(db) as history:
        [run] = history.runs()
    assert (run.status, run.stopped_by) == ("interrupted", "SIGINT")
    _at_width(monkeypatch, 200)
    shown = CliRunner().invoke(main, ["history", "--history", str(db), "--out", str(disk_dir / "p")])
    assert "0 complete runs and 1 interrupted (drawn, not in any step)" in shown.output


def test_a_run_on_a_read_only_home_still_runs_and_says_the_history_was_not_written(disk_dir):
    home = disk_dir / "home"
    home.mkdir()
    if is_root:         # root writes through permissions: a read-only mount is what a read-only home is
        subprocess.run(["mount", "--bind", str(home), str(home)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(home)], check=True)
    else:
        home.chmod(0o555)
    try:
        done = _run(disk_dir, env={"STIBIUM_HOME": str(home / "stibium")})
    finally:
        if is_root:
            subprocess.run(["umount", str(home)], check=True)
        home.chmod(0o755)
    assert done.returncode == 0, done.stderr
    why = "Read-only file system" if is_root else "Permission denied"
    assert done.stderr.strip().splitlines() == [
        f"history: not written: {home / 'stibium'}: cannot make the history's folder ({why}); choose "
        f"another place with --history PATH or STIBIUM_HOME"]
    assert "(complete)" in done.stdout and list((disk_dir / "r").glob("*/report.html"))


def test_history_add_reads_a_folder_of_runs_and_names_what_it_left_out(disk_dir):
    assert _run(disk_dir, "--no-history").returncode == 0
    (disk_dir / "r" / "not-a-run").mkdir()
    broken = disk_dir / "r" / "broken"
    broken.mkdir()
    (broken / "run.json").write_text("{")
    db = disk_dir / "h.sqlite"
    result = CliRunner().invoke(main, ["history", "--history", str(db), "add", str(disk_dir / "r")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"history: 1 run added to {db}"
    assert f"left out: {broken}:" in result.output
    entry = read_entry(next(p for p in (disk_dir / "r").iterdir() if p.name.startswith("tiny-")))
    assert entry is not None and [p.point for p in entry.points] == ["files read", "files write", "seq read sequential 64 KiB"]


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_terminal_gives_every_row_one_line_at_any_width(tmp_path, monkeypatch, width):
    path = tmp_path / "h.sqlite"
    long = Drive("serial:Samsung SSD 990 PRO with Heatsink 4TB:S7DSNJ0W123456X", "Samsung SSD 990 PRO with Heatsink 4TB "
                 "(serial S7DSNJ0W123456X)", firmware="4B2QJXD7")
    with History(path) as history:
        history.add_many([_entry(f"quick-studio-mac-2026110{i}T120000Z", _day(i), 100e6, drive=long, series=None)
                          for i in range(12)])
    _at_width(monkeypatch, width)
    result = CliRunner().invoke(main, ["history", "--history", str(path), "--out", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    rows = [line for line in lines if line.startswith("2026-11-01")]
    assert len(rows) == 10 and all("quick-studio-mac-2026110" in r and "T120000Z" in r for r in rows)
    assert "(the latest 10; 2 earlier on the page)" in " ".join(result.output.split())


def test_at_80_columns_a_drive_s_name_stays_whole_and_the_columns_that_may_go_go_first(tmp_path, monkeypatch):
    """The drive's name is the one column that says which drive: hosts, interrupted and the first day are left out
    (and said) before it is cut."""
    path = tmp_path / "h.sqlite"
    drive = Drive("serial:overlayblk", "virtio disk (serial overlayblk)")
    with History(path) as history:
        history.add_many([replace(_entry(f"quick-2026110{i}T120000Z", _day(i), 100e6, drive=drive, series=None),
                                  run_key=f"{host}/{i}", host=host)
                          for i, host in enumerate(("render-node-07.lab.example.org", "edit-bay-3.studio.example.org"))])
    _at_width(monkeypatch, 80)
    result = CliRunner().invoke(main, ["history", "--history", str(path), "--out", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("virtio"))
    assert row.startswith("virtio disk (serial overlayblk)  ")
    assert "left out at this width: hosts" in result.output
    assert max(len(line.rstrip()) for line in result.output.splitlines()) <= 80


SUSTAINED_PLAN = """\
name: sus
tests:
  - name: long
    kind: sustained
    bytes: 24MiB
    file_size: 8MiB
    granularity: 256KiB
    chunk: 1MiB
"""


def test_a_sustained_test_is_in_the_history_by_its_stretches(disk_dir):
    from stibium_py.kinds.sustained.result import sustained_results
    from stibium_py.results.compare import _load_one
    (disk_dir / "sus.yaml").write_text(SUSTAINED_PLAN)
    db = disk_dir / "h.sqlite"
    result = CliRunner().invoke(main, ["run", str(disk_dir / "sus.yaml"), "--target", str(disk_dir / "t"), "--out",
                                       str(disk_dir / "r"), "--history", str(db)])
    assert result.exit_code == 0, result.output
    run_dir = next((disk_dir / "r").glob("sus-*"))
    stretches = sustained_results(_load_one(run_dir).rows)[("long", "write")].result.stretches
    with History(db) as history:
        [run] = history.runs()
    points = {p.point: p for p in run.points}
    if len(stretches) == 1:
        assert list(points) == ["long write sustained"]
    else:
        assert list(points) == ["long write sustained, first stretch", "long write sustained, last stretch"]
    first = points[next(iter(points))]
    assert first.estimate == stretches[0].rate_bytes_per_s.estimate and first.unit == "bytes"


def test_a_subcommand_takes_the_database_after_its_name_too(tmp_path):
    path = tmp_path / "h.sqlite"
    _history_of(path, [100e6, 100.5e6])
    result = CliRunner().invoke(main, ["history", "check", "--history", str(path)])
    assert result.exit_code == 0 and result.output.startswith("history check: no step down beyond 5 %"), result.output
