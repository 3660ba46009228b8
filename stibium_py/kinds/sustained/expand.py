"""A sustained test as operations (Op), in run order, every random choice drawn from the plan's seed."""

from __future__ import annotations

from typing import Any

from ...rundir.op import Op
from ...plan.expand import (ExpandedTest, check_count, checked_granularity, granular, in_flight_counts,
                            share_of_free, size_of)
from ...plan.model import Where
from .model import SustainedTest


def expand_test(test: SustainedTest, where: Where, s: dict[str, Any], seq0: int,
                   free_bytes: int | None) -> ExpandedTest:
    units = s["units"]
    g = checked_granularity(size_of(test.granularity, units, where / "granularity"), where / "granularity")
    if test.bytes is not None:
        total = granular(test.bytes, g, units, where / "bytes")
    else:
        total = share_of_free(test, units, where, free_bytes)
        total -= total % g
        if total < g:
            raise (where / "fraction_of_free").error(f"{test.fraction_of_free} of {free_bytes} bytes free, less the "
                                                     f"margin the file system needs, is less than one request; free "
                                                     f"some space or choose another target")
    (depth,), (threads,) = in_flight_counts(test, s["engine"], where)
    file_bytes = min(granular(test.file_size, g, units, where / "file_size"), total)
    chunk = min(granular(test.chunk, g, units, where / "chunk"), file_bytes)
    if chunk < 2 * depth * threads * g and chunk < file_bytes:
        raise (where / "chunk").error(f"a chunk of {chunk} bytes holds fewer than twice the {depth * threads} requests "
                                      f"in flight ({2 * depth * threads * g} bytes): a chunk is timed from completion "
                                      f"to completion; raise chunk or lower queue_depth or threads")
    sizes = [file_bytes] * (total // file_bytes) + ([total % file_bytes] if total % file_bytes else [])
    check_count(len(sizes) * (2 if test.read_back else 1), where / "file_size")
    width = len(str(len(sizes) - 1))
    ops: list[Op] = []
    for op in ("write", "read") if test.read_back else ("write",):
        for i, size in enumerate(sizes):
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="sustained", op=op, access="sequential",
                          size_bytes=size, granularity_bytes=g, stride_bytes=0, trial=i,
                          file=f"{test.name}/s-{i:0{width}d}.bin", bytes=size, engine=s["engine"], fill=s["fill"],
                          sync=s["sync"] if op == "write" else "none", seed=s["seed"], data_seed=s["seed"],
                          existing=False, queue_depth=depth, threads=threads, chunk_bytes=chunk))
    return ExpandedTest(name=test.name, kind="sustained", ops=ops, files_bytes=total,
                        free_bytes=free_bytes if test.fraction_of_free is not None else None)
