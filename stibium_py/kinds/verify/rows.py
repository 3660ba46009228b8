"""A verify's rows: the helper's `sign` answers (docs/helper-protocol.md) as measurements. Every key of an answer is
a column here or dropped with why, and an answer that disagrees with its operation (another op, another byte count)
is refused, as measurement.from_answer refuses one of a measurement's; a row a chunk along the way (the rate
curves), and the file's own row at its end (its time, its sync, and on a read its blocks counted)."""

from __future__ import annotations

import json
from typing import Any

from ...errors import MeasurementError
from ...rundir.answers import refuse_unknown_keys
from ...rundir.measurement import OP_FIELDS, Measurement
from ...rundir.op import Op
from .earlier.record import BAD_KEPT

# A chunk row's keys, each to its column: the chunk's own bytes and time.
CHUNK_KEYS = {"chunk": "chunk", "chunk_bytes": "bytes", "bytes_done": "bytes_done", "requests": "requests",
              "start_ns": "start_ns", "end_ns": "end_ns", "seconds": "seconds"}
# The answer's keys, each to its column.
ANSWER_KEYS = {"bytes": "bytes", "seconds": "seconds", "start_ns": "start_ns", "end_ns": "end_ns",
               "direct_honoured": "direct_honoured", "sync_used": "sync_used", "sync_seconds": "sync_seconds",
               "ok": "ok_blocks", "moved": "moved_blocks", "corrupt": "corrupt_blocks",
               "unreadable": "unreadable_blocks", "period_blocks": "period_blocks", "error": "error",
               "errno": "errno", "strerror": "strerror"}
DROPPED_KEYS = {
    "path": "an absolute path of the measuring machine; the row keeps the file relative to the test folder",
    "op": "the request echoed (checked)",
    "blocks": "the request echoed (checked); the row's bytes are its blocks times block_bytes",
    "fs_type": "the file system's type: run.json's target facts have it",
    "bad": "the first bad blocks: the column bad_blocks, as JSON",
    "status": "ok or error, which the row's error says",
    "usage": "set on a usage error only, which the runner reports as a failure of its own",
}


def sign_args(path: str, op: Op, first_block: int, block_bytes: int, run_id: int) -> list[str]:
    """The helper's sign of one file of the fill: its blocks, the first one's index in the fill, its chunk."""
    return ["sign", "--path", path, "--op", op.op, "--blocks", str(op.bytes // block_bytes), "--first",
            str(first_block), "--block", str(block_bytes), "--chunk", str(op.chunk_bytes), "--run", str(run_id),
            "--seed", str(op.data_seed)]


def _fields(op: Op, first_block: int, block_bytes: int) -> dict[str, Any]:
    return {**{f: getattr(op, f) for f in OP_FIELDS}, "engine": op.engine, "engine_requested": op.engine,
            "block_bytes": block_bytes, "first_block": first_block}


def chunk_row(op: Op, row: dict[str, Any], started_s: float | None, first_block: int,
              block_bytes: int) -> Measurement:
    """The row of one chunk of a file written or read back."""
    missing = sorted(set(CHUNK_KEYS) - set(row))
    if missing:
        raise MeasurementError(f"operation {op.seq}: a chunk row lacks {', '.join(missing)}; reinstall stibium so "
                               f"that the helper and the package match")
    return Measurement(**_fields(op, first_block, block_bytes),
                       **{column: row[key] for key, column in CHUNK_KEYS.items()}, started_s=started_s)


def answer_row(op: Op, ok: bool, answer: dict[str, Any], started_s: float | None, first_block: int,
               block_bytes: int, resident_before: float | None) -> Measurement:
    """The row of one file written (its time, its sync) or read back (its blocks counted, the first bad ones
    listed). Refuses an answer of another op or byte count, or with a key nobody decided about."""
    refuse_unknown_keys(answer, ANSWER_KEYS, DROPPED_KEYS)
    if ok:
        for key, want in (("op", op.op), ("bytes", op.bytes), ("blocks", op.bytes // block_bytes)):
            if answer.get(key) != want:
                raise MeasurementError(f"operation {op.seq}: the helper signed {key}={answer.get(key)!r} where the "
                                       f"plan asked for {want!r}; reinstall stibium so that the helper and the "
                                       f"package match")
    measured = {column: answer[key] for key, column in ANSWER_KEYS.items() if key in answer}
    if ok and op.op == "read":
        measured["bad_blocks"] = json.dumps(list(answer.get("bad", []))[:BAD_KEPT], separators=(",", ":"))
    if not ok:
        measured.update(seconds=None, bytes=0, error=str(answer.get("error") or "failed"))
    return Measurement(**_fields(op, first_block, block_bytes), **{"bytes": op.bytes, **measured},
                       started_s=started_s, resident_before=resident_before)
