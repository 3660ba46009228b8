"""A large measurements.csv is parsed in two halves side by side (rundir/csvread._parse_halves): the table is the one
the file read as one stream gives, and the cut is made only where the line there begins a row, as pyarrow's parser
reads the file (_begins_a_row); anywhere else the file is read whole."""

from __future__ import annotations

import csv
import io

import pytest

from stibium_py.rundir import csvread
from synthetic import make_run

# a header and five rows: a quoted value with a newline in it, escaped quotes, and (row 5) a quote inside an
# unquoted value, which pyarrow's parser keeps as a character of the value
ROWS = [b'"a","b"\n', b'1,"x"\n', b'2,"multi\n', b'line"\n', b'3,"say ""hi"""\n', b'4,ab"c\n', b'5,"y"\n',
        b'6,"z"\n']
TEXT = b"".join(ROWS)
# at each line's start: whether a row begins there, as the parser reads it. The line 'line"' is inside row 2's
# value; after row 5's lone quote the count of quotes no longer says where the values are
BEGINS = [True, True, True, False, True, True, False, False]


@pytest.mark.parametrize("scan_bytes", [1, 2, 3, 7, 1 << 20])
def test_a_row_begins_where_the_quotes_before_it_close_every_value(monkeypatch, scan_bytes):
    monkeypatch.setattr(csvread, "QUOTE_SCAN_BYTES", scan_bytes)     # the stretches' edges anywhere in the text
    starts = [sum(len(r) for r in ROWS[:k]) for k in range(len(ROWS))]
    f = io.BytesIO(TEXT)
    assert [csvread._begins_a_row(f, at) for at in starts] == BEGINS


def test_the_parser_begins_a_row_where_the_scan_says_one_begins():
    """What BEGINS stands on: read from the header and a line where the scan says a row begins, pyarrow's parser
    gives the rows the whole text gives from there; from the line 'line"' (inside row 2's value) it finds a damaged
    row that is not in the text. After row 5's lone quote the scan answers no where the parser would begin a row:
    that costs a file read as one stream, never a wrong row."""
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    def parsed(text: bytes) -> tuple[list, int]:
        bad = []

        def skip(row) -> str:
            bad.append(row)
            return "skip"
        options = pa_csv.ParseOptions(newlines_in_values=True, invalid_row_handler=skip)
        table = pa_csv.read_csv(pa.BufferReader(text), parse_options=options).to_pydict()
        return list(zip(table["a"], table["b"])), len(bad)
    whole, damaged = parsed(TEXT)
    assert damaged == 0 and [b for _, b in whole] == ["x", "multi\nline", 'say "hi"', 'ab"c', "y", "z"]
    row_at = {1: 0, 2: 1, 4: 2, 5: 3, 6: 4, 7: 5}            # the whole text's row that each line begins
    for k in range(1, len(ROWS)):
        rest, bad = parsed(ROWS[0] + b"".join(ROWS[k:]))
        if k in row_at:                     # BEGINS[k] or after the lone quote: the parser begins that row there
            assert (rest, bad) == (whole[row_at[k]:], 0), k
        else:
            assert not BEGINS[k] and bad == 1


def _file(tmp_path, edit) -> tuple[bytes, list[str]]:
    """The synthetic run's measurements.csv, its lines given to `edit` (a list of lists of cells)."""
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    data = (run / "measurements.csv").read_bytes()
    rows = list(csv.reader(io.StringIO(data.decode(), newline="")))
    header = rows[0]
    edit(header, rows)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC).writerows(
        [rows[0], *([_cell(c) for c in row] for row in rows[1:])])
    return out.getvalue().encode(), header


def _cell(text: str) -> object:
    """A cell as the file had it: a number unquoted, a text quoted."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _read(path, monkeypatch, halves: bool) -> tuple[list, int, int]:
    """The rows, the damaged count, and how many streams were parsed."""
    monkeypatch.setattr(csvread, "HALVES_MIN_BYTES", 0 if halves else 1 << 40)
    monkeypatch.setattr(csvread, "_cores", lambda: 2)
    monkeypatch.setattr(csvread, "_empty_in_samples", lambda *a: frozenset())     # one typed read, counted
    parses = []
    parse = csvread._parse

    def counted(*args):
        parses.append(args)
        return parse(*args)
    monkeypatch.setattr(csvread, "_parse", counted)
    header = next(csv.reader([path.read_bytes().split(b"\n", 1)[0].decode()]))
    with path.open("rb") as f:
        table, damaged = csvread._read_columns(f, header)
    return table.rows(), damaged, len(parses)


def test_a_file_read_in_halves_is_the_file_read_whole(tmp_path, monkeypatch):
    """Names only the second half has (coded in the first's index), quoted values with commas, escaped quotes and
    newlines in both halves, a damaged row in each, and blocks small enough that each half is many."""
    def edit(header, rows):
        engine, error = header.index("engine"), header.index("strerror")
        n = len(rows)
        for k in range(n // 2 + 5, n):
            rows[k][engine] = "buffered"
        for k in (3, n - 4):
            rows[k][error] = 'No space, "left"\non device'
        rows[7] = rows[7][:5]                   # a row cut short in the first half
        rows[n - 2] = rows[n - 2][:9]           # and in the second
    data, _ = _file(tmp_path, edit)
    path = tmp_path / "m.csv"
    path.write_bytes(data)
    monkeypatch.setattr(csvread, "READ_BLOCK_BYTES", 2048)
    monkeypatch.setattr(csvread, "TRIM_EVERY_BLOCKS", 2)
    whole = _read(path, monkeypatch, halves=False)
    halves = _read(path, monkeypatch, halves=True)
    assert whole[2] == 1 and halves[2] == 2
    assert halves[:2] == whole[:2] and whole[1] == 2
    engines = [r.engine for r in whole[0]]
    assert engines[0] == "direct" and engines[-1] == "buffered"
    assert sum(r.strerror == 'No space, "left"\non device' for r in whole[0]) == 2


@pytest.mark.parametrize("where", ["a value across the middle", "a lone quote before it"])
def test_a_file_whose_middle_may_not_begin_a_row_is_read_whole(tmp_path, monkeypatch, where):
    def edit(header, rows):
        error = header.index("strerror")
        if where == "a lone quote before it":
            rows[2][error] = "ab"
        else:                                   # a third of the file's length of lines in one value
            rows[len(rows) // 2][error] = "\n".join(f"line {k}" for k in range(4000))
    data, _ = _file(tmp_path, edit)
    if where == "a lone quote before it":       # unquoted, with a quote inside: as a hand-edited file may have it
        data = data.replace(b',"ab",', b',a"b,', 1)
    path = tmp_path / "m.csv"
    path.write_bytes(data)
    middle = len(data) // 2
    assert not csvread._begins_a_row(io.BytesIO(data), data.index(b"\n", middle) + 1)
    whole = _read(path, monkeypatch, halves=False)
    halves = _read(path, monkeypatch, halves=True)
    assert halves[2] == 3                       # two halves parsed beside the scan, then the file whole
    assert halves[:2] == whole[:2] and whole[1] == 0
