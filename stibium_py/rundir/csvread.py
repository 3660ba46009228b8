"""measurements.csv read back: the whole rows as a table (column by column with pyarrow above a few hundred rows,
row by row below), each row held to what stibium writes (a count, size or time never negative, a name's
characters, a fill and a kind this stibium knows): a run directory comes from strangers, and a row that is not
stibium's is counted as damaged and skipped, never read into a rate or onto the terminal."""

from __future__ import annotations

import csv
import io
import math
import os
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import RunDirError
from ..heap import give_back
from .. import fills, registry
from . import received
from .measurement import BOOL_COLUMNS, COLUMNS, INT_COLUMNS, NUMBER_COLUMNS, TEXT_COLUMNS, Measurement
from .table import Table, empty_column

MEASUREMENTS_CSV = "measurements.csv"


def header_of(path: Path) -> list[str]:
    with received.open_read(path) as f:
        header = next(csv.reader([f.readline(1 << 16).decode("utf-8", "replace")]), [])
    return [c for c in header if c in COLUMNS] or list(COLUMNS)


# Up to this size (about 1200 rows) measurements.csv is read row by row: below it reading the rows costs less
# than importing pyarrow and pyarrow.compute (docs/performance.md).
ROW_READER_MAX_BYTES = 256 * 1024


# a count, a size or a time that stibium never writes negative or infinite: a row that has one was not written
# by stibium (a run directory comes from strangers) and would reach the fits as a negative rate
NON_NEGATIVE_COLUMNS = ("bytes", "seconds", "size_bytes", "granularity_bytes", "stride_bytes", "requests",
                        "io_seconds", "sync_seconds", "open_seconds", "close_seconds", "lat_p50_s", "lat_p90_s",
                        "lat_p99_s", "lat_p999_s", "lat_max_s", "lat_mean_s", "lat_min_s", "fps", "streams", "stream",
                        "buffer_frames", "in_calls_s", "think_s", "waited_s", "late_calls", "late_max_s", "late_p99_s",
                        "mismatched_calls", "first_mismatch", "rate_per_s", "resp_p50_s", "resp_p90_s", "resp_p99_s",
                        "resp_p999_s", "resp_max_s", "resp_mean_s", "issue_late_p50_s", "issue_late_p99_s",
                        "issue_late_max_s", "late_issues", "unscheduled")


# columns stibium fills with a name (a plan's test name, an op, an access, an engine, an instrument and its
# version): what a label or a table prints of them is held to a name's characters, so that a stranger's file
# cannot put markup, a newline or an escape sequence on the terminal
WORD_COLUMNS = ("test", "op", "access", "engine", "instrument", "instrument_version", "replay_timing", "arrivals")


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")


# a client's host, printed in sentences and tables of many clients (a stream test's straggler): a host name's
# characters, or an address with its port as fio names its clients (127.0.0.1:8765, [::1]:8765)
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}(:\d{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?")


def shown_host(text: Any) -> str | None:
    """A host name from a stranger's file as a sentence may print it: itself where it has a host's characters,
    else None."""
    return text if isinstance(text, str) and _HOST.fullmatch(text) else None


def read_measurements(run_dir: Path) -> tuple[Table, int]:
    """The whole rows of measurements.csv as a table, and how many rows were damaged and skipped: a row cut
    short, a value that does not parse, a count, size or time below zero or infinite (NON_NEGATIVE_COLUMNS), a
    fill no plan could say, a name (WORD_COLUMNS) of other characters than a name's, or a kind of test this
    stibium does not know (a row edited by hand, or of a kind a plug-in brought: nothing here can summarise it,
    so it counts with the damaged rows rather than stopping the report)."""
    table, damaged = _read_measurements(run_dir)
    if not len(table):
        return table, damaged
    bad = np.zeros(len(table), dtype=bool)
    known = set(registry.names())

    def wrong(name: str, refused: Callable[[Any], bool]) -> None:
        # each distinct value judged once, its rows found by their codes: a column of a million cells has a few
        # distinct values, and listing the cells cost more than the rest of the checks (docs/performance.md)
        nonlocal bad
        distinct, code = table.coded(name)
        judged = np.fromiter((refused(v) for v in distinct), dtype=bool, count=len(distinct))
        if judged.any():
            bad |= judged[code]
    wrong("kind", lambda kind: kind not in known)
    for name, pattern in [*((n, _WORD) for n in WORD_COLUMNS), ("host", _HOST)]:
        wrong(name, lambda text, pattern=pattern: text not in (None, "") and (
            not isinstance(text, str) or not pattern.fullmatch(text)))
    # a label prints a point's fill: only the forms a plan may say
    wrong("fill", lambda text: text is not None and not fills.kept(text))
    for name in NON_NEGATIVE_COLUMNS:
        values = table.col(name)
        if values.dtype.kind in "fi":
            with np.errstate(invalid="ignore"):
                bad |= (values < 0) | np.isinf(values)
    if bad.any():
        return table.take(np.flatnonzero(~bad)), damaged + int(bad.sum())
    return table, damaged


def _read_measurements(run_dir: Path) -> tuple[Table, int]:
    """The whole rows of measurements.csv as a table, and how many rows were damaged and skipped.

    A columnar reader (pyarrow's streaming CSV reader, a block at a time: its own threads made no difference to a
    million rows; a large file's two halves side by side do, _parse_halves), the fastest of those tried beside it
    (tests/bench/bench_read.py, docs/performance.md). A file with a damaged row it cannot skip by itself (a value
    that does not parse) is read again row by row, and so is a small file (ROW_READER_MAX_BYTES)."""
    path = run_dir / MEASUREMENTS_CSV
    try:
        f = received.open_read(path)
    except FileNotFoundError:
        return Table.empty(), 0
    with f:
        return _read_measurements_from(f, path)


def _read_measurements_from(f: Any, path: Path) -> tuple[Table, int]:
    size = f.seek(0, os.SEEK_END)
    if size > received.TABLE_CAP_BYTES:
        raise received.Refused(f"{path}: larger than {received.TABLE_CAP_BYTES:,} bytes, more than stibium writes "
                               f"there; restore the run from a copy")
    f.seek(max(0, size - 1))
    whole = size == 0 or f.read(1) == b"\n"
    f.seek(0)
    first = f.readline()
    small = size <= ROW_READER_MAX_BYTES
    # a large file whole is handed to the columnar reader as the open file, not read into memory first: a million
    # rows are 220 MB of text; a row cut mid-way (the end of an interrupted run) is cut off from a copy
    data: bytes | None = None
    if small or not whole:
        f.seek(0)
        data = f.read()
    damaged = 0
    if data is not None and not whole:
        data = data[: data.rfind(b"\n") + 1]
        damaged = 1
    header = next(csv.reader([first.decode("utf-8", "replace")]), []) if first.endswith(b"\n") else []
    if not header:
        return Table.empty(), damaged
    if tuple(header[: len(COLUMNS)]) != COLUMNS[: len(header)] or "seconds" not in header:
        raise RunDirError(f"{path}: the header is not stibium's; restore the file from a copy of the run")
    if small:                  # a small run: importing pyarrow costs more than reading its rows
        rows, skipped = _read_rows(data or b"", header)
        return Table.from_rows(rows), damaged + skipped
    if data is None:
        f.seek(0)
    fast = _read_columns(f if data is None else data, header)     # the parsers' memory handed back already
    if fast is not None:
        table, skipped = fast
        return table, damaged + skipped
    if data is None:
        f.seek(0)
        data = f.read()
    rows, skipped = _read_rows(data, header)
    return Table.from_rows(rows), damaged + skipped


def _read_columns(source: Any, header: list[str]) -> tuple[Table, int] | None:
    """The fast path; None where a row is damaged in a way only the row reader can skip.

    The columns no sample of the file has a value in (_empty_in_samples: most of a run's 126, the columns of other
    kinds) are read as pyarrow's null type, which costs the parse next to nothing; a value in one of them after all
    (a stretch of rows the samples missed) fails that read, and the file is read again with every column's type.
    The samples decide only how fast the file is read, never what is read from it."""
    empty = _empty_in_samples(source, header)
    if empty:
        try:
            return _read_columns_typed(source, header, empty)
        except _NotEmpty:
            pass
        if not isinstance(source, bytes):
            source.seek(0)
    return _read_columns_typed(source, header, frozenset())


class _NotEmpty(Exception):
    """A column read as empty has a value."""


# where the file is sampled for its empty columns: this many stretches, spread over it evenly from its start, of
# SAMPLE_BYTES or an eighth of the file between them, whichever is less (measured: 28 ms for a million rows, where
# reading their 107 empty columns as numbers took 1.5 of 4 s; 5 ms for 10,000 rows, whose read went from 55 to
# 46 ms; stretches of SAMPLE_BYTES there, four fifths of the file, had made it 92 ms: docs/performance.md)
SAMPLES = 16
SAMPLE_BYTES = 128 * 1024


def _empty_in_samples(source: Any, header: list[str]) -> frozenset[str]:
    """The columns (other than the integer ones, which every row has) without a value in any of SAMPLES stretches
    of the file, each cut to whole lines, parsed together as text. A stretch that begins inside a quoted value
    parses as nonsense: at worst a column is taken for empty that is not, which the read finds out."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    size = len(source) if isinstance(source, bytes) else source.seek(0, os.SEEK_END)
    length = min(SAMPLE_BYTES, size // (8 * SAMPLES))
    stretches = []
    for k in range(SAMPLES):
        at = size * k // SAMPLES
        if isinstance(source, bytes):
            chunk = source[at:at + length]
        else:
            source.seek(at)
            chunk = source.read(length)
        stretches.append(chunk[chunk.find(b"\n") + 1:chunk.rfind(b"\n") + 1])   # whole lines (the first: the header)
    if not isinstance(source, bytes):
        source.seek(0)
    lines = b"".join(stretches)
    if not lines:
        return frozenset()
    try:
        table = pa_csv.read_csv(pa.BufferReader(lines),
                                read_options=pa_csv.ReadOptions(column_names=header, use_threads=False),
                                parse_options=pa_csv.ParseOptions(invalid_row_handler=lambda row: "skip",
                                                                  newlines_in_values=True),
                                convert_options=pa_csv.ConvertOptions(
                                    column_types={c: pa.string() for c in header}, null_values=[""],
                                    strings_can_be_null=True, quoted_strings_can_be_null=True))
    except pa.ArrowInvalid:
        return frozenset()
    filled = {c for c, col in zip(table.column_names, table.columns) if col.null_count < len(col)}
    return frozenset(c for c in header if c in COLUMNS and c not in filled and c not in INT_COLUMNS)


def _read_columns_typed(source: Any, header: list[str], empty: frozenset[str]) -> tuple[Table, int] | None:
    """_read_columns with the columns `empty` read as pyarrow's null type; _NotEmpty where one of them has a value.

    A large file is parsed in two halves side by side (_parse_halves): pyarrow's streaming reader parses one block
    after another on one core, and a million rows took 2.6-3.2 s as one stream against 1.9-2.6 s in halves on two
    (docs/performance.md).
    A column with one value in every row (most of a run's 126: the columns of other kinds) is that value repeated
    without memory (a read-only view)."""
    import pyarrow as pa

    types = {c: pa.null() if c in empty else pa.int64() if c in INT_COLUMNS else pa.float64() if c in NUMBER_COLUMNS
             else pa.bool_() if c in BOOL_COLUMNS else pa.string() for c in header if c in COLUMNS}
    at = None if isinstance(source, bytes) else _middle(source)
    parsed = _parse(source, types) if at is None else _parse_halves(source, at, types)
    # the parse's memory back before the summary's threads allocate theirs: a million rows' report held 0.3-0.45 GB
    # of it to its end without (0.78 GB resident after the read, 0.31 GB handed back: docs/performance.md)
    give_back()
    return None if parsed is None else parsed.table()


class _Parsed:
    """A stretch of measurements.csv parsed: its rows' count, the rows the parser skipped, and each column's parts
    (a block's numpy values, or its length where it has none) or, for a text column, its _TextParts."""

    def __init__(self, types: dict[str, Any]):
        self.n = 0
        self.skipped = 0
        self.parts: dict[str, list[Any]] = {c: [] for c in types}
        self.text = {c: _TextParts("" if c in TEXT_COLUMNS else None) for c in types
                     if c not in INT_COLUMNS and c not in NUMBER_COLUMNS and c not in BOOL_COLUMNS and c != "file"}

    @classmethod
    def joined(cls, stretches: list["_Parsed"]) -> "_Parsed":
        """The stretches of one file in their order, as one; the others are left empty, so that the table frees
        each column's parts as it joins them."""
        first, *rest = stretches
        for other in rest:
            first.n += other.n
            first.skipped += other.skipped
            for c, parts in other.parts.items():
                first.parts[c] += parts
            for c, text in other.text.items():
                first.text[c].extend(text)
            other.parts, other.text = {}, {}
        return first

    def table(self) -> tuple[Table, int]:
        n, parts, text = self.n, self.parts, self.text
        columns: dict[str, np.ndarray] = {}
        codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for c in COLUMNS:
            if c in text and text[c].filled:
                names, code = text[c].whole()
                columns[c] = _same(names[code[0]], n) if (code == code[0]).all() else names[code]
                codes[c] = names, code
            elif c not in parts or all(isinstance(p, int) for p in parts[c]):
                columns[c] = _same(empty_column(c, 1)[0], n)     # a column the file does not have, or has empty
            else:
                blank = None if c == "file" else math.nan       # a block without a value in a column with some
                column = np.concatenate([np.full(p, blank) if isinstance(p, int) else p for p in parts.pop(c)])
                same = c != "file" and n and (column == column[0]).all()
                columns[c] = _same(column[0], n) if same else column
        return Table(columns, codes=codes), self.skipped


def _parse(source: Any, types: dict[str, Any]) -> _Parsed | None:
    """The rows of `source` (a header line, then rows), in blocks of READ_BLOCK_BYTES, each block's columns kept as
    numpy parts and the parser's memory let go of: a parse of the whole file at once holds every column of it, 126
    of them, as arrow arrays beside the numpy ones, more than twice the peak of reading it block by block
    (docs/performance.md). None where an integer every row has is missing (a damaged row only the row reader can
    skip) or a value does not parse; _NotEmpty where a column read as empty has a value."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    out = _Parsed(types)

    def skip(row: Any) -> str:
        out.skipped += 1
        return "skip"

    parts, text = out.parts, out.text
    try:
        reader = pa_csv.open_csv(pa.BufferReader(source) if isinstance(source, bytes) else source,
                                 read_options=pa_csv.ReadOptions(block_size=READ_BLOCK_BYTES),
                                 parse_options=pa_csv.ParseOptions(invalid_row_handler=skip,
                                                                   newlines_in_values=True),
                                 convert_options=pa_csv.ConvertOptions(column_types=types, null_values=[""],
                                                                       true_values=["true"],
                                                                       false_values=["false"],
                                                                       strings_can_be_null=True,
                                                                       quoted_strings_can_be_null=True))
        for k, batch in enumerate(reader):
            if k % TRIM_EVERY_BLOCKS == TRIM_EVERY_BLOCKS - 1:
                give_back()
            out.n += batch.num_rows
            for c, col in zip(batch.schema.names, batch.columns):
                if c not in types:
                    continue
                if c in INT_COLUMNS:
                    if col.null_count:
                        return None      # an integer every row has is missing: a damaged row
                    parts[c].append(_numbers(col, np.int64))
                elif c in text:
                    text[c].add(col)
                elif col.null_count == len(col):
                    parts[c].append(len(col))           # a block without a value: its length only
                elif c in NUMBER_COLUMNS or c in BOOL_COLUMNS:
                    parts[c].append(_numbers(col.cast(pa.float64()), np.float64))
                else:                   # the file's name, one per measurement: nothing to share
                    parts[c].append(np.array(col.to_pylist(), dtype=object))
    except pa.ArrowInvalid as e:
        if any(pa.types.is_null(t) for t in types.values()) and "conversion error to null" in str(e):
            raise _NotEmpty() from e
        return None
    return out


# the memory a parse freed is handed back every this many blocks: a thread's blocks are allocated by the C library
# from a heap of that thread's, which keeps what is freed, and two halves parsed side by side held 0.65 GB at the
# peak of a million rows without it, 0.47-0.50 GB with it, against 0.53 GB for one stream (docs/performance.md)
TRIM_EVERY_BLOCKS = 8
# a file at least this large is parsed in two halves side by side, where the process may use two cores or more.
# Measured (docs/performance.md): a million rows (250 MB) in 1.9-2.6 s against 2.6-3.2 s as one stream; 100,000 rows
# (26 MB) in 0.48 against 0.50 s, within the noise; a smaller file keeps the one stream, the simpler path
HALVES_MIN_BYTES = 16 << 20
# the first half's quotes are counted in stretches of this many bytes (the positions of a stretch's quotes are an
# array of eight bytes a quote)
QUOTE_SCAN_BYTES = 8 << 20


def _middle(f: Any) -> int | None:
    """Where a large file is cut in two to be parsed side by side: the start of the first line past its middle;
    None where the file is small or the process has one core."""
    size = f.seek(0, os.SEEK_END)
    if size < HALVES_MIN_BYTES or _cores() < 2:
        f.seek(0)
        return None
    f.seek(size // 2)
    f.readline()
    at = f.tell()
    f.seek(0)
    return at if at < size else None


def _parse_halves(f: Any, at: int, types: dict[str, Any]) -> _Parsed | None:
    """The file's rows parsed as two streams side by side, its first half and its header line followed by the rest,
    while this thread makes sure that the line at `at` begins a row (_begins_a_row); where it may not, the file is
    parsed again whole, as one stream."""
    from concurrent.futures import ThreadPoolExecutor, wait
    head = f.readline()
    fd = f.fileno()
    halves = [io.BufferedReader(_Stretch(fd, b"", 0, at), READ_BLOCK_BYTES),
              io.BufferedReader(_Stretch(fd, head, at, f.seek(0, os.SEEK_END)), READ_BLOCK_BYTES)]
    with ThreadPoolExecutor(len(halves)) as pool:
        futures = [pool.submit(_parse, half, types) for half in halves]
        begins = _begins_a_row(f, at)
        wait(futures)
    f.seek(0)
    if not begins:
        return _parse(f, types)
    got = [future.result() for future in futures]
    return None if None in got else _Parsed.joined([g for g in got if g is not None])


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:              # macOS: no affinity
        return os.cpu_count() or 1


QUOTE, COMMA, NEWLINE = b'"'[0], b","[0], b"\n"[0]


def _begins_a_row(f: Any, at: int) -> bool:
    """Whether byte `at` of the file, just after a newline, begins a row as pyarrow's parser reads the file: outside
    every quoted value. The parser opens a quoted value only with a quote at a value's start (after a comma or a
    newline), and inside one a quote closes it unless another follows at once (an escaped quote). So where every
    quote that opens a value by their count (the first, third, fifth...) stands at a value's start or right after
    the quote before it, the count says where the quoted values are, and an even count before `at` puts it outside
    them. Any other quote (a lone one inside an unquoted value, as a file edited by hand may have) answers False, and
    the file is read whole, as one stream."""
    f.seek(0)
    count = 0                   # quotes before the stretch
    previous = -2               # where the last of them is
    before = NEWLINE            # the byte before the stretch
    done = 0
    while done < at:
        chunk = f.read(min(QUOTE_SCAN_BYTES, at - done))
        if not chunk:
            return False
        a = np.frombuffer(chunk, np.uint8)
        q = np.flatnonzero(a == QUOTE)
        if len(q):
            i = np.arange(count % 2, len(q), 2)          # the quotes that open a value by the count
            opens = q[i]
            byte_before = np.where(opens > 0, a[opens - 1], before)
            quote_before = np.where(i > 0, q[i - 1] + done, previous)
            if not ((byte_before == COMMA) | (byte_before == NEWLINE) | (quote_before == opens + done - 1)).all():
                return False
            count += len(q)
            previous = int(q[-1]) + done
        before = int(a[-1])
        done += len(chunk)
    return count % 2 == 0


class _Stretch(io.RawIOBase):
    """Bytes [start, end) of an open file, after `head` (the header line, for a stretch from the middle): read with
    pread, each stretch at its own offset, so that two are read side by side. Closing it leaves the file open."""

    def __init__(self, fd: int, head: bytes, start: int, end: int):
        super().__init__()
        self._fd, self._head, self._at, self._end = fd, head, start, end

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        want = min(len(view), self._end - self._at)
        if want <= 0:
            return 0
        data = os.pread(self._fd, want, self._at)
        view[:len(data)] = data
        self._at += len(data)
        return len(data)


# a block of measurements.csv parsed at a time: 4 MB (about 18,000 rows); blocks of 1 to 16 MB read a million
# rows in the same time within noise, and the larger the block the higher the peak (docs/performance.md)
READ_BLOCK_BYTES = 4 << 20


class _TextParts:
    """A text column read block by block: the distinct values and each row's code into them (the cells
    share one str per distinct value: a million rows of a few names cost 8 MB, not 50, and grouping by
    the codes is free); a missing cell is `missing`, which has a code of its own."""

    def __init__(self, missing: str | None):
        self.missing = missing
        self.index: dict[str | None, int] = {missing: 0}
        self.codes: list[np.ndarray | int] = []     # a block's codes, or its length where it has no cell
        self.filled = False         # a cell with a value seen

    def add(self, col: Any) -> None:
        import pyarrow as pa
        if pa.types.is_null(col.type):       # a column read as empty (_empty_in_samples): every cell missing
            self.codes.append(len(col))
            return
        encoded = col.dictionary_encode()
        values = encoded.dictionary.to_pylist()
        self.filled = self.filled or len(col) > col.null_count
        lookup = np.array([*(self.index.setdefault(v, len(self.index)) for v in values), 0], dtype=np.int64)
        self.codes.append(lookup[_numbers(encoded.indices.cast(pa.int64()), np.int64, missing=len(values))])

    def extend(self, other: "_TextParts") -> None:
        """The same column of the stretch after this one's: its codes given in this one's index (a missing cell's,
        0, is the same in both)."""
        to = np.array([self.index.setdefault(v, len(self.index)) for v in other.index], dtype=np.int64)
        self.codes += [c if isinstance(c, int) else to[c] for c in other.codes]
        self.filled = self.filled or other.filled

    def whole(self) -> tuple[np.ndarray, np.ndarray]:
        names = np.empty(len(self.index), dtype=object)
        names[:] = list(self.index)
        return names, np.concatenate([np.zeros(c, dtype=np.int64) if isinstance(c, int) else c for c in self.codes])


def _same(value: Any, n: int) -> np.ndarray:
    """n times one value, in the memory of one (a read-only view; a table is never changed in place)."""
    one = np.empty(1, dtype=object if value is None or isinstance(value, str) else type(value))
    one[0] = value
    return np.broadcast_to(one, (n,))


def _numbers(a: Any, dtype: type, missing: float = math.nan) -> np.ndarray:
    """An array of int64 or float64 values as numpy's, empty cells `missing`, read from the array's
    buffers: pyarrow's to_numpy and fill_null import pandas on first use, for a conversion numpy does alone. Without an
    empty cell the array is pyarrow's memory itself (read-only, kept alive by the view)."""
    n = len(a)
    if n == 0:
        return np.empty(0, dtype)
    validity, data = a.buffers()[:2]
    values = np.frombuffer(data, dtype, n, a.offset * np.dtype(dtype).itemsize)
    if a.null_count:
        values = values.copy()
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
