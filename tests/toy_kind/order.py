"""The order of a toy test: its writes, each file evicted, its reads."""

from __future__ import annotations

from stibium_py.plan.expand import ExpandedTest
from stibium_py.run.orders import Steps


def order(d: Steps, test: ExpandedTest) -> str:
    for op in test.ops:
        if op.op == "write" and op.seq not in d.done:
            d.measure(op)
    for op in test.ops:
        if op.op == "read" and op.seq not in d.done:
            d.ensure_file(op, test)
            d.evict(op, test)
            d.measure(op)
    return "complete"
