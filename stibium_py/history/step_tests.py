"""The step searches' segment tests, kept between commands (analysis/history.py: find_steps' `kept`), so that a
nightly `history check` tests again only the segments its new run changed, and `stibium history` after it none.

A file of the machine's own in its cache folder (where.step_tests_path), never part of a history: a key names a
segment's values to the bit, its bounds and the test's settings, so a kept answer is the answer the test gives, and
find_steps takes none that could not be one. Anything wrong with the file (a folder that cannot be made, damage, a
lock held too long by another command) costs the time it would have saved and nothing else: the tests are made
again and the command goes on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

# rows kept: about 100 bytes each; past this, the oldest half goes (a nightly check of 100 drives adds ~1,500)
MOST_ROWS = 200_000


class StepTests:
    """Segment tests by key, read from the file as asked and written to it at close()."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._db: sqlite3.Connection | None = None
        self._opened = False
        self._new: dict[str, tuple[int, float]] = {}

    def _open(self) -> sqlite3.Connection | None:
        if not self._opened and self._path is not None:
            self._opened = True
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self._path, timeout=2.0)
                db.execute("CREATE TABLE IF NOT EXISTS tests (key TEXT NOT NULL UNIQUE, tau INTEGER NOT NULL, "
                           "p REAL NOT NULL)")
                self._db = db
            except (OSError, sqlite3.Error):
                self._db = None
        return self._db

    def get(self, key: str) -> tuple[int, float] | None:
        if key in self._new:
            return self._new[key]
        db = self._open()
        if db is None:
            return None
        try:
            row = db.execute("SELECT tau, p FROM tests WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        # a row of another's making: find_steps holds it to what a test of that segment could answer
        return (row[0], row[1]) if row is not None and type(row[0]) is int and type(row[1]) is float else None

    def __setitem__(self, key: str, value: tuple[int, float]) -> None:
        self._new[key] = value

    def close(self) -> None:
        """The new tests into the file (one transaction), the oldest rows out past MOST_ROWS."""
        db = self._open() if self._new else self._db
        if db is None:
            return
        try:
            with db:
                db.executemany("INSERT OR IGNORE INTO tests (key, tau, p) VALUES (?, ?, ?)",
                               [(k, tau, p) for k, (tau, p) in self._new.items()])
                (most,) = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM tests").fetchone()
                if most > MOST_ROWS:
                    db.execute("DELETE FROM tests WHERE rowid <= ?", (most - MOST_ROWS // 2,))
        except sqlite3.Error:
            pass
        finally:
            db.close()
            self._db = None
            self._new = {}

    def __enter__(self) -> "StepTests":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
