"""The history's schema: one list of migrations for the machine's SQLite file and the team's PostgreSQL
database. Each migration takes the schema from its place in the list to the next; a database of an earlier
schema is brought up to date when it is opened. The few words the two dialects spell differently are
written as {names} and filled in per dialect: a row id made by the database, a float of 64 bits (PostgreSQL's
REAL has 32), an integer of 64 bits (its INTEGER has 32), and the order rows were inserted in (SQLite's rowid;
PostgreSQL keeps none, and no PostgreSQL history predates the column that records it)."""

from __future__ import annotations

from typing import Literal

Dialect = Literal["sqlite", "postgresql"]

WORDS: dict[str, dict[str, str]] = {
    "sqlite": {"id": "INTEGER PRIMARY KEY", "real": "REAL", "int": "INTEGER", "rowid": "rowid"},
    "postgresql": {"id": "BIGSERIAL PRIMARY KEY", "real": "DOUBLE PRECISION", "int": "BIGINT", "rowid": "0"},
}

_MIGRATIONS = (
    # 1: drives, the runs on them, each run's points
    """
    CREATE TABLE drives (
        id {id},
        key TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        model TEXT, serial TEXT, firmware TEXT, capacity_bytes {int}
    );
    CREATE TABLE runs (
        id {id},
        drive_id {int} NOT NULL REFERENCES drives(id) ON DELETE CASCADE,
        run_key TEXT NOT NULL UNIQUE,
        path TEXT NOT NULL, name TEXT NOT NULL,
        started_utc TEXT NOT NULL, ended_utc TEXT, status TEXT NOT NULL, stopped_by TEXT,
        host TEXT, os TEXT, plan_name TEXT, plan_sha256 TEXT, ops_sha256 TEXT,
        stibium_version TEXT, helper_version TEXT, firmware TEXT,
        fs_type TEXT, volume_uuid TEXT, ranks {int} NOT NULL
    );
    CREATE TABLE points (
        run_id {int} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        point TEXT NOT NULL, key_json TEXT NOT NULL, unit TEXT NOT NULL,
        estimate {real}, low {real}, high {real}, n {int} NOT NULL, refused TEXT,
        PRIMARY KEY (run_id, point)
    );
    """,
    # 2: the series a run belongs to (its runs are drawn as one), and the runs of a drive found by time
    """
    ALTER TABLE runs ADD COLUMN series TEXT;
    CREATE INDEX runs_by_drive ON runs (drive_id, started_utc);
    """,
    # 3: a run's points in the order the run gave them (a page draws them so), and the notes people write of a
    # run or a drive (a firmware update, a new NAS), an expected one not an alarm; a note names its run or drive
    # by key, so that it outlives the rows it speaks of (a run read again is a new row)
    """
    ALTER TABLE points ADD COLUMN seq {int};
    UPDATE points SET seq = {rowid};
    CREATE TABLE notes (
        id {id},
        run_key TEXT, drive_key TEXT,
        text TEXT NOT NULL, expected {int} NOT NULL, written_utc TEXT NOT NULL
    );
    """,
)

SCHEMA = len(_MIGRATIONS)


def migration(number: int, dialect: Dialect) -> list[str]:
    """The statements of migration `number` (from 0) in `dialect`."""
    text = _MIGRATIONS[number].format(**WORDS[dialect])
    return [s.strip() for s in text.split(";") if s.strip()]


# the SQLite form of each migration, as a script (a test makes a database of an earlier schema with it)
MIGRATIONS = tuple(";\n".join(migration(i, "sqlite")) + ";" for i in range(SCHEMA))
