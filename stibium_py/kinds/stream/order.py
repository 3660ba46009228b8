"""The order the driver carries out a stream test's operations in: a function of the driver's steps
(run/orders.Steps)."""

from __future__ import annotations

from dataclasses import replace
from itertools import groupby

from ...run.helper import layout_args
from ...rundir.op import Frames, Op
from ...plan.expand import ExpandedTest
from ...run.orders import Order, Steps
from ...rundir.table import Table
from .analysis import group_dropped, next_count
from .model import MAX_STREAMS


def _frames(o: Op) -> Frames:
    """A stream operation's own part (every operation of a stream test has one)."""
    assert o.frames is not None
    return o.frames


def _mine(d: Steps, o: Op, test: ExpandedTest) -> Op:
    """The operation with this client's file (with many clients, in the client's own folder)."""
    return replace(o, file=d.place.touch(o, test).file)


def _ready_to_play(d: Steps, o: Op, test: ExpandedTest) -> None:
    """A stream's file (a movie) or files (a sequence's frames) laid out where no capture wrote them, then out of
    the page cache."""
    if not o.sequence:
        d.ensure_file(o, test)
        return
    mine = _mine(d, o, test)
    for k in range(o.bytes // o.chunk_bytes):
        name = mine.frame_file(k)
        if not d.work.holds_whole(name, o.chunk_bytes):
            d.work.unlink(name)
            d.helper_ok(layout_args(d.work.file(name), o.chunk_bytes, o.engine, o.fill, o.data_seed))


def _evict(d: Steps, o: Op, test: ExpandedTest) -> None:
    if not o.sequence:
        d.evict(o, test)
        return
    for name in _mine(d, o, test).made_files():
        d.helper_ok(["evict", "--path", str(d.work.path / name)])


def _remove(d: Steps, ops: list[Op], test: ExpandedTest) -> None:
    """A group's files, once every client is done with them: each client removes its own."""
    if d.run.keep_files:
        return
    d.step()
    d.work.remove_files({name for o in ops for name in _mine(d, o, test).made_files()})


def _run_group(d: Steps, test: ExpandedTest, streams: list[Op]) -> None:
    """One group's streams at once (unless a resumed run measured them all), playbacks meeting their files
    laid out and evicted, on a drive gone quiet (run/quiet.py)."""
    if all(o.seq in d.done for o in streams):
        return
    waited = None
    if streams[0].op == "read":
        for o in streams:
            _ready_to_play(d, o, test)
        d.step()
        for o in streams:
            _evict(d, o, test)
        waited = d.quiet()          # a playback measures a drive that is idle, not one still writing its layout
    d.measure_together(streams, waited)


def _dropped(d: Steps, test: ExpandedTest, op: str, streams: int, trial: int) -> bool:
    """Whether a group dropped a frame (or did not run whole), judged on rank 0 from the rows so far and the same
    verdict on every rank."""
    d.step()                         # many clients: every rank's rows reach rank 0
    found = None
    if d.crew.leads:
        # the group's own rows only: the test's rows so far grow with every group the search runs
        mine = [m for m in d.rounds[test.name]
                if m.op == op and m.frames is not None and m.frames.streams == streams and m.trial == trial]
        clients = list(range(d.crew.team.size)) if d.crew.many else [0]     # a client without rows is not whole
        dropped = group_dropped(Table.from_rows(mine).valid(), streams, trial, clients)
        found = dropped is None or dropped > 0
    return bool(d.crew.team.share(found))


def search(d: Steps, test: ExpandedTest) -> str:
    """streams: most. In each trial and for each op, the counts a search asks for (analysis.next_count), each
    count's streams at once, then its files removed; the counts it does not ask for are skipped. A resumed run
    takes the same path (each verdict from the rows kept) and measures what it had not."""
    groups = {key: list(g) for key, g in groupby(test.ops, key=lambda o: (o.trial, o.op, _frames(o).streams))}
    trials = sorted({o.trial for o in test.ops})
    actions = list(dict.fromkeys(o.op for o in test.ops))
    for t in trials:
        for action in actions:
            tried: dict[int, bool] = {}
            while (n := next_count(tried, MAX_STREAMS)) is not None:
                streams = groups[(t, action, n)]
                _run_group(d, test, streams)
                tried[n] = _dropped(d, test, action, n, t)
                _remove(d, streams, test)
            d.skip([o for (trial, op, n), ops in groups.items() if trial == t and op == action and n not in tried
                    for o in ops if o.seq not in d.done])
    return "complete"


def order(d: Steps, test: ExpandedTest) -> str:
    """For each stream count and trial: its captures all at once, then its playbacks all at once (each file laid
    out first where no capture wrote it, and evicted), then its files removed. A group some of whose streams
    are not done (a resumed run) runs again whole: streams measured apart are not streams at once."""
    if test.search_most:
        return search(d, test)
    for _, group in groupby(test.ops, key=lambda o: (_frames(o).streams, o.trial)):
        ops = list(group)
        for _, same in groupby(ops, key=lambda o: o.op):
            _run_group(d, test, list(same))
        _remove(d, ops, test)
    return "complete"


# its files go as each stream count's trial ends: the space a test needs is its largest count's files
ORDER = Order(order, files_wait_for_end=False, wears_drive=False, kept_when_cut=False)
