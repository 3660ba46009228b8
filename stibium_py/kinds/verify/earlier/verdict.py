"""What a verify found, from its record: the bytes that read back as written, the blocks that hold another
block (a drive that writes over what it holds: a capacity it does not have), corrupted and unreadable blocks,
the first bad one, and the verdict in one sentence first."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

from ....units import format_bytes, format_rate
from .record import BAD_KEPT, BadBlock, VerifyState


@dataclass(frozen=True)
class Verdict:
    state: VerifyState
    ok_blocks: int
    moved: int
    corrupt: int
    unreadable: int
    checked_blocks: int
    bad: list[BadBlock]                 # the first bad blocks, in the fill's order
    write_rates: list[tuple[int, float]]
    read_rates: list[tuple[int, float]]

    @property
    def whole(self) -> bool:
        return self.checked_blocks == self.state.blocks

    @property
    def ok_bytes(self) -> int:
        return self.ok_blocks * self.state.block_bytes

    def where(self, block: int) -> str:
        """A block's place: its byte in the fill, its file and its byte in the file."""
        s = self.state
        f = next(f for f in s.files if f.first_block <= block < f.first_block + f.blocks)
        return (f"byte {block * s.block_bytes:,} of the fill ({s.folder}/{f.name}, byte "
                f"{(block - f.first_block) * s.block_bytes:,})")

    def sentence(self) -> str:
        s = self.state
        return sentence_of(s.bytes, self.checked_blocks * s.block_bytes, self.ok_bytes, self.moved * s.block_bytes,
                           self.corrupt, self.unreadable)

    def details(self) -> list[str]:
        s = self.state
        how = {True: "written and read back uncached",
               False: f"written and read back with uncached I/O, which this file system ({s.fs_type or 'unknown'}) "
                      f"does not honour: its own cache may have answered reads, and hidden what the drive keeps",
               None: "written and read back asking for uncached I/O (whether this file system honours it is not "
                     "known)"}[s.direct_honoured]
        out = [f"{len(s.files)} file{'s' if len(s.files) > 1 else ''} of {format_bytes(s.bytes)} in {s.target}/"
               f"{s.folder}, blocks of {s.block_bytes:,} bytes, {how}"]
        for phase, rates in (("written", self.write_rates), ("read back", self.read_rates)):
            if rates:
                values = [r for _, r in rates]
                out.append(f"{phase} at a median {format_rate(median(values))} a chunk (slowest "
                           f"{format_rate(min(values))}, fastest {format_rate(max(values))})")
        if s.resident_pages_after:
            out.append(f"{s.resident_pages_after:,} pages of the files stayed in the page cache after it was emptied")
        if self.bad:
            first = self.bad[0]
            out.append(f"the first bad block: {self.where(first.block)}, {bad_text(first)}")
        return out


def sentence_of(total: int, checked: int, ok: int, moved: int, corrupt: int, unreadable: int,
                unknown: int = 0) -> str:
    """A verify's verdict in one sentence, from bytes: the fill's, those read back and checked so far, those that
    read back as written, those that hold other blocks of the fill; the blocks corrupted and unreadable; and
    `unknown`, bytes read back whose counts in the record are not believed (a record changed after the run),
    which are neither good nor bad."""
    doubt = (f"; what {unknown:,} bytes read back as is not known (their counts in the record do not add up)"
             if unknown else "")
    if checked + unknown < total:
        return (f"not finished: {checked + unknown:,} of {total:,} bytes read back so far, {ok:,} of them as written"
                f"{doubt}; resume it to check the rest")
    if ok == total:
        return f"all {total:,} bytes read back as written"
    if ok + unknown == total:
        return f"{ok:,} of {total:,} bytes read back as written{doubt}"
    said = [f"only {ok:,} of {total:,} bytes ({format_bytes(ok)} of {format_bytes(total)}) read back as written"]
    if moved:
        said.append(f"{moved:,} bytes hold other blocks of the fill: this drive writes over what it holds, and keeps "
                    f"about {format_bytes(ok)} (a fake capacity)")
    if corrupt:
        said.append(f"{corrupt:,} block{'s' if corrupt > 1 else ''} came back corrupted")
    if unreadable:
        said.append(f"{unreadable:,} block{'s' if unreadable > 1 else ''} could not be read")
    return "; ".join(said) + doubt


def bad_text(b: BadBlock) -> str:
    if b.kind == "moved":
        return f"it holds block {b.holds:,}, written {'after' if (b.holds or 0) > b.block else 'before'} it"
    if b.kind == "corrupt":
        copy = f" of a copy of block {b.copy_of:,}" if b.copy_of is not None else ""
        return f"{b.bits:,} bit{'s' if (b.bits or 0) > 1 else ''}{copy} differ from what was written"
    return f"unreadable ({b.error or 'errno'} {b.errno})"


def verdict_of(state: VerifyState, rates: dict[str, list[tuple[int, float]]]) -> Verdict:
    checked = [f.checked for f in state.files if f.checked is not None]
    checked_blocks = sum(f.blocks for f in state.files if f.checked is not None)
    bad = [b for c in checked for b in c.bad][:BAD_KEPT]
    return Verdict(state, sum(c.ok for c in checked), sum(c.moved for c in checked), sum(c.corrupt for c in checked),
                   sum(c.unreadable for c in checked), checked_blocks, bad, rates.get("write", []),
                   rates.get("read", []))


def to_json(v: Verdict) -> dict[str, Any]:
    s = v.state
    return {"format": "stibium-verify-summary/1", "verdict": v.sentence(), "target": s.target, "status": s.status,
            "bytes": s.bytes, "block_bytes": s.block_bytes, "ok_bytes": v.ok_bytes, "moved_blocks": v.moved,
            "corrupt_blocks": v.corrupt, "unreadable_blocks": v.unreadable, "checked_blocks": v.checked_blocks,
            "first_bad_block": v.bad[0].block if v.bad else None,
            "bad": [b.model_dump(exclude_none=True) for b in v.bad]}
