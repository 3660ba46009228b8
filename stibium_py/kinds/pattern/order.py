"""The order the driver carries out a pattern test's operations in: a function of the driver's steps
(run/orders.Steps)."""

from __future__ import annotations

import time
from dataclasses import replace

from .load import judge, next_rate_index, parse_slo
from .steady import steadiness
from ...run.helper import precondition_args
from ...plan.expand import ExpandedTest
from ...run.orders import Order, Steps
from ...rundir.op import Op
from ...rundir.table import Table
from ...analysis.settings import SUMMARY
from ...units import format_bytes


def order(d: Steps, test: ExpandedTest) -> str:
    """The laid-out file (and, asked for, its preconditioning), then the trials, each read trial meeting an
    evicted file; a test by rounds stops at the first round that ends a steady window (asked before each round,
    so a resumed run stops where it would have)."""
    if test.precondition_bytes and not any(o.seq in d.done for o in test.ops):
        _precondition(d, test)
    if test.ops and test.ops[0].slo:
        return _search(d, test)
    this_round = None
    for op in test.ops:
        if op.seq in d.done:
            continue
        if op.steady_window and op.trial != this_round:
            this_round = op.trial
            if op.trial >= op.steady_window and _steady(d, test):
                d.skip([o for o in test.ops if o.trial >= op.trial and o.seq not in d.done])
                break
        _measure(d, test, op)
    return "complete"


def _measure(d: Steps, test: ExpandedTest, op: Op) -> None:
    """One measurement: its file laid out (or fresh), a read meeting it evicted, a fresh file removed after."""
    if op.existing:
        d.ensure_file(op, test)
    if op.reads:
        d.step()
        d.evict(op, test)
    d.measure(op)
    if not op.existing:
        d.work.unlink(d.place.touch(op, test).file)


def _search(d: Steps, test: ExpandedTest) -> str:
    """slo: for each point shape, the rates its search asks for (load.next_rate_index), each with all its trials,
    judged on rank 0 from the rows so far (the same verdict on every rank); the rates it does not ask for are
    skipped. A resumed run takes the same path (each verdict from the rows kept) and measures what it had not."""
    shapes: dict[tuple, dict[float, list[Op]]] = {}
    for o in test.ops:
        shape = (o.op, o.read_fraction, o.access, o.granularity_bytes, o.stride_bytes, o.queue_depth, o.threads, o.fill)
        shapes.setdefault(shape, {}).setdefault(o.rate_per_s, []).append(o)
    for by_rate in shapes.values():
        rates = sorted(by_rate)
        tried: dict[int, bool] = {}
        while (i := next_rate_index(tried, len(rates))) is not None:
            trials = sorted(by_rate[rates[i]], key=lambda o: o.trial)
            for op in trials:
                if op.seq not in d.done:
                    _measure(d, test, op)
            tried[i] = _met(d, test, trials)
        d.skip([o for i, rate in enumerate(rates) if i not in tried for o in by_rate[rate] if o.seq not in d.done])
    return "complete"


def _met(d: Steps, test: ExpandedTest, trials: list[Op]) -> bool:
    """Whether a rate's trials met the target (load.judge, at the summary's confidence), judged on rank 0 over
    every rank's rows (their aggregate) and shared."""
    d.step()                         # many clients: every rank's rows reach rank 0
    found = None
    if d.crew.leads:
        seqs = {o.seq for o in trials}
        rows = Table.from_rows([m for m in d.rounds[test.name] if m.seq in seqs]).valid()
        if d.crew.many:
            from ...analysis.clients import aggregate
            rows = aggregate(rows, d.crew.team.size)
        slo = parse_slo(trials[0].slo)
        found = slo is not None and judge(rows, trials[0].rate_per_s, slo[0], SUMMARY.confidence).met
    return bool(d.crew.team.share(found))



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
