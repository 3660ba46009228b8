"""Runs a plan: checks the target, drives the helper through every operation in
order, keeps every measurement, and leaves nothing of its own behind.

Order per files test: the writes, then `between` (none, evict, drop-caches, or a
stop for a reboot), then the reads. Per pattern test: the file is laid out
(untimed, not a measurement), then the trials; each read trial meets an evicted
file. Test files live in a folder of their own inside the target
(`stibium-<run>`); clean-up removes only the files the plan names there.
`resume` carries on from measurements.csv: completed operations are not repeated.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from . import __version__, memory, sysinfo
from .kinds import by_kind
from .helper import (CompiledHelper, HelperError, HelperFactory, HelperSession, HelperTimeout, device_block_of, find_helper,
                     layout_args, measure_args, op_timeout_s, raw_clock_ns)
from .measurement import MeasurementError, failed, from_answer, from_chunk
from .paths import device_of, volume_change
from .op import Op
from .plan import Expanded, ExpandedTest, Plan, PlanError, expand_at, load_plan
from .plan.expand import expand
from .preflight import RunError, drop_caches, preflight
from .record import PlanRecord, RunRecord, SeriesRecord, ops_digest
from .store import (MeasurementLog, completed_seqs, iso, new_run_dir, read_measurements, read_run_json,
                    read_series_json, utc_now, write_run_json, write_series_json)
from .units import format_bytes, format_rate
from .workdir import WorkDir, work_dir_name


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived during a run."""


@dataclass(frozen=True)
class RunOptions:
    target: Path | None = None
    out_dir: Path = Path("reports")
    seed: int | None = None
    keep_files: bool = False
    allow_nonempty: bool = False
    progress: bool = True
    run_name: str | None = None      # a run of a series: its fixed name inside out_dir (run-1, run-2, ...)


# ------------------------------------------------------------------ starting and resuming

@dataclass(frozen=True)
class Finished:
    """Where a run (or a series) is, and how it ended: complete, interrupted, waiting-for-reboot, failed."""

    path: Path
    status: str


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


def start_run(loaded: LoadedPlan, options: RunOptions, console: Console, helper: HelperFactory | None = None
              ) -> Finished:
    """Check everything, create the run directory and the test folder, and run."""
    plan, text, plan_path = loaded.plan, loaded.text, loaded.source
    expanded = expand_at(plan_path, plan, text, options.seed, options.target)
    target = (options.target or Path(plan.target)).expanduser()
    preflight(expanded, target, expanded.space_needed_bytes(options.keep_files), options.allow_nonempty,
              options.out_dir)
    helpers = helper or CompiledHelper(_helper_path())
    target.mkdir(parents=True, exist_ok=True)
    facts = sysinfo.target_facts(target)
    block = device_block_of(facts)
    info = helpers.once(["info", "--path", str(target)] + (["--device-block", str(block)] if block else []))
    if not info.ok:
        raise RunError(f"target {target}: {info.error}", 2)
    started = utc_now()
    machine = sysinfo.machine_facts()
    if options.run_name:
        run_dir = options.out_dir / options.run_name
        run_dir.mkdir(parents=True)
        work = target.resolve() / work_dir_name(f"{options.out_dir.name}-{options.run_name}", sys.platform)
    else:
        run_dir = new_run_dir(options.out_dir, plan.name, machine["hostname"], started)
        work = target.resolve() / work_dir_name(run_dir.name, sys.platform)
    WorkDir(work, run_dir.name).create()
    ops = expanded.ops_as_dicts()
    run = RunRecord(
        stibium_version=__version__,
        helper_version=info.data.get("helper_version"),
        helper=info.data,
        plan=PlanRecord(name=plan.name, description=plan.description, source=str(plan_path), text=text,
                        as_given=plan.model_dump(mode="json", by_alias=True)),
        seed=options.seed,
        expanded={"tests": [_test_facts(t) for t in expanded.tests], "ops_count": len(ops),
                  "ops_sha256": ops_digest(ops), "bytes_written": expanded.bytes_written,
                  "space_needed_bytes": expanded.space_needed_bytes(options.keep_files)},
        target=str(target),
        target_device=os.stat(target).st_dev,
        work_dir=str(work),
        keep_files=options.keep_files,
        machine=machine,
        target_facts={**facts, **info.data.get("target", {})},
        clock={k: info.data.get(k) for k in ("clock", "clock_resolution_ns", "timebase_numer", "timebase_denom")},
        started_utc=iso(started),
        started_epoch_s=time.time(),
        status="running",
        pid=os.getpid(),
    )
    write_run_json(run_dir, run)
    for test in expanded.tests:
        if ORDERS[test.kind].wears_drive:
            console.print(f"[yellow]{test.name} wears the drive:[/] {format_bytes(test.files_bytes)} of real writes "
                          f"to its flash, without a pause")
    status = Runner(run_dir, run, expanded, helpers, options.progress, console).execute()
    return Finished(run_dir, status)


def start_series(loaded: LoadedPlan, options: RunOptions, runs: int | None, console: Console,
                 helper: HelperFactory | None = None) -> Finished:
    """N complete runs of the plan, one after another, each a run directory of its own (run-1, run-2, ...)
    inside one series folder with series.json; each with fresh test files and the plan's eviction. One run
    is an ordinary run directory, as before."""
    plan, plan_path = loaded.plan, loaded.source
    runs = runs or plan.runs
    if runs == 1:
        return start_run(loaded, options, console, helper)
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
    for i in range(1, meta.runs + 1):
        run_dir = series / f"run-{i}"
        if (run_dir / "run.json").is_file():
            if read_run_json(run_dir).status == "complete":
                continue
            status = resume_run(run_dir, options, console, helper).status
        else:
            console.print(f"[bold]run {i} of {meta.runs}[/]")
            status = start_run(loaded, replace(options, out_dir=series, run_name=f"run-{i}"), console, helper).status
        if status != "complete":
            break
    write_series_json(series, replace(meta, status=status))
    return Finished(series, status)


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


def resume_run(run_dir: Path, options: RunOptions, console: Console, helper: HelperFactory | None = None
               ) -> Finished:
    """Carry on with a run that was interrupted or stopped for a reboot."""
    run = read_run_json(run_dir)
    status = run.status
    if status == "complete":
        raise RunError(f"{run_dir} is already complete; `stibium report {run_dir}` shows it", 2)
    if status == "running" and _alive(run.pid) and run.boot_id == sysinfo.boot_id():
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
    if not work.is_dir():
        try:
            WorkDir(work, run_dir.name).create(parents=True)
        except OSError as e:
            raise RunError(f"cannot recreate the test folder {work}: {e.strerror}", 2) from None
    run = replace(run, rebooted=status == "waiting-for-reboot" or run.rebooted, status="running", pid=os.getpid(),
                  machine={**run.machine, "boot_id": sysinfo.boot_id()},
                  resumed_utc=(*run.resumed_utc, iso(utc_now())))
    write_run_json(run_dir, run)
    status = Runner(run_dir, run, expanded, helper or CompiledHelper(_helper_path()), options.progress,
                    console).execute()
    return Finished(run_dir, status)


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
        return True
    except (OSError, TypeError, ValueError):
        return False


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


class Runner:
    """The run order and the resume state: which operations are done, what comes next, the status."""

    def __init__(self, run_dir: Path, run: RunRecord, expanded: Expanded, helpers: HelperFactory,
                 progress: bool, console: Console):
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
        self.temperature = _Temperature(run.target_facts.get("device"))
        self.device_block_bytes = device_block_of(run.target_facts)   # macOS: what xnu's read rule uses
        self.temperature_said = False

    def execute(self) -> str:
        rows, _ = read_measurements(self.run_dir)
        self.done = completed_seqs(rows)
        pending = [o for o in self.expanded.ops if o.seq not in self.done]
        self.log = MeasurementLog(self.run_dir)
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
        status = "failed"
        awake = keep_awake(sys.platform, os.getpid())
        try:
            with self.helpers.session() as helper, \
                    _ProgressBar(pending, self.console, self.show_progress) as advance:
                self.helper = helper
                self._advance = advance
                self._measure_memory(pending)
                status = self._run_tests()
        except (KeyboardInterrupt, Interrupted):
            status = "interrupted"
            if self.helper:
                self.helper.kill()
            self._finish(status)
            self.console.print(f"[yellow]Interrupted.[/] Every completed measurement is kept in "
                               f"{self.run_dir / 'measurements.csv'}.\nTo finish the run: stibium resume {self.run_dir}")
            raise RunError(f"run interrupted; finish it with `stibium resume {self.run_dir}`", 130) from None
        except (OpFailed, HelperError, RunError, MeasurementError) as e:
            if self.helper:
                self.helper.kill()
            self._finish("failed")
            raise RunError(f"{e}. The measurements so far are kept in {self.run_dir}; `stibium report "
                           f"{self.run_dir}` builds a report from them", 1) from None
        finally:
            signal.signal(signal.SIGTERM, previous)
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

    def _finish(self, status: str) -> None:
        self.work.unlink(memory.PROBE_FILE)    # the memory probe's file is not the user's to keep
        if status != "waiting-for-reboot" and not self.run.keep_files:
            for test in self.expanded.tests:
                self.work.remove_test_files(test)
            self.work.remove()
        self.run = replace(self.run, status=status, ended_epoch_s=time.time(),
                           ended_utc=iso(utc_now()) if status != "running" else None)
        write_run_json(self.run_dir, self.run)

    def _measure_memory(self, pending: list[Op]) -> None:
        """What memory does for each read shape still to measure (memory.py), once a run: the yardstick of a
        cache below the file system. Kept in run.json; a resumed run measures only shapes it lacks."""
        shapes = {memory.shape_of(o.bytes, o.granularity_bytes, o.access, o.queue_depth, o.threads)
                  for o in pending if o.op == "read"} - set(self.run.memory_rates)
        if not shapes:
            return
        found = memory.probe(self._helper_ok, self.work.path / memory.PROBE_FILE, shapes)
        self.run = replace(self.run, memory_reads=(*self.run.memory_reads, *found))
        write_run_json(self.run_dir, self.run)

    def _run_tests(self) -> str:
        # Removing a test's files (a TRIM on file systems mounted with discard) is disk work that would
        # disturb the next test: it waits for the end of the run when the free space allows.
        remove_at_end = shutil.disk_usage(self.work.path).free >= self.expanded.space_needed_bytes(keep_files=True)
        self.run = replace(self.run, cleanup="end of run" if remove_at_end else "after each test")
        for test in self.expanded.tests:
            if all(o.seq in self.done for o in test.ops):
                continue
            order = ORDERS[test.kind]
            if order.run(self, test) == "waiting-for-reboot":
                return "waiting-for-reboot"
            if not self.run.keep_files and (not remove_at_end or not order.files_wait_for_end):
                self.work.remove_test_files(test)
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
            self._ensure_file(op.file, op.bytes, op.engine, op.fill, op.data_seed)
        if test.between == "evict":
            for op in pending:
                self._helper_ok(["evict", "--path", str(self.work.path / op.file)])
        elif test.between == "drop-caches":
            drop_caches()
        for op in pending:
            self._measure(op)
        return "complete"

    def _pattern_test(self, test: ExpandedTest) -> str:
        for op in test.ops:
            if op.seq in self.done:
                continue
            if op.existing:
                self._ensure_file(op.file, op.size_bytes, op.engine, op.fill, op.data_seed)
            if op.op == "read":
                self._helper_ok(["evict", "--path", str(self.work.path / op.file)])
            self._measure(op)
            if not op.existing:
                self.work.unlink(op.file)
        return "complete"

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
                self._ensure_file(op.file, op.bytes, op.engine, op.fill, op.data_seed)
                self._helper_ok(["evict", "--path", str(self.work.path / op.file)])
            self._measure(op)
        return "complete"

    # -- helper calls
    def _ensure_file(self, name: str, size_bytes: int, engine: str, fill: str, data_seed: int) -> None:
        """Lay out a file (untimed, not a measurement) unless it is there whole."""
        if self.work.holds_whole(name, size_bytes):
            return
        self.work.unlink(name)
        path = self.work.file(name)
        self._helper_ok(layout_args(path, size_bytes, engine, fill, data_seed))
        if engine != "direct":
            self._helper_ok(["evict", "--path", str(path)])

    def _helper_ok(self, args: list[str]) -> dict[str, Any]:
        assert self.helper is not None
        result = self.helper.call(args, timeout_s=600)
        if not result.ok:
            raise OpFailed(f"{args[0]} {Path(args[2]).name if len(args) > 2 else ''} failed: {result.error}")
        return result.data

    def _measure(self, op: Op) -> None:
        assert self.helper is not None and self.log is not None
        if op.op == "write" and not op.existing:
            self.work.unlink(op.file)   # a new file's path can only hold one left half-written by an interrupted run
        path = self.work.file(op.file)
        started_s = time.time() - self.t0
        log = self.log
        # the run's clock minus the helper's, read once for the file so that its chunks keep their order
        raw_ns = raw_clock_ns() if op.chunk_bytes else None
        offset_s = None if raw_ns is None else time.time() - self.t0 - raw_ns / 1e9

        def chunk_row(row: dict[str, Any]) -> None:     # a sustained measurement's chunks, as they come
            m = from_chunk(op, row, started_s, self.temperature.read(), offset_s)
            log.append(m)
            self._advance(op, m.bytes, m.seconds)

        try:
            result = self.helper.call(measure_args(op, path, self.device_block_bytes), timeout_s=op_timeout_s(op),
                                      on_row=chunk_row if op.chunk_bytes else None)
        except HelperTimeout as e:
            self.log.append(failed(op, str(e), started_s))
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) hung: {e}") from None
        m = from_answer(op, result.ok, result.data, started_s)
        self.log.append(m)
        if not result.ok:
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) failed: {result.error}")
        self.done.add(op.seq)
        if not op.chunk_bytes:
            self._advance(op, op.bytes, m.seconds)


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
})


class _ProgressBar:
    """A rich progress bar: current test, bytes done of the measurements, ETA, the last rate."""

    def __init__(self, pending: list[Op], console: Console, enabled: bool):
        self.total = sum(o.bytes for o in pending)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(binary_units=False),
                                 TimeRemainingColumn(), TextColumn("{task.fields[last]}"), console=console,
                                 disable=not (enabled and console.is_terminal), transient=False)
        self.task = self.progress.add_task("starting", total=max(self.total, 1), last="")

    def __enter__(self) -> Callable[[Op, int, float | None], None]:
        self.progress.__enter__()
        return self.advance

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)

    def advance(self, op: Op, nbytes: int, seconds: float | None) -> None:
        rate = format_rate(nbytes / seconds) if seconds else ""
        self.progress.update(self.task, advance=nbytes, description=f"{op.test} {op.op}",
                             last=f"last {format_bytes(nbytes)} {op.op} at {rate}")


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
    raise Interrupted()
