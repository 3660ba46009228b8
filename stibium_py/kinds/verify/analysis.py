"""A verify test's analysis: from its rows, what was written, and what read back as written, moved (a block that
holds another block of the fill: a drive that writes over what it holds), came back changed or could not be read;
the first bad blocks; the rate of every chunk along the fill. The rows come from measurements.csv, which may come
from a stranger: a file's counts are used only where they are whole numbers that add up to its blocks, and its
list of bad blocks only where every entry is one the helper writes (verify/state.BadBlock, strict)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from statistics import median
from typing import Any, Callable

from pydantic import TypeAdapter, ValidationError

from ...analysis.cache import RESIDENT_THRESHOLD
from ...analysis.summary import Pending, SummaryContext
from ...rundir.measurement import BlockCounts, Measurement
from ...rundir.table import Table
from ...units import format_bytes, format_rate
from .earlier.record import BAD_KEPT, BadBlock
from .earlier.verdict import bad_text, sentence_of

_BAD_LIST = TypeAdapter(list[BadBlock])


@dataclass(frozen=True)
class VerifyResult:
    """One op of a verify test: its files written, or read back and checked."""

    name: str
    op: str                                 # write | read
    files: int                              # files done whole
    bytes: int                              # their bytes
    block_bytes: int
    seconds: float                          # the files' times summed
    rates: list[tuple[int, float]]          # each chunk of each file's last attempt: (its end in the fill, bytes/s)
    direct_honoured: bool | None            # False where some file's uncached I/O was not honoured; None: unknown
    sync_seconds: float = 0.0               # write: the files' full syncs, summed
    written_bytes: int = 0                  # read: the bytes written whole, all of which should read back
    ok_blocks: int = 0
    moved_blocks: int = 0
    corrupt_blocks: int = 0
    unreadable_blocks: int = 0
    period_blocks: int = 0                  # read: the wrap's period (the gcd over the files), 0 where none moved
    bad: list[BadBlock] = field(default_factory=list)     # the first bad blocks of the fill, in its order
    bad_files: list[tuple[str, int]] = field(default_factory=list)   # each bad block's file and its first block
    resident_max: float | None = None       # read: the most of a file found in the page cache just before its read
    unlisted_files: int = 0                 # read: files whose list of bad blocks could not be read (counts stand)
    rejected_files: int = 0                 # read: files whose counts did not add up to their blocks (left out)
    unknown_bytes: int = 0                  # read: those files' bytes: read back, but what they held is not known
    kind: str = "verify"

    @property
    def n(self) -> int:
        """Its measurements: the files (the summary table's count)."""
        return self.files

    @property
    def checked_blocks(self) -> int:
        return self.ok_blocks + self.moved_blocks + self.corrupt_blocks + self.unreadable_blocks

    @property
    def ok_bytes(self) -> int:
        return self.ok_blocks * self.block_bytes

    def sentence(self) -> str:
        """The verdict of a read back, in one sentence (verify/verdict.sentence_of, the words `stibium verify` says)."""
        checked = self.checked_blocks * self.block_bytes
        return sentence_of(max(self.written_bytes, checked + self.unknown_bytes), checked, self.ok_bytes,
                           self.moved_blocks * self.block_bytes, self.corrupt_blocks, self.unreadable_blocks,
                           self.unknown_bytes)

    @property
    def read_bytes(self) -> int:
        """What was read back: the checked blocks and the files whose counts are not believed."""
        return self.checked_blocks * self.block_bytes + self.unknown_bytes

    def where(self, k: int) -> str:
        """The place of bad block k (of `bad`): its byte in the fill, its file and its byte in the file."""
        block, (name, first) = self.bad[k].block, self.bad_files[k]
        return (f"byte {block * self.block_bytes:,} of the fill ({name}, byte "
                f"{(block - first) * self.block_bytes:,})")

    def rate_text(self) -> str:
        if not self.rates:
            return ""
        values = [r for _, r in self.rates]
        return (f"a median {format_rate(median(values))} a chunk (slowest {format_rate(min(values))}, fastest "
                f"{format_rate(max(values))})")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "op": self.op, "kind": self.kind, "files": self.files,
                               "bytes": self.bytes, "block_bytes": self.block_bytes, "seconds": self.seconds,
                               "direct_honoured": self.direct_honoured,
                               "chunk_rate_bytes_per_s": _spread([r for _, r in self.rates])}
        if self.op == "write":
            return {**out, "sync_seconds": self.sync_seconds}
        return {**out, "verdict": self.sentence(), "written_bytes": self.written_bytes,
                "ok_bytes": self.ok_bytes, "ok_blocks": self.ok_blocks, "moved_blocks": self.moved_blocks,
                "corrupt_blocks": self.corrupt_blocks, "unreadable_blocks": self.unreadable_blocks,
                "period_blocks": self.period_blocks, "first_bad_block": self.bad[0].block if self.bad else None,
                "bad": [{**b.model_dump(exclude_none=True), "file": f} for b, (f, _) in zip(self.bad, self.bad_files)],
                "resident_before_max": self.resident_max,
                "unlisted_files": self.unlisted_files, "rejected_files": self.rejected_files,
                "unknown_bytes": self.unknown_bytes}


def _spread(values: list[float]) -> dict[str, float] | None:
    return {"median": median(values), "min": min(values), "max": max(values)} if values else None


def _last_attempts(rows: list[Measurement]) -> tuple[list[Measurement], list[Measurement]]:
    """The files done whole (their rows without a chunk), and the chunk rows of those attempts only (a file cut
    short and done again on resume has chunk rows of both: its row's started_s tells which are the last's)."""
    files: dict[tuple[int, int | None], Measurement] = {}
    for m in rows:
        if m.chunk is None:
            files[m.seq, m.rank] = m            # a resumed file's row replaces the one before (the same seq)
    chunks = [m for m in rows if m.chunk is not None and (m.seq, m.rank) in files
              and m.started_s == files[m.seq, m.rank].started_s]
    return sorted(files.values(), key=lambda m: (m.seq, m.rank or 0)), chunks


def _rates(chunks: list[Measurement], file_bytes: int) -> list[tuple[int, float]]:
    """Each chunk's rate against where it ended in the fill (file i begins at i times the first file's size)."""
    out = [(m.trial * file_bytes + int(m.bytes_done or 0), m.bytes / m.seconds)
           for m in chunks if m.seconds and m.seconds > 0 and m.bytes > 0]
    return sorted(out)


def _honoured(files: list[Measurement]) -> bool | None:
    said = [m.direct_honoured for m in files]
    return False if False in said else (True if said and all(v is True for v in said) else None)


def _blocks(m: Measurement) -> BlockCounts:
    """A row's own part (a row edited to lack it reads as one of no values)."""
    return m.blocks or BlockCounts()


def _counts(m: Measurement) -> tuple[int, int, int, int] | None:
    """A file's four counts, where they are whole numbers that add up to its blocks; else None."""
    b = _blocks(m)
    given = (b.ok_blocks, b.moved_blocks, b.corrupt_blocks, b.unreadable_blocks)
    if not b.block_bytes or any(c is None or c < 0 for c in given):
        return None
    ok, moved, corrupt, unreadable = (int(c or 0) for c in given)
    counts = (ok, moved, corrupt, unreadable)
    return counts if sum(counts) * b.block_bytes == m.bytes else None


def _bad_list(m: Measurement) -> list[BadBlock] | None:
    try:
        found = _BAD_LIST.validate_python(json.loads(_blocks(m).bad_blocks or "[]"))
    except (ValueError, ValidationError):
        return None
    return found if len(found) <= BAD_KEPT else None


def verify_result(name: str, op: str, rows: Table, written: Table | None) -> VerifyResult:
    """The result of a test's rows of one op; a read's `written` are the same test's write rows (what should read
    back)."""
    files, chunks = _last_attempts(rows.rows())
    file_bytes = next((m.size_bytes for m in files if m.trial == 0), files[0].size_bytes if files else 0)
    # the fill's block (the helper's: whole 4 KiB up to 1 MiB); a file of another block is not believed (_counts)
    block = next((int(b) for b in (_blocks(m).block_bytes for m in files) if b and 4096 <= b <= 1 << 20
                  and b % 4096 == 0), 4096)
    common: dict[str, Any] = dict(name=name, op=op, block_bytes=block, rates=_rates(chunks, file_bytes),
                                  direct_honoured=_honoured(files))
    if op != "read":
        return VerifyResult(files=len(files), bytes=sum(m.bytes for m in files),
                            seconds=sum(m.seconds or 0.0 for m in files),
                            sync_seconds=sum(m.sync_seconds or 0.0 for m in files), **common)
    written_files, _ = _last_attempts(written.rows()) if written is not None else ([], [])
    counted, unlisted, period = [0, 0, 0, 0], 0, 0
    bad: list[BadBlock] = []
    where: list[tuple[str, int]] = []
    kept: list[Measurement] = []
    rejected: list[Measurement] = []
    for m in files:
        counts = _counts(m) if _blocks(m).block_bytes == block else None
        if counts is None:
            rejected.append(m)
            continue
        kept.append(m)
        counted = [a + b for a, b in zip(counted, counts)]
        period = math.gcd(period, int(_blocks(m).period_blocks or 0))
        listed = _bad_list(m)
        if listed is None:
            unlisted += 1
            continue
        for b in listed:
            if len(bad) < BAD_KEPT:
                bad.append(b)
                where.append((m.file, int(_blocks(m).first_block or 0)))
    resident = [m.resident_before for m in kept if m.resident_before is not None]
    return VerifyResult(files=len(kept), bytes=sum(m.bytes for m in kept), seconds=sum(m.seconds or 0.0 for m in kept),
                        written_bytes=sum(m.bytes for m in written_files), ok_blocks=counted[0],
                        moved_blocks=counted[1], corrupt_blocks=counted[2], unreadable_blocks=counted[3],
                        period_blocks=period, bad=bad, bad_files=where, resident_max=max(resident, default=None),
                        unlisted_files=unlisted, rejected_files=len(rejected),
                        unknown_bytes=sum(m.bytes for m in rejected), **common)


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    written = None
    if op == "read" and ctx.valid is not None:
        v = ctx.valid
        written = v.take((v.col("test") == name) & (v.col("kind") == "verify") & (v.col("op") == "write"))
    result = verify_result(name, op, rows, written)
    return lambda: [result]


def add_warnings(e: VerifyResult, add: Callable[..., None]) -> None:
    label = f"{e.name} ({e.op})"
    if e.op == "read" and e.checked_blocks and e.ok_blocks < e.checked_blocks:
        add("warning", label, e.sentence(), "copy off what matters on this drive and do not trust it with data: "
            "return it if it is new; the report lists the first bad blocks")
    if e.op == "read" and e.read_bytes < e.written_bytes:
        add("warning", label, f"{format_bytes(e.written_bytes - e.read_bytes)} of what was written "
            f"were not read back", "resume the run to read back the rest")
    if e.resident_max is not None and e.resident_max > RESIDENT_THRESHOLD:
        add("warning", label, f"up to {e.resident_max:.0%} of a file was still in the page cache after it was "
            f"emptied: those blocks were read from memory, not the drive", "run on a local disk whose file system "
            "honours eviction")
    if e.rejected_files:
        add("warning", label, f"the counts of {e.rejected_files:,} file{'s' if e.rejected_files > 1 else ''} in "
            f"measurements.csv do not add up to their blocks and were left out", "the file was changed after the "
            "run; run the verify again")
    if e.unlisted_files:
        add("info", label, f"the list of bad blocks of {e.unlisted_files:,} file{'s' if e.unlisted_files > 1 else ''} "
            f"could not be read (their counts stand)", "the file was changed after the run")


def first_bad_line(e: VerifyResult) -> str:
    """The first bad block, where and what, in words."""
    return f"the first bad block: {e.where(0)}, {bad_text(e.bad[0])}"
