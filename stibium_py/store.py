"""The run directory: run.json (plan, versions, machine, status) and
measurements.csv (one row per measurement, appended and flushed as it happens).

A run directory is the unit users copy between machines: nothing in it needs an
absolute path to be read again. Reading tolerates a CSV cut mid-row (the rows
that are whole are kept) and says clearly what is missing or damaged.
"""

from __future__ import annotations

import csv
import io
import datetime as dt
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from .errors import RunDirError  # noqa: F401 (raised here, declared apart)
from .measurement import BOOL_COLUMNS, COLUMNS, INT_COLUMNS, NUMBER_COLUMNS, TEXT_COLUMNS, Measurement
from .table import Table, empty_column
from .record import RecordError, RunRecord, SeriesRecord

RUN_JSON = "run.json"
SERIES_JSON = "series.json"
MEASUREMENTS_CSV = "measurements.csv"
SUMMARY_JSON = "summary.json"
REPORT_HTML = "report.html"

def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def is_series(path: Path) -> bool:
    """A folder of repeated runs (series.json and run-1/, run-2/, ...) rather than one run directory."""
    return (path / SERIES_JSON).is_file()


def read_series_json(path: Path) -> SeriesRecord:
    try:
        data = json.loads((path / SERIES_JSON).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RunDirError(f"{path / SERIES_JSON}: damaged or unreadable ({e}); restore it from a copy") from None
    try:
        return SeriesRecord.from_json(data, str(path / SERIES_JSON))
    except RecordError as e:
        raise RunDirError(str(e)) from None


def write_series_json(path: Path, record: SeriesRecord) -> None:
    write_json_atomic(path / SERIES_JSON, record.to_json())


def series_run_dirs(path: Path) -> list[Path]:
    """The run directories of a series that exist, in order (run-1, run-2, ...)."""
    runs = read_series_json(path).runs
    return [path / f"run-{i}" for i in range(1, runs + 1) if (path / f"run-{i}" / RUN_JSON).is_file()]


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
    """A file written whole or not at all: a temporary beside it, then renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(_finite(data), indent=2, sort_keys=False, default=str, allow_nan=False) + "\n")


def read_run_json(run_dir: Path) -> RunRecord:
    path = run_dir / RUN_JSON
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: not a run directory (no such folder)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{run_dir}: no {RUN_JSON}; this is not a stibium run directory, or it was damaged") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RunDirError(f"{path}: damaged ({e}); restore it from a copy of the run") from None
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
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._repair_tail()
        # A run resumed from an older format keeps its file's columns.
        self.columns = list(COLUMNS) if new else _header_of(self.path)
        self._file = open(self.path, "a", newline="", encoding="utf-8")
        self._writer = csv.DictWriter(self._file, fieldnames=self.columns, extrasaction="ignore")
        if new:
            self._writer.writeheader()
            self._file.flush()

    def _repair_tail(self) -> None:
        """Cut a row left half-written by a killed run, so appended rows start on their own line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def append(self, m: Measurement) -> None:
        self._writer.writerow(m.to_row())
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _header_of(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        header = next(csv.reader(f), [])
    return [c for c in header if c in COLUMNS] or list(COLUMNS)


# Up to this size (about 1200 rows) measurements.csv is read row by row: 75 us a row against 0.22 s to import
# pyarrow and pyarrow.compute (0.13 and 0.08 s, -X importtime on this project's machine); a quick run's 81 rows
# take 7 ms.
ROW_READER_MAX_BYTES = 256 * 1024


def read_measurements(run_dir: Path) -> tuple[Table, int]:
    """The whole rows of measurements.csv as a table, and how many rows were damaged and skipped.

    A columnar reader (pyarrow's CSV reader, multi-threaded): a million rows in 1.9 s on two cores
    against 3.4 s for pandas' C reader in the same run (tests/bench/bench_read.py); polars took 2.3 s in a
    separate measurement. A file with a damaged row it cannot skip by itself (a value that does not
    parse) is read again row by row, and so is a small file (ROW_READER_MAX_BYTES)."""
    path = run_dir / MEASUREMENTS_CSV
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Table.empty(), 0
    damaged = 0
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]  # a row cut mid-way
        damaged = 1
    header = next(csv.reader([data[: data.find(b"\n")].decode("utf-8", "replace")]), []) if data else []
    if not header:
        return Table.empty(), damaged
    if tuple(header[: len(COLUMNS)]) != COLUMNS[: len(header)] or "seconds" not in header:
        raise RunDirError(f"{path}: the header is not stibium's; restore the file from a copy of the run")
    if len(data) <= ROW_READER_MAX_BYTES:     # a small run: importing pyarrow costs more than reading its rows
        rows, skipped = _read_rows(data, header)
        return Table.from_rows(rows), damaged + skipped
    fast = _read_columns(data, header)
    if fast is not None:
        table, skipped = fast
        return table, damaged + skipped
    rows, skipped = _read_rows(data, header)
    return Table.from_rows(rows), damaged + skipped


def _read_columns(data: bytes, header: list[str]) -> tuple[Table, int] | None:
    """The fast path; None where a row is damaged in a way only the row reader can skip."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    skipped = 0

    def skip(row: Any) -> str:
        nonlocal skipped
        skipped += 1
        return "skip"

    types = {c: pa.int64() if c in INT_COLUMNS else pa.float64() if c in NUMBER_COLUMNS
             else pa.bool_() if c in BOOL_COLUMNS else pa.string() for c in header if c in COLUMNS}
    try:
        t = pa_csv.read_csv(pa.py_buffer(data), parse_options=pa_csv.ParseOptions(invalid_row_handler=skip,
                                                                                  newlines_in_values=True),
                            convert_options=pa_csv.ConvertOptions(column_types=types, null_values=[""],
                                                                  true_values=["true"], false_values=["false"],
                                                                  strings_can_be_null=True,
                                                                  quoted_strings_can_be_null=True))
    except pa.ArrowInvalid:
        return None
    n = t.num_rows
    columns: dict[str, np.ndarray] = {}
    codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for c in COLUMNS:
        col = t.column(c) if c in types else None
        if col is None or (col.null_count == n and c not in INT_COLUMNS):
            columns[c] = empty_column(c, n)     # a column the file does not have, or has empty
            continue
        if c in INT_COLUMNS:
            if col.null_count:
                return None          # an integer every row has is missing: a damaged row
            columns[c] = _numbers(col.combine_chunks(), np.int64)
        elif c in NUMBER_COLUMNS or c in BOOL_COLUMNS:
            columns[c] = _numbers(col.cast(pa.float64()).combine_chunks(), np.float64)
        elif c == "file":              # one name per measurement: nothing to share
            columns[c] = np.array(col.to_pylist(), dtype=object)
        else:
            names, code = _text(col, "" if c in TEXT_COLUMNS else None)
            columns[c] = names[code]
            codes[c] = names, code
    return Table(columns, codes=codes), skipped


def _text(col: Any, missing: str | None) -> tuple[np.ndarray, np.ndarray]:
    """A text column as its distinct values and each row's code: the cells share one str per distinct
    value (a million rows of a few names cost 8 MB, not 50), and grouping by the codes is free."""
    import pyarrow as pa
    encoded = col.combine_chunks().dictionary_encode()
    values = encoded.dictionary.to_pylist()
    if missing in values:            # one code per value, so that grouping by codes groups by values
        names = np.array(values, dtype=object)
        empty = values.index(missing)
    else:
        names = np.empty(len(values) + 1, dtype=object)
        names[:-1] = values
        names[-1] = missing
        empty = len(values)
    return names, _numbers(encoded.indices.cast(pa.int64()), np.int64, missing=empty)


def _numbers(a: Any, dtype: type, missing: float = math.nan) -> np.ndarray:
    """An array of int64 or float64 values as a numpy array of its own, empty cells `missing`, read from
    the array's buffers: pyarrow's to_numpy and fill_null import pandas on first use, 0.3 s of every
    report."""
    n = len(a)
    if n == 0:
        return np.empty(0, dtype)
    validity, data = a.buffers()[:2]
    values = np.frombuffer(data, dtype, n, a.offset * np.dtype(dtype).itemsize).copy()
    if a.null_count:
        valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[a.offset:a.offset + n]
        values[valid == 0] = missing
    return values


def _read_rows(data: bytes, header: list[str]) -> tuple[list[Measurement], int]:
    """The row reader: slow, and tolerant of any damaged row."""
    reader = csv.DictReader(io.StringIO(data.decode("utf-8", "replace")))
    names = frozenset(header)
    rows, damaged = [], 0
    for raw in reader:
        parsed = Measurement.from_row(raw, names)
        if parsed is None:
            damaged += 1
        else:
            rows.append(parsed)
    return rows, damaged


def completed_seqs(table: Table) -> set[int]:
    """Operations that produced a measurement (a failed one is tried again on resume); a sustained test's
    chunk rows do not count, its file's row does (a file cut off by an interruption is written again)."""
    return set(table.seq[table.no_error & np.isnan(table.chunk)].tolist())
