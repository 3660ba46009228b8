"""A series: N complete runs of a plan, one after another, each a run directory of its own inside one series
folder with series.json; started, and resumed where it stopped. With many clients every rank goes through the
same runs in step: rank 0 keeps the series folder and says, run by run, whether to start, resume or pass it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console

from ..rundir import received
from ..machine import sysinfo
from ..errors import RunDirError
from .helper import HelperFactory
from ..paths import missing_folders, remove_empty
from ..plan import expand_at
from ..plan.load import load_plan
from .preflight import RunError, preflight
from ..rundir.record import RunStatus, SeriesRecord
from ..rundir.store import (RUN_JSON, SERIES_JSON, iso, new_run_dir, read_run_json, read_series_json, series_run_dirs,
    utc_now, write_series_json)
from ..clients.team import Solo, Team
from .workdir import holds_marker
from .crew import every_rank_or_none
from .options import Finished, LoadedPlan, RunOptions
from .resume import resume_run, started_here
from .start import start_run


def start_series(loaded: LoadedPlan, options: RunOptions, runs: int | None, console: Console,
                 helper: HelperFactory | None = None, team: Team | None = None) -> Finished:
    """N complete runs of the plan, one after another, each a run directory of its own (run-1, run-2, ...)
    inside one series folder with series.json; each with fresh test files and the plan's eviction. One run
    is an ordinary run directory, as before. A series whose first run is refused (a rank that cannot see the
    target, a helper that does not answer) leaves no folder behind."""
    team = team or Solo()
    leads = team.rank == 0
    plan, plan_path = loaded.plan, loaded.source
    runs = runs or plan.runs
    if runs == 1:
        return start_run(loaded, options, console, helper, team)
    target = (options.target or Path(plan.target)).expanduser()
    made_out = missing_folders(options.out_dir) if leads else []

    def begin() -> Path | None:
        """Rank 0: the plan checked against its target and the series folder made; the others wait for it."""
        if not leads:
            return None
        expanded = expand_at(plan_path, plan, loaded.text, options.seed, options.target, clients=team.size)
        preflight(expanded, target, expanded.space_needed_bytes(options.keep_files) * team.size,
                  options.allow_nonempty, options.out_dir, clients=team.size, whole_drive=options.whole_drive)
        started = utc_now()
        series = new_run_dir(options.out_dir, plan.name, sysinfo.machine_facts()["hostname"], started)
        write_series_json(series, SeriesRecord(
            plan=plan.name, runs=runs, source=str(plan_path), target=str(target), started_utc=iso(started),
            seed=options.seed, keep_files=options.keep_files, allow_nonempty=options.allow_nonempty))
        return series
    series = every_rank_or_none(team, begin) or Path()
    try:
        return run_series(series, loaded, options, console, helper, team)
    except (RunError, SystemExit):
        if leads and not any(series.glob("run-*")):
            (series / SERIES_JSON).unlink(missing_ok=True)
            series.rmdir()
            remove_empty(made_out)
        raise


def run_series(series: Path, loaded: LoadedPlan, options: RunOptions, console: Console,
               helper: HelperFactory | None = None, team: Team | None = None) -> Finished:
    """Start (or resume) every run of the series that is not complete, in order; with many clients rank 0 reads
    the series folder and every rank does what it says, run by run."""
    team = team or Solo()
    leads = team.rank == 0
    meta = read_series_json(series) if leads else None
    count = team.share(meta.runs if meta is not None else None)
    status = RunStatus.COMPLETE
    last = Finished(series, status)
    for i in range(1, count + 1):
        run_dir = series / f"run-{i}"

        def step() -> str:
            if not (run_dir / RUN_JSON).is_file():
                return "start"
            return "pass" if read_run_json(run_dir).status == "complete" else "resume"
        what = team.share(step() if leads else None)
        if what == "pass":
            continue
        last.wait_for_removal()           # a run's files are gone before the next run measures
        try:
            if what == "resume":
                last = resume_run(run_dir, options, console, helper, team)
            else:
                console.print(f"[bold]run {i} of {count}[/]")
                last = start_run(loaded, replace(options, out_dir=series, run_name=f"run-{i}"), console, helper,
                                 team)
        except (RunError, SystemExit):
            # a run cut by a signal or a lost rank ends in an error after its record: the series says the same
            if meta is not None and (run_dir / RUN_JSON).is_file():
                write_series_json(series, replace(meta, status=read_run_json(run_dir).status))
            raise
        status = RunStatus(team.share(last.status if leads else None))
        if status != "complete":
            break
    if meta is not None:
        write_series_json(series, replace(meta, status=status))
    return Finished(series, status, last.removal)


def resume_series(series: Path, options: RunOptions, console: Console, helper: HelperFactory | None = None,
                  team: Team | None = None) -> Finished:
    """Carry on with a series: finish its interrupted run, then start the runs that have not begun. The plan is the
    one its first run kept in its record (with its fio job files), never a file a series.json names; the target is
    the recorded one only where this machine shows the series as its own (a run's test folder with its marker, or
    the history), else the person's --target; keeping files and a target with other files in it are the person's
    flags, not the record's. With many clients rank 0 reads the series and sends the plan."""
    team = team or Solo()

    def read() -> tuple[str, str, str, int | None] | None:
        if team.rank:
            return None
        meta = read_series_json(series)
        if meta.status == "complete":
            raise RunError(f"{series} is already complete; `stibium report {series}` shows it", 2)
        try:
            first_dir = received.folder_inside(series, "run-1")
            first = read_run_json(first_dir)
        except FileNotFoundError:
            raise RunError(f"{series}: no run of it began (no run-1 with its run.json), so there is no plan to carry "
                           f"on with; start a new series with stibium run PLAN --runs N", 2) from None
        if first.plan.text is None or first.plan.source is None:
            raise RunError(f"{first_dir}/run.json does not keep its plan's text; start a new series", 2)
        target = options.target
        if target is None:
            if not _own(series, meta.runs, options.history_db):
                raise RunError(f"{series}: nothing on this machine shows that this series was started here (no run "
                               f"of it in the history, no test folder with its marker), so its record does not "
                               f"choose where to write; nothing was written. Say where: stibium resume {series} "
                               f"--target FOLDER", 2)
            target = Path(meta.target) if meta.target is not None else None
        if target is None:
            raise RunError(f"{series}/series.json does not say which target it ran; give it with --target FOLDER", 2)
        return (first.plan.source, first.plan.text, str(target), meta.seed)
    source, text, target, seed = team.share(every_rank_or_none(team, read))
    plan, text = load_plan(Path(source), text=text)
    options = replace(options, target=Path(target), seed=seed)
    return run_series(series, LoadedPlan(Path(source), plan, text, files_from=series / "run-1"), options, console,
                      helper, team)


def _own(series: Path, runs: int, history_db: Path | None) -> bool:
    """Whether a run of the series shows it was started on this machine: its test folder with its marker still in
    place, or this machine's history recording it."""
    for run_dir in series_run_dirs(series):
        try:
            run = read_run_json(run_dir)
        except RunDirError:
            continue
        if (run.work_dir and holds_marker(Path(run.work_dir), run_dir.name)) or \
                started_here(run, run_dir, history_db):
            return True
    return False
