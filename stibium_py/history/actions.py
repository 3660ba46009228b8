"""What the `stibium history` commands do, apart from printing: add run directories, make the database again
from them, check the latest runs for a step down, export and import, and gather each drive's history for
its table and page."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import HistoryError, RecordError, RunDirError
from ..rundir.store import RUN_JSON, is_series, series_run_dirs
from .db import History, is_history_file
from ..analysis.history import Step
from .drives import DriveHistory, PointHistory, drive_history
from .entry import RunEntry, read_entry
from .exchange import IMPORTED, read_export, to_json


def run_dirs_in(path: Path) -> list[Path]:
    """The run directories a path holds: itself (a run), a series' runs, or the runs and series one level down
    (a folder of run directories such as reports/)."""
    if is_series(path):
        return series_run_dirs(path)
    if (path / RUN_JSON).is_file():
        return [path]
    if not path.is_dir():
        raise HistoryError(f"{path}: no such folder; give run directories, series or a folder of them (reports)")
    found: list[Path] = []
    for child in sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink()):
        if is_series(child):
            found.extend(series_run_dirs(child))
        elif (child / RUN_JSON).is_file():
            found.append(child)
    return found


@dataclass(frozen=True)
class Read:
    entries: list[RunEntry]
    skipped: list[str]           # run directories left out, each with why


def read_runs(paths: list[Path]) -> Read:
    """Every run the paths hold, as history entries; a run that has not ended (running, waiting for a reboot)
    or failed is left out and named."""
    entries, skipped = [], []
    for path in paths:
        for run_dir in run_dirs_in(path):
            try:
                entry = read_entry(run_dir)
            except (RunDirError, RecordError) as e:
                skipped.append(f"{run_dir}: {e}")
                continue
            if entry is None:
                skipped.append(f"{run_dir}: not ended complete or interrupted")
            else:
                entries.append(entry)
    return Read(entries, skipped)


def add_runs(paths: list[Path], database: Path) -> Read:
    """The runs of the paths added in one transaction (all or none)."""
    read = read_runs(paths)
    with History(database) as history:
        history.add_many(read.entries)
    return read


def rebuild(folders: list[Path], database: Path) -> Read:
    """A new database from the run directories in the folders, and from those the old database names that are
    still there (where it can be read); its imported runs are carried over as they are. Made beside the old one
    and moved over it at the end, so a failure leaves the old one."""
    carried: list[RunEntry] = []
    known: list[Path] = []
    if os.path.lexists(database) and not is_history_file(database):
        raise HistoryError(f"{database}: not a stibium history database (not a file SQLite wrote); rebuild replaces "
                           f"only a history: give another path with --history PATH", 2)
    if database.exists():
        try:
            with History(database, create=False) as old:
                for entry in old.runs():
                    if entry.path.startswith(IMPORTED):
                        carried.append(entry)
                    elif Path(entry.path).is_dir():
                        known.append(Path(entry.path))
        except HistoryError:
            pass                         # damaged: made from the folders alone
    given = {p.resolve() for f in folders for p in run_dirs_in(f)}
    read = read_runs([*folders, *(p for p in known if p.resolve() not in given)])
    fresh = database.with_name(f"{database.name}.rebuild-{os.getpid()}")
    _remove_database(fresh)
    try:
        with History(fresh) as history:
            history.add_many([*carried, *read.entries])
            history.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _remove_database(database)       # its log and shared memory too: they belong to the old file
        os.replace(fresh, database)
    finally:
        _remove_database(fresh)
    return Read([*carried, *read.entries], read.skipped)


def _remove_database(path: Path) -> None:
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def histories(database: Path, drive: str | None = None, since_utc: str | None = None) -> list[DriveHistory]:
    """Each drive's history (the drives whose key or label holds `drive`), the latest used drive first."""
    with History(database, create=False) as history:
        summaries = history.drives()
        chosen = [s for s in summaries if drive is None or drive.lower() in (s.drive.key + " " + s.drive.label).lower()]
        if drive is not None and not chosen:
            raise HistoryError(f"{database}: no drive matches {drive!r}; `stibium history` lists the drives")
        out = []
        for s in chosen:
            runs = history.runs(s.drive.key, since_utc)
            if runs:
                out.append(drive_history(runs))
    return out


@dataclass(frozen=True)
class Slower:
    drive: DriveHistory
    point: PointHistory


@dataclass(frozen=True)
class Checked:
    drives: int
    points: int                  # points whose latest entry was checked against a level before it
    slower: list[Slower]         # steps down beyond the threshold, the largest first
    # the most recent step of any point of the drives checked (a passing check names it: a step some runs ago is
    # not in the latest run's level, and the history's table lists it), or None where none was found
    last_step: tuple[DriveHistory, PointHistory, Step] | None = None


def check(database: Path, threshold: float, drive: str | None = None, since_utc: str | None = None) -> Checked:
    """Each drive's latest complete run against the runs before it, point by point."""
    found = histories(database, drive, since_utc)
    slower, checked = [], 0
    for h in found:
        complete = [r for r in h.runs if r.status == "complete"]
        if not complete:
            continue
        last = complete[-1].name
        for p in h.points:
            if p.latest is None or last not in p.latest.entry.runs:
                continue
            checked += 1
            if p.latest.step_down(threshold):
                slower.append(Slower(h, p))
    slower.sort(key=lambda s: s.point.latest.ratio.estimate if s.point.latest else 1.0)
    steps = [(h, p, step) for h in found for p in h.points for step in p.steps]
    last = max(steps, key=lambda found_step: (found_step[2].started_utc, -found_step[2].ratio.estimate), default=None)
    return Checked(len(found), checked, slower, last)


def export(database: Path, out: Path, drive: str | None = None) -> int:
    from ..rundir.store import write_json_atomic
    with History(database, create=False) as history:
        keys = {h.drive.key for h in histories(database, drive)} if drive else None
        entries = [e for e in history.runs() if keys is None or e.drive.key in keys]
    write_json_atomic(out, to_json(entries))
    return len(entries)


def import_runs(source: Path, database: Path) -> tuple[int, int]:
    """The runs of an export added; how many were new, and how many the history held already (read again)."""
    entries = read_export(source)
    with History(database) as history:
        held = history.held({e.run_key for e in entries})
        history.add_many(entries)
    return len({e.run_key for e in entries} - held), len(held)
