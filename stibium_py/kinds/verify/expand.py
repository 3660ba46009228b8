"""A verify test as operations (Op): each file of the fill written with its signed blocks, then each read back and
checked, in the fill's order. File i begins at byte i * (the first file's size) of the fill (only the last file
may be smaller). The signature's blocks are the file system's (known when the run starts: the order
asks), so every size here is whole 64 KiB, which any block up to 64 KiB divides: every file but the last is whole
chunks, and the last ends the fill at the plan's bytes rounded down to 64 KiB (a request of its last chunk may be
shorter), so that `bytes: 10MB` fills 9,961,472 bytes and not the 8,388,608 of whole 4 MiB chunks."""

from __future__ import annotations

from typing import Any

from ...rundir.op import Op
from ...plan.expand import ExpandedTest, check_count, share_of_free, size_of
from ...plan.model import Where
from .model import VerifyTest

MIN_CHUNK_BYTES = 64 << 10
MAX_CHUNK_BYTES = 64 << 20          # the helper's sign: a chunk of at most 64 MiB
FILL = "random"                     # every block: a 32-byte signature, then a payload drawn from the seed and its index


def expand_test(test: VerifyTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    units = s["units"]
    chunk = size_of(test.chunk, units, where / "chunk")
    if not MIN_CHUNK_BYTES <= chunk <= MAX_CHUNK_BYTES or chunk % MIN_CHUNK_BYTES:
        raise (where / "chunk").error(f"{chunk} bytes is not whole 64 KiB from 64 KiB to 64 MiB")
    if test.bytes is not None:
        total = size_of(test.bytes, units, where / "bytes")
    else:
        total = share_of_free(test, units, where, free_bytes)      # the file system keeps its room to work
    total -= total % MIN_CHUNK_BYTES
    if total < MIN_CHUNK_BYTES:
        raise (where / ("bytes" if test.bytes is not None else "fraction_of_free")).error(
            f"the fill holds less than {MIN_CHUNK_BYTES // 1024} KiB; give more bytes")
    file_bytes = min(max(chunk, size_of(test.file_size, units, where / "file_size") // chunk * chunk), total)
    sizes = [file_bytes] * (total // file_bytes) + ([total % file_bytes] if total % file_bytes else [])
    check_count(2 * len(sizes), where / "file_size")
    ops: list[Op] = []
    for op in ("write", "read"):
        for i, size in enumerate(sizes):
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="verify", op=op, access="sequential",
                          size_bytes=size, granularity_bytes=chunk, stride_bytes=0, trial=i,
                          file=f"{test.name}/v{i:06d}.bin", bytes=size, engine="direct", fill=FILL,
                          sync="full" if op == "write" else "none", seed=s["seed"], data_seed=s["seed"],
                          existing=False, chunk_bytes=chunk))
    return ExpandedTest(name=test.name, kind="verify", ops=ops, files_bytes=total,
                        free_bytes=free_bytes if test.fraction_of_free is not None else None)
