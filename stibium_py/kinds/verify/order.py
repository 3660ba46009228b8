"""The order the driver carries out a verify test's operations in: every file of the fill written with its signed
blocks (each ends with a full sync), then every file not yet read back emptied out of the page cache, and each read
back with what stayed cached counted just before (`resident_before`: 0 proves the read met the drive), every block
checked. A resumed run writes no file again that was written whole, and reads back only what was not checked."""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

from ...plan.expand import ExpandedTest
from ...run.orders import Order, Steps
from . import rows

MAX_BLOCK_BYTES = 1 << 20


def block_bytes_for(bsize: int, granule_bytes: int | None = None) -> int:
    """The fill's block from the file system's (statvfs f_bsize): whole 4096 bytes (uncached requests), at most
    1 MiB, dividing every file's size and chunk (granule_bytes) where it is given; else 4096 (a network file
    system's f_bsize is its transfer size, not a block of the drive)."""
    block = bsize - bsize % 4096
    fits = 4096 <= block <= MAX_BLOCK_BYTES and (granule_bytes is None or granule_bytes % block == 0)
    return block if fits else 4096


def block_bytes_of(target: Path, granule_bytes: int | None = None) -> int:
    """The fill's block on target's file system (block_bytes_for)."""
    return block_bytes_for(os.statvfs(target).f_bsize, granule_bytes)


def signature_id(started_epoch_s: float, work_dir: str, writer_rank: int) -> int:
    """The id every block of one client's fill carries: the same for a run and its resume, another for another run
    (a block an earlier verify left reads as not this run's) and for each client's files."""
    digest = hashlib.sha256(f"{started_epoch_s!r}|{work_dir}|{writer_rank}".encode()).digest()
    return (int.from_bytes(digest[:8], "little") >> 1) or 1


def order(d: Steps, test: ExpandedTest) -> str:
    # every file's size and its chunk whole blocks (a fill of whole chunks: the chunk; else whole 64 KiB)
    block = block_bytes_of(d.work.path, math.gcd(test.ops[0].chunk_bytes, *(op.bytes for op in test.ops)))
    file_bytes = test.ops[0].size_bytes          # every file but the last; the last comes last
    rank = d.crew.team.rank

    def carry(op, resident: float | None = None) -> None:
        touch = d.place.touch(op, test)
        first = op.trial * file_bytes // block
        writer = touch.written_by if touch.written_by is not None else rank
        run_id = signature_id(float(d.run.started_epoch_s or 0.0), str(d.run.work_dir), writer)
        path = str(d.work.file(touch.file))
        if op.op == "write":
            # written whole: the name removed first, so that a file left there (a hard link to a file of the
            # person's among them, in a received folder) is never truncated or written over
            d.work.unlink(touch.file)
        d.measure_with(op, rows.sign_args(path, op, first, block, run_id),
                       lambda row, started_s: rows.chunk_row(op, row, started_s, first, block),
                       lambda ok, answer, started_s: rows.answer_row(op, ok, answer, started_s, first, block,
                                                                     resident), touch.written_by)

    read_seq = {op.trial: op.seq for op in test.ops if op.op == "read"}
    for op in test.ops:
        if op.op != "write":
            continue
        # a file written whole before a cut is not written again; one that is gone or cut short since, and not
        # yet read back, is (its read would fail, or check a file that is not what was written)
        if op.seq not in d.done or (read_seq[op.trial] not in d.done and
                                    not d.work.holds_whole(d.place.touch(op, test).file, op.bytes)):
            carry(op)
    reads = [op for op in test.ops if op.op == "read" and op.seq not in d.done]
    d.step()                            # many clients: every client's writes are done before any read
    for op in reads:                    # every file out of the page cache before the first is read back
        d.evict(op, test)
    for op in reads:
        carry(op, d.residency(op, test))
    return "complete"


# a verify fills the disk: its files never wait for the end of the run
ORDER = Order(order, files_wait_for_end=False, wears_drive=True, kept_when_cut=True)
