"""A series: N complete runs of a plan, one after another, each a run directory of its own inside one series
folder with series.json; started, and resumed where it stopped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console

from .. import sysinfo
from ..helper import HelperFactory
from ..plan import expand_at
from ..preflight import RunError, preflight
from ..record import SeriesRecord
from ..store import iso, new_run_dir, read_run_json, read_series_json, utc_now, write_series_json
from ..team import Team
from .options import Finished, LoadedPlan, RunOptions
from .resume import resume_run
from .start import start_run


def start_series(loaded: LoadedPlan, options: RunOptions, runs: int | None, console: Console,
                 helper: HelperFactory | None = None, team: Team | None = None) -> Finished:
    """N complete runs of the plan, one after another, each a run directory of its own (run-1, run-2, ...)
    inside one series folder with series.json; each with fresh test files and the plan's eviction. One run
    is an ordinary run directory, as before."""
    plan, plan_path = loaded.plan, loaded.source
    runs = runs or plan.runs
    if runs == 1:
        return start_run(loaded, options, console, helper, team)
    if team is not None and team.size > 1:
        raise (RunError(f"a series of {runs} runs with many clients is not supported; start each run with mpiexec "
                        f"and --runs 1, then compare them", 2) if team.rank == 0 else SystemExit(2))
    expanded = expand_at(plan_path, plan, loaded.text, options.seed, options.target)
    target = (options.target or Path(plan.target)).expanduser()
    preflight(expanded, target, expanded.space_needed_bytes(options.keep_files), options.allow_nonempty,
              options.out_dir)
    started = utc_now()
    series = new_run_dir(options.out_dir, plan.name, sysinfo.machine_facts()["hostname"], started)
    write_series_json(series, SeriesRecord(
        plan=plan.name, runs=runs, source=str(plan_path), target=str(target), started_utc=iso(started),
        seed=options.seed, keep_files=options.keep_files, allow_nonempty=options.allow_nonempty))
    return run_series(series, loaded, options, console, helper)


def run_series(series: Path, loaded: LoadedPlan, options: RunOptions, console: Console,
               helper: HelperFactory | None = None) -> Finished:
    """Start (or resume) every run of the series that is not complete, in order."""
    meta = read_series_json(series)
    status = "complete"
    last = Finished(series, status)
    for i in range(1, meta.runs + 1):
        run_dir = series / f"run-{i}"
        if (run_dir / "run.json").is_file() and read_run_json(run_dir).status == "complete":
            continue
        last.wait_for_removal()           # a run's files are gone before the next run measures
        if (run_dir / "run.json").is_file():
            last = resume_run(run_dir, options, console, helper)
        else:
            console.print(f"[bold]run {i} of {meta.runs}[/]")
            last = start_run(loaded, replace(options, out_dir=series, run_name=f"run-{i}"), console, helper)
        status = last.status
        if status != "complete":
            break
    write_series_json(series, replace(meta, status=status))
    return Finished(series, status, last.removal)


def resume_series(series: Path, options: RunOptions, console: Console, helper: HelperFactory | None = None
                  ) -> Finished:
    """Carry on with a series: finish its interrupted run, then start the runs that have not begun."""
    meta = read_series_json(series)
    if meta.status == "complete":
        raise RunError(f"{series} is already complete; `stibium report {series}` shows it", 2)
    if meta.source is None or meta.target is None:
        raise RunError(f"{series}/series.json does not say which plan and target it ran; start a new series", 2)
    source = Path(meta.source)
    if not source.is_file():
        raise RunError(f"{series}: its plan {source} is gone; restore it to start the remaining runs", 2)
    options = replace(options, target=Path(meta.target), seed=meta.seed, keep_files=meta.keep_files,
                      allow_nonempty=meta.allow_nonempty)
    return run_series(series, LoadedPlan.read(source), options, console, helper)
