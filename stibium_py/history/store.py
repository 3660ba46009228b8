"""What the history asks of its database, written once for both: the machine's SQLite file (db.History) and a
team's PostgreSQL database (team.TeamHistory). Every statement is parametrised (`?` here; the PostgreSQL store
writes them as its driver wants), every write one transaction. A store gives the few things that differ: how a
statement runs, how a transaction begins and ends, how a failure is said."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..errors import HistoryError
from .entry import Drive, Note, PointEntry, RunEntry

MAX_POINTS_A_RUN = 2000    # exchange.MAX_POINTS: the most test points of a run an export carries
MAX_NOTE_CHARS = 2000      # a note is a line or a few; a page shows it whole

RUN_COLUMNS = ("run_key", "path", "name", "series", "started_utc", "ended_utc", "status", "stopped_by", "host", "os",
               "plan_name", "plan_sha256", "ops_sha256", "stibium_version", "helper_version", "fs_type",
               "volume_uuid", "ranks")

T = TypeVar("T")
S = TypeVar("S", bound="Store")


@dataclass(frozen=True)
class DriveSummary:
    drive: Drive
    runs: int
    interrupted: int
    first_utc: str
    last_utc: str
    hosts: tuple[str, ...]


class Store:
    """An open history. Use as a context manager."""

    where: str                          # the database as a line names it (a path; a URL without its password)
    hosts_of_drive = "group_concat(DISTINCT r.host)"     # the hosts of a drive's runs, joined by commas

    # -- what a store gives
    def _execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: list[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Mapping[str, Any]]:
        raise NotImplementedError

    def _in_transaction(self, work: Callable[[], T]) -> T:
        """`work` in one write transaction: all of it or none."""
        raise NotImplementedError

    def _held_to_types(self, entries: list[RunEntry]) -> list[RunEntry]:
        """The runs read, as the store vouches for them (a team's database is held to the export's types)."""
        return entries

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- writing
    def add(self, entry: RunEntry) -> None:
        """The run (again: a run already kept is replaced by this reading of it) with its drive and points."""
        self._in_transaction(lambda: self._add(entry))

    def add_many(self, entries: list[RunEntry]) -> None:
        # in one order of drives and runs, so that two writers of overlapping runs take their locks in one order
        ordered = sorted(entries, key=lambda e: (e.drive.key, e.run_key))

        def work() -> None:
            for entry in ordered:
                self._add(entry)
        self._in_transaction(work)

    def _add(self, entry: RunEntry) -> None:
        d = entry.drive
        self._execute("INSERT INTO drives (key, label, model, serial, firmware, capacity_bytes) VALUES "
                      "(?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET label = excluded.label, "
                      "model = coalesce(excluded.model, drives.model), "
                      "firmware = coalesce(excluded.firmware, drives.firmware), "
                      "capacity_bytes = coalesce(excluded.capacity_bytes, drives.capacity_bytes)",
                      (d.key, d.label, d.model, d.serial, d.firmware, d.capacity_bytes))
        drive_id = self._read("SELECT id FROM drives WHERE key = ?", (d.key,))[0]["id"]
        self._execute("DELETE FROM runs WHERE run_key = ?", (entry.run_key,))
        values = [getattr(entry, c) for c in RUN_COLUMNS]
        self._execute(f"INSERT INTO runs (drive_id, firmware, {', '.join(RUN_COLUMNS)}) VALUES "
                      f"(?, ?, {', '.join('?' * len(RUN_COLUMNS))})", (drive_id, d.firmware, *values))
        run_id = self._read("SELECT id FROM runs WHERE run_key = ?", (entry.run_key,))[0]["id"]
        self._executemany("INSERT INTO points (run_id, point, key_json, unit, estimate, low, high, n, refused, seq) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          [(run_id, p.point, json.dumps(p.key, sort_keys=True), p.unit, p.estimate, p.low, p.high,
                            p.n, p.refused, i) for i, p in enumerate(entry.points)])

    def add_note(self, note: Note) -> None:
        self.add_notes([note])

    def add_notes(self, notes: list[Note]) -> None:
        def work() -> None:
            for note in notes:
                self._execute("INSERT INTO notes (run_key, drive_key, text, expected, written_utc) VALUES "
                              "(?, ?, ?, ?, ?)",
                              (note.run_key, note.drive_key, note.text, int(note.expected), note.written_utc))
        self._in_transaction(work)

    # -- reading
    def drives(self) -> list[DriveSummary]:
        rows = self._read(f"SELECT d.id, d.key, d.label, d.model, d.serial, d.firmware, d.capacity_bytes, "
                          f"count(r.id) AS runs, "
                          f"sum(CASE WHEN r.status = 'interrupted' THEN 1 ELSE 0 END) AS interrupted, "
                          f"min(r.started_utc) AS first_utc, max(r.started_utc) AS last_utc, "
                          f"{self.hosts_of_drive} AS hosts FROM drives d JOIN runs r ON r.drive_id = d.id "
                          f"GROUP BY d.id, d.key, d.label, d.model, d.serial, d.firmware, d.capacity_bytes "
                          f"ORDER BY max(r.started_utc) DESC")
        return [DriveSummary(_drive(r), r["runs"], r["interrupted"] or 0, r["first_utc"], r["last_utc"],
                             tuple(sorted((r["hosts"] or "").split(",")))) for r in rows]

    def runs(self, drive_key: str | None = None, since_utc: str | None = None) -> list[RunEntry]:
        """The runs (of one drive; since a time), oldest first, each with its points. A database with a run of more
        points than an export may carry (a received one) is refused: each point is a figure of the drive's page."""
        most = self._read("SELECT max(n) AS most FROM (SELECT count(*) AS n FROM points GROUP BY run_id) AS counts")
        if most and most[0]["most"] is not None and most[0]["most"] > MAX_POINTS_A_RUN:
            raise HistoryError(f"{self.where}: a run in it holds {most[0]['most']:,} test points, more than stibium "
                               f"keeps of a run ({MAX_POINTS_A_RUN:,}); this is not a history stibium wrote: move it "
                               f"away", 2)
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
                            f"{clause} ORDER BY p.run_id, p.seq, p.point", tuple(args)):
            points.setdefault(p["run_id"], []).append(
                PointEntry(p["point"], _key(p["key_json"], self.where), p["unit"], p["estimate"], p["low"], p["high"],
                           p["n"], p["refused"]))
        return self._held_to_types([RunEntry(**{c: r[c] for c in RUN_COLUMNS}, drive=_drive(r),
                                             points=tuple(points.get(r["id"], ()))) for r in runs])

    def run_states(self, run_keys: set[str]) -> dict[str, tuple[str, str | None, int]]:
        """Of these runs, those the history holds: each one's status, end and number of points (what a push
        compares to send only the runs that are new or changed)."""
        keys = sorted(run_keys)
        found: dict[str, tuple[str, str | None, int]] = {}
        for i in range(0, len(keys), 500):            # SQLite's limit of a statement's parameters
            part = keys[i:i + 500]
            for r in self._read(f"SELECT r.run_key, r.status, r.ended_utc, "
                                f"(SELECT count(*) FROM points p WHERE p.run_id = r.id) AS points FROM runs r "
                                f"WHERE r.run_key IN ({', '.join('?' * len(part))})", tuple(part)):
                found[r["run_key"]] = (r["status"], r["ended_utc"], r["points"])
        return found

    def held(self, run_keys: set[str]) -> set[str]:
        """Which of these runs the history holds already."""
        return set(self.run_states(run_keys))

    def notes(self) -> list[Note]:
        return [_note(r) for r in self._read("SELECT run_key, drive_key, text, expected, written_utc FROM notes "
                                              "ORDER BY written_utc, id")]

    def started_here(self, path: str, started_utc: str, host: str) -> bool:
        """Whether this history recorded the run directory `path` (resolved), started at `started_utc` on `host`:
        the runs a machine's history holds ended here (or were added from this machine's own folders)."""
        return bool(self._read("SELECT 1 AS here FROM runs WHERE path = ? AND started_utc = ? AND host = ? LIMIT 1",
                               (path, started_utc, host)))



def _drive(r: Mapping[str, Any]) -> Drive:
    return Drive(r["key"], r["label"], r["model"], r["serial"], r["firmware"], r["capacity_bytes"])


def _note(r: Mapping[str, Any]) -> Note:
    return Note(r["run_key"], r["drive_key"], r["text"], bool(r["expected"]), r["written_utc"])


MAX_KEY_CHARS = 20_000          # a point's key is a few hundred characters of JSON


def _key(text: Any, where: str) -> dict[str, Any]:
    """A point's key as stored: a JSON object of bounded size, else the database is not one stibium wrote."""
    try:
        if not isinstance(text, str) or len(text) > MAX_KEY_CHARS:
            raise ValueError
        key = json.loads(text)
        if not isinstance(key, dict):
            raise ValueError
        return key
    except (ValueError, RecursionError):
        raise HistoryError(f"{where}: a point's key in it is not the JSON object stibium writes; this is not a "
                           f"history stibium wrote: move it away", 2) from None

