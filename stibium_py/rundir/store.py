"""The run directory: run.json (plan, versions, machine, status) and
measurements.csv (one row per measurement, appended and flushed as it happens).

A run directory is the unit users copy between machines: nothing in it needs an
absolute path to be read again. Reading run.json says clearly what is missing or
damaged; measurements.csv is read back by csvread.py (a CSV cut mid-row keeps the
rows that are whole).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RunDirError
from . import received
from .csvread import MEASUREMENTS_CSV, header_of
from .jsonread import JsonRefused, load_json
from .measurement import COLUMNS, Measurement
from .table import Table
from .record import RecordError, RunRecord, SeriesRecord

RUN_JSON = "run.json"
SERIES_JSON = "series.json"
SUMMARY_JSON = "summary.json"
REPORT_HTML = "report.html"

def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def is_series(path: Path) -> bool:
    """A folder of repeated runs (series.json and run-1/, run-2/, ...) rather than one run directory."""
    return os.path.lexists(path / SERIES_JSON)      # a link there is refused when it is read, not passed over


def read_series_json(path: Path) -> SeriesRecord:
    try:
        data = load_json(received.read_text(path / SERIES_JSON), str(path / SERIES_JSON),
                         "restore it from a copy of the series")
    except JsonRefused as e:
        raise RunDirError(str(e)) from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RunDirError(f"{path / SERIES_JSON}: damaged or unreadable ({e}); restore it from a copy") from None
    try:
        return SeriesRecord.from_json(data, str(path / SERIES_JSON))
    except RecordError as e:
        raise RunDirError(str(e)) from None


def write_series_json(path: Path, record: SeriesRecord) -> None:
    write_json_atomic(path / SERIES_JSON, record.to_json())


def series_run_dirs(path: Path) -> list[Path]:
    """The run directories of a series that exist, in order (run-1, run-2, ...); a run-N that is a link (out of
    the series) is refused, not followed."""
    runs = read_series_json(path).runs
    found = []
    for i in range(1, runs + 1):
        try:
            run_dir = received.folder_inside(path, f"run-{i}")
        except FileNotFoundError:
            continue
        if os.path.lexists(run_dir / RUN_JSON):
            found.append(run_dir)
    return found


def run_name(host: str, plan_name: str, started: dt.datetime) -> str:
    safe_host = re.sub(r"[^A-Za-z0-9._-]", "_", host.split(".")[0]) or "host"
    return f"{plan_name}-{safe_host}-{started.strftime('%Y%m%dT%H%M%SZ')}"


def new_run_dir(out_dir: Path, plan_name: str, host: str, started: dt.datetime) -> Path:
    """reports/<plan>-<host>-<UTC time>/, created empty (a suffix if the name is taken)."""
    base = run_name(host, plan_name, started)
    out_dir.mkdir(parents=True, exist_ok=True)
    for i in range(1000):
        path = out_dir / (base if i == 0 else f"{base}-{i}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise RunDirError(f"{out_dir}: cannot find a free run directory name for {base}")


def _finite(node: Any) -> Any:
    """JSON has no NaN or Infinity: they become null."""
    if isinstance(node, float):
        return node if math.isfinite(node) else None
    if isinstance(node, dict):
        return {k: _finite(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_finite(v) for v in node]
    return node


def write_text_atomic(path: Path, text: str) -> None:
    """A file written whole or not at all: a new temporary beside it, then renamed over it (received.py: no link
    or file already in the folder is written through)."""
    received.write_atomic(path, text)


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json_text(data))


def json_text(data: Any) -> str:
    """data as JSON: containers that hold containers indented, one member a line, and a container of plain
    values (a point, a list of rates) on one line, written by json's C encoder. Indenting every value made
    json use its Python encoder, and the file one line per number (slower and larger: docs/performance.md). NaN
    and infinities are null (JSON has none); other values as json gives them, unknown ones as str."""
    parts: list[str] = []
    _json_into(data, "\n", parts)
    parts.append("\n")
    return "".join(parts)


def _json_into(node: Any, pad: str, out: list[str]) -> None:
    if isinstance(node, dict) and _any_nests(node.values()):
        inner = pad + "  "
        out.append("{")
        for i, (key, value) in enumerate(node.items()):
            out.append(f"{',' if i else ''}{inner}{_json_key(key)}: ")
            _json_into(value, inner, out)
        out.append(pad + "}")
    elif isinstance(node, (list, tuple)) and _any_nests(node):
        inner = pad + "  "
        out.append("[")
        for i, value in enumerate(node):
            out.append(f"{',' if i else ''}{inner}")
            _json_into(value, inner, out)
        out.append(pad + "]")
    else:
        out.append(_encode(node))


def _any_nests(values: Any) -> bool:
    for value in values:
        if isinstance(value, (dict, list, tuple)) and value:
            return True
    return False


_ENCODER = json.JSONEncoder(default=str, allow_nan=False)     # one for every value: json.dumps makes one a call


def _c_encoder() -> Any:
    """json's C encoder made once with _ENCODER's settings, where _ENCODER.encode makes one at each call (a
    million-row summary has 86,000 values: json_text took 0.47 s so, 0.32 s with this one); None where this
    Python's json has none. Without the circular check: a summary is a tree."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    e = _ENCODER
    return make(None, e.default, json.encoder.encode_basestring_ascii, None, e.key_separator, e.item_separator,
                e.sort_keys, e.skipkeys, e.allow_nan)


_C_ENCODE = _c_encoder()


def _encode(node: Any) -> str:
    """One value as _ENCODER.encode gives it; NaN and infinities (anywhere inside) as null."""
    try:
        if isinstance(node, str):
            return json.encoder.encode_basestring_ascii(node)
        if _C_ENCODE is not None:
            return "".join(_C_ENCODE(node, 0))
        return _ENCODER.encode(node)
    except ValueError:        # a NaN or an infinity somewhere inside
        return _ENCODER.encode(_finite(node))


def _json_key(key: Any) -> str:
    """A key as json writes it: a str as is, a number, bool or None as its JSON text in quotes."""
    return json.encoder.encode_basestring_ascii(key if isinstance(key, str) else json.dumps(key))


def read_record_json(path: Path, missing: str, todo: str) -> Any:
    """A run directory's record as JSON (within jsonread's bounds), or RunDirError in one line: `missing` where
    there is no such file, else what is wrong and `todo`."""
    try:
        return load_json(received.read_text(path), str(path), todo)
    except FileNotFoundError:
        raise RunDirError(missing) from None
    except JsonRefused as e:
        raise RunDirError(str(e)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RunDirError(f"{path}: damaged ({e}); {todo}") from None


def read_run_json(run_dir: Path) -> RunRecord:
    path = run_dir / RUN_JSON
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a run directory (no such folder)")
    data = read_record_json(path, f"{run_dir}: no {RUN_JSON}; this is not a stibium run directory, or it was damaged",
                            "restore it from a copy of the run")
    try:
        return RunRecord.from_json(data, str(path))
    except (RecordError, TypeError) as e:
        raise RunDirError(str(e) if isinstance(e, RecordError) else f"{path}: damaged ({e}); restore it from a "
                          f"copy of the run") from None


def write_run_json(run_dir: Path, record: RunRecord) -> None:
    write_json_atomic(run_dir / RUN_JSON, record.to_json())


class MeasurementLog:
    """measurements.csv, opened for appending; every row is flushed as it is written."""

    def __init__(self, run_dir: Path):
        self.path = run_dir / MEASUREMENTS_CSV
        received.cut_to_last_line(self.path)      # a row left half-written by a killed run
        self._file = received.open_append(self.path)
        new = os.fstat(self._file.fileno()).st_size == 0
        # A run resumed from an older format keeps its file's columns.
        self.columns = list(COLUMNS) if new else header_of(self.path)
        self._writer = csv.DictWriter(self._file, fieldnames=self.columns, extrasaction="ignore")
        if new:
            self._writer.writeheader()
            self._file.flush()

    def append(self, m: Measurement) -> None:
        self._writer.writerow(m.to_row())
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def completed_seqs(table: Table) -> set[int]:
    """Operations that produced a measurement (a failed one is tried again on resume); a sustained test's
    chunk rows do not count, its file's row does (a file cut off by an interruption is written again)."""
    return set(table.seq[table.no_error & np.isnan(table.chunk)].tolist())
