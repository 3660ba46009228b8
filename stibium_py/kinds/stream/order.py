"""The order the driver carries out a stream test's operations in: a function of the driver's steps
(run/orders.Steps)."""

from __future__ import annotations

from itertools import groupby

from ...plan.expand import ExpandedTest
from ...run.orders import Order, Steps


def order(d: Steps, test: ExpandedTest) -> str:
    """For each stream count and trial: its captures all at once, then its playbacks all at once (each file laid
    out first where no capture wrote it, and evicted), then its files removed. A group some of whose streams
    are not done (a resumed run) runs again whole: streams measured apart are not streams at once."""
    for _, group in groupby(test.ops, key=lambda o: (o.streams, o.trial)):
        ops = list(group)
        for _, same in groupby(ops, key=lambda o: o.op):
            streams = list(same)
            if all(o.seq in d.done for o in streams):
                continue
            if streams[0].op == "read":
                for o in streams:
                    d.ensure_file(o, test)
                d.step()
                for o in streams:
                    d.evict(o, test)
            d.measure_together(streams)
        if not d.run.keep_files:
            d.work.remove_files({o.file for o in ops})
    return "complete"


# its files go as each stream count's trial ends: the space a test needs is its largest count's files
ORDER = Order(order, files_wait_for_end=False, wears_drive=False)
