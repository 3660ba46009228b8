"""The order the driver carries out a pattern test's operations in: a function of the driver's steps
(run/orders.Steps)."""

from __future__ import annotations

import time
from dataclasses import replace

from .steady import steadiness
from ...run.helper import precondition_args
from ...plan.expand import ExpandedTest
from ...run.orders import Order, Steps
from ...rundir.table import Table
from ...units import format_bytes


def order(d: Steps, test: ExpandedTest) -> str:
    """The laid-out file (and, asked for, its preconditioning), then the trials, each read trial meeting an
    evicted file; a test by rounds stops at the first round that ends a steady window (asked before each round,
    so a resumed run stops where it would have)."""
    if test.precondition_bytes and not any(o.seq in d.done for o in test.ops):
        _precondition(d, test)
    this_round = None
    for op in test.ops:
        if op.seq in d.done:
            continue
        if op.steady_window and op.trial != this_round:
            this_round = op.trial
            if op.trial >= op.steady_window and _steady(d, test):
                d.skip([o for o in test.ops if o.trial >= op.trial and o.seq not in d.done])
                break
        if op.existing:
            d.ensure_file(op, test)
        if op.reads:
            d.step()
            d.evict(op, test)
        d.measure(op)
        if not op.existing:
            d.work.unlink(d.place.touch(op, test).file)
    return "complete"



def _steady(d: Steps, test: ExpandedTest) -> bool:
    """Whether the rounds so far end a window in which every point is steady (analysis/steady.py), judged
    on rank 0 over every rank's rows (their aggregate), the same verdict on every rank."""
    d.step()                         # many clients: every rank's rows reach rank 0
    found = None
    if d.crew.leads:
        rows = Table.from_rows(d.rounds[test.name]).valid()
        if d.crew.many:
            from ...analysis.clients import aggregate
            rows = aggregate(rows, d.crew.team.size)
        judged = steadiness(rows)
        found = judged is not None and judged.steady
        if judged is not None and judged.steady:
            first, last = judged.window_rounds
            d.console.print(f"{test.name}: steady over rounds {first}-{last}; the rounds stop there")
    return bool(d.crew.team.share(found))



def _precondition(d: Steps, test: ExpandedTest) -> None:
    """The span written twice sequentially (untimed, not a measurement) before the test's first measurement:
    SNIA PTS's workload-independent preconditioning, so that the measurements meet written flash."""
    first = test.ops[0]
    d.ensure_file(first, test)
    d.step()                         # many clients: a shared file is laid out before anyone writes it
    touch = d.place.touch(replace(first, op="write"), test)
    started = time.monotonic()
    for _ in range(2):
        d.helper_ok(precondition_args(d.work.file(touch.file), first.size_bytes, touch.offset_bytes,
                                      first.engine, first.fill, first.data_seed))
    if d.crew.leads:
        d.console.print(f"{test.name}: preconditioned: the span ({format_bytes(first.size_bytes)}) written "
                        f"twice sequentially in 128 KiB requests, {time.monotonic() - started:.1f} s")


ORDER = Order(order, files_wait_for_end=True, wears_drive=False, kept_when_cut=False)
