"""A toy test as operations: every write, then every read."""

from __future__ import annotations

from typing import Any

from stibium_py.rundir.op import Op
from stibium_py.plan.expand import ExpandedTest, size_of
from stibium_py.plan.model import Where

from .model import ToyTest


def expand_test(test: ToyTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    size = size_of(test.size, s["units"], where / "size")
    ops = [Op(seq=seq0 + i * test.repeats + r, test=test.name, kind="toy", op=op, access="sequential",
              size_bytes=size, granularity_bytes=size, stride_bytes=0, trial=r, file=f"{test.name}/toy-{r}.bin",
              bytes=size, engine=s["engine"], fill=s["fill"], sync=s["sync"] if op == "write" else "none",
              seed=s["seed"], data_seed=s["seed"], existing=False)
           for i, op in enumerate(("write", "read")) for r in range(test.repeats)]
    return ExpandedTest(name=test.name, kind="toy", ops=ops, files_bytes=size * test.repeats)
