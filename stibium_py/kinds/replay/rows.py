"""A replay trial's rows: the helper's `replay` command (docs/helper-protocol.md), and its answer made into rows of
measurements.csv: the trial's row (the whole replay: its elapsed time, calls and bytes, with its CallFacts) and a
row for each kind of call (its access the kind: its count, bytes, time in calls and latencies). An answer of another
trace or thread count, or with a key nobody decided about, is refused."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ... import fills
from ...errors import MeasurementError
from ...rundir.answers import refuse_unknown_keys
from ...rundir.measurement import OP_FIELDS, Measurement
from ...rundir.op import Op
from .script import KINDS, Script


def replay_args(op: Op, root: Path, script_path: Path, phase: str, spacing: str, evict: bool) -> list[str]:
    """The helper command of one phase of a trial: layout (the files the program met, made untimed) or run."""
    args = ["replay", "--path", str(root), "--script", str(script_path), "--phase", phase, "--data-seed",
            str(op.data_seed), "--fill", fills.helper_text(op.fill)]
    return args + (["--timing", spacing] if phase == "run" else ["--evict", "on" if evict else "off"])


_LATENCY = ("lat_p50_s", "lat_p90_s", "lat_p99_s", "lat_p999_s", "lat_max_s", "lat_min_s", "lat_mean_s",
            "lat_hist_ns")
_TRIAL_COLUMNS = {"calls": "requests", "bytes": "bytes", "seconds": "seconds", "start_ns": "start_ns",
                  "end_ns": "end_ns", "in_calls_s": "in_calls_s", "think_s": "think_s", "waited_s": "waited_s",
                  "late": "late_calls", "late_max_s": "late_max_s", "late_p99_s": "late_p99_s",
                  "mismatched": "mismatched_calls", "error": "error", "errno": "errno", "strerror": "strerror"}
DROPPED_KEYS = {
    "phase": "the request echoed (checked: run)",
    "path": "an absolute path of the measuring machine; the row keeps the trial's folder relative to the test folder",
    "threads": "the request echoed (checked against the script's threads)",
    "timing": "the request echoed (checked); the row's replay_timing says it as the plan does",
    "kinds": "each kind of call: a row of its own",
    "slowest": "the slowest calls, by the helper's index: the row's slowest_calls, by the trace's",
    "first_mismatch": "the first mismatched call, by the helper's index: the row's first_mismatch, by the trace's",
    "first_mismatch_strerror": "what it returned (empty: it succeeded where the recorded one failed); said in the "
                               "report from the trace",
    "usage": "set on a usage error only, which the runner reports as a failure of its own",
}
_KIND_KEYS = {"call", "count", "bytes", "seconds", "mismatched", *_LATENCY}


def from_replay_answer(op: Op, ok: bool, answer: dict[str, Any], started_s: float | None, script: Script,
                       timing: str, spacing: str) -> list[Measurement]:
    """The trial's row, then a row for each kind of call; a failed trial: its row alone, with the error."""
    refuse_unknown_keys(answer, _TRIAL_COLUMNS, DROPPED_KEYS)
    fields = {f: getattr(op, f) for f in OP_FIELDS}
    common = {"engine": op.engine, "engine_requested": op.engine, "started_s": started_s}
    if not ok:
        return [Measurement(**fields, **common, bytes=0, seconds=None, error=str(answer.get("error") or "failed"),
                            errno=answer.get("errno"), strerror=answer.get("strerror"), replay_timing=timing)]
    expected = {"phase": "run", "calls": script.calls, "threads": script.threads, "timing": spacing}
    for key, want in expected.items():
        if answer.get(key) != want:
            raise MeasurementError(f"operation {op.seq}: the helper replayed {key}={answer.get(key)!r} where the "
                                   f"script asked for {want!r}; reinstall stibium so that the helper and the "
                                   f"package match")
    trial = {column: answer[key] for key, column in _TRIAL_COLUMNS.items() if key in answer}
    first = answer.get("first_mismatch")
    slowest = [[script.index[int(k)], float(s)] for k, s in answer.get("slowest", [])
               if isinstance(k, int) and 0 <= k < script.calls and isinstance(s, (int, float)) and math.isfinite(s)]
    rows = [Measurement(**fields, **common, **trial, replay_timing=timing,
                        first_mismatch=script.index[first] if isinstance(first, int) and 0 <= first < script.calls
                        else None, slowest_calls=json.dumps(slowest))]
    for kind in answer.get("kinds", []):
        if not isinstance(kind, dict) or set(kind) - _KIND_KEYS or kind.get("call") not in KINDS:
            raise MeasurementError(f"operation {op.seq}: the helper answered a kind of call this stibium does not "
                                   f"know; reinstall stibium so that the helper and the package match")
        latency = {k: kind[k] for k in _LATENCY if k in kind}
        rows.append(Measurement(**{**fields, "access": kind["call"]}, **common, requests=kind["count"],
                                bytes=kind["bytes"], seconds=kind["seconds"], mismatched_calls=kind["mismatched"],
                                **latency))
    return rows
