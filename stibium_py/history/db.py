"""The history database: SQLite through Python's own sqlite3, in write-ahead-log mode (readers never wait for
a writer; two runs ending at once both land, one after the other, each in one transaction), foreign keys
on, its schema versioned in `PRAGMA user_version` and brought up to date by the migrations below when it
is opened. Every failure reaches the caller as one HistoryError line that says what to do.

A history database can come from someone else (a lab's, mailed), and SQLite runs what a schema holds: a view's
query, a trigger's statements, a generated column's expression. So it is opened as data: `trusted_schema` off
(no function with side effects from the schema), the defensive flag where Python can set it, its objects held to
stibium's own tables and index (no view, no trigger, no other table: OWN_OBJECTS) before any statement reads it,
and a progress handler that ends a statement running longer than STATEMENT_LIMIT_S. A path that is not a regular
file (a device, a FIFO, a folder) is refused before SQLite opens it (it would write a -journal beside a device)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import HistoryError
from .entry import Drive, PointEntry, RunEntry

# Each migration takes the schema from its place in the list to the next; a database of an earlier schema is
# brought up to date when it is opened (tests/test_history.py opens one of the first schema).
MIGRATIONS = (
    # 1: drives, the runs on them, each run's points
    """
    CREATE TABLE drives (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        model TEXT, serial TEXT, firmware TEXT, capacity_bytes INTEGER
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        drive_id INTEGER NOT NULL REFERENCES drives(id) ON DELETE CASCADE,
        run_key TEXT NOT NULL UNIQUE,
        path TEXT NOT NULL, name TEXT NOT NULL,
        started_utc TEXT NOT NULL, ended_utc TEXT, status TEXT NOT NULL, stopped_by TEXT,
        host TEXT, os TEXT, plan_name TEXT, plan_sha256 TEXT, ops_sha256 TEXT,
        stibium_version TEXT, helper_version TEXT, firmware TEXT,
        fs_type TEXT, volume_uuid TEXT, ranks INTEGER NOT NULL
    );
    CREATE TABLE points (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        point TEXT NOT NULL, key_json TEXT NOT NULL, unit TEXT NOT NULL,
        estimate REAL, low REAL, high REAL, n INTEGER NOT NULL, refused TEXT,
        PRIMARY KEY (run_id, point)
    );
    """,
    # 2: the series a run belongs to (its runs are drawn as one), and the runs of a drive found by time
    """
    ALTER TABLE runs ADD COLUMN series TEXT;
    CREATE INDEX runs_by_drive ON runs (drive_id, started_utc);
    """,
)
SCHEMA = len(MIGRATIONS)
BUSY_TIMEOUT_S = 30.0      # how long a writer waits for another (a run's record takes milliseconds)
# a statement that runs longer is ended: the history of 10,000 runs of a drive is read in well under a second
STATEMENT_LIMIT_S = 60.0
PROGRESS_EVERY = 10_000
MAX_POINTS_A_RUN = 2000    # exchange.MAX_POINTS: the most test points of a run an export carries    # SQLite's virtual machine steps between two looks at the clock
# the schema's objects (type, name) the migrations make: a database holding any other is not stibium's
OWN_OBJECTS = {("table", "drives"), ("table", "runs"), ("table", "points"), ("index", "runs_by_drive")}
SQLITE_HEADER = b"SQLite format 3\x00"

RUN_COLUMNS = ("run_key", "path", "name", "series", "started_utc", "ended_utc", "status", "stopped_by", "host", "os",
               "plan_name", "plan_sha256", "ops_sha256", "stibium_version", "helper_version", "fs_type",
               "volume_uuid", "ranks")


@dataclass(frozen=True)
class DriveSummary:
    drive: Drive
    runs: int
    interrupted: int
    first_utc: str
    last_utc: str
    hosts: tuple[str, ...]


def refuse_unless_file(path: Path) -> None:
    """HistoryError where `path` exists and is not a regular file (a link the person gave is followed)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise HistoryError(f"{path}: cannot be examined ({e.strerror}); choose another place with --history PATH or "
                           f"STIBIUM_HOME", 1) from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else \
            "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise HistoryError(f"{path}: {kind}, not a history database; give a file's path with --history PATH", 2)


def is_history_file(path: Path) -> bool:
    """Whether `path` is a regular file that SQLite wrote (its header) or an empty one: the files `history rebuild`
    may replace. A text file, a device or a link is not."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError:
        return False
    return head in (b"", SQLITE_HEADER)


def _damaged(path: Path, e: Exception) -> HistoryError:
    return HistoryError(f"{path}: the history database is damaged ({e}); move it away, then `stibium history "
                        f"rebuild FOLDER...` makes it again from the run directories", 2)


def _failure(path: Path, e: sqlite3.Error) -> HistoryError:
    text = str(e)
    if text == "interrupted":        # the progress handler ended a statement (History._too_long)
        return HistoryError(f"{path}: a statement on it ran past {STATEMENT_LIMIT_S:g} s and was ended; stibium "
                            f"cannot read this database in time: move it away (`stibium history rebuild FOLDER...` "
                            f"makes one from the run directories)", 2)
    if "locked" in text or "busy" in text:
        return HistoryError(f"{path}: the history database stayed locked by another program for "
                            f"{BUSY_TIMEOUT_S:g} s; try again when it has finished", 1)
    if "unable to open" in text or "readonly" in text or "read-only" in text or "full" in text:
        return HistoryError(f"{path}: the history database cannot be written ({text}); choose another place with "
                            f"--history PATH or STIBIUM_HOME", 1)
    return _damaged(path, e)


class History:
    """An open history database. Use as a context manager; every write is one transaction."""

    def __init__(self, path: Path, create: bool = True):
        self.path = path
        if not create and not path.exists():
            raise HistoryError(f"{path}: no history yet (runs are recorded as they end; `stibium history add "
                               f"DIR...` adds earlier ones)", 2)
        refuse_unless_file(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise HistoryError(f"{path.parent}: cannot make the history's folder ({e.strerror}); choose another "
                               f"place with --history PATH or STIBIUM_HOME", 1) from None
        try:
            self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as e:
            raise _failure(path, e) from None
        self._deadline = 0.0
        try:
            self._as_data()
            self.db.execute("PRAGMA foreign_keys = ON")
            mode = self.db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":        # a file system without shared memory (a network share): one writer at a time
                self.db.execute("PRAGMA journal_mode = DELETE")
            self._migrate()
        except sqlite3.Error as e:
            self.db.close()
            raise _failure(path, e) from None
        except HistoryError:
            self.db.close()
            raise

    def _as_data(self) -> None:
        """The database opened as data: nothing of its schema run (module docstring), its objects stibium's own."""
        self.db.execute("PRAGMA trusted_schema = OFF")
        if hasattr(self.db, "setconfig"):                  # Python 3.12 and later
            self.db.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
        self.db.set_progress_handler(self._too_long, PROGRESS_EVERY)
        self._deadline = time.monotonic() + STATEMENT_LIMIT_S
        found = {(t, n) for t, n in self.db.execute("SELECT type, name FROM sqlite_master")
                 if not n.startswith("sqlite_autoindex_")}
        strange = sorted(found - OWN_OBJECTS)
        if strange:
            raise HistoryError(f"{self.path}: not a stibium history: it holds "
                               f"{', '.join(f'a {t} {n!r}' for t, n in strange[:3])}"
                               f"{' and more' if len(strange) > 3 else ''}, which stibium never makes; give a history "
                               f"stibium wrote (or move this one away)", 2)

    def _too_long(self) -> int:
        """SQLite's progress handler: non-zero ends the statement in progress."""
        return 1 if time.monotonic() > self._deadline else 0

    def _statement(self) -> None:
        """A statement (or a transaction) begins: its time counts from now."""
        self._deadline = time.monotonic() + STATEMENT_LIMIT_S

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.db.close()

    def _migrate(self) -> None:
        with self._writing():
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA:
                raise HistoryError(f"{self.path}: the history was written by a newer stibium (schema {version}, this "
                                   f"one knows {SCHEMA}); upgrade stibium, or use another with --history PATH", 2)
            for number in range(version, SCHEMA):
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {number + 1}")

    class _Transaction:
        def __init__(self, history: "History"):
            self.history = history

        def __enter__(self) -> None:
            self.history._statement()
            self.history.db.execute("BEGIN IMMEDIATE")      # the write lock now: no upgrade from reading later

        def __exit__(self, kind: Any, *rest: Any) -> None:
            self.history.db.execute("ROLLBACK" if kind is not None else "COMMIT")

    def _writing(self) -> "History._Transaction":
        return History._Transaction(self)

    # -- writing
    def add(self, entry: RunEntry) -> None:
        """The run (again: a run already kept is replaced by this reading of it) with its drive and points."""
        try:
            with self._writing():
                self._add(entry)
        except sqlite3.Error as e:
            raise _failure(self.path, e) from None

    def add_many(self, entries: list[RunEntry]) -> None:
        try:
            with self._writing():
                for entry in entries:
                    self._add(entry)
        except sqlite3.Error as e:
            raise _failure(self.path, e) from None

    def _add(self, entry: RunEntry) -> None:
        d = entry.drive
        self.db.execute("INSERT INTO drives (key, label, model, serial, firmware, capacity_bytes) VALUES (?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET label = excluded.label, "
                        "model = coalesce(excluded.model, model), firmware = coalesce(excluded.firmware, firmware), "
                        "capacity_bytes = coalesce(excluded.capacity_bytes, capacity_bytes)",
                        (d.key, d.label, d.model, d.serial, d.firmware, d.capacity_bytes))
        drive_id = self.db.execute("SELECT id FROM drives WHERE key = ?", (d.key,)).fetchone()[0]
        self.db.execute("DELETE FROM runs WHERE run_key = ?", (entry.run_key,))
        values = [getattr(entry, c) for c in RUN_COLUMNS]
        cursor = self.db.execute(f"INSERT INTO runs (drive_id, firmware, {', '.join(RUN_COLUMNS)}) VALUES "
                                 f"(?, ?, {', '.join('?' * len(RUN_COLUMNS))})", (drive_id, d.firmware, *values))
        run_id = cursor.lastrowid
        self.db.executemany("INSERT INTO points (run_id, point, key_json, unit, estimate, low, high, n, refused) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [(run_id, p.point, json.dumps(p.key, sort_keys=True), p.unit, p.estimate, p.low, p.high,
                              p.n, p.refused) for p in entry.points])

    # -- reading
    def _read(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        try:
            self.db.row_factory = sqlite3.Row
            self._statement()
            return self.db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise _failure(self.path, e) from None

    def drives(self) -> list[DriveSummary]:
        rows = self._read("SELECT d.*, count(r.id) AS runs, sum(r.status = 'interrupted') AS interrupted, "
                          "min(r.started_utc) AS first_utc, max(r.started_utc) AS last_utc, "
                          "group_concat(DISTINCT r.host) AS hosts FROM drives d JOIN runs r ON r.drive_id = d.id "
                          "GROUP BY d.id ORDER BY max(r.started_utc) DESC")
        return [DriveSummary(_drive(r), r["runs"], r["interrupted"] or 0, r["first_utc"], r["last_utc"],
                             tuple(sorted((r["hosts"] or "").split(",")))) for r in rows]

    def runs(self, drive_key: str | None = None, since_utc: str | None = None) -> list[RunEntry]:
        """The runs (of one drive; since a time), oldest first, each with its points. A database with a run of more
        points than an export may carry (a received one) is refused: each point is a figure of the drive's page."""
        most = self._read("SELECT max(n) AS most FROM (SELECT count(*) AS n FROM points GROUP BY run_id)")[0]["most"]
        if most is not None and most > MAX_POINTS_A_RUN:
            raise HistoryError(f"{self.path}: a run in it holds {most:,} test points, more than stibium keeps of a run "
                               f"({MAX_POINTS_A_RUN:,}); this is not a history stibium wrote: move it away", 2)
        where, args = [], []
        if drive_key is not None:
            where.append("d.key = ?")
            args.append(drive_key)
        if since_utc is not None:
            where.append("r.started_utc >= ?")
            args.append(since_utc)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        runs = self._read(f"SELECT r.*, d.key, d.label, d.model, d.serial, d.capacity_bytes FROM runs r "
                          f"JOIN drives d ON d.id = r.drive_id {clause} ORDER BY r.started_utc, r.id", tuple(args))
        points: dict[int, list[PointEntry]] = {}
        for p in self._read(f"SELECT p.* FROM points p JOIN runs r ON r.id = p.run_id JOIN drives d ON d.id = r.drive_id "
                            f"{clause} ORDER BY p.run_id, p.rowid", tuple(args)):
            points.setdefault(p["run_id"], []).append(
                PointEntry(p["point"], json.loads(p["key_json"]), p["unit"], p["estimate"], p["low"], p["high"], p["n"],
                           p["refused"]))
        return [RunEntry(**{c: r[c] for c in RUN_COLUMNS},
                         drive=Drive(r["key"], r["label"], r["model"], r["serial"], r["firmware"], r["capacity_bytes"]),
                         points=tuple(points.get(r["id"], ()))) for r in runs]

    def held(self, run_keys: set[str]) -> set[str]:
        """Which of these runs the history holds already."""
        keys = sorted(run_keys)
        found: set[str] = set()
        for i in range(0, len(keys), 500):            # SQLite's limit of a statement's parameters
            part = keys[i:i + 500]
            found |= {r["run_key"] for r in self._read(
                f"SELECT run_key FROM runs WHERE run_key IN ({', '.join('?' * len(part))})", tuple(part))}
        return found

    def started_here(self, path: Path, started_utc: str, host: str) -> bool:
        """Whether this history recorded the run directory `path` (resolved), started at `started_utc` on `host`:
        the runs a machine's history holds ended here (or were added from this machine's own folders)."""
        rows = self._read("SELECT 1 FROM runs WHERE path = ? AND started_utc = ? AND host = ? LIMIT 1",
                          (str(path), started_utc, host))
        return bool(rows)

    def paths(self) -> list[Path]:
        return [Path(r["path"]) for r in self._read("SELECT path FROM runs ORDER BY started_utc")]


def _drive(r: sqlite3.Row) -> Drive:
    return Drive(r["key"], r["label"], r["model"], r["serial"], r["firmware"], r["capacity_bytes"])


def open_history(path: Path, create: bool = True) -> History:
    return History(path, create)

