"""A files test as operations (Op), in run order, every random choice drawn from the plan's seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...rundir.op import Op
from ...plan.expand import ExpandedTest, check_count, derive_seed, sizes_of
from ...plan.model import Where
from .model import FilesTest


def expand_test(test: FilesTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    sizes = sizes_of(test.sizes, s["units"], where / "sizes")
    check_count(2 * len(sizes) * test.repeats, where / "repeats")
    rng = np.random.default_rng(derive_seed(s["seed"], test.name, "order"))
    pairs = [(size, r) for size in sizes for r in range(test.repeats)]          # as-listed
    if test.write_order == "cycle":
        pairs = [(size, r) for r in range(test.repeats) for size in sizes]
    elif test.write_order == "random":
        pairs = [pairs[i] for i in rng.permutation(len(pairs))]
    width = len(str(max(sizes)))
    name = {p: f"{test.name}/f-{p[0]:0{width}d}-r{p[1]:03d}.bin" for p in pairs}
    if test.read_order == "as-written":
        reads = list(pairs)
    elif test.read_order == "random":
        reads = [pairs[i] for i in rng.permutation(len(pairs))]
    else:
        reads = sorted(pairs, key=lambda p: name[p])
    ops: list[Op] = []
    for op, order in (("write", pairs), ("read", reads)):
        for size, r in order:
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="files", op=op, access="sequential",
                          size_bytes=size, granularity_bytes=size, stride_bytes=0, trial=r, file=name[(size, r)],
                          bytes=size, engine=s["engine"], fill=s["fill"], sync=s["sync"] if op == "write" else "none",
                          seed=s["seed"], data_seed=s["seed"], existing=False))
    return ExpandedTest(name=test.name, kind="files", ops=ops, between=test.between,
                        files_bytes=sum(sizes) * test.repeats)
