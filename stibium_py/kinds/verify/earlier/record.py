"""The record an earlier stibium's `stibium verify` left in its run directory (before a verify was a plan run by
the driver): verify.json (what was filled where, which files were written and checked, each file's findings)
and chunks.csv (each chunk's time, for the rate curves). Read, never written: such a run directory still reports
(`stibium report`), and is not carried on. It may come from a stranger: it is read strictly (pydantic, no extra
keys, names and sizes held to what a verify wrote)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ....rundir import received
from ....errors import RunDirError
from ....rundir.store import read_record_json

STATE = "verify.json"
CHUNKS = "chunks.csv"
MAX_FILES = 1_000_000
MAX_BLOCK_BYTES = 1 << 20
BAD_KEPT = 64


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class BadBlock(_Strict):
    block: int = Field(ge=0)
    kind: Literal["moved", "corrupt", "unreadable"]
    holds: Optional[int] = Field(None, ge=0)           # moved: the block it holds
    copy_of: Optional[int] = Field(None, ge=0)         # corrupt: the block it is a damaged copy of
    bits: Optional[int] = Field(None, ge=1)            # corrupt: bits that differ
    errno: Optional[int] = Field(None, ge=1, le=4095)  # unreadable
    error: Optional[str] = Field(None, max_length=200, pattern=r"^[A-Za-z0-9 ,.'()/-]*$")


class FileResult(_Strict):
    ok: int = Field(ge=0)
    moved: int = Field(ge=0)
    corrupt: int = Field(ge=0)
    unreadable: int = Field(ge=0)
    period_blocks: int = Field(ge=0)
    bad: list[BadBlock] = Field(max_length=BAD_KEPT)
    seconds: float = Field(ge=0)


class FileState(_Strict):
    name: str = Field(pattern=r"^v\d{6}\.bin$")
    first_block: int = Field(ge=0)
    blocks: int = Field(ge=1)
    written: bool = False
    write_seconds: Optional[float] = Field(None, ge=0)
    sync_seconds: Optional[float] = Field(None, ge=0)
    checked: Optional[FileResult] = None
    attempts: dict[Literal["write", "read"], int] = Field(default_factory=dict)


class VerifyState(_Strict):
    format: Literal["stibium-verify/1"] = "stibium-verify/1"
    target: str = Field(min_length=1, max_length=4096)
    folder: str = Field(pattern=r"^stibium-verify-[0-9a-f]{16}$")    # in the target: the verify's files
    run: int = Field(ge=1, lt=1 << 63)
    seed: int = Field(ge=0, lt=1 << 63)
    block_bytes: int = Field(ge=4096, le=MAX_BLOCK_BYTES, multiple_of=4096)
    chunk_bytes: int = Field(ge=4096, le=64 << 20)
    files: list[FileState] = Field(min_length=1, max_length=MAX_FILES)
    status: Literal["running", "interrupted", "failed", "complete"] = "running"
    stopped_by: Optional[str] = Field(None, max_length=300)
    started_epoch_s: float = Field(ge=0)
    host: str = Field(max_length=255, pattern=r"^[A-Za-z0-9._-]*$")
    keep: bool = False
    evicted: bool = False
    resident_pages_after: Optional[int] = Field(None, ge=0)
    # whether the file system honours uncached I/O (the helper's answer on the first file written; None: unknown)
    direct_honoured: Optional[bool] = None
    fs_type: str = Field("", max_length=31, pattern=r"^[A-Za-z0-9._-]*$")
    removed: bool = False

    @model_validator(mode="after")
    def _whole(self) -> "VerifyState":
        if self.chunk_bytes % self.block_bytes:
            raise ValueError("chunk_bytes is not a multiple of block_bytes")
        expected = 0
        for i, f in enumerate(self.files):
            if f.name != f"v{i:06d}.bin" or f.first_block != expected:
                raise ValueError(f"files[{i}] is not the verify's file {i} (its name or first block)")
            outside = [b.block for b in (f.checked.bad if f.checked else ()) if not 0 <= b.block - expected < f.blocks]
            if outside:
                raise ValueError(f"files[{i}] names block {outside[0]:,} as bad, which is not one of its blocks "
                                 f"({expected:,} to {expected + f.blocks - 1:,})")
            expected += f.blocks
        return self

    @property
    def blocks(self) -> int:
        return sum(f.blocks for f in self.files)

    @property
    def bytes(self) -> int:
        return self.blocks * self.block_bytes


def read_state(run_dir: Path) -> VerifyState:
    """verify.json of a run directory, or RunDirError in one line."""
    path = run_dir / STATE
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a verify's run directory (no such folder)")
    todo = "this is not a stibium verify's run directory, or it was damaged"
    data = read_record_json(path, f"{run_dir}: no {STATE}; {todo}", todo)
    try:
        return VerifyState.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise RunDirError(f"{path}: {where}: {first['msg']}; {todo}") from None


def read_chunks(run_dir: Path, state: VerifyState) -> dict[str, list[tuple[int, float]]]:
    """Per phase (write, read), each chunk of each file's last attempt: (bytes of the fill done, its rate in
    bytes a second). Rows that do not parse are left out."""
    phases: tuple[Literal["write", "read"], ...] = ("write", "read")
    last: dict[tuple[str, str], int | None] = {(phase, f.name): f.attempts.get(phase) for f in state.files
                                               for phase in phases}
    out: dict[str, list[tuple[int, float]]] = {"write": [], "read": []}
    try:
        text = received.read_text(run_dir / CHUNKS, received.TABLE_CAP_BYTES, errors="replace")
    except FileNotFoundError:
        text = ""
    for row in csv.DictReader(io.StringIO(text)):
        try:
            phase, name, attempt = row["phase"], row["file"], int(row["attempt"])
            moved, done = int(row["chunk_bytes"]), int(row["fill_bytes_done"])
            seconds = (int(row["end_ns"]) - int(row["start_ns"])) / 1e9
        except (KeyError, TypeError, ValueError):
            continue
        if phase in out and last.get((phase, name)) == attempt and seconds > 0 and moved > 0:
            out[phase].append((done, moved / seconds))
    for rows in out.values():
        rows.sort()
    return out
