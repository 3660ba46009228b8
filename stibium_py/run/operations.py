"""What a kind's order asks of the driver (orders.Steps), carried out: each operation through the helper (or fio)
with its rows made and kept, the files laid out, evicted and their residency read, and with many clients the
crew moved in step (every rank begins an operation together; rank 0 keeps every rank's rows). The driver
(driver.py) holds one and lives the run around it: its start, its end, its signals."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from ..fio.job import Fio, find_fio, job_text, keep_output, row_of, rows_of_jobs, run_job
from .helper import (HelperFactory, HelperSession, HelperTimeout, device_block_of, layout_args, measure_args,
    op_timeout_s, raw_clock_ns)
from ..rundir.measurement import Measurement
from ..rundir.answers import failed, from_answer, from_chunk
from ..rundir.op import Op
from ..plan import Expanded, ExpandedTest
from ..rundir.record import RunRecord
from ..rundir.store import MeasurementLog
from .workdir import WorkDir
from .crew import Crew
from .progress import Temperature
from .together import OpFailedTogether, measure_together


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


class Operations:
    """The operations of a run as the orders ask for them (all of orders.Steps), and the rows they give, kept."""

    def __init__(self, run_dir: Path, run: RunRecord, expanded: Expanded, crew: Crew | None, console: Console,
                 helpers: HelperFactory):
        self.crew = crew or Crew()
        self.helpers = helpers                   # helper sessions of their own (operations at once: together.py)
        self.console = console
        self.place = self.crew.place
        self.tests = {t.name: t for t in expanded.tests}
        self.outbox: list[Measurement] = []      # many clients: this step's rows, sent at the next step
        self.run_dir = run_dir
        self.run = run
        self.work = WorkDir(Path(str(run.work_dir)), run_dir.name)
        self.t0 = float(run.started_epoch_s or 0.0)
        self.done: set[int] = set()
        self.helper: HelperSession | None = None
        self.log: MeasurementLog | None = None
        self.advance: Callable[..., None] = lambda op, nbytes, seconds, last=None: None
        self.skip: Callable[[list[Op]], None] = lambda ops: None      # rounds not needed: out of the progress
        self.temperature = Temperature(run.target_facts.get("device"))
        self.device_block_bytes = device_block_of(run.target_facts)   # macOS: what xnu's read rule uses
        self.temperature_said = False
        self.fio: Fio | None = None             # found when the first measurement by fio comes
        # rank 0: the rows so far of each test by rounds, which judge whether its rounds go on, and of each
        # test that searches (a stream test's count, a pattern test's rate for a target), whose rows choose its
        # next step
        self.rounds: dict[str, list[Measurement]] = {t.name: [] for t in expanded.tests
                                                     if any(o.steady_window or o.slo for o in t.ops) or t.search_most}

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

    def measure_with(self, op: Op, args: list[str],
                     chunk_row: Callable[[dict[str, Any], float], Measurement] | None,
                     answer_row: Callable[[bool, dict[str, Any], float], Measurement | list[Measurement]],
                     written_by: int | None = None, what: str | None = None,
                     rate_said: Callable[[Measurement], str] | None = None) -> None:
        """An operation a kind asks of the helper in its own command (a verify's sign, a tree's phase), its rows
        made by the kind: a row for each chunk as it comes (chunk_row; None: the command sends none), the answer's
        row (or rows, the first of them its whole) after it; the operation done, or OpFailed, whose words name it as `what` (else its op and file).
        rate_said: the kind's words for the rate of the answer's row beside the progress bar (else bytes/s)."""
        assert self.helper is not None
        self.step()                      # many clients: every rank begins the operation together
        started_s = time.time() - self.t0
        what = what or f"{op.op} {op.file}"

        def on_row(row: dict[str, Any]) -> None:
            assert chunk_row is not None
            m = chunk_row(row, started_s)
            self.keep(m, written_by)
            self.advance(op, m.bytes, m.seconds)

        try:
            result = self.helper.call(args, timeout_s=op_timeout_s(op), on_row=on_row if chunk_row else None)
        except HelperTimeout as e:
            self.keep(failed(op, str(e), started_s), written_by)
            raise OpFailed(f"operation {op.seq} ({op.test}: {what}) hung: {e}") from None
        made = answer_row(result.ok, result.data, started_s)
        rows = made if isinstance(made, list) else [made]      # a replay's: its trial's row, then a kind of call's each
        for row in rows:
            self.keep(row, written_by)
        m = rows[0]
        if not result.ok:
            raise OpFailed(f"operation {op.seq} ({op.test}: {what}) failed: {result.error}")
        self.done.add(op.seq)
        if chunk_row is None:            # its progress is its one row's
            self.advance(op, op.bytes, m.seconds, rate_said(m) if rate_said is not None else None)

    def helper_ok(self, args: list[str]) -> dict[str, Any]:
        assert self.helper is not None
        result = self.helper.call(args, timeout_s=600)
        if not result.ok:
            raise OpFailed(f"{args[0]} {Path(args[2]).name if len(args) > 2 else ''} failed: {result.error}")
        return result.data

    def quiet(self) -> Any:
        """Wait until the target's disk is quiet (run/quiet.py): how long and whether it went quiet (quiet.Waited),
        or None where its counters cannot be read or no wait is asked."""
        from ..machine import sysinfo
        from .quiet import max_wait_s, read_counters, wait_quiet
        disk = sysinfo.sys_disk(self.run.target_facts.get("device"))
        return None if disk is None else wait_quiet(lambda: read_counters(disk), max_wait_s())

    def measure_together(self, ops: list[Op], waited: Any = None) -> None:
        """Operations that run at once, each in a helper of its own (run/together.py); waited: the wait for a quiet
        drive before them (quiet.Waited), kept on their rows."""
        try:
            measure_together(self, ops, waited)
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
