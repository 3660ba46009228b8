"""The order the driver carries out a files test's operations in: a function of the driver's steps
(run/orders.Steps)."""

from __future__ import annotations

from ...plan.expand import ExpandedTest
from ...run.preflight import drop_caches
from ...run.orders import Order, Steps


def order(d: Steps, test: ExpandedTest) -> str:
    """The writes, then `between` (none, evict, drop-caches, or a stop for a reboot), then the reads."""
    writes = [o for o in test.ops if o.op == "write"]
    reads = [o for o in test.ops if o.op == "read"]
    for op in writes:
        if op.seq not in d.done:
            d.measure(op)
    pending = [o for o in reads if o.seq not in d.done]
    if not pending:
        return "complete"
    if test.between == "reboot" and not d.run.rebooted:
        return "waiting-for-reboot"
    for op in pending:       # files lost to an interruption are laid out again, unmeasured
        d.ensure_file(op, test)
    d.step()
    if test.between == "evict":
        for op in pending:
            d.evict(op, test)
    elif test.between == "drop-caches":
        drop_caches()
    for op in pending:
        d.measure(op)
    return "complete"


ORDER = Order(order, files_wait_for_end=True, wears_drive=False, kept_when_cut=False)
