"""The history database: SQLite through Python's own sqlite3, in write-ahead-log mode (readers never wait for
a writer; two runs ending at once both land, one after the other, each in one transaction), foreign keys
on, its schema versioned in `PRAGMA user_version` and brought up to date by the migrations of schema.py when
it is opened. Every failure reaches the caller as one HistoryError line that says what to do.

A history database can come from someone else (a lab's, mailed), and SQLite runs what a schema holds: a view's
query, a trigger's statements, a generated column's expression. So it is opened as data: `trusted_schema` off
(no function with side effects from the schema), the defensive flag where Python can set it, its objects held to
stibium's own tables and index (no view, no trigger, no other table: OWN_OBJECTS) before any statement reads it,
and a progress handler that ends a statement running longer than STATEMENT_LIMIT_S. A path that is not a regular
file (a device, a FIFO, a folder) is refused before SQLite opens it (it would write a -journal beside a device)."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..errors import HistoryError
from .schema import SCHEMA, migration
from .store import DriveSummary, Store
from .where import Location, TeamUrl

__all__ = ["DriveSummary", "History", "open_at", "open_history"]

BUSY_TIMEOUT_S = 30.0      # how long a writer waits for another (a run's record takes milliseconds)
# a statement that runs longer is ended: the history of 10,000 runs of a drive is read in well under a second
STATEMENT_LIMIT_S = 60.0
PROGRESS_EVERY = 10_000    # SQLite's virtual machine steps between two looks at the clock
# the schema's objects (type, name) the migrations make: a database holding any other is not stibium's
OWN_OBJECTS = {("table", "drives"), ("table", "runs"), ("table", "points"), ("index", "runs_by_drive"),
               ("table", "notes")}
SQLITE_HEADER = b"SQLite format 3\x00"


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


T = TypeVar("T")


class History(Store):
    """The machine's history file. Use as a context manager; every write is one transaction."""

    def __init__(self, path: Path, create: bool = True):
        self.path = path
        self.where = str(path)
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
        self.db.row_factory = sqlite3.Row
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
            self.db.setconfig(getattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE"), True)
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

    def close(self) -> None:
        self.db.close()

    def _migrate(self) -> None:
        def work() -> None:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA:
                raise HistoryError(f"{self.path}: the history was written by a newer stibium (schema {version}, this "
                                   f"one knows {SCHEMA}); upgrade stibium, or use another with --history PATH", 2)
            for number in range(version, SCHEMA):
                for statement in migration(number, "sqlite"):
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {number + 1}")
        self._transaction(work)

    def _transaction(self, work: Callable[[], T]) -> T:
        self._statement()
        self.db.execute("BEGIN IMMEDIATE")      # the write lock now: no upgrade from reading later
        try:
            done = work()
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return done

    def _in_transaction(self, work: Callable[[], T]) -> T:
        try:
            return self._transaction(work)
        except sqlite3.Error as e:
            raise _failure(self.path, e) from None

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.db.execute(sql, tuple(args))

    def _executemany(self, sql: str, rows: list[Sequence[Any]]) -> None:
        self.db.executemany(sql, rows)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Mapping[str, Any]]:
        try:
            self._statement()
            return self.db.execute(sql, tuple(args)).fetchall()
        except sqlite3.Error as e:
            raise _failure(self.path, e) from None

    def checkpoint(self) -> None:
        """The write-ahead log folded into the file (before the file is moved)."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def open_history(path: Path, create: bool = True) -> History:
    return History(path, create)


def open_at(location: Location, create: bool = True) -> Store:
    """The history at `location`: the machine's file, or a team's database."""
    if isinstance(location, TeamUrl):
        from .team import TeamHistory
        return TeamHistory(location, create)
    return History(location, create)
