"""The order the driver carries out a stream test's operations in: a function of the driver's steps
(run/orders.Steps)."""

from __future__ import annotations

from itertools import groupby

from ...helper import layout_args
from ...op import Op
from ...plan.expand import ExpandedTest
from ...run.orders import Order, Steps


def _ready_to_play(d: Steps, o: Op, test: ExpandedTest) -> None:
    """A stream's file (a movie) or files (a sequence's frames) laid out where no capture wrote them, then out of
    the page cache."""
    if not o.sequence:
        d.ensure_file(o, test)
        return
    for k in range(o.bytes // o.chunk_bytes):
        name = o.frame_file(k)
        if not d.work.holds_whole(name, o.chunk_bytes):
            d.work.unlink(name)
            d.helper_ok(layout_args(d.work.file(name), o.chunk_bytes, o.engine, o.fill, o.data_seed))


def _evict(d: Steps, o: Op, test: ExpandedTest) -> None:
    if not o.sequence:
        d.evict(o, test)
        return
    for name in o.stream_files():
        d.helper_ok(["evict", "--path", str(d.work.path / name)])


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
                    _ready_to_play(d, o, test)
                d.step()
                for o in streams:
                    _evict(d, o, test)
            d.measure_together(streams)
        if not d.run.keep_files:
            d.work.remove_files({name for o in ops for name in o.stream_files()})
    return "complete"


# its files go as each stream count's trial ends: the space a test needs is its largest count's files
ORDER = Order(order, files_wait_for_end=False, wears_drive=False)
