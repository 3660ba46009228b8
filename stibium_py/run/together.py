"""Operations that run at once, each in a helper process of its own: a stream test's streams (an edit with several
clips, several edit bays on one disk). Each process paces its own frames; their rows come back on threads and are
kept by the driver's thread, in the order they arrived, once every operation has ended (or the run is stopped: then
the rows so far are kept, and the operations that did not end are measured again by resume, all together)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..helper import HelperError, HelperResult, HelperTimeout, measure_args, op_timeout_s, raw_clock_ns
from ..measurement import Measurement, MeasurementError, failed, from_answer, from_chunk
from ..op import Op


class OpFailedTogether(Exception):
    """The first of the operations that failed, in words."""


def measure_together(d: Any, ops: list[Op]) -> None:
    """Each operation of `ops` in a helper session of its own, all started together; d is the driver
    (run/driver.py). Raises OpFailedTogether after keeping every row where any of them failed or hung."""
    assert d.helper is not None
    d.step()
    placed: list[tuple[Op, Path]] = []
    for op in ops:
        touch = d.place.touch(op, d.tests[op.test])
        op = replace(op, file=touch.file, offset_bytes=touch.offset_bytes)
        if op.op == "write" and not op.existing:
            d.work.unlink(op.file)
        placed.append((op, d.work.file(op.file)))
    raw_ns = raw_clock_ns()
    offset_s = None if raw_ns is None else time.time() - d.t0 - raw_ns / 1e9
    started_s = time.time() - d.t0
    lock = threading.Lock()
    arrived: list[tuple[Op, Measurement]] = []
    answers: list[tuple[Op, HelperResult | None, str]] = []

    def one(session: Any, op: Op, path: Path) -> None:
        def row(r: dict[str, Any]) -> None:
            m = from_chunk(op, r, started_s, None, offset_s)
            with lock:
                arrived.append((op, m))
        try:
            result = session.call(measure_args(op, path, d.device_block_bytes), timeout_s=op_timeout_s(op),
                                  on_row=row)
            with lock:
                answers.append((op, result, ""))
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
                for op, m in arrived:
                    d.keep(m)
                    d.advance(op, m.bytes, m.seconds)
    problems = []
    for op, result, error in sorted(answers, key=lambda a: a[0].seq):
        if result is None:
            d.keep(failed(op, error, started_s))
            problems.append(f"operation {op.seq} ({op.test}: {op.op} {op.file}) failed: {error}")
            continue
        m = from_answer(op, result.ok, result.data, started_s)
        d.keep(m)
        if result.ok:
            d.done.add(op.seq)
        else:
            problems.append(f"operation {op.seq} ({op.test}: {op.op} {op.file}) failed: {result.error}")
    if problems:
        raise OpFailedTogether(problems[0])
