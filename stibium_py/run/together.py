"""Operations that run at once, each in a helper process of its own: a stream test's streams (an edit with several
clips, several edit bays on one disk). A movie's process paces its own frames (--fps); an image sequence's frames
are one file each, so its thread paces them, one helper call a frame at its time on the helper's clock. Their rows
come back on threads and are kept by the driver's thread, in the order they arrived, once every operation has ended
(or the run is stopped: then the rows so far are kept, and the operations that did not end are measured again by
resume, all together)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from .helper import HelperError, HelperTimeout, measure_args, op_timeout_s, raw_clock_ns
from ..errors import MeasurementError
from ..rundir.measurement import OP_FIELDS, Measurement
from ..rundir.answers import failed, from_answer, from_chunk, own_columns
from ..rundir.op import Op

# an image sequence's wait for a frame's time: a sleep to within this much of it, then the clock read until it
# passes (a sleep wakes late by tens of microseconds, never early)
SPIN_NS = 200_000


class OpFailedTogether(Exception):
    """The first of the operations that failed, in words."""


def _wait_until(t_ns: int) -> None:
    while True:
        left = t_ns - (raw_clock_ns() or 0)
        if left <= 0:
            return
        if left > SPIN_NS:
            time.sleep((left - SPIN_NS) / 1e9)


def measure_together(d: Any, ops: list[Op], waited: Any = None) -> None:
    """Each operation of `ops` in a helper session of its own, all started together; d is the driver's
    Operations (run/operations.py). Raises OpFailedTogether after keeping every row where any of them failed or
    hung. waited (run/quiet.Waited, before a playback) goes on each operation's own row (the one without a
    chunk)."""
    assert d.helper is not None
    d.step()
    if any(op.sequence for op in ops) and raw_clock_ns() is None:
        raise OpFailedTogether("an image sequence's frames are paced on the helper's clock read from Python, which "
                               "this platform does not give; use layout: movie")
    placed: list[tuple[Op, Path]] = []
    for op in ops:
        touch = d.place.touch(op, d.tests[op.test])
        op = replace(op, file=touch.file, offset_bytes=touch.offset_bytes)
        for name in op.made_files():
            if op.op == "write" and not op.existing:
                d.work.unlink(name)
            path = d.work.file(name)        # its folders made (a sequence's: the stream's folder)
        placed.append((op, path if not op.sequence else d.work.path / op.file))
    raw_ns = raw_clock_ns()
    offset_s = None if raw_ns is None else time.time() - d.t0 - raw_ns / 1e9
    started_s = time.time() - d.t0
    lock = threading.Lock()
    arrived: list[tuple[Op, Measurement]] = []
    answers: list[tuple[Op, Measurement | None, str]] = []

    def keep(op: Op, m: Measurement) -> None:
        with lock:
            arrived.append((op, m))

    def movie(session: Any, op: Op, path: Path) -> None:
        result = session.call(measure_args(op, path, d.device_block_bytes), timeout_s=op_timeout_s(op),
                              on_row=lambda r: keep(op, from_chunk(op, r, started_s, None, offset_s)))
        m = from_answer(op, result.ok, result.data, started_s)
        with lock:
            answers.append((op, m, "" if result.ok else result.error))

    def sequence(session: Any, op: Op) -> None:
        assert op.frames is not None
        period_ns, frames = 1e9 / op.frames.fps, op.bytes // op.chunk_bytes
        first: Measurement | None = None
        last: Measurement | None = None
        for k, name in enumerate(op.made_files()):
            if first is not None and first.start_ns is not None:
                _wait_until(first.start_ns + round(k * period_ns))
            frame = replace(op, file=name, bytes=op.chunk_bytes, size_bytes=op.chunk_bytes, chunk_bytes=0, frames=None)
            result = session.call(measure_args(frame, d.work.path / name, d.device_block_bytes),
                                  timeout_s=op_timeout_s(frame))
            m = from_answer(frame, result.ok, result.data, started_s)
            if not result.ok:
                with lock:
                    answers.append((op, None, f"frame {k} ({name}): {result.error}"))
                return
            last = m._replace(chunk=k, size_bytes=op.size_bytes, bytes_done=(k + 1) * op.chunk_bytes,
                              **own_columns(op))
            first = first or last
            keep(op, last)
        assert first is not None and last is not None
        whole = Measurement(**{f: getattr(op, f) for f in OP_FIELDS}, **own_columns(op), bytes=op.bytes,
                            seconds=(last.end_ns - first.start_ns) / 1e9 if last.end_ns and first.start_ns else None,
                            started_s=started_s, engine=last.engine, requests=frames, start_ns=first.start_ns,
                            end_ns=last.end_ns, sync_used=last.sync_used, direct_honoured=last.direct_honoured)
        with lock:
            answers.append((op, whole, ""))

    def one(session: Any, op: Op, path: Path) -> None:
        try:
            sequence(session, op) if op.sequence else movie(session, op, path)
        except (HelperTimeout, HelperError, MeasurementError) as e:
            with lock:
                answers.append((op, None, str(e)))

    with ExitStack() as stack:
        sessions = [d.helper] + [stack.enter_context(d.helpers.session()) for _ in placed[1:]]
        pool = ThreadPoolExecutor(max_workers=len(placed))
        try:
            futures = [pool.submit(one, s, op, path) for s, (op, path) in zip(sessions, placed)]
            for f in futures:
                f.result()
        except BaseException:
            for s in sessions:
                s.kill()                # a stop: no helper goes on alone, and the threads reading them end
            raise
        finally:
            pool.shutdown(wait=True)
            with lock:
                for op, got in arrived:
                    d.keep(got)
                    d.advance(op, got.bytes, got.seconds)
    problems = []
    for op, m, error in sorted(answers, key=lambda a: a[0].seq):
        if m is not None and waited is not None:
            m = m._replace(quiet_wait_s=waited.seconds, quiet=waited.quiet)
        d.keep(m if m is not None else failed(op, error, started_s))
        if m is not None and not error:
            d.done.add(op.seq)
        else:
            problems.append(f"operation {op.seq} ({op.test}: {op.op} {op.file}) failed: {error}")
    if problems:
        raise OpFailedTogether(problems[0])
