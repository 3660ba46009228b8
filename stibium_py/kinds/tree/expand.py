"""A tree test as operations (Op), in run order, every random choice drawn from the plan's seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...rundir.op import Op, Phase
from ...plan.expand import ALLOCATION_BYTES, ExpandedTest, check_count, counts_of, derive_seed, size_of
from ...plan.model import LogUniform, MAX_GRANULARITY_BYTES, MAX_THREADS, Where
from .shape import TreeShape
from .model import TreeTest


def _tree_shape(test: TreeTest, where: Where, s: dict[str, Any]) -> TreeShape:
    """The tree a tree test makes: its sizes parsed and drawn from the seed, its names long enough."""
    units = s["units"]
    at = where / "file_size"
    spec = test.file_size
    low = high = 0
    if isinstance(spec, LogUniform):
        choices: tuple[int, ...] = ()
        low, high = size_of(spec.from_, units, at / "from"), size_of(spec.to, units, at / "to")
        if high < low:
            raise at.error(f"'to' ({spec.to}) is smaller than 'from' ({spec.from_})")
    elif isinstance(spec, list):
        if not spec:
            raise at.error("the list is empty; give at least one size")
        choices = tuple(size_of(v, units, at / i) for i, v in enumerate(spec))
    else:
        choices = (size_of(spec, units, at),)
    if max(choices or (high,)) > MAX_GRANULARITY_BYTES:
        raise at.error("a file of a tree is at most 2 GiB")
    shape = TreeShape(files=test.files, dirs=test.dirs, depth=test.depth, name_bytes=test.name_bytes, choices=choices,
                      low_bytes=low, high_bytes=high, seed=derive_seed(s["seed"], test.name, "sizes"))
    if test.name_bytes < shape.shortest_name:
        raise (where / "name_bytes").error(f"{test.files} files need names of at least {shape.shortest_name} bytes "
                                           f"(f, the file's number, {len('.dat')} for .dat); raise name_bytes")
    return shape



def expand_test(test: TreeTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    """Each trial a tree of its own per thread count (in an order drawn from the seed), its phases in order, each
    phase one measurement."""
    shape = _tree_shape(test, where, s)
    threads = counts_of(test.threads, MAX_THREADS, where / "threads")
    if max(threads) > test.files:
        raise (where / "threads").error(f"{max(threads)} threads for {test.files} files: every thread needs a file; "
                                        f"lower threads or raise files")
    check_count(test.trials * len(threads) * len(test.phases), where / "trials")
    total = shape.total_bytes
    rng = np.random.default_rng(derive_seed(s["seed"], test.name, "order"))
    sync = test.sync or "end"
    ops: list[Op] = []
    for trial in range(test.trials):
        for t in (threads[i] for i in rng.permutation(len(threads))):
            for phase in test.phases:
                moves = phase in ("create", "read", "copy")
                ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="tree", op=phase, access="",
                              size_bytes=total, granularity_bytes=0, stride_bytes=0, trial=trial,
                              file=f"{test.name}/tree-{trial}-t{t}", bytes=total if moves else 0,
                              engine=test.engine or "posix",
                              fill="random", sync=sync if phase == "create" else "none", seed=s["seed"],
                              data_seed=s["seed"], existing=phase != "create", threads=t, phase=Phase(test.files)))
    blocks = int(np.sum(-(-shape.sizes // ALLOCATION_BYTES))) + test.dirs
    copies = 2 if "copy" in test.phases else 1          # the copy is the tree again (where it does not clone)
    return ExpandedTest(name=test.name, kind="tree", ops=ops, between=test.between, tree=shape,
                        files_bytes=copies * blocks * ALLOCATION_BYTES)
