"""What the `stibium history` commands do, apart from printing: add run directories, make the database again
from them, check the latest runs for a step down, export and import, and gather each drive's history for
its table and page."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import HistoryError, RecordError, RunDirError
from ..rundir.store import RUN_JSON, is_series, series_run_dirs
from .db import History, is_history_file, open_at
from ..analysis.history import Step, confirmed
from .drives import DriveHistory, PointHistory, drive_history, point_history, point_names
from .entry import Note, RunEntry, read_entry
from .exchange import IMPORTED, read_export, to_json
from .store import MAX_NOTE_CHARS
from .where import Location, TeamUrl, step_tests_here


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


def add_runs(paths: list[Path], database: Location) -> Read:
    """The runs of the paths added in one transaction (all or none)."""
    read = read_runs(paths)
    with open_at(database) as history:
        history.add_many(read.entries)
    return read


def rebuild(folders: list[Path], database: Location) -> Read:
    """A new database from the run directories in the folders, and from those the old database names that are
    still there (where it can be read); its imported runs are carried over as they are. Made beside the old one
    and moved over it at the end, so a failure leaves the old one."""
    if isinstance(database, TeamUrl):
        raise HistoryError(f"{database.shown}: rebuild makes a machine's history file again; a team's database is "
                           f"not made from folders: give a file with --history PATH, then `stibium history push`", 2)
    carried: list[RunEntry] = []
    notes: list[Note] = []
    known: list[Path] = []
    if os.path.lexists(database) and not is_history_file(database):
        raise HistoryError(f"{database}: not a stibium history database (not a file SQLite wrote); rebuild replaces "
                           f"only a history: give another path with --history PATH", 2)
    if database.exists():
        try:
            with History(database, create=False) as old:
                notes = old.notes()
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
            history.add_notes(notes)
            history.checkpoint()
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


def histories(database: Location, drive: str | None = None, since_utc: str | None = None) -> list[DriveHistory]:
    """Each drive's history (the drives whose key or label holds `drive`), the latest used drive first."""
    with open_at(database, create=False) as history:
        summaries = history.drives()
        notes = history.notes()
        chosen = [s for s in summaries if drive is None or drive.lower() in (s.drive.key + " " + s.drive.label).lower()]
        if drive is not None and not chosen:
            raise HistoryError(f"{database}: no drive matches {drive!r}; `stibium history` lists the drives")
        wanted = [(runs, notes_of(notes, s.drive.key)) for s in chosen if (runs := history.runs(s.drive.key, since_utc))]
    jobs = [(i, runs, name, unit) for i, (runs, _) in enumerate(wanted) for name, unit in point_names(runs).items()]
    kept_at = step_tests_here()
    if len(jobs) < 2:
        made = [point_history(runs, name, unit, kept_at) for _, runs, name, unit in jobs]
    else:
        # each point's step searches are independent: side by side, on threads here and then a process a core where
        # they take long enough to be worth its start (a lab of many drives, a drive of many runs: performance.md)
        from ..analysis.pool import process_pool
        pool = process_pool()
        try:
            made = list(pool.map(point_history, [j[1] for j in jobs], [j[2] for j in jobs], [j[3] for j in jobs],
                                 [kept_at] * len(jobs)))
        finally:
            pool.shutdown()
    return [drive_history(runs, drive_notes, [p for (k, *_), p in zip(jobs, made) if k == i])
            for i, (runs, drive_notes) in enumerate(wanted)]


@dataclass(frozen=True)
class Slower:
    drive: DriveHistory
    point: PointHistory

    @property
    def latest_run(self) -> RunEntry:
        """The drive's latest complete run: the one found slower."""
        return [r for r in self.drive.runs if r.status == "complete"][-1]


@dataclass(frozen=True)
class Checked:
    drives: int
    points: int                  # points whose latest entry was checked against a level before it
    slower: list[Slower]         # steps down beyond the threshold, the largest first
    # the most recent step of any point of the drives checked (a passing check names it: a step some runs ago is
    # not in the latest run's level, and the history's table lists it), or None where none was found
    last_step: tuple[DriveHistory, PointHistory, Step] | None = None
    expected: list[tuple[Slower, Note]] = field(default_factory=list)   # steps down a person's note says are meant
    transient: list[Slower] = field(default_factory=list)   # steps down the runs made to confirm them did not repeat
    confirmed_by: int = 0        # the runs made to confirm (--confirm N)


def expected_note(notes: tuple[Note, ...], runs: tuple[RunEntry, ...], point: PointHistory) -> Note | None:
    """The expected note that explains a point's step down, if any: a note on a run since the last run of the level
    it is compared with, or a drive's note written after that run (a note written once the alarm was seen counts;
    once the new level has runs of its own, the note no longer speaks of it)."""
    if point.latest is None or not point.latest.baseline:
        return None
    since = point.latest.baseline[-1].started_utc
    started = {r.run_key: r.started_utc for r in runs}
    for note in reversed(notes):
        if not note.expected:
            continue
        if note.run_key is not None:
            at = started.get(note.run_key)
            if at is not None and since < at <= point.latest.entry.started_utc:
                return note
        elif note.written_utc > since:
            return note
    return None


def check(database: Location, threshold: float, drive: str | None = None, since_utc: str | None = None) -> Checked:
    """Each drive's latest complete run against the runs before it, point by point."""
    found = histories(database, drive, since_utc)
    slower, expected, checked = [], [], 0
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
                note = expected_note(h.notes, h.runs, p)
                if note is None:
                    slower.append(Slower(h, p))
                else:
                    expected.append((Slower(h, p), note))
    slower.sort(key=lambda s: s.point.latest.ratio.estimate if s.point.latest else 1.0)
    steps = [(h, p, step) for h in found for p in h.points for step in p.steps]
    last_step = max(steps, key=lambda found_step: (found_step[2].started_utc, -found_step[2].ratio.estimate),
                    default=None)
    return Checked(len(found), checked, slower, last_step, expected)


def confirm_check(database: Location, threshold: float, again: int, rerun: Callable[[Slower], None],
                  drive: str | None = None, since_utc: str | None = None) -> Checked:
    """`check`, and where it finds a drive slower, its latest run's plan run `again` more times (`rerun` records
    each run in the history) before a step is called: called only where the suspect run and every new one are
    each slower than the level before the suspect, beyond the threshold."""
    first = check(database, threshold, drive, since_utc)
    if not first.slower or again == 0:
        return first
    done: set[str] = set()
    for s in first.slower:
        if s.drive.drive.key not in done:
            done.add(s.drive.drive.key)
            for _ in range(again):
                rerun(s)
    now = {h.drive.key: h for h in histories(database, drive, since_utc)}
    called, transient = [], []
    for s in first.slower:
        h = now.get(s.drive.drive.key)
        p = next((q for q in h.points if q.point == s.point.point), None) if h is not None else None
        if h is not None and p is not None and confirmed(p.entries, again, threshold):
            called.append(Slower(h, p))
        else:
            transient.append(s)
    return Checked(first.drives, first.points, called, first.last_step, first.expected, transient, again)


def export(database: Location, out: Path, drive: str | None = None) -> int:
    from ..rundir.store import write_json_atomic
    with open_at(database, create=False) as history:
        keys = {h.drive.key for h in histories(database, drive)} if drive else None
        entries = [e for e in history.runs() if keys is None or e.drive.key in keys]
    write_json_atomic(out, to_json(entries))
    return len(entries)


def import_runs(source: Path, database: Location) -> tuple[int, int]:
    """The runs of an export added; how many were new, and how many the history held already (read again)."""
    entries = read_export(source)
    with open_at(database) as history:
        held = history.held({e.run_key for e in entries})
        history.add_many(entries)
    return len({e.run_key for e in entries} - held), len(held)


def notes_of(notes: list[Note], drive_key: str) -> tuple[Note, ...]:
    return tuple(n for n in notes if n.drive_key == drive_key)


@dataclass(frozen=True)
class Pushed:
    sent: int           # runs the team's database did not hold, or held as another reading (interrupted, then resumed)
    already: int        # runs it held as they are here
    notes: int          # notes it did not hold


def push(local: Path, team: TeamUrl) -> Pushed:
    """The machine's runs and notes sent to the team's database: those it does not hold as they are here. Run again,
    it sends what is new since (a run's key is its identity: nothing is kept twice)."""
    with History(local, create=False) as mine:
        entries = mine.runs()
        notes = mine.notes()
    with open_at(team) as theirs:
        held = theirs.run_states({e.run_key for e in entries})
        fresh = [e for e in entries if held.get(e.run_key) != (e.status, e.ended_utc, len(e.points))]
        if fresh:
            theirs.add_many(fresh)
        known = {(n.run_key, n.drive_key, n.text, n.written_utc) for n in theirs.notes()}
        new_notes = [n for n in notes if (n.run_key, n.drive_key, n.text, n.written_utc) not in known]
        if new_notes:
            theirs.add_notes(new_notes)
    return Pushed(len(fresh), len(entries) - len(fresh), len(new_notes))


def note(database: Location, about: str, text: str, expected: bool, now_utc: str) -> tuple[Note, str]:
    """A person's note of a run (its folder's name, its path or its key) or of a drive (text of its name), written
    in the history; the note, and what it speaks of in words."""
    text = " ".join(text.split())
    if not text:
        raise HistoryError("a note needs its text: stibium history note RUN|DRIVE \"what changed\"", 2)
    if len(text) > MAX_NOTE_CHARS:
        raise HistoryError(f"a note of {len(text):,} characters: keep it to {MAX_NOTE_CHARS:,}", 2)
    with open_at(database, create=False) as history:
        runs = history.runs()
        by_run = [r for r in runs if about in (r.name, r.run_key, r.path) or
                  (not isinstance(database, TeamUrl) and _same_folder(about, r.path))]
        if by_run:
            run = by_run[-1]
            made = Note(run.run_key, run.drive.key, text, expected, now_utc)
            said = f"the run {run.name} ({run.drive.label})"
        else:
            drives = [d.drive for d in history.drives() if about.lower() in (d.drive.key + " " + d.drive.label).lower()]
            if not drives:
                raise HistoryError(f"{about!r}: no run or drive of the history has that name; `stibium history` lists "
                                   f"them", 2)
            if len(drives) > 1:
                raise HistoryError(f"{about!r}: names {len(drives)} drives ({'; '.join(d.label for d in drives[:3])}); "
                                   f"give more of one's name", 2)
            made = Note(None, drives[0].key, text, expected, now_utc)
            said = f"the drive {drives[0].label}"
        history.add_note(made)
    return made, said


def _same_folder(given: str, path: str) -> bool:
    try:
        return Path(given).resolve() == Path(path)
    except (OSError, ValueError):
        return False
