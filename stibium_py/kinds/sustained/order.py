"""The order the driver carries out a sustained test's operations in: a function of the driver's steps
(run/orders.Steps)."""

from __future__ import annotations

from ...plan.expand import ExpandedTest
from ...run.orders import Order, Steps


def order(d: Steps, test: ExpandedTest) -> str:
    """The files one after another, each streamed in chunks with the drive's temperature beside each chunk;
    then, with read_back, each file evicted and read back the same way."""
    if not d.temperature_said:          # said once a run
        d.temperature_said = True
        if d.temperature.read() is None:
            d.console.print("The drive's temperature cannot be read on this machine (the system reports no "
                            "sensor for this disk, and smartctl is not installed or cannot ask it); the "
                            "temperature column stays empty.")
    for op in test.ops:
        if op.seq in d.done:
            continue
        if op.op == "read":
            d.ensure_file(op, test)
            d.step()
            d.evict(op, test)
        d.measure(op)
    return "complete"


# its files can fill most of the disk: they never wait for the end of the run
ORDER = Order(order, files_wait_for_end=False, wears_drive=True, kept_when_cut=False)
