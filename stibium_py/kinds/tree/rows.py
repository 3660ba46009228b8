"""A tree phase's row: the helper's `tree` command for one phase of a tree (docs/helper-protocol.md), and its
answer made into a row of measurements.csv, with the tree's counts (PhaseCounts) in their columns. An answer of
another phase, file count, thread count or byte count, or with a key nobody decided about, is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import MeasurementError
from ...rundir.answers import refuse_unknown_keys
from ...rundir.measurement import OP_FIELDS, Measurement
from ...rundir.op import Op


def tree_args(op: "Op", root: Path, list_path: Path, phase: str | None = None) -> list[str]:
    """The helper command of one phase of a tree (`phase` overrides the operation's: the untimed steps that
    bring a tree back after an interruption); the files are the list's lines, relative to root."""
    phase = phase or op.op
    args = ["tree", "--path", str(root), "--list", str(list_path), "--phase", phase, "--threads", str(op.threads),
            "--engine", op.engine]
    if phase == "create":
        args += ["--sync", op.sync if phase == op.op else "none", "--data-seed", str(op.data_seed)]
    return args


# A tree phase's answer (the helper's `tree`): each key to its column, or dropped with why.
_TREE_COLUMNS = {"ops": "requests", "bytes": "bytes", "seconds": "seconds", "start_ns": "start_ns",
                 "end_ns": "end_ns", "sync_seconds": "sync_seconds", "resident_before": "resident_before",
                 "dirs_made": "dirs_made", "lat_p50_s": "lat_p50_s", "lat_p90_s": "lat_p90_s", "lat_p99_s": "lat_p99_s",
                 "lat_p999_s": "lat_p999_s", "lat_max_s": "lat_max_s", "lat_min_s": "lat_min_s",
                 "lat_mean_s": "lat_mean_s", "lat_hist_ns": "lat_hist_ns", "error": "error", "errno": "errno",
                 "strerror": "strerror", "cloned": "cloned", "copy_method": "io_method", "calls": "syscalls"}
TREE_DROPPED_KEYS = {
    "phase": "the request echoed (checked against the operation's op)",
    "path": "an absolute path of the measuring machine; the row keeps the tree's folder relative to the test folder",
    "files": "the request echoed (checked: the list's lines)",
    "threads": "the request echoed (checked)",
    "engine": "the request echoed (checked); it is the row's engine",
    "sync": "the request echoed (checked); it is the row's sync_used",
    "names": "list: the names the folders held, the row's entries",
    "evicted": "read: whether the files were evicted first, which the runner always asks",
    "pages": "read: the files' pages, of which resident_before is the share cached when the phase began",
    "resident_pages": "read: the pages of them cached when the phase began (resident_before is the share)",
    "usage": "set on a usage error only, which the runner reports as a failure of its own",
}


def from_tree_answer(op: Op, ok: bool, answer: dict[str, Any], started_s: float | None,
                     caches_dropped: bool = False) -> Measurement:
    """The row of one phase of a tree: the operation's fields, then the helper's counts, time and latencies.
    Refuses an answer of another phase, file count, thread count or byte count, or with a key nobody decided
    about."""
    refuse_unknown_keys(answer, _TREE_COLUMNS, TREE_DROPPED_KEYS)
    if ok:
        expected = {"phase": op.op, "files": op.phase.files if op.phase else 0, "threads": op.threads,
                    "bytes": op.bytes, "engine": op.engine, **({"sync": op.sync} if op.op == "create" else {})}
        for key, want in expected.items():
            if answer.get(key) != want:
                raise MeasurementError(f"operation {op.seq}: the helper measured {key}={answer.get(key)!r} where the "
                                       f"plan asked for {want!r}; reinstall stibium so that the helper and the "
                                       f"package match")
    measured = {column: answer[key] for key, column in _TREE_COLUMNS.items() if key in answer}
    if ok:
        measured["entries"] = answer.get("names") if op.op == "list" else answer.get("ops")
        if op.op == "create":
            measured["sync_used"] = op.sync
    else:
        measured["seconds"] = None
        measured["error"] = str(answer.get("error") or "failed")
        measured["bytes"] = 0
    fields = {f: getattr(op, f) for f in OP_FIELDS}
    return Measurement(**fields, **{"bytes": op.bytes, "engine": op.engine, "engine_requested": op.engine,
                                    **measured, "started_s": started_s, "caches_dropped": caches_dropped})
