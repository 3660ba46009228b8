"""A helper's answer made a row (Measurement): `from_answer` builds one from the operation the plan asked for and
the helper's answer, refusing an answer that disagrees with its operation (another op, access, granularity, engine,
sync, seed or byte count), so a helper and a package that drifted apart cannot write a plausible row; every key of
the answer is a column or listed in DROPPED_KEYS with why, and an unknown key is refused too. `from_chunk` makes the
row of a chunk of a streamed measurement, `failed` the row of an operation that got no answer."""

from __future__ import annotations

from typing import Any

from .. import fills
from ..errors import MeasurementError
from .measurement import COLUMNS, OP_FIELDS, Measurement
from .op import Op


# Keys of the helper's answer that are not columns, each with why. `from_answer` checks the echoed
# request against the operation before dropping it.
DROPPED_KEYS = {
    "path": "an absolute path of the measuring machine; the row keeps the file relative to the test folder",
    "sync": "the request echoed (checked); what was used is the column sync_used",
    "seed": "the request echoed (checked); the plan in run.json has it",
    "usage": "set on a usage error only, which the runner reports as a failure of its own",
    "verified_requests": "only with --verify, a check of the helper itself that runs never ask for",
    "chunks": "sustained tests: how many chunk rows came before the answer (each is a row of its own)",
    "chunk_gaps_seconds": "sustained tests: the sum of the chunk rows' chunk_gap_s, and the last row's",
}


# Echoed request keys: the answer's value must equal the operation's.
_ECHOED = {"op": "op", "access": "access", "granularity_bytes": "granularity_bytes",
           "stride_bytes": "stride_bytes", "engine_requested": "engine", "seed": "seed", "fill": "fill",
           "queue_depth": "queue_depth", "threads": "threads", "read_fraction": "read_fraction",
           "duration_s": "duration_s", "warmup_s": "warmup_s", "stonewall_s": "stonewall_s",
           "rate_per_s": "rate_per_s", "arrivals": "arrivals"}


def from_answer(op: Op, ok: bool, answer: dict[str, Any], started_s: float | None) -> Measurement:
    """The row of one operation: the operation's fields, then the helper's measurements. Refuses an
    answer that disagrees with the operation, or that carries a key nobody decided about."""
    refuse_unknown_keys(answer, COLUMNS, DROPPED_KEYS)
    if ok:
        expected = {key: getattr(op, field) for key, field in _ECHOED.items()}
        if not op.duration_s and not op.stonewall_s:
            expected["bytes"] = op.bytes           # by time or to a stonewall, the bytes are what the time allowed
        if op.writes:
            expected["sync"] = op.sync
        if op.span_bytes is not None:
            expected["span_bytes"] = op.span_bytes
        expected["offset_bytes"] = op.offset_bytes
        for key, want in expected.items():
            if key in answer and answer[key] != want and not (key == "fill" and fills.same(answer[key], want)) \
                    and not (key in ("duration_s", "warmup_s", "stonewall_s") and _same_seconds(answer[key], want)):
                raise MeasurementError(f"operation {op.seq}: the helper measured {key}={answer[key]!r} where the "
                                       f"plan asked for {want!r}; reinstall stibium so that the helper and the "
                                       f"package match")
    measured = {k: v for k, v in answer.items() if k in _MEASURED}
    if not ok:
        measured["seconds"] = None
        measured["error"] = str(answer.get("error") or "failed")
    fields = {f: getattr(op, f) for f in OP_FIELDS}
    asked = {"duration_s": op.duration_s, "warmup_s": op.warmup_s} if op.duration_s else {}
    if op.steady_window:
        asked.update(steady_window=op.steady_window, steady_max_rounds=op.steady_max_rounds)
    return Measurement(**fields, **own_columns(op), **{"bytes": op.bytes, **asked, **measured,
                                                         "started_s": started_s})


# A chunk row's keys (the helper's --chunk), each to its column: the chunk's own bytes, time and latencies.
_CHUNK_KEYS = {"chunk": "chunk", "chunk_bytes": "bytes", "bytes_done": "bytes_done", "requests": "requests",
               "start_ns": "start_ns", "end_ns": "end_ns", "seconds": "seconds", "lat_p50_s": "lat_p50_s",
               "lat_p99_s": "lat_p99_s", "lat_max_s": "lat_max_s"}


def from_chunk(op: Op, row: dict[str, Any], started_s: float | None, temperature_c: float | None,
               run_clock_offset_s: float | None) -> Measurement:
    """The row of one chunk of a streamed (sustained) measurement; started_s is the measurement's, so that the
    chunks of one attempt at a file are told from an interrupted earlier one by it; run_clock_offset_s is
    the run's clock minus the helper's (in seconds), where known."""
    missing = sorted((set(_CHUNK_KEYS) | {"gap_ns"}) - set(row))
    if missing:
        raise MeasurementError(f"operation {op.seq}: a chunk row lacks {', '.join(missing)}; reinstall stibium so "
                               f"that the helper and the package match")
    fields = {f: getattr(op, f) for f in OP_FIELDS}
    return Measurement(**fields, **own_columns(op), **{column: row[key] for key, column in _CHUNK_KEYS.items()},
                       chunk_gap_s=row["gap_ns"] / 1e9, started_s=started_s, engine=op.engine,
                       temperature_c=temperature_c,
                       **({} if run_clock_offset_s is None else
                          {"run_start_s": row["start_ns"] / 1e9 + run_clock_offset_s,
                           "run_end_s": row["end_ns"] / 1e9 + run_clock_offset_s}))


def failed(op: Op, error: str, started_s: float | None) -> Measurement:
    """The row of an operation that got no answer (a hung helper)."""
    return Measurement(**{f: getattr(op, f) for f in OP_FIELDS}, **own_columns(op), bytes=0, started_s=started_s,
                       engine=op.engine, error=error)


def own_columns(op: Op) -> dict[str, Any]:
    """The columns an operation's own part puts on each of its rows: a stream's frame rate, streams, stream and
    buffer (Op.frames), an open loop's rate and arrivals (none on an operation without either)."""
    f = op.frames
    out = {"fps": f.fps, "streams": f.streams, "stream": f.stream, "buffer_frames": f.buffer_frames} if f else {}
    if op.rate_per_s:
        out.update(rate_per_s=op.rate_per_s, arrivals=op.arrivals, slo=op.slo or None)
    return out


def _same_seconds(answered: Any, planned: float) -> bool:
    """The helper keeps a time in whole nanoseconds."""
    return isinstance(answered, (int, float)) and abs(answered - planned) <= 1e-9 * max(1.0, planned)


# the operation's own columns come from it (own_columns), once the answer's echo of them is checked
_MEASURED = frozenset(COLUMNS) - set(OP_FIELDS) - {"started_s", "rate_per_s", "arrivals"}


def refuse_unknown_keys(answer: dict[str, Any], *known: Any) -> None:
    """An answer with a key that none of `known` (its columns, the keys dropped with why) holds, nor `status`, is
    from another helper than this package's: refused, naming the keys."""
    unknown = sorted(set(answer) - {"status"} - {k for keys in known for k in keys})
    if unknown:
        raise MeasurementError(f"the helper answered keys this stibium does not know ({', '.join(unknown)}); "
                               f"reinstall stibium so that the helper and the package match")
