"""The driver: runs a run's operations through the helper (or fio) in the order each kind's Order gives
(orders.py), keeps every measurement, moves the crew of many clients in step, and ends the run whatever ends it
(a signal, a failed operation, another rank), its status written and its test files removed.

A run is `drive(...)`: the driver made and executed, how it ended handed back (options.Finished)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from .. import memory, registry
from ..fio.job import Fio, find_fio, job_text, keep_output, row_of, rows_of_jobs, run_job
from ..helper import (HelperError, HelperFactory, HelperSession, HelperTimeout, device_block_of, layout_args,
                      measure_args, op_timeout_s, raw_clock_ns, tree_args)
from ..measurement import Measurement, MeasurementError, failed, from_answer, from_chunk, from_tree_answer
from ..op import Op
from ..plan import Expanded, ExpandedTest
from ..preflight import RunError
from ..record import RunRecord
from ..store import MeasurementLog, completed_seqs, iso, read_measurements, utc_now, write_run_json
from ..team import Silent
from ..workdir import WorkDir
from .awake import keep_awake
from .crew import Crew
from .progress import ProgressBar, Temperature
from .signals import Interrupted, catch_ending_signals, restore
from .together import OpFailedTogether, measure_together
from .options import Finished, Removal


class OpFailed(Exception):
    """An operation the helper (or fio) could not do: the run fails, its rows kept."""


class Stopped(Exception):
    """Another rank stopped the run: its status (interrupted or failed) and why."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


# the error of a row whose step not every rank finished (the run was stopped mid-step)
CUT_SHORT = "cut short: the run stopped before every client finished this step; resume measures it again"


def drive(run_dir: Path, run: RunRecord, expanded: Expanded, helpers: HelperFactory, progress: bool,
          console: Console, crew: Crew | None = None, remove_beside_report: bool = False,
          on_end: Callable[[Path], None] | None = None) -> Finished:
    """The run executed: where it is, how it ended, and its files' removal where that goes on."""
    driver = Driver(run_dir, run, expanded, helpers, progress, console, crew, remove_beside_report, on_end)
    status = driver.execute()
    return Finished(run_dir, status, driver.removal)


class Driver:
    """The run's state as it goes: which operations are done, the helper session, the rows kept, the status."""

    def __init__(self, run_dir: Path, run: RunRecord, expanded: Expanded, helpers: HelperFactory,
                 progress: bool, console: Console, crew: Crew | None = None, remove_beside_report: bool = False,
                 on_end: Callable[[Path], None] | None = None):
        self.on_end = on_end
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
        self.advance: Callable[[Op, int, float | None], None] = lambda op, nbytes, seconds: None
        self.skip: Callable[[list[Op]], None] = lambda ops: None      # rounds not needed: out of the progress
        self.temperature = Temperature(run.target_facts.get("device"))
        self.device_block_bytes = device_block_of(run.target_facts)   # macOS: what xnu's read rule uses
        self.temperature_said = False
        self.fio: Fio | None = None             # found when the first measurement by fio comes
        # rank 0: the rows so far of each test by rounds, which judge whether its rounds go on, and of each
        # stream test that searches, whose rows choose its next count
        self.rounds: dict[str, list[Measurement]] = {t.name: [] for t in expanded.tests
                                                     if any(o.steady_window for o in t.ops) or t.search_most}

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
        previous = catch_ending_signals()
        status = "failed"
        awake = keep_awake(sys.platform, os.getpid())
        try:
            with self.helpers.session() as helper, \
                    ProgressBar(pending, self.console, self.show_progress and leads) as bar:
                self.helper = helper
                self.advance, self.skip = bar.advance, bar.skip
                if leads:
                    self._measure_memory(pending)
                status = self._run_tests()
                self.step()                                # the last rows reach rank 0
        except (KeyboardInterrupt, Interrupted) as e:
            self._interrupted(e)
        except Silent as e:
            self._silent(e)
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
            restore(previous)
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

    def _interrupted(self, e: BaseException) -> None:
        """SIGINT (KeyboardInterrupt), SIGTERM or SIGHUP (Interrupted): the run marked interrupted, the way to
        finish it said, RunError 130 raised."""
        self._kill_helper()
        name = e.signal_name if isinstance(e, Interrupted) else "SIGINT"
        said = name
        if self.crew.many:
            said = f"{name} at rank {self.crew.team.rank}"
            silent = self.crew.team.silent() if isinstance(e, Interrupted) else []
            if silent:
                said += (f" (the launcher ends every rank when one ends; rank{'s' if len(silent) > 1 else ''} "
                         f"{self._named(silent)} had not reached the step in progress)")
        # after SIGTERM (the launcher ending the job) the other ranks may be gone: no last step with them
        self._stop("interrupted", said, together=not isinstance(e, Interrupted))
        self._quiet_unless_leading(130)
        kept = [t.name for t in self.expanded.tests if registry.spec(t.kind).order.kept_when_cut
                and not self.run.keep_files and any(o.seq in self.done for o in t.ops)]
        try:        # after SIGHUP the terminal may be gone (a write to it fails): the run is marked already
            self.console.print(f"[yellow]Interrupted ({name}).[/] Every completed measurement is kept in "
                               f"{self.run_dir / 'measurements.csv'}.\nTo finish the run: stibium resume "
                               f"{self.run_dir}" + (f"\nThe files {', '.join(kept)} wrote stay in {self.work.path} "
                                                    f"for the resume to go on with; delete that folder to give "
                                                    f"their space back instead" if kept else ""))
        except OSError:
            pass
        if self.crew.many and isinstance(e, Interrupted):
            self.crew.team.abort(130)      # the other ranks may wait for a step that will not come
        raise RunError(f"run interrupted; finish it with `stibium resume {self.run_dir}`", 130) from None

    def _named(self, ranks: list[int]) -> str:
        """Ranks with their hosts: "2 (host3), 3 (host4)"."""
        hosts = self.crew.hosts
        return ", ".join(f"{r} ({hosts[r]})" if r < len(hosts) else str(r) for r in ranks)

    def _silent(self, e: Silent) -> None:
        """Ranks not heard from within the bound (team.SILENCE_S): rank 0 marks the run interrupted, naming them,
        with the rows of every rank that answered kept, and ends the job; another rank that lost rank 0 ends
        itself, saying so on its own terminal."""
        self._kill_helper()
        which = f"rank{'s' if len(e.ranks) > 1 else ''} {self._named(e.ranks)}" if e.ranks else "a rank"
        me = f"rank {self.crew.team.rank} ({self.crew.team.host})"
        if not self.crew.leads:
            print(f"stibium: {which} not heard from for {e.waited_s:.0f} s; {me} stops, and rank 0 keeps the run's "
                  f"record" if e.lost is None else f"stibium: MPI lost a peer ({e.lost}); {me} stops, and rank 0 "
                  f"keeps the run's record", file=sys.stderr)
            raise SystemExit(130)
        if e.lost is not None:
            one = len(e.ranks) == 1
            reason = (f"{which} gone before {'it' if one else 'they'} reached the step in progress: MPI reports "
                      f"{'it' if one else 'them'} failed ({e.lost}): {'its process' if one else 'their processes'} "
                      f"ended, or {'its machine' if one else 'their machines'}")
        else:
            reason = (f"{which} stopped answering: nothing from {'them' if len(e.ranks) > 1 else 'it'} for "
                      f"{e.waited_s:.0f} s (the bound: {e.bound_s:.0f} s; a network cut, or a machine that stopped)")
        self._finish("interrupted", reason)
        self.console.print(f"[yellow]Interrupted: {reason}.[/] Every completed measurement is kept in "
                           f"{self.run_dir / 'measurements.csv'}.\nTo finish the run once every host answers: "
                           f"mpiexec -n {self.crew.team.size} stibium resume {self.run_dir}")
        try:
            self.crew.team.abort(130)     # the ranks that answered wait for a step that will not come
        finally:
            raise RunError(f"run interrupted; finish it with `stibium resume {self.run_dir}`", 130) from None

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
                    verdict = self._step_with((status, reason), None)[0]
                    if verdict is not None:
                        status, reason = verdict
                except (KeyboardInterrupt, Interrupted):
                    pass
            elif self.crew.leads:
                self._receive([self.outbox])       # rank 0's own rows of the step, marked as cut short
                self.outbox = []
        self._finish(status, reason)

    def _finish(self, status: str, stopped_by: str | None = None) -> None:
        """Rank 0 (the only one with one client): the test files of every rank removed (after a complete run,
        in the background where the caller builds a report beside it), the status written."""
        if not self.crew.leads:
            return
        self.work.unlink(memory.PROBE_FILE)    # the memory probe's file is not the user's to keep
        later = status == "complete" and self.remove_beside_report
        if status != "waiting-for-reboot" and not self.run.keep_files and not later:
            self._remove_test_files(cut=status == "interrupted")
        self.run = replace(self.run, status=status, ended_epoch_s=time.time(),
                           ended_utc=iso(utc_now()) if status != "running" else None,
                           stopped_by=stopped_by if status in ("interrupted", "failed") else None)
        write_run_json(self.run_dir, self.run)
        if later and not self.run.keep_files:
            self.removal = Removal(self._remove_test_files)
        if self.on_end is not None and status in ("complete", "interrupted"):
            self.on_end(self.run_dir)

    def _remove_test_files(self, cut: bool = False) -> None:
        """Every test's files, and the test folder where nothing else is left in it; a run cut by a signal keeps
        the files of the tests whose order says so (a verify's fill), which its resume goes on with."""
        for test in self.expanded.tests:
            if not (cut and registry.spec(test.kind).order.kept_when_cut):
                self.work.remove_files(self.place.files(test))
        self.work.remove()

    # -- many clients
    def step(self) -> None:
        """With many clients, a barrier: this rank's rows since the last step go to rank 0, and every rank
        learns whether all go on; raises Stopped where another rank stopped. One client: nothing."""
        if self.crew.many:
            self._step_with(None, None)

    def _step_with(self, stopping: tuple[str, str] | None, value: Any) -> tuple[tuple[str, str] | None, list[Any]]:
        """A step carrying this rank's value to every rank (every rank's, in rank order), and the verdict to a
        rank that is stopping itself. A SIGINT during the step is raised at its end (team.py), so the stopping
        step that follows is whole on every rank."""
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

    def keep(self, m: Measurement, written_by: int | None = None) -> None:
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
        shapes = memory.shapes_of(pending) - set(self.run.memory_rates)
        if not shapes:
            return
        try:
            found = memory.probe(self.helper_ok, self.work.path / memory.PROBE_FILE, shapes, lambda size: (
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
            order = registry.spec(test.kind).order
            if order.run(self, test) == "waiting-for-reboot":
                return "waiting-for-reboot"
            if not self.run.keep_files and (not remove_at_end or not order.files_wait_for_end):
                self.step()                   # every rank is done with the files before rank 0 removes them
                if self.crew.leads:
                    self.work.remove_files(self.place.files(test))
        return "complete"

    # -- helper calls
    def evict(self, op: Op, test: ExpandedTest) -> None:
        """The file the operation will touch, out of this machine's page cache."""
        self.helper_ok(["evict", "--path", str(self.work.path / self.place.touch(op, test).file)])

    def ensure_file(self, op: Op, test: ExpandedTest) -> None:
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
        self.helper_ok(layout_args(path, size_bytes, op.engine, op.fill, op.data_seed))
        if op.engine != "direct":
            self.helper_ok(["evict", "--path", str(path)])

    def residency(self, op: Op, test: ExpandedTest) -> float | None:
        """The share of the file the operation will touch that is in this machine's page cache now."""
        value = self.helper_ok(["residency", "--path", str(self.work.path / self.place.touch(op, test).file)]).get(
            "resident")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def measure_with(self, op: Op, args: list[str], chunk_row: Callable[[dict[str, Any], float], Measurement],
                     answer_row: Callable[[bool, dict[str, Any], float], Measurement],
                     written_by: int | None = None) -> None:
        """An operation a kind asks of the helper in its own command (a verify's sign), its rows made by the kind:
        a row for each chunk as it comes, the answer's row after it; the operation done, or OpFailed."""
        assert self.helper is not None
        self.step()                      # many clients: every rank begins the operation together
        started_s = time.time() - self.t0

        def on_row(row: dict[str, Any]) -> None:
            m = chunk_row(row, started_s)
            self.keep(m, written_by)
            self.advance(op, m.bytes, m.seconds)

        try:
            result = self.helper.call(args, timeout_s=op_timeout_s(op), on_row=on_row)
        except HelperTimeout as e:
            self.keep(failed(op, str(e), started_s), written_by)
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) hung: {e}") from None
        self.keep(answer_row(result.ok, result.data, started_s), written_by)
        if not result.ok:
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) failed: {result.error}")
        self.done.add(op.seq)

    def helper_ok(self, args: list[str]) -> dict[str, Any]:
        assert self.helper is not None
        result = self.helper.call(args, timeout_s=600)
        if not result.ok:
            raise OpFailed(f"{args[0]} {Path(args[2]).name if len(args) > 2 else ''} failed: {result.error}")
        return result.data

    def measure_phase(self, op: Op, tree: str, root: Path, list_path: Path, dropped: bool) -> None:
        """One phase of a tree: one helper call, one row."""
        assert self.helper is not None
        self.step()                      # many clients: every rank begins the phase together
        op = replace(op, file=tree)
        started_s = time.time() - self.t0
        try:
            result = self.helper.call(tree_args(op, root, list_path), timeout_s=op_timeout_s(op))
        except HelperTimeout as e:
            self.keep(failed(op, str(e), started_s))
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} of the tree {op.file}) hung: {e}") from None
        m = from_tree_answer(op, result.ok, result.data, started_s, dropped)
        self.keep(m)
        if not result.ok:
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} of the tree {op.file}) failed: {result.error}")
        self.done.add(op.seq)
        self.advance(op, op.bytes, m.seconds)

    def measure_together(self, ops: list[Op]) -> None:
        """Operations that run at once, each in a helper of its own (run/together.py)."""
        try:
            measure_together(self, ops)
        except OpFailedTogether as e:
            raise OpFailed(str(e)) from None

    def measure(self, op: Op) -> None:
        assert self.helper is not None
        self.step()                      # many clients: every rank begins the operation together
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
                self.keep(m, touch.written_by)
            failure = next((m.error for m in rows if m.error), None)
            if failure:
                what = f"the job file {op.bench_job}" if op.bench_job else f"{op.op} {op.file}"
                raise OpFailed(f"operation {op.seq} ({op.test}: {op.instrument} {what}) failed: {failure}")
            self.done.add(op.seq)
            self.advance(op, sum(m.bytes for m in rows), max((m.seconds or 0.0 for m in rows), default=0.0))
            return

        def chunk_row(row: dict[str, Any]) -> None:     # a sustained measurement's chunks, as they come
            m = from_chunk(op, row, started_s, self.temperature.read(), offset_s)
            self.keep(m, touch.written_by)
            self.advance(op, m.bytes, m.seconds)

        # many clients with a stonewall: every client's count by it is exchanged (a step), and every client
        # goes on to the furthest one's (wear-out); a client whose measurement fails before its stonewall stops
        # the run with a step of its own, which the others' exchange meets (a step like any other)
        many = self.crew.many
        try:
            result = self.helper.call(measure_args(op, path, self.device_block_bytes, wearout=many),
                                      timeout_s=op_timeout_s(op), on_row=chunk_row if op.chunk_bytes else None,
                                      on_stonewall=self._furthest if many else None)
        except HelperTimeout as e:
            self.keep(failed(op, str(e), started_s), touch.written_by)
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) hung: {e}") from None
        m = from_answer(op, result.ok, result.data, started_s)
        self.keep(m, touch.written_by)
        if not result.ok:
            raise OpFailed(f"operation {op.seq} ({op.test}: {op.op} {op.file}) failed: {result.error}")
        self.done.add(op.seq)
        if not op.chunk_bytes:
            self.advance(op, op.bytes, m.seconds)

    def _bench(self, op: Op, path: Path, started_s: float) -> list[Measurement]:
        """The measurement of `op` by fio (the bench beside the road test), run in the test's folder: the equivalent
        job of `path`, or the test's own job file (its relative file names there, among them the laid-out file the
        road test reads, data.bin). The residency of the file it reads (a job file: of each file its jobs name) is
        read just before, as for the helper's rows; the job and fio's output are kept in fio.jsonl."""
        if self.fio is None:
            self.fio = find_fio()
        if op.bench_job:
            job = self.tests[op.test].bench_job
            assert job is not None          # read before the run (jobs.bench_checked)
            text, named = job.text, {name: path.parent / name for name in job.files}
        else:
            text = job_text(op, path, self.fio.ioengine(op.queue_depth, str(self.run.helper.get("platform"))))
            named = {str(path): path} if op.reads else {}
        resident = {name: self.helper_ok(["residency", "--path", str(p)]).get("resident")
                    for name, p in named.items() if p.is_file()}
        output, failure = run_job(self.fio, text, op_timeout_s(op), cwd=path.parent)
        if self.crew.leads:
            keep_output(self.run_dir, op.seq, text, output)
        if op.bench_job:
            return rows_of_jobs(op, output, failure, self.fio, started_s, resident)
        return [row_of(op, output, failure, self.fio, started_s, resident.get(str(path)))]
