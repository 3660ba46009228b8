"""Runs a plan: checks the target, drives the helper through every operation in
order, keeps every measurement, and leaves nothing of its own behind.

Order per files test: the writes, then `between` (none, evict, drop-caches, or a
stop for a reboot), then the reads. Per pattern test: the file is laid out
(untimed, not a measurement; asked for, preconditioned: the span written twice),
then the trials; each read trial meets an evicted file. A test by rounds stops at
the first round that ends a steady window (analysis/steady.py). Per tree test: each trial at each thread
count makes a tree of its own, its phases one helper call each, and the tree is removed when they are done
(a resumed run makes a lost tree again, untimed). Test files live in a folder of their own inside the target
(`stibium-<run>`); clean-up removes only the files the plan names there; after a complete run it may go on
in the background while the caller builds the report (RunOptions.remove_beside_report).
`resume` carries on from measurements.csv: completed operations are not repeated.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from . import __version__, memory, sysinfo
from .kinds import by_kind
from .helper import (CompiledHelper, HelperError, HelperFactory, HelperSession, HelperTimeout, device_block_of, find_helper,
                     layout_args, measure_args, op_timeout_s, precondition_args, raw_clock_ns, tree_args)
from .analysis.steady import steadiness
from .measurement import Measurement, MeasurementError, failed, from_answer, from_chunk, from_tree_answer
from .paths import device_of, volume_change
from .op import Op
from .plan import Expanded, ExpandedTest, Plan, PlanError, expand_at, load_plan
from .plan.expand import estimated_bytes, expand
from .errors import FioError, PathError, SizeError
from .fio.jobfile import read_plan_file
from .fio.job import (JOB_FILES, Fio, JobFile, checked_job_file, find_fio, job_text, keep_output, row_of,
                      rows_of_jobs, run_job)
from .preflight import RunError, drop_caches, preflight
from .sharing import Place, read_shift
from .team import Solo, Team
from .tree import TreeShape, rate_unit
from .record import PlanRecord, RunRecord, SeriesRecord, ops_digest
from .table import Table
from .store import (MeasurementLog, completed_seqs, iso, new_run_dir, read_measurements, read_run_json,
                    read_series_json, utc_now, write_run_json, write_series_json)
from .units import format_bytes, format_per_s, format_rate, middle_cut, op_label
from .liveness import still_running
from .workdir import WorkDir, made_for, work_dir_name


class Interrupted(Exception):
    """SIGTERM or SIGHUP arrived during a run (SIGINT arrives as KeyboardInterrupt); its name is the argument."""

    @property
    def signal_name(self) -> str:
        return str(self.args[0]) if self.args else "SIGTERM"


# the signals that end a run as an interruption (rows kept, status interrupted, test files removed): SIGTERM (kill,
# a launcher ending the job) and SIGHUP (the terminal window closed, an ssh session dropped). SIGHUP is left alone
# where it is ignored when the run starts (nohup): that person asked for the run to outlive the terminal.
ENDING_SIGNALS = ("SIGTERM", "SIGHUP")


@dataclass(frozen=True)
class RunOptions:
    target: Path | None = None
    out_dir: Path = Path("reports")
    seed: int | None = None
    keep_files: bool = False
    allow_nonempty: bool = False
    progress: bool = True
    run_name: str | None = None      # a run of a series: its fixed name inside out_dir (run-1, run-2, ...)
    # a complete run's test files removed in the background, beside the caller's report (Finished.removal);
    # the caller waits for it (Finished.wait_for_removal) before it ends or starts another run
    remove_beside_report: bool = False


class Removal:
    """A complete run's test files being removed in a thread of their own. Unlinking is kernel work (a TRIM
    where the file system is mounted with discard: about 0.5 s of a quick run here) that needs no Python,
    so it goes on while the report is built; the run's status is written before it starts."""

    def __init__(self, remove: Callable[[], None]):
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._remove, args=(remove,), name="stibium-removal")
        self.thread.start()

    def _remove(self, remove: Callable[[], None]) -> None:
        try:
            remove()
        except BaseException as e:         # raised where the caller waits
            self.error = e

    def wait(self) -> None:
        self.thread.join()
        if self.error is not None:
            error, self.error = self.error, None
            raise error


# ------------------------------------------------------------------ starting and resuming

@dataclass(frozen=True)
class Finished:
    """Where a run (or a series) is, and how it ended: complete, interrupted, waiting-for-reboot, failed."""

    path: Path
    status: str
    removal: Removal | None = None          # its test files still being removed (RunOptions.remove_beside_report)

    def wait_for_removal(self) -> None:
        if self.removal is not None:
            self.removal.wait()


@dataclass(frozen=True)
class LoadedPlan:
    """A plan read and checked once per command (plan.load_plan), with where it came from."""

    source: Path
    plan: Plan
    text: str

    @classmethod
    def read(cls, source: Path) -> "LoadedPlan":
        plan, text = load_plan(source)
        return cls(source, plan, text)


def read_plan_once(team: Team, plan_arg: str) -> LoadedPlan:
    """The plan, read and checked by rank 0 and handed to every rank (the other machines need not have the
    file); one client reads it as it is."""
    from .plan.find import resolve_plan_path
    if team.size == 1:
        return LoadedPlan.read(resolve_plan_path(plan_arg))

    def read() -> tuple[str, str] | None:
        if team.rank:
            return None
        loaded = LoadedPlan.read(resolve_plan_path(plan_arg))
        return str(loaded.source), loaded.text

    source, text = team.share(every_rank_or_none(team, read))
    plan, text = load_plan(Path(source), text=text)
    return LoadedPlan(Path(source), plan, text)


def keep_awake_command(platform: str, pid: int, caffeinate: str | None) -> list[str] | None:
    """macOS: the power assertion that keeps an idle Mac from sleeping while pid runs (a sleep stops the raw
    clock and the drive mid-measurement): `caffeinate -i -w PID`, which ends with that process. A closed lid
    still sleeps a laptop on battery; the README says so. None elsewhere, or without caffeinate."""
    if platform != "darwin" or caffeinate is None:
        return None
    return [caffeinate, "-i", "-w", str(pid)]


def keep_awake(platform: str, pid: int) -> subprocess.Popen | None:
    """Start keep_awake_command's process, or None where there is none (or it cannot start)."""
    command = keep_awake_command(platform, pid, shutil.which("caffeinate"))
    if command is None:
        return None
    try:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


def start_run(loaded: LoadedPlan, options: RunOptions, console: Console, helper: HelperFactory | None = None,
              team: Team | None = None) -> Finished:
    """Check everything, create the run directory and the test folder, and run. With many clients (team),
    every rank checks its own machine before anything is written, and the test folder rank 0 creates must
    be seen by every rank; rank 0 alone writes the run directory."""
    team = team or Solo()
    leads = team.rank == 0
    plan, text, plan_path = loaded.plan, loaded.text, loaded.source
    target = (options.target or Path(plan.target)).expanduser()
    if leads:
        expanded = expand_at(plan_path, plan, text, options.seed, options.target, clients=team.size)
        free = next((t.free_bytes for t in expanded.tests if t.free_bytes is not None), None)
    free = team.share(free if leads else None)
    if not leads:
        expanded = expand(plan, options.seed, free)
    digest = ops_digest(expanded.ops_as_dicts())
    helpers = helper or CompiledHelper(_helper_path())

    def check() -> dict[str, Any]:
        """This rank's machine: the plan's operations, the target, the space, the memory, the helper."""
        if team.share(digest) != digest:
            raise RunError(f"this rank expanded the plan into other operations than rank 0; install the same "
                           f"stibium ({__version__}) on every machine", 2)
        preflight(expanded, target, expanded.space_needed_bytes(options.keep_files) * team.size,
                  options.allow_nonempty, options.out_dir if leads else None, clients=team.size)
        jobs = _bench_checked(expanded, _beside(plan_path) if leads else None)
        target.mkdir(parents=True, exist_ok=True)
        facts = sysinfo.target_facts(target)
        block = device_block_of(facts)
        info = helpers.once(["info", "--path", str(target)] + (["--device-block", str(block)] if block else []))
        if not info.ok:
            raise RunError(f"target {target}: {info.error}", 2)
        return {"facts": facts, "info": info.data, "jobs": jobs}

    mine = every_rank_or_none(team, check)
    facts, info = mine["facts"], mine["info"]
    expanded = with_job_files(expanded, team.share(mine["jobs"] if leads else None))
    started = utc_now()
    machine = sysinfo.machine_facts()
    run_dir, work = Path(), Path()
    if leads:
        if options.run_name:
            run_dir = options.out_dir / options.run_name
            run_dir.mkdir(parents=True)
            work = target.resolve() / work_dir_name(f"{options.out_dir.name}-{options.run_name}", sys.platform)
        else:
            run_dir = new_run_dir(options.out_dir, plan.name, machine["hostname"], started)
            work = target.resolve() / work_dir_name(run_dir.name, sys.platform)
    if team.size == 1:
        crew = Crew()
        WorkDir(work, run_dir.name).create()
    else:
        # each rank's test folder is its own target's, by rank 0's name: machines may mount one store at
        # different paths (/Volumes/share on a Mac, /mnt/share on Linux)
        run_name, work_name = team.share((run_dir.name, work.name))
        work = target.resolve() / work_name
        try:
            crew = join_crew(team, WorkDir(work, run_name))
        except (RunError, SystemExit):
            if leads:
                run_dir.rmdir()
            raise
        if not leads:
            return _follow(expanded, work, run_name, crew, helpers, console)
    ops = expanded.ops_as_dicts()
    run = RunRecord(
        stibium_version=__version__,
        helper_version=info.get("helper_version"),
        helper=info,
        plan=PlanRecord(name=plan.name, description=plan.description, source=str(plan_path), text=text,
                        as_given=plan.model_dump(mode="json", by_alias=True)),
        seed=options.seed,
        expanded={"tests": [_test_facts(t) for t in expanded.tests], "ops_count": len(ops),
                  "ops_sha256": digest, "bytes_written": expanded.bytes_written * team.size,
                  "space_needed_bytes": expanded.space_needed_bytes(options.keep_files) * team.size},
        target=str(target),
        target_device=os.stat(target).st_dev,
        work_dir=str(work),
        keep_files=options.keep_files,
        machine=machine,
        target_facts={**facts, **info.get("target", {})},
        clock={k: info.get(k) for k in ("clock", "clock_resolution_ns", "timebase_numer", "timebase_denom")},
        started_utc=iso(started),
        started_epoch_s=time.time(),
        status="running",
        pid=os.getpid(),
        clients=crew.record({}),
    )
    write_run_json(run_dir, run)
    _keep_job_files(run_dir, expanded)
    for test in expanded.tests:
        if ORDERS[test.kind].wears_drive:
            console.print(f"[yellow]{test.name} wears the drive:[/] {format_bytes(test.files_bytes)} of real writes "
                          f"to its flash, without a pause")
    return Runner(run_dir, run, expanded, helpers, options.progress, console, crew,
                  options.remove_beside_report).finish_at(run_dir)


JobSource = Callable[[str, str], tuple[bytes, str]]     # (test, bench_job as given) -> the file's bytes, its name


def _bench_checked(expanded: Expanded, job_file: JobSource | None) -> dict[str, JobFile]:
    """Where the plan measures with fio too (bench: fio): fio, and the engine of each of its queue depths on this
    platform (sys.platform names it as the helper does: linux, darwin), refused in one line before anything is
    written; each test's own job file (bench_job), its bytes from job_file(test, path as given), held to the
    allow-list and then checked by fio (none read where job_file is None: a rank that takes them from rank 0)."""
    depths = sorted({o.queue_depth for o in expanded.ops if o.instrument != "helper" and not o.bench_job})
    given = {o.test: o.bench_job for o in expanded.ops if o.bench_job}
    if not depths and not given:
        return {}
    try:
        fio = find_fio()
        for depth in depths:
            fio.ioengine(depth, sys.platform)
        return {test: checked_job_file(fio, *job_file(test, path)) for test, path in given.items()} \
            if job_file is not None else {}
    except FioError as e:
        raise RunError(str(e), 2) from None


def _beside(plan_path: Path) -> JobSource:
    """A job file as a plan gives its path: inside the plan's folder, a regular file of a few lines."""
    return lambda test, given: (read_plan_file(plan_path.parent, given, f"test {test}: bench_job {given}"), given)


def _kept(run_dir: Path) -> JobSource:
    """A job file as the run directory keeps it (fio-jobs/TEST.fio), read as a plan's is: resume holds the copy
    to the same allow-list, since a run directory comes from strangers too."""
    def read(test: str, _given: str) -> tuple[bytes, str]:
        where = f"{run_dir}/{JOB_FILES}/{test}.fio"
        return read_plan_file(run_dir / JOB_FILES, f"{test}.fio", where), where
    return read


def with_job_files(expanded: Expanded, jobs: dict[str, JobFile]) -> Expanded:
    """The plan with each test's own job file (bench_job) as read before the run."""
    return replace(expanded, tests=[replace(t, bench_job=jobs.get(t.name, t.bench_job)) for t in expanded.tests])


def _keep_job_files(run_dir: Path, expanded: Expanded) -> None:
    """The job files a run's fio runs, copied into its run directory as they were read (resume runs these)."""
    for t in expanded.tests:
        if t.bench_job is not None:
            (run_dir / JOB_FILES).mkdir(exist_ok=True)
            (run_dir / JOB_FILES / f"{t.name}.fio").write_text(t.bench_job.text, encoding="utf-8")


def every_rank_or_none(team: Team, work: Callable[[], Any]) -> Any:
    """work() on every rank; where it fails on any, nothing goes on: rank 0 raises one error naming each rank
    that failed and why, the others end quietly with its exit status. One client: work() as it is."""
    if team.size == 1:
        return work()
    try:
        result, failure = work(), None
    except (RunError, PlanError, PathError, SizeError, HelperError, OSError) as e:
        code = e.exit_code if isinstance(e, RunError) else 1 if isinstance(e, (HelperError, OSError)) else 2
        result, failure = None, (code, str(e) if not isinstance(e, OSError) else f"{e.filename or ''}: {e.strerror}")
    failures = [(r, f) for r, f in enumerate(team.everyone(failure)) if f is not None]
    if failures:
        code = max(c for _, (c, _) in failures)
        if team.rank != 0:
            raise SystemExit(code)
        if [r for r, _ in failures] == [0]:
            raise RunError(failures[0][1][1], code)      # rank 0's own check (the plan, the run directory)
        ranks_of: dict[str, list[int]] = {}
        for r, (_, text) in failures:
            ranks_of.setdefault(text, []).append(r)
        said = "; ".join(f"rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}: {text}"
                         for text, rs in ranks_of.items())
        raise RunError(said, code)
    return result


def join_crew(team: Team, work: WorkDir, existing: bool = False) -> Crew:
    """Many clients: the test folder rank 0 created must be seen by every rank (one store), then each rank's
    clock is placed on rank 0's and every rank learns whose writes its reads meet."""
    token = f"{os.getpid()}-{time.time_ns()}"
    if team.rank == 0:
        try:
            work.mark(token) if existing else work.create(token=token)
        except OSError as e:
            team.share(None)
            raise RunError(f"cannot create the test folder {work.path}: {e.strerror}", 2) from None
    token = team.share(token if team.rank == 0 else None)
    if token is None:
        raise SystemExit(2)
    sees = team.everyone(work.shows(token))
    hosts = team.everyone(team.host)
    blind = [r for r, seen in enumerate(sees) if not seen]
    if blind:
        if team.rank != 0:
            raise SystemExit(2)
        work.remove()
        names = ", ".join(f"{r} ({hosts[r]})" for r in blind)
        raise RunError(f"rank{'s' if len(blind) > 1 else ''} {names} cannot see the test folder {work.path} that rank 0 "
                       f"created: the clients must share one store; give every rank the same shared folder with "
                       f"--target", 2)
    shift = read_shift(hosts)
    clocks = team.clocks(_raw_clock_or_fail, sysinfo.boot_id())
    base = team.share(raw_clock_ns() if team.rank == 0 else None)
    mine = team.share(clocks)[team.rank]
    return Crew(team, Place(team.rank, team.size, shift), mine.offset_ns, int(base or 0),
                hosts=tuple(hosts), clocks=tuple(clocks or ()))


def _raw_clock_or_fail() -> int:
    ns = raw_clock_ns()
    if ns is None:
        raise RunError("many clients need the helper's raw clock read from Python, which this platform does not "
                       "give; run one client per machine", 2)
    return ns


def _follow(expanded: Expanded, work: Path, run_name: str, crew: Crew, helpers: HelperFactory,
            console: Console) -> Finished:
    """A rank other than 0: the same operations in step with rank 0, its rows sent to rank 0; no run
    directory of its own."""
    run = RunRecord(work_dir=str(work), started_epoch_s=time.time(), status="running")
    status = Runner(Path(), run, expanded, helpers, False, console, crew).execute()
    return Finished(Path(), status)


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
    return _run_series(series, loaded, options, console, helper)


def _run_series(series: Path, loaded: LoadedPlan, options: RunOptions, console: Console,
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
    return _run_series(series, LoadedPlan.read(source), options, console, helper)


def resume_run(run_dir: Path, options: RunOptions, console: Console, helper: HelperFactory | None = None,
               team: Team | None = None) -> Finished:
    """Carry on with a run that was interrupted or stopped for a reboot. A run of many clients resumes under
    the same number of ranks: rank 0 reads the run directory and tells the others what to do."""
    team = team or Solo()
    if team.size > 1:
        return _resume_team(run_dir, options, console, helper, team)
    run, expanded = _resumable(run_dir, clients=1)
    run = replace(run, rebooted=run.status == "waiting-for-reboot" or run.rebooted, status="running", pid=os.getpid(),
                  machine={**run.machine, "boot_id": sysinfo.boot_id()},
                  resumed_utc=(*run.resumed_utc, iso(utc_now())))
    write_run_json(run_dir, run)
    return Runner(run_dir, run, expanded, helper or CompiledHelper(_helper_path()), options.progress,
                  console, None, options.remove_beside_report).finish_at(run_dir)


def _resume_team(run_dir: Path, options: RunOptions, console: Console, helper: HelperFactory | None,
                 team: Team) -> Finished:
    leads = team.rank == 0
    found = every_rank_or_none(team, lambda: _resumable(run_dir, team.size) if leads else None)
    shared = team.share(None if not leads else (found[0].plan.source, found[0].plan.text, found[0].seed,
                                                 found[0].expanded, found[0].work_dir, run_dir.name))
    source, text, seed, facts, work_dir, name = shared
    if leads:
        run, expanded = found
    else:
        plan, _ = load_plan(Path(source), text=text)
        free = next((t.get("free_bytes") for t in facts.get("tests", []) if t.get("free_bytes") is not None), None)
        expanded = expand(plan, seed, free)
    # the job files rank 0 read from the run directory (bench_job), for every rank to run
    expanded = with_job_files(expanded, team.share(
        {t.name: t.bench_job for t in expanded.tests if t.bench_job is not None} if leads else None))
    helpers = helper or CompiledHelper(_helper_path())
    crew = join_crew(team, WorkDir(Path(work_dir), name), existing=True)
    if not leads:
        return _follow(expanded, Path(work_dir), name, crew, helpers, console)
    run = replace(run, status="running", pid=os.getpid(), machine={**run.machine, "boot_id": sysinfo.boot_id()},
                  resumed_utc=(*run.resumed_utc, iso(utc_now())), clients=crew.record(run.clients))
    write_run_json(run_dir, run)
    return Runner(run_dir, run, expanded, helpers, options.progress, console, crew,
                  options.remove_beside_report).finish_at(run_dir)


def _resumable(run_dir: Path, clients: int) -> tuple[RunRecord, Expanded]:
    """A run directory that can go on here, its record and its operations; else one line saying why not."""
    run = read_run_json(run_dir)
    status = run.status
    if status == "complete":
        raise RunError(f"{run_dir} is already complete; `stibium report {run_dir}` shows it", 2)
    if still_running(run):
        raise RunError(f"{run_dir} is still running (process {run.pid}); wait for it or stop it first", 2)
    if status == "waiting-for-reboot" and run.boot_id == sysinfo.boot_id():
        raise RunError(f"{run_dir} waits for a reboot and this machine has not restarted since; restart it, then run "
                       f"`stibium resume {run_dir}`", 2)
    missing = [name for name, value in (("plan.source", run.plan.source), ("plan.text", run.plan.text),
                                        ("work_dir", run.work_dir), ("started_epoch_s", run.started_epoch_s))
               if value is None]
    try:
        if missing:
            raise KeyError(missing[0])
        plan, text = load_plan(Path(run.plan.source), text=run.plan.text)
        # a sustained test's fraction_of_free is taken of the free space when the run started, not now
        free = next((t.get("free_bytes") for t in run.expanded.get("tests", []) if t.get("free_bytes") is not None),
                    None)
        expanded = expand(plan, run.seed, free)
        work = Path(run.work_dir)
        float(run.started_epoch_s)
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
    expanded = with_job_files(expanded, _bench_checked(expanded, _kept(run_dir)))
    if not work.is_dir():
        try:
            WorkDir(work, run_dir.name).create()
        except OSError as e:
            raise RunError(f"cannot recreate the test folder {work}: {e.strerror}", 2) from None
    return run, expanded


def _helper_path() -> Path:
    try:
        return find_helper()
    except HelperError as e:
        raise RunError(str(e), 2) from None


def _test_facts(test: ExpandedTest) -> dict[str, Any]:
    return {"name": test.name, "kind": test.kind, "between": test.between, "layout_file": test.layout_file,
            "layout_bytes": test.layout_bytes, "files_bytes": test.files_bytes, "ops": len(test.ops),
            **({"free_bytes": test.free_bytes} if test.free_bytes is not None else {})}


# ------------------------------------------------------------------ the runner

class OpFailed(Exception):
    pass


class Stopped(Exception):
    """Another rank stopped the run: its status (interrupted or failed) and why."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


# the error of a row whose step not every rank finished (the run was stopped mid-step)
CUT_SHORT = "cut short: the run stopped before every client finished this step; resume measures it again"


@dataclass(frozen=True)
class Crew:
    """This process's part in a run: its team (Solo: one client), its place (which files it touches), and its
    clock on rank 0's: rank 0's raw clock = ours + clock_offset_ns; base_ns is rank 0's raw clock when the
    run began, so that a row's run_start_s is seconds since then on one clock for every rank."""

    team: Team = field(default_factory=Solo)
    place: Place = Place()
    clock_offset_ns: int = 0
    base_ns: int = 0
    hosts: tuple[str, ...] = ()
    clocks: tuple[Any, ...] = ()             # team.ClientClock of every rank (rank 0's copy)

    def record(self, before: dict[str, Any]) -> dict[str, Any]:
        """run.json's clients: ranks, hosts, the read shift, and this launch's clocks after the earlier ones'
        (a resumed run is a new launch, with offsets of its own). Empty with one client."""
        if not self.many:
            return {}
        launch = {"started_utc": iso(utc_now()), "clocks": [c.to_json() for c in self.clocks]}
        return {"ranks": self.team.size, "hosts": list(self.hosts), "read_shift": self.place.shift,
                "launches": [*before.get("launches", []), launch]}

    @property
    def many(self) -> bool:
        return self.team.size > 1

    @property
    def leads(self) -> bool:
        return self.team.rank == 0


class Runner:
    """The run order and the resume state: which operations are done, what comes next, the status."""

    def __init__(self, run_dir: Path, run: RunRecord, expanded: Expanded, helpers: HelperFactory,
                 progress: bool, console: Console, crew: "Crew | None" = None, remove_beside_report: bool = False):
        self.crew = crew or Crew()
        self.remove_beside_report = remove_beside_report
        self.removal: Removal | None = None
        self.place = self.crew.place
        self.tests = {t.name: t for t in expanded.tests}
        self.outbox: list[Measurement] = []      # many clients: this step's rows, sent at the next step
        self.run_dir = run_dir
        self.run = run
        self.expanded = expanded
        self.helpers = helpers
        self.console = console
        self.show_progress = progress
        self.work = WorkDir(Path(str(run.work_dir)), run_dir.name)
        self.t0 = float(run.started_epoch_s or 0.0)
        self.done: set[int] = set()
        self.helper: HelperSession | None = None
        self.log: MeasurementLog | None = None
        self._advance: Callable[[Op, int, float | None], None] = lambda op, nbytes, seconds: None
        self._skip: Callable[[list[Op]], None] = lambda ops: None      # rounds not needed: out of the progress
        self.temperature = _Temperature(run.target_facts.get("device"))
        self.device_block_bytes = device_block_of(run.target_facts)   # macOS: what xnu's read rule uses
        self.temperature_said = False
        self.fio: Fio | None = None             # found when the first measurement by fio comes
        # rank 0: the rows of each test by rounds so far, which judge whether its rounds go on
        self.rounds: dict[str, list[Measurement]] = {t.name: [] for t in expanded.tests
                                                     if any(o.steady_window for o in t.ops)}

    def execute(self) -> str:
        leads = self.crew.leads
        done: set[int] | None = None
        if leads:
            rows, _ = read_measurements(self.run_dir)
            done = completed_seqs(rows)
            for name in self.rounds:
                self.rounds[name] = list(rows.take(rows.test == name))
        self.done = set(self.crew.team.share(done))       # one set for every rank: they move in step
        pending = [o for o in self.expanded.ops if o.seq not in self.done]
        self.log = MeasurementLog(self.run_dir) if leads else None
        previous = _catch_ending_signals()
        status = "failed"
        awake = keep_awake(sys.platform, os.getpid())
        try:
            with self.helpers.session() as helper, \
                    _ProgressBar(pending, self.console, self.show_progress and leads) as bar:
                self.helper = helper
                self._advance, self._skip = bar.advance, bar.skip
                if leads:
                    self._measure_memory(pending)
                status = self._run_tests()
                self._step()                               # the last rows reach rank 0
        except (KeyboardInterrupt, Interrupted) as e:
            self._kill_helper()
            name = e.signal_name if isinstance(e, Interrupted) else "SIGINT"
            said = name
            if self.crew.many:
                said = f"{name} at rank {self.crew.team.rank}"
                silent = self.crew.team.silent() if isinstance(e, Interrupted) else []
                if silent:
                    said += (f" (the launcher ends every rank when one ends; rank{'s' if len(silent) > 1 else ''} "
                             f"{', '.join(map(str, silent))} had not reached the step in progress)")
            # after SIGTERM (the launcher ending the job) the other ranks may be gone: no last step with them
            self._stop("interrupted", said, together=not isinstance(e, Interrupted))
            self._quiet_unless_leading(130)
            try:        # after SIGHUP the terminal may be gone (a write to it fails): the run is marked already
                self.console.print(f"[yellow]Interrupted ({name}).[/] Every completed measurement is kept in "
                                   f"{self.run_dir / 'measurements.csv'}.\nTo finish the run: stibium resume "
                                   f"{self.run_dir}")
            except OSError:
                pass
            if self.crew.many and isinstance(e, Interrupted):
                self.crew.team.abort(130)      # the other ranks may wait for a step that will not come
            raise RunError(f"run interrupted; finish it with `stibium resume {self.run_dir}`", 130) from None
        except Stopped as e:                   # another rank stopped the run; rank 0 has its reason
            self._kill_helper()
            self._finish(e.status, e.reason)
            self._quiet_unless_leading(130 if e.status == "interrupted" else 1)
            raise RunError(f"{e.reason}. The measurements so far are kept in {self.run_dir}; `stibium resume "
                           f"{self.run_dir}` finishes the run", 130 if e.status == "interrupted" else 1) from None
        except (OpFailed, HelperError, RunError, MeasurementError) as e:
            self._kill_helper()
            self._stop("failed", f"rank {self.crew.team.rank}: {e}" if self.crew.many else str(e), together=True)
            self._quiet_unless_leading(1)
            raise RunError(f"{e}. The measurements so far are kept in {self.run_dir}; `stibium report "
                           f"{self.run_dir}` builds a report from them", 1) from None
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            if self.log:
                self.log.close()
            if awake is not None:
                awake.terminate()
                try:
                    awake.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    awake.kill()
        self._finish(status)
        if status == "waiting-for-reboot":
            self.console.print(f"[bold]The writes are done. Restart the machine, then run:[/] stibium resume {self.run_dir}")
        return status

    def _quiet_unless_leading(self, code: int) -> None:
        """A rank other than 0 ends without a word: rank 0 says what happened to the run, for every rank."""
        if not self.crew.leads:
            raise SystemExit(code)

    def _kill_helper(self) -> None:
        if self.helper:
            self.helper.kill()

    def _stop(self, status: str, reason: str, together: bool) -> None:
        """End the run on this rank: with many clients, a last step tells every rank to stop and brings their
        rows to rank 0 (not after SIGTERM, whose sender may have ended the others); then the run's status."""
        if self.crew.many:
            if together:
                try:
                    verdict = self._step((status, reason))
                    if verdict is not None:
                        status, reason = verdict
                except (KeyboardInterrupt, Interrupted):
                    pass
            elif self.crew.leads:
                self._receive([self.outbox])       # rank 0's own rows of the step, marked as cut short
                self.outbox = []
        self._finish(status, reason)

    def finish_at(self, run_dir: Path) -> Finished:
        """The run executed: where it is, how it ended, and its files' removal where that goes on."""
        status = self.execute()
        return Finished(run_dir, status, self.removal)

    def _finish(self, status: str, stopped_by: str | None = None) -> None:
        """Rank 0 (the only one with one client): the test files of every rank removed (after a complete run,
        in the background where the caller builds a report beside it), the status written."""
        if not self.crew.leads:
            return
        self.work.unlink(memory.PROBE_FILE)    # the memory probe's file is not the user's to keep
        later = status == "complete" and self.remove_beside_report
        if status != "waiting-for-reboot" and not self.run.keep_files and not later:
            self._remove_test_files()
        self.run = replace(self.run, status=status, ended_epoch_s=time.time(),
                           ended_utc=iso(utc_now()) if status != "running" else None,
                           stopped_by=stopped_by if status in ("interrupted", "failed") else None)
        write_run_json(self.run_dir, self.run)
        if later and not self.run.keep_files:
            self.removal = Removal(self._remove_test_files)

    def _remove_test_files(self) -> None:
        for test in self.expanded.tests:
            self.work.remove_files(self.place.files(test))
        self.work.remove()

    # -- many clients
    def _step(self, stopping: tuple[str, str] | None = None) -> tuple[str, str] | None:
        """With many clients, a barrier: this rank's rows since the last step go to rank 0, and every rank
        learns whether all go on; raises Stopped where another rank stopped (returns the verdict to a rank
        that is stopping itself). One client: nothing."""
        if not self.crew.many:
            return None
        return self._step_with(stopping, None)[0]

    def _step_with(self, stopping: tuple[str, str] | None, value: Any) -> tuple[tuple[str, str] | None, list[Any]]:
        """_step, carrying this rank's value to every rank (every rank's, in rank order). A SIGINT during the
        step is raised at its end (team.py), so the stopping step that follows is whole on every rank."""
        rows, self.outbox = self.outbox, []
        verdict, values = self.crew.team.step(rows, stopping, self._receive, value)
        if verdict is not None and stopping is None:
            raise Stopped(*verdict)
        return verdict, values

    def _furthest(self, done: int) -> int:
        """A stonewall with many clients: the most requests any client had done by it (this rank: done), the
        count every client's wear-out reaches."""
        _, values = self._step_with(None, done)
        return max(values)

    def _receive(self, batches: list[list[Measurement]]) -> None:
        """Rank 0: every rank's rows of a step, in rank order, into measurements.csv. A step is whole when
        every rank has its row: rows of a step some rank did not finish (a run stopped mid-step) are kept
        with an error, so that they count nowhere and resume measures the step again."""
        assert self.log is not None
        rows = [m for batch in batches for m in batch]
        finished: dict[int, set[Any]] = {}
        for m in rows:
            if m.chunk is None and not m.error:
                finished.setdefault(m.seq, set()).add(m.rank)
        for m in rows:
            if len(finished.get(m.seq, ())) < self.crew.team.size and not m.error:
                m = m._replace(error=CUT_SHORT)
            self._log(m)

    def _log(self, m: Measurement) -> None:
        """Rank 0: a row into measurements.csv, and beside its test's rounds where it has them."""
        assert self.log is not None
        self.log.append(m)
        if m.test in self.rounds:
            self.rounds[m.test].append(m)

    def _keep(self, m: Measurement, written_by: int | None = None) -> None:
        """A measurement, into measurements.csv (one client) or into the next step's rows (many), with the
        rank, its host, whose writes a read met, and its start and end on rank 0's clock."""
        if not self.crew.many:
            self._log(m)
            return
        crew = self.crew
        on_zero = (lambda ns: None if ns is None else (ns + crew.clock_offset_ns - crew.base_ns) / 1e9)
        self.outbox.append(m._replace(rank=crew.team.rank, host=crew.team.host, written_by=written_by,
                                      run_start_s=on_zero(m.start_ns), run_end_s=on_zero(m.end_ns)))

    def _measure_memory(self, pending: list[Op]) -> None:
        """What memory does for each read shape still to measure (memory.py), once a run: the yardstick of a
        cache below the file system. Kept in run.json; a resumed run measures only shapes it lacks."""
        shapes = {memory.shape_of(o.bytes, o.granularity_bytes, o.access, o.queue_depth, o.threads)
                  for o in pending if o.op == "read" and o.kind != "tree" and not o.bench_job} - set(self.run.memory_rates)
        if not shapes:
            return
        try:
            found = memory.probe(self._helper_ok, self.work.path / memory.PROBE_FILE, shapes, lambda size: (
                memory.probe_sync(sys.platform, size, memory.linux_background_bytes())))
        finally:
            self.work.unlink(memory.PROBE_FILE)     # at once: unsynced, it is never written back
        self.run = replace(self.run, memory_reads=(*self.run.memory_reads, *found))
        write_run_json(self.run_dir, self.run)

    def _run_tests(self) -> str:
        # Removing a test's files (a TRIM on file systems mounted with discard) is disk work that would
        # disturb the next test: it waits for the end of the run when the free space allows.
        needed = self.expanded.space_needed_bytes(keep_files=True) * self.crew.team.size
        remove_at_end = self.crew.team.share(shutil.disk_usage(self.work.path).free >= needed)
        self.run = replace(self.run, cleanup="end of run" if remove_at_end else "after each test")
        for test in self.expanded.tests:
            if all(o.seq in self.done for o in test.ops):
                continue
            order = ORDERS[test.kind]
            if order.run(self, test) == "waiting-for-reboot":
                return "waiting-for-reboot"
            if not self.run.keep_files and (not remove_at_end or not order.files_wait_for_end):
                self._step()                  # every rank is done with the files before rank 0 removes them
                if self.crew.leads:
                    self.work.remove_files(self.place.files(test))
        return "complete"

    # -- tests
    def _files_test(self, test: ExpandedTest) -> str:
        writes = [o for o in test.ops if o.op == "write"]
        reads = [o for o in test.ops if o.op == "read"]
        for op in writes:
            if op.seq not in self.done:
                self._measure(op)
        pending = [o for o in reads if o.seq not in self.done]
        if not pending:
            return "complete"
        if test.between == "reboot" and not self.run.rebooted:
            return "waiting-for-reboot"
        for op in pending:       # files lost to an interruption are laid out again, unmeasured
            self._ensure_file(op, test)
        self._step()
        if test.between == "evict":
            for op in pending:
                self._evict(op, test)
        elif test.between == "drop-caches":
            drop_caches()
        for op in pending:
            self._measure(op)
        return "complete"

    def _pattern_test(self, test: ExpandedTest) -> str:
        """The laid-out file (and, asked for, its preconditioning), then the trials; a test by rounds stops
        at the first round that ends a steady window (asked before each round, so a resumed run stops where
        it would have)."""
        if test.precondition_bytes and not any(o.seq in self.done for o in test.ops):
            self._precondition(test)
        this_round = None
        for op in test.ops:
            if op.seq in self.done:
                continue
            if op.steady_window and op.trial != this_round:
                this_round = op.trial
                if op.trial >= op.steady_window and self._steady(test):
                    self._skip([o for o in test.ops if o.trial >= op.trial and o.seq not in self.done])
                    break
            if op.existing:
                self._ensure_file(op, test)
            if op.reads:
                self._step()
                self._evict(op, test)
            self._measure(op)
            if not op.existing:
                self.work.unlink(self.place.touch(op, test).file)
        return "complete"

    def _steady(self, test: ExpandedTest) -> bool:
        """Whether the rounds so far end a window in which every point is steady (analysis/steady.py), judged
        on rank 0 over every rank's rows (their aggregate), the same verdict on every rank."""
        self._step()                     # many clients: every rank's rows reach rank 0
        found = None
        if self.crew.leads:
            rows = Table.from_rows(self.rounds[test.name]).valid()
            if self.crew.many:
                from .analysis.clients import aggregate
                rows = aggregate(rows, self.crew.team.size)
            judged = steadiness(rows)
            found = judged is not None and judged.steady
            if found:
                first, last = judged.window_rounds
                self.console.print(f"{test.name}: steady over rounds {first}-{last}; the rounds stop there")
        return bool(self.crew.team.share(found))

    def _precondition(self, test: ExpandedTest) -> None:
        """The span written twice sequentially (untimed, not a measurement) before the test's first measurement:
        SNIA PTS's workload-independent preconditioning, so that the measurements meet written flash."""
        first = test.ops[0]
        self._ensure_file(first, test)
        self._step()                     # many clients: a shared file is laid out before anyone writes it
        touch = self.place.touch(replace(first, op="write"), test)
        started = time.monotonic()
        for _ in range(2):
            self._helper_ok(precondition_args(self.work.file(touch.file), first.size_bytes, touch.offset_bytes,
                                              first.engine, first.fill, first.data_seed))
        if self.crew.leads:
            self.console.print(f"{test.name}: preconditioned: the span ({format_bytes(first.size_bytes)}) written "
                               f"twice sequentially in 128 KiB requests, {time.monotonic() - started:.1f} s")

    def _sustained_test(self, test: ExpandedTest) -> str:
        """The files one after another, each streamed in chunks with the drive's temperature beside each
        chunk; then, with read_back, each file evicted and read back the same way."""
        if not self.temperature_said:       # said once a run
            self.temperature_said = True
            if self.temperature.read() is None:
                self.console.print("The drive's temperature cannot be read on this machine (the system reports no "
                                   "sensor for this disk, and smartctl is not installed or cannot ask it); the "
                                   "temperature column stays empty.")
        for op in test.ops:
            if op.seq in self.done:
                continue
            if op.op == "read":
                self._ensure_file(op, test)
                self._step()
                self._evict(op, test)
            self._measure(op)
        return "complete"

    def _tree_test(self, test: ExpandedTest) -> str:
        """Each tree (a trial at a thread count) phase by phase, each phase one helper call over the tree's list;
        with between: drop-caches the kernel's caches emptied before each phase after create. A tree whose
        earlier phases an interruption left behind is made again, untimed, to the state its next phase meets;
        every tree is removed when its phases are done."""
        shape = test.tree
        assert shape is not None
        phases = [o.op for o in test.ops if o.file == test.ops[0].file]
        with tempfile.TemporaryDirectory(prefix="stibium-tree-") as folder:
            lists: dict[str, Path] = {}

            def listed(which: str) -> Path:       # plain (the names made), rename (old, new), renamed, copy
                if which not in lists:
                    lists[which] = Path(folder) / f"{which}.tsv"
                    lists[which].write_text(shape.list_text(renamed=which == "renamed", rename=which == "rename",
                                                            copy=which == "copy"))
                return lists[which]

            def list_for(phase: str) -> Path:
                return listed("rename" if phase == "rename" else "copy" if phase == "copy" else
                              "renamed" if phase == "delete" and "rename" in phases else "plain")

            trees: dict[str, list[Op]] = {}
            for op in test.ops:
                trees.setdefault(op.file, []).append(op)
            for ops in trees.values():
                pending = [o for o in ops if o.seq not in self.done]
                if not pending:
                    continue
                tree = self.place.touch(pending[0], test).file
                root = self.work.path / tree
                if pending[0].op == "create":
                    self.work.remove_files(self._tree_files(tree, shape))     # what an interrupted create left
                    root.mkdir(parents=True, exist_ok=True)                   # the folders below it are the phase's
                else:
                    self._restore_tree(pending[0], tree, shape, phases, listed)
                for op in pending:
                    if op.op == "copy":                # what an interrupted copy left
                        self.work.remove_files({f"{tree}/{p}" for p in shape.copies()})
                    dropped = op.op != "create" and test.between == "drop-caches"
                    if dropped:
                        self._step()
                        drop_caches()
                    self._measure_phase(op, tree, root, list_for(op.op), dropped)
                if not self.run.keep_files:
                    self.work.remove_files(self._tree_files(tree, shape))  # the files (delete left the folders)
        return "complete"

    @staticmethod
    def _tree_files(tree: str, shape: TreeShape) -> set[str]:
        """Every name a tree's files can have, made, renamed or copied, inside the run's test folder."""
        return {f"{tree}/{p}" for p in (*shape.paths(), *shape.paths(renamed=True), *shape.copies())}

    def _restore_tree(self, op: Op, tree: str, shape: TreeShape, phases: list[str],
                      listed: Callable[[str], Path]) -> None:
        """The tree as the phase `op` meets it (its names before a rename, after it for the delete that follows
        one), made again untimed where an interruption lost it."""
        renamed = op.op == "delete" and "rename" in phases
        root = self.work.path / tree
        if all((root / p).is_file() for p in shape.paths(renamed)):
            return
        self.work.remove_files(self._tree_files(tree, shape))
        root.mkdir(parents=True, exist_ok=True)
        self._helper_ok(tree_args(op, root, listed("plain"), phase="create"))
        if renamed:
            self._helper_ok(tree_args(op, root, listed("rename"), phase="rename"))

    def _measure_phase(self, op: Op, tree: str, root: Path, list_path: Path, dropped: bool) -> None:
        """One phase of a tree: one helper call, one row."""
        assert self.helper is not None
        self._step()                     # many clients: every rank begins the phase together
        op = replace(op, file=tree)
        started_s = time.time() - self.t0
        try:
            result = self.helper.call(tree_args(op, root, list_path), timeout_s=op_timeout_s(op))
        except HelperTimeout as e:
            self._keep(failed(op, str(e), started_s))
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} of the tree {op.file}) hung: {e}") from None
        m = from_tree_answer(op, result.ok, result.data, started_s, dropped)
        self._keep(m)
        if not result.ok:
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} of the tree {op.file}) failed: {result.error}")
        self.done.add(op.seq)
        self._advance(op, op.bytes, m.seconds)

    # -- helper calls
    def _evict(self, op: Op, test: ExpandedTest) -> None:
        """The file the operation will touch, out of this machine's page cache."""
        self._helper_ok(["evict", "--path", str(self.work.path / self.place.touch(op, test).file)])

    def _ensure_file(self, op: Op, test: ExpandedTest) -> None:
        """Lay out the file this rank lays out for the operation (untimed, not a measurement) unless it is
        there whole; with many clients, a shared file is rank 0's to lay out."""
        lays_out = self.place.lays_out(op, test)
        if lays_out is None:
            return
        name, size_bytes = lays_out
        if self.work.holds_whole(name, size_bytes):
            return
        self.work.unlink(name)
        path = self.work.file(name)
        self._helper_ok(layout_args(path, size_bytes, op.engine, op.fill, op.data_seed))
        if op.engine != "direct":
            self._helper_ok(["evict", "--path", str(path)])

    def _helper_ok(self, args: list[str]) -> dict[str, Any]:
        assert self.helper is not None
        result = self.helper.call(args, timeout_s=600)
        if not result.ok:
            raise OpFailed(f"{args[0]} {Path(args[2]).name if len(args) > 2 else ''} failed: {result.error}")
        return result.data

    def _measure(self, op: Op) -> None:
        assert self.helper is not None
        self._step()                     # many clients: every rank begins the operation together
        test = self.tests[op.test]
        touch = self.place.touch(op, test)
        op = replace(op, file=touch.file, offset_bytes=touch.offset_bytes)
        if op.op == "write" and not op.existing:
            self.work.unlink(op.file)   # a new file's path can only hold one left half-written by an interrupted run
        path = self.work.file(op.file)
        started_s = time.time() - self.t0
        # the run's clock minus the helper's, read once for the file so that its chunks keep their order
        raw_ns = raw_clock_ns() if op.chunk_bytes else None
        offset_s = None if raw_ns is None else time.time() - self.t0 - raw_ns / 1e9

        if op.instrument != "helper":
            rows = self._bench(op, path, started_s)
            for m in rows:
                self._keep(m, touch.written_by)
            failure = next((m.error for m in rows if m.error), None)
            if failure:
                what = f"the job file {op.bench_job}" if op.bench_job else f"{op.op} {op.file}"
                raise OpFailed(f"operation {op.seq} ({op.test}: {op.instrument} {what}) failed: {failure}")
            self.done.add(op.seq)
            self._advance(op, sum(m.bytes for m in rows), max((m.seconds or 0.0 for m in rows), default=0.0))
            return

        def chunk_row(row: dict[str, Any]) -> None:     # a sustained measurement's chunks, as they come
            m = from_chunk(op, row, started_s, self.temperature.read(), offset_s)
            self._keep(m, touch.written_by)
            self._advance(op, m.bytes, m.seconds)

        # many clients with a stonewall: every client's count by it is exchanged (a step), and every client
        # goes on to the furthest one's (wear-out); a client whose measurement fails before its stonewall stops
        # the run with a step of its own, which the others' exchange meets (a step like any other)
        many = self.crew.many
        try:
            result = self.helper.call(measure_args(op, path, self.device_block_bytes, wearout=many),
                                      timeout_s=op_timeout_s(op), on_row=chunk_row if op.chunk_bytes else None,
                                      on_stonewall=self._furthest if many else None)
        except HelperTimeout as e:
            self._keep(failed(op, str(e), started_s), touch.written_by)
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) hung: {e}") from None
        m = from_answer(op, result.ok, result.data, started_s)
        self._keep(m, touch.written_by)
        if not result.ok:
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) failed: {result.error}")
        self.done.add(op.seq)
        if not op.chunk_bytes:
            self._advance(op, op.bytes, m.seconds)


    def _bench(self, op: Op, path: Path, started_s: float) -> list[Measurement]:
        """The measurement of `op` by fio (the bench beside the road test), run in the test's folder: the equivalent
        job of `path`, or the test's own job file (its relative file names there, among them the laid-out file the
        road test reads, data.bin). The residency of the file it reads (a job file: of each file its jobs name) is
        read just before, as for the helper's rows; the job and fio's output are kept in fio.jsonl."""
        if self.fio is None:
            self.fio = find_fio()
        if op.bench_job:
            job = self.tests[op.test].bench_job
            assert job is not None          # read before the run (_bench_checked)
            text, named = job.text, {name: path.parent / name for name in job.files}
        else:
            text = job_text(op, path, self.fio.ioengine(op.queue_depth, str(self.run.helper.get("platform"))))
            named = {str(path): path} if op.reads else {}
        resident = {name: self._helper_ok(["residency", "--path", str(p)]).get("resident")
                    for name, p in named.items() if p.is_file()}
        output, failure = run_job(self.fio, text, op_timeout_s(op), cwd=path.parent)
        if self.crew.leads:
            keep_output(self.run_dir, op.seq, text, output)
        if op.bench_job:
            return rows_of_jobs(op, output, failure, self.fio, started_s, resident)
        return [row_of(op, output, failure, self.fio, started_s, resident.get(str(path)))]


@dataclass(frozen=True)
class Order:
    """How the runner carries out one kind of test: its operations in order (the test's status back:
    complete, or waiting-for-reboot), whether its files may wait for the end of the run to be removed, and
    whether it wears the drive enough to say so before the run."""

    run: Callable[[Runner, ExpandedTest], str]
    files_wait_for_end: bool
    wears_drive: bool


ORDERS = by_kind("runner: the order of a test's operations", {
    "files": Order(Runner._files_test, files_wait_for_end=True, wears_drive=False),
    "pattern": Order(Runner._pattern_test, files_wait_for_end=True, wears_drive=False),
    # a sustained test's files can fill most of the disk: they never wait for the end of the run
    "sustained": Order(Runner._sustained_test, files_wait_for_end=False, wears_drive=True),
    # each tree is removed when its phases are done (its files are many inodes, whatever their bytes)
    "tree": Order(Runner._tree_test, files_wait_for_end=False, wears_drive=False),
})


def _bytes_of(ops: list[Op]) -> int:
    """What operations read and write, as the progress bar counts them (by time: on the assumed device)."""
    return round(sum(sum(estimated_bytes(o)) for o in ops))


class _ProgressBar:
    """A rich progress bar on one line of the terminal: the current test and op (a long name cut in the middle),
    bytes done of the measurements, ETA, the last measurement's rate. A run that ends whole ends the bar at its
    total: measurements by time and rounds that stop at steady state move other bytes than foreseen."""

    LABEL_CHARS = 24

    def __init__(self, pending: list[Op], console: Console, enabled: bool):
        self.total = _bytes_of(pending)
        bar_width = max(10, min(40, console.width - 62))        # the other columns take about 60 at most
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(bar_width=bar_width),
                                 DownloadColumn(binary_units=False), TimeRemainingColumn(),
                                 TextColumn("{task.fields[last]}"), console=console,
                                 disable=not (enabled and console.is_terminal), transient=False)
        self.task = self.progress.add_task("starting", total=max(self.total, 1), last="")

    def __enter__(self) -> "_ProgressBar":
        self.progress.__enter__()
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        if exc_type is None:
            done = self.progress.tasks[0].completed
            self.progress.update(self.task, total=max(done, 1), description="done")
        self.progress.__exit__(exc_type, *exc)

    def skip(self, ops: list[Op]) -> None:
        """Operations that will not run (rounds after a steady window): out of the total."""
        self.total -= _bytes_of(ops)
        self.progress.update(self.task, total=max(self.total, 1))

    def advance(self, op: Op, nbytes: int, seconds: float | None) -> None:
        what = op_label(op.op, op.read_fraction)
        if op.kind == "tree":          # a tree's phase moves files (and, create and read, their bytes)
            last = format_per_s(op.files / seconds, rate_unit(op.op)) if seconds and op.files else ""
        else:
            last = format_rate(nbytes / seconds) if seconds and nbytes else ""
        self.progress.update(self.task, advance=nbytes, description=middle_cut(f"{op.test} {what}", self.LABEL_CHARS),
                             last=last)


class _Temperature:
    """The drive's temperature, read at most once every READ_EVERY_S (smartctl takes tens of milliseconds and
    asks the drive; a chunk can take less)."""

    READ_EVERY_S = 1.0

    def __init__(self, device: str | None):
        self.device = device
        self.value: float | None = None
        self.read_at = -math.inf

    def read(self) -> float | None:
        if not self.device:
            return None
        now = time.monotonic()
        if now - self.read_at >= self.READ_EVERY_S:
            self.value, _ = sysinfo.device_temperature_c(self.device)
            self.read_at = now
        return self.value


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted(signal.Signals(signum).name)


def _catch_ending_signals() -> dict[int, Any]:
    """Each of ENDING_SIGNALS raises Interrupted from now on (SIGHUP only where it is not ignored); the handlers
    it had, to put back."""
    previous = {}
    for name in ENDING_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is None or (name == "SIGHUP" and signal.getsignal(signum) == signal.SIG_IGN):
            continue
        previous[signum] = signal.signal(signum, _raise_interrupted)
    return previous
