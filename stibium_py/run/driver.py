"""The driver: runs a run's tests, each in the order its kind's Order gives (orders.py), their operations carried
out and their rows kept by Operations (operations.py), and ends the run whatever ends it (a signal, a failed
operation, another rank), its status written and its test files removed.

A run is `drive(...)`: the driver made and executed, how it ended handed back (options.Finished)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from rich.console import Console

from ..machine import memory
from .. import registry
from .helper import HelperError, HelperFactory
from ..errors import MeasurementError
from ..rundir.op import Op
from ..plan import Expanded
from .preflight import RunError
from ..rundir.record import RunRecord, RunStatus
from ..rundir.store import MeasurementLog, completed_seqs, iso, utc_now, write_run_json
from ..rundir.csvread import read_measurements
from ..clients.team import Silent
from .awake import keep_awake
from .crew import Crew
from .operations import OpFailed, Operations, Stopped
from .options import Finished, Removal
from .progress import ProgressBar
from .signals import Interrupted, catch_ending_signals, restore


def drive(run_dir: Path, run: RunRecord, expanded: Expanded, helpers: HelperFactory, progress: bool,
          console: Console, crew: Crew | None = None, remove_beside_report: bool = False,
          on_end: Callable[[Path], None] | None = None) -> Finished:
    """The run executed: where it is, how it ended, and its files' removal where that goes on."""
    driver = Driver(run_dir, run, expanded, helpers, progress, console, crew, remove_beside_report, on_end)
    status = driver.execute()
    return Finished(run_dir, status, driver.removal)


class Driver:
    """The run's life: its operations in each test's order (its Operations, `ops`, carries them out and is what
    the orders are given: orders.Steps), then its end, whatever ends it, with the status written and the test
    files removed."""

    def __init__(self, run_dir: Path, run: RunRecord, expanded: Expanded, helpers: HelperFactory,
                 progress: bool, console: Console, crew: Crew | None = None, remove_beside_report: bool = False,
                 on_end: Callable[[Path], None] | None = None):
        self.ops = Operations(run_dir, run, expanded, crew, console, helpers)
        # what does not change while the run goes on, named here too; the rest (the record, the rows done, the
        # helper in use) is the operations' own
        self.crew, self.run_dir, self.console, self.work, self.place = self.ops.crew, run_dir, console, \
            self.ops.work, self.ops.place
        self.on_end = on_end
        self.remove_beside_report = remove_beside_report
        self.removal: Removal | None = None
        self.expanded = expanded
        self.show_progress = progress

    def execute(self) -> RunStatus:
        leads = self.crew.leads
        done: set[int] | None = None
        if leads:
            rows, _ = read_measurements(self.run_dir)
            done = completed_seqs(rows)
            for name in self.ops.rounds:
                self.ops.rounds[name] = list(rows.take(rows.test == name))
        self.ops.done = set(self.crew.team.share(done))       # one set for every rank: they move in step
        pending = [o for o in self.expanded.ops if o.seq not in self.ops.done]
        self.ops.log = MeasurementLog(self.run_dir) if leads else None
        previous = catch_ending_signals()
        status = RunStatus.FAILED
        awake = keep_awake(sys.platform, os.getpid())
        try:
            with self.ops.helpers.session() as helper, \
                    ProgressBar(pending, self.console, self.show_progress and leads) as bar:
                self.ops.helper = helper
                self.ops.advance, self.ops.skip = bar.advance, bar.skip
                if leads:
                    self._measure_memory(pending)
                status = self._run_tests()
                self.ops.step()                                # the last rows reach rank 0
        except (KeyboardInterrupt, Interrupted) as e:
            self._interrupted(e)
        except Silent as e:
            self._silent(e)
        except Stopped as e:                   # another rank stopped the run; rank 0 has its reason
            self._kill_helper()
            self._finish(RunStatus(e.status), e.reason)     # another rank's word for it
            self._quiet_unless_leading(130 if e.status == "interrupted" else 1)
            raise RunError(f"{e.reason}. The measurements so far are kept in {self.run_dir}; `stibium resume "
                           f"{self.run_dir}` finishes the run", 130 if e.status == "interrupted" else 1) from None
        except (OpFailed, HelperError, RunError, MeasurementError) as e:
            self._kill_helper()
            self._stop(RunStatus.FAILED, f"rank {self.crew.team.rank}: {e}" if self.crew.many else str(e), together=True)
            self._quiet_unless_leading(1)
            raise RunError(f"{e}. The measurements so far are kept in {self.run_dir}; `stibium report "
                           f"{self.run_dir}` builds a report from them", 1) from None
        finally:
            restore(previous)
            if self.ops.log:
                self.ops.log.close()
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
        self._stop(RunStatus.INTERRUPTED, said, together=not isinstance(e, Interrupted))
        self._quiet_unless_leading(130)
        kept = [t.name for t in self.expanded.tests if registry.spec(t.kind).order.kept_when_cut
                and not self.ops.run.keep_files and any(o.seq in self.ops.done for o in t.ops)]
        try:        # after SIGHUP the terminal may be gone (a write to it fails): the run is marked already
            # the way to finish it is the last line (the RunError below), said once
            self.console.print(f"[yellow]Interrupted ({name}).[/] Every completed measurement is kept in "
                               f"{self.run_dir / 'measurements.csv'}." + (f"\nThe files {', '.join(kept)} wrote stay in {self.work.path} "
                                                    f"for the resume to go on with; delete that folder to give "
                                                    f"their space back instead" if kept else
                                                    f"\nIts test folder {self.work.path} stays, empty but for its "
                                                    f"marker, which shows the resume that the run began here"))
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
        # MPI may report a peer failed where rank 0 was sending, not waiting: its sends all done, which one is not
        # known (a CI run of tests/truth/test_truth_hosts.py)
        which = (f"rank{'s' if len(e.ranks) > 1 else ''} {self._named(e.ranks)}" if e.ranks else
                 "a rank (MPI did not say which)" if e.lost is not None else "a rank")
        me = f"rank {self.crew.team.rank} ({self.crew.team.host})"
        if not self.crew.leads:
            print(f"stibium: {which} not heard from for {e.waited_s:.0f} s; {me} stops, and rank 0 keeps the run's "
                  f"record" if e.lost is None else f"stibium: MPI lost a peer ({e.lost}); {me} stops, and rank 0 "
                  f"keeps the run's record", file=sys.stderr)
            raise SystemExit(130)
        if e.lost is not None:
            one = len(e.ranks) <= 1
            reason = (f"{which} gone before {'it' if one else 'they'} reached the step in progress: MPI reports "
                      f"{'it' if one else 'them'} failed ({e.lost}): {'its process' if one else 'their processes'} "
                      f"ended, or {'its machine' if one else 'their machines'}")
        else:
            reason = (f"{which} stopped answering: nothing from {'them' if len(e.ranks) > 1 else 'it'} for "
                      f"{e.waited_s:.0f} s (the bound: {e.bound_s:.0f} s; a network cut, or a machine that stopped)")
        self._finish(RunStatus.INTERRUPTED, reason)
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
        if self.ops.helper:
            self.ops.helper.kill()

    def _stop(self, status: RunStatus, reason: str, together: bool) -> None:
        """End the run on this rank: with many clients, a last step tells every rank to stop and brings their
        rows to rank 0 (not after SIGTERM, whose sender may have ended the others); then the run's status."""
        if self.crew.many:
            if together:
                try:
                    verdict = self.ops._step_with((status, reason), None)[0]
                    if verdict is not None:          # the stop rank 0 settled on, as every rank sent it
                        status, reason = RunStatus(verdict[0]), verdict[1]
                except (KeyboardInterrupt, Interrupted):
                    pass
            elif self.crew.leads:
                self.ops._receive([self.ops.outbox])       # rank 0's own rows of the step, marked as cut short
                self.ops.outbox = []
        self._finish(status, reason)

    def _finish(self, status: RunStatus, stopped_by: str | None = None) -> None:
        """Rank 0 (the only one with one client): the test files of every rank removed (after a complete run,
        in the background where the caller builds a report beside it), the status written."""
        if not self.crew.leads:
            return
        self.work.unlink(memory.PROBE_FILE)    # the memory probe's file is not the user's to keep
        later = status == "complete" and self.remove_beside_report
        if status != "waiting-for-reboot" and not self.ops.run.keep_files and not later:
            self._remove_test_files(cut=status == "interrupted", resumable=status == "interrupted")
        self.ops.run = replace(self.ops.run, status=status, ended_epoch_s=time.time(),
                           ended_utc=iso(utc_now()) if status != "running" else None,
                           stopped_by=stopped_by if status in ("interrupted", "failed") else None)
        write_run_json(self.run_dir, self.ops.run)
        if later and not self.ops.run.keep_files:
            self.removal = Removal(self._remove_test_files)
        if self.on_end is not None and status in ("complete", "interrupted"):
            self.on_end(self.run_dir)

    def _remove_test_files(self, cut: bool = False, resumable: bool = False) -> None:
        """Every test's files, and the test folder where nothing else is left in it; a run cut by a signal keeps
        the files of the tests whose order says so (a verify's fill), which its resume goes on with. A run that can
        be resumed keeps its test folder with its marker: on this machine's disk, not in the run directory that may
        travel, it is what shows `stibium resume` that the run was started here (resume.resumable)."""
        for test in self.expanded.tests:
            if not (cut and registry.spec(test.kind).order.kept_when_cut):
                self.work.remove_files(self.place.files(test))
        if resumable:
            self.work.remove_views()
        else:
            self.work.remove()

    def _measure_memory(self, pending: list[Op]) -> None:
        """What memory does for each read shape still to measure (memory.py), once a run: the yardstick of a
        cache below the file system. Kept in run.json; a resumed run measures only shapes it lacks."""
        shapes = memory.shapes_of(pending) - set(self.ops.run.memory_rates)
        if not shapes:
            return
        try:
            found = memory.probe(self.ops.helper_ok, self.work.path / memory.PROBE_FILE, shapes, lambda size: (
                memory.probe_sync(sys.platform, size, memory.linux_background_bytes())))
        finally:
            self.work.unlink(memory.PROBE_FILE)     # at once: unsynced, it is never written back
        self.ops.run = replace(self.ops.run, memory_reads=(*self.ops.run.memory_reads, *found))
        write_run_json(self.run_dir, self.ops.run)

    def _run_tests(self) -> RunStatus:
        # Removing a test's files (a TRIM on file systems mounted with discard) is disk work that would
        # disturb the next test: it waits for the end of the run when the free space allows.
        needed = self.expanded.space_needed_bytes(keep_files=True) * self.crew.team.size
        remove_at_end = self.crew.team.share(shutil.disk_usage(self.work.path).free >= needed)
        self.ops.run = replace(self.ops.run, cleanup="end of run" if remove_at_end else "after each test")
        for test in self.expanded.tests:
            if all(o.seq in self.ops.done for o in test.ops):
                continue
            order = registry.spec(test.kind).order
            if order.run(self.ops, test) == "waiting-for-reboot":
                return RunStatus.WAITING_FOR_REBOOT
            if not self.ops.run.keep_files and (not remove_at_end or not order.files_wait_for_end):
                self.ops.step()                   # every rank is done with the files before rank 0 removes them
                if self.crew.leads:
                    self.work.remove_files(self.place.files(test))
        return RunStatus.COMPLETE

