"""Resuming a run that was interrupted or stopped for a reboot: its run directory held to what it must be (not
complete, not still running, the same plan and operations, the same device, the test folder stibium made for
it), then the driver from the first operation not done. Many clients resume under the same number of ranks."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from .. import __version__
from ..machine import sysinfo
from .helper import HelperFactory
from ..rundir.liveness import still_running
from ..paths import device_of, volume_change
from ..plan import Expanded, PlanError, load_plan
from ..plan.expand import expand, kept_files_of, read_from
from .preflight import WORK_MARKER, RunError
from ..rundir.record import RunRecord, RunStatus, ops_digest
from ..rundir.store import iso, read_run_json, utc_now, write_run_json
from ..clients.team import Solo, Team
from .workdir import WorkDir, holds_marker, made_for
from .crew import Crew, every_rank_or_none, join_crew
from .driver import drive
from .jobs import bench_checked, kept, kept_files, with_job_files
from .options import Finished, RunOptions, helpers_of
from .start import follow


def resume_run(run_dir: Path, options: RunOptions, console: Console, helper: HelperFactory | None = None,
               team: Team | None = None) -> Finished:
    """Carry on with a run that was interrupted or stopped for a reboot. A run of many clients resumes under
    the same number of ranks: rank 0 reads the run directory and tells the others what to do."""
    team = team or Solo()
    if team.size > 1:
        return _resume_team(run_dir, options, console, helper, team)
    helpers = helpers_of(helper)           # found before the test folder is made again: a refusal leaves none
    run, expanded = resumable(run_dir, clients=1, target=options.target, history_db=options.history_db)
    return _go_on(run_dir, _resumed(run, options), expanded, helpers, options, console, None)


def _resume_team(run_dir: Path, options: RunOptions, console: Console, helper: HelperFactory | None,
                 team: Team) -> Finished:
    leads = team.rank == 0
    found = every_rank_or_none(team, lambda: resumable(run_dir, team.size, options.target, options.history_db)
                               if leads else None)
    shared = team.share(None if not leads else (found[0].plan.source, found[0].plan.text, found[0].seed,
                                                 found[0].expanded, found[0].work_dir, run_dir.name))
    source, text, seed, facts, work_dir, name = shared
    kept = team.share(kept_files_of(found[1]) if leads else None)      # a replay's trace, from rank 0's run directory

    def expanded_here() -> Expanded:
        """This rank's operations: rank 0's from the run directory; another rank's from the plan rank 0 sent, held
        to the run's digest (a rank whose stibium expands it otherwise would measure other offsets), every rank
        or none going on."""
        if leads:
            return found[1]
        mine = _expand_again(source, text, seed, facts, None, kept)
        if ops_digest(mine.ops_as_dicts()) != facts.get("ops_sha256"):
            raise RunError(f"this rank expanded the run's plan into other operations than rank 0; install the same "
                           f"stibium ({__version__}) on every machine", 2)
        return mine
    expanded = every_rank_or_none(team, expanded_here)
    if leads:
        run = found[0]
    # the job files rank 0 read from the run directory (bench_job), for every rank to run
    expanded = with_job_files(expanded, team.share(
        {t.name: t.bench_job for t in expanded.tests if t.bench_job is not None} if leads else None))
    helpers = helpers_of(helper)
    crew = join_crew(team, WorkDir(Path(work_dir), name), existing=True)
    if not leads:
        return follow(expanded, Path(work_dir), crew, helpers, console)
    return _go_on(run_dir, replace(_resumed(run, options), clients=crew.record(run.clients)), expanded, helpers, options,
                  console, crew)


def _go_on(run_dir: Path, run: RunRecord, expanded: Expanded, helpers: HelperFactory, options: RunOptions,
           console: Console, crew: Crew | None) -> Finished:
    """The resumed record written, then the driver from the first operation not done (rank 0; one client)."""
    write_run_json(run_dir, run)
    return drive(run_dir, run, expanded, helpers, options.progress, console, crew, options.remove_beside_report,
                 options.on_end)


def _resumed(run: RunRecord, options: RunOptions) -> RunRecord:
    """The record a resume writes before it goes on: running, in this process, on this boot, with one more
    resumption; a run that waited for a reboot marked as rebooted; its test files kept at the end only where the
    person says so again (--keep-files), not because a record says so."""
    return replace(run, rebooted=run.status == RunStatus.WAITING_FOR_REBOOT or run.rebooted, status=RunStatus.RUNNING,
                   keep_files=options.keep_files,
                   pid=os.getpid(), machine={**run.machine, "boot_id": sysinfo.boot_id()},
                   resumed_utc=(*run.resumed_utc, iso(utc_now())))


def _expand_again(source: str, text: str, seed: int | None, facts: dict, run_dir: Path | None,
                  kept: dict[str, bytes] | None = None) -> Expanded:
    """The run's operations again, from the plan's text kept in run.json (not the file, which may have changed
    since) and its seed; a sustained test's fraction_of_free of the free space when the run started, not now."""
    plan, _ = load_plan(Path(source), text=text)
    free = next((t.get("free_bytes") for t in facts.get("tests", []) if t.get("free_bytes") is not None), None)
    return expand(plan, seed, free, kept_files(run_dir) if run_dir is not None else
                  read_from(kept) if kept is not None else None)


def started_here(run: RunRecord, run_dir: Path, history_db: Path | None) -> bool:
    """Whether this machine's history recorded the run as one of its own (its folder, start and host)."""
    if history_db is None or not run.started_utc or not os.path.isfile(history_db):
        return False
    from ..errors import HistoryError
    from ..history.db import History
    try:
        with History(history_db, create=False) as history:
            return history.started_here(str(run_dir.resolve()), run.started_utc, sysinfo.machine_facts()["hostname"])
    except HistoryError:
        return False


def resumable(run_dir: Path, clients: int, target: Path | None = None,
              history_db: Path | None = None) -> tuple[RunRecord, Expanded]:
    """A run directory that can go on here, its record (its test folder in `target` where the person gave one)
    and its operations; else one line saying why not.

    Where it writes is the person's word: the recorded test folder where it still holds this run's marker or this
    machine's history recorded the run as started here, else only inside a --target given again (a run directory
    comes from strangers, and its run.json may name any folder)."""
    run = read_run_json(run_dir)
    status = run.status
    if status == "complete":
        raise RunError(f"{run_dir} is already complete; `stibium report {run_dir}` shows it", 2)
    if still_running(run):
        raise RunError(f"{run_dir} is still running (process {run.pid}); wait for it or stop it first", 2)
    if status == "waiting-for-reboot" and run.boot_id == sysinfo.boot_id():
        raise RunError(f"{run_dir} waits for a reboot and this machine has not restarted since; restart it, then run "
                       f"`stibium resume {run_dir}`", 2)
    source, text, work_dir = run.plan.source, run.plan.text, run.work_dir
    try:
        for name, value in (("plan.source", source), ("plan.text", text), ("work_dir", work_dir),
                            ("started_epoch_s", run.started_epoch_s)):
            if value is None:
                raise KeyError(name)
        assert source is not None and text is not None and work_dir is not None      # each checked just above
        expanded = _expand_again(source, text, run.seed, run.expanded, run_dir)
        work = Path(work_dir)
        if target is not None:
            given = Path(os.path.realpath(target.expanduser()))
            if not given.is_dir():
                raise RunError(f"--target {target}: no such folder; give the folder the run measured in", 2)
            work = given / work.name
            run = replace(run, work_dir=str(work), target=str(given))
    except (PlanError, KeyError, TypeError, ValueError) as e:
        raise RunError(f"{run_dir}/run.json: the run in it cannot be read again ({type(e).__name__}: {e}); "
                       f"restore it from a copy of the run", 2) from None
    if ops_digest(expanded.ops_as_dicts()) != run.expanded.get("ops_sha256"):
        raise RunError(f"{run_dir}/run.json: its operations do not match its plan; was it edited?", 2)
    changed = volume_change(run.target_device, run.target_facts.get("volume_uuid"), device_of(work.parent),
                            sysinfo.volume_uuid(work.parent) if run.target_facts.get("volume_uuid") else None)
    if changed:
        raise RunError(f"the target {work.parent} is on a different device than when the run started ({changed}); "
                       f"mount the same disk there to resume, or start a new run", 2)
    if run.ranks != clients:
        raise RunError(f"{run_dir} ran with {run.ranks} client{'s' if run.ranks > 1 else ''}; resume it with "
                       + (f"mpiexec -n {run.ranks} stibium resume {run_dir}" if run.ranks > 1 else
                          f"stibium resume {run_dir}, without mpiexec"), 2)
    why_not = made_for(work, run.target, run_dir.name)
    if why_not:
        raise RunError(f"{run_dir}/run.json: its work_dir {work} is not the test folder stibium made for this run "
                       f"({why_not}); nothing was written or removed. Resume a run you started here, or start the "
                       f"plan again with stibium run", 2)
    if target is None and not holds_marker(work, run_dir.name) and not started_here(run, run_dir, history_db):
        raise RunError(f"{run_dir}: nothing on this machine shows that this run was started here (its test folder "
                       f"{work} holds no marker of it, and the history does not know it), so its record does not "
                       f"choose where to write; nothing was written. Say where: stibium resume {run_dir} --target "
                       f"FOLDER", 2)
    expanded = with_job_files(expanded, bench_checked(expanded, kept(run_dir)))
    try:
        if not (work / WORK_MARKER).exists():       # gone, or an empty folder of the run's name (made_for)
            try:
                WorkDir(work, run_dir.name).mark()
            except FileNotFoundError:
                WorkDir(work, run_dir.name).create()
    except OSError as e:
        raise RunError(f"cannot recreate the test folder {work}: {e.strerror}", 2) from None
    return run, expanded
