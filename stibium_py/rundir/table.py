"""Many measurements, column by column: what the analysis reads.

A run can hold a million measurements; as a million `Measurement` records it would take about a
kilobyte each in Python objects, as columns 8 bytes a value. A `Table` holds one numpy array per column
of `Measurement` (the same names, in the same order), typed from the record's fields:

- an integer that is always there (seq, sizes, bytes, trial): int64;
- a number that may be missing (an optional integer, a float, a boolean): float64, missing as NaN
  (a boolean as 1.0 / 0.0);
- text: an object array of str (an optional text: None where missing).

`row(k)` gives measurement k back as a `Measurement`; `from_rows` builds a table from records. A table
is never changed in place: `take` and `valid` give new ones.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Iterator, TYPE_CHECKING

import numpy as np

from .measurement import (BOOL_COLUMNS, COLUMN_DEFAULTS, COLUMNS, INT_COLUMNS, NUMBER_COLUMNS, OPTIONAL_INT_COLUMNS,
    TEXT_COLUMNS, Measurement)


class Table:
    """Columns of measurements; `take` gives a view (the same columns and an index into them), so that the
    groups, stretches and subsets the analysis cuts out of a million measurements cost an index each,
    not a copy of every column."""

    __slots__ = ("_cols", "_index", "_n", "_codes")

    if TYPE_CHECKING:
        # every measurement column is a property of its name (set below the class, from COLUMNS): rows.seconds
        def __getattr__(self, name: str) -> np.ndarray: ...

    def __init__(self, columns: dict[str, np.ndarray], index: np.ndarray | None = None,
                 codes: dict[str, tuple[np.ndarray, np.ndarray]] | None = None):
        """`codes`: for text columns read with a dictionary, (distinct values, each row's code), which
        makes grouping a million rows by them cost nothing."""
        n = {len(v) for v in columns.values()}
        if len(n) > 1 or set(columns) != set(COLUMNS):
            raise ValueError("a table needs every column of a measurement, all of one length")
        self._cols = columns
        self._index = index
        self._codes = codes or {}
        self._n = len(index) if index is not None else (n.pop() if n else 0)

    # -- building
    @classmethod
    def empty(cls) -> "Table":
        return cls.from_rows([])

    @classmethod
    def from_rows(cls, rows: Iterable[Measurement]) -> "Table":
        rows = list(rows)
        values = list(zip(*(m.flat() for m in rows))) if rows else [()] * len(COLUMNS)
        return cls({name: _array(name, vals) for name, vals in zip(COLUMNS, values)})

    @classmethod
    def concat(cls, tables: list["Table"]) -> "Table":
        if not tables:
            return cls.empty()
        return cls({c: np.concatenate([t.col(c) for t in tables]) for c in COLUMNS})

    # -- reading
    def __len__(self) -> int:
        return self._n

    def col(self, name: str) -> np.ndarray:
        values = self._cols[name]
        return values if self._index is None else values[self._index]

    def take(self, index: Any) -> "Table":
        """The measurements at an index array, a boolean mask or a slice (a view)."""
        positions = np.arange(self._n)[index] if not isinstance(index, np.ndarray) or index.dtype == bool \
            else np.asarray(index, dtype=np.int64)
        base = positions if self._index is None else self._index[positions]
        return Table(self._cols, base, self._codes)

    def with_column(self, name: str, values: np.ndarray) -> "Table":
        """The same measurements with one column's values replaced (one value per measurement of this table)."""
        base = self._cols[name].copy()
        base[slice(None) if self._index is None else self._index] = values
        return Table({**self._cols, name: base}, self._index, {k: v for k, v in self._codes.items() if k != name})

    def row(self, k: int) -> Measurement:
        at = int(k) if self._index is None else int(self._index[k])
        return Measurement.from_flat(_value(c, self._cols[c][at]) for c in COLUMNS)

    def value(self, k: int, name: str) -> Any:
        """One field of measurement k, as the record holds it (cheaper than row(k) for a few fields)."""
        at = int(k) if self._index is None else int(self._index[k])
        return _value(name, self._cols[name][at])

    def values(self, name: str) -> list[Any]:
        """One field of every measurement, as the record holds it (value, column by column): the column's own list
        where each cell is already the record's value (a million-row report lists tens of thousands of flagged
        measurements' fields; one _value a cell took 0.3 s of it under cProfile)."""
        col = self.col(name)
        if (name in _FLOATS and not np.isnan(col).any()) or (name in INT_COLUMNS and col.dtype.kind == "i") \
                or name not in _CONVERTED:
            return col.tolist()
        return [_value(name, v) for v in col.tolist()]

    def rows(self) -> list[Measurement]:
        return [self.row(k) for k in range(self._n)]

    def __iter__(self) -> Iterator[Measurement]:
        return (self.row(k) for k in range(self._n))

    @property
    def no_error(self) -> np.ndarray:
        """Per measurement: the helper answered it without an error."""
        err = self.col("error")
        return np.equal(err, None) | np.equal(err, "")

    @property
    def ok(self) -> np.ndarray:
        """Per measurement: it counts (no error and a positive time; see Measurement.ok)."""
        with np.errstate(invalid="ignore"):
            return self.no_error & (self.col("seconds") > 0)

    def valid(self) -> "Table":
        return self.take(np.flatnonzero(self.ok))

    def coded(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A column's distinct values and each measurement's code into them: the reader's dictionary where it
        kept one, one value where every row has it, else found here (a missing number is None)."""
        if name in self._codes:
            distinct, code = self._codes[name]
            return distinct, (code if self._index is None else code[self._index])
        values = self.col(name)
        if values.ndim == 1 and len(values) and values.strides == (0,):       # one value in every row (_same)
            distinct, _ = _factorize(values[:1])
            return distinct, np.broadcast_to(np.int64(0), (len(values),))
        return _factorize(values)

    def groups(self, *names: str) -> dict[tuple, np.ndarray]:
        """The indexes of the measurements per distinct value of the named columns (a missing number is None
        there), the groups in the order their first measurement appears."""
        if not self._n:
            return {}
        codes, values = [], []
        for name in names:
            distinct, code = self.coded(name)
            codes.append(code)
            values.append(distinct)
        combined = np.ravel_multi_index(codes, [len(v) for v in values])
        keys, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
        order = np.argsort(inverse.ravel(), kind="stable")
        bounds = np.cumsum(np.bincount(inverse.ravel(), minlength=len(keys)))[:-1]
        members = np.split(order, bounds)
        out = {}
        for g in np.argsort(first):
            parts = np.unravel_index(keys[g], [len(v) for v in values])
            out[tuple(_plain(v[p]) for v, p in zip(values, parts))] = members[g]
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and self.rows() == other.rows()

    def __repr__(self) -> str:
        return f"Table({self._n} measurements)"


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values and each value's code into them (text by a dict: sorting a million str is slow)."""
    if values.dtype != object:
        missing = np.isnan(values) if values.dtype.kind == "f" else None
        if missing is None or not missing.any():
            distinct, code = np.unique(values, return_inverse=True)
            return distinct, code.ravel()
        distinct, code = np.unique(values[~missing], return_inverse=True)
        out = np.empty(len(distinct) + 1, dtype=object)      # missing: None, after every value
        out[:-1] = [v.item() for v in distinct]
        full = np.full(len(values), len(distinct), dtype=np.int64)
        full[~missing] = code.ravel()
        return out, full
    seen: dict[Any, int] = {}
    code = np.fromiter((seen.setdefault(v, len(seen)) for v in values), dtype=np.int64, count=len(values))
    distinct = np.empty(len(seen), dtype=object)
    distinct[:] = list(seen)
    return distinct, code


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python value (a dict key that prints and compares as such)."""
    return v.item() if isinstance(v, np.generic) else v


for _name in COLUMNS:
    setattr(Table, _name, property(lambda self, n=_name: self.col(n)))


def empty_column(name: str, n: int) -> np.ndarray:
    """A column with no value in any of n rows (what _array makes of n Nones, without a Python loop), or
    the value a file made before the column existed reads there."""
    if name in COLUMN_DEFAULTS:
        return np.full(n, COLUMN_DEFAULTS[name], dtype=np.int64 if name in INT_COLUMNS else object)
    if name in NUMBER_COLUMNS or name in BOOL_COLUMNS:
        return np.full(n, np.nan)
    return np.full(n, "" if name in TEXT_COLUMNS else None, dtype=object)


def _array(name: str, values: Iterable[Any]) -> np.ndarray:
    """A column from Python values (None where missing)."""
    values = list(values)
    if name in INT_COLUMNS:
        return np.array(values, dtype=np.int64)
    if name in NUMBER_COLUMNS or name in BOOL_COLUMNS:
        return np.array([math.nan if v is None else float(v) for v in values], dtype=float)
    out = np.empty(len(values), dtype=object)
    out[:] = [("" if v is None else v) if name in TEXT_COLUMNS else (v if v else None) for v in values]
    return out


# the columns whose cells _value converts (the others, text, it gives as they are); of those, an int64 column lists
# as its ints, and a column of floats where none is missing (NaN, the record's None) as its floats
_CONVERTED = frozenset(INT_COLUMNS) | frozenset(NUMBER_COLUMNS) | frozenset(BOOL_COLUMNS)
_FLOATS = frozenset(NUMBER_COLUMNS) - OPTIONAL_INT_COLUMNS


def _value(name: str, v: Any) -> Any:
    """One cell back as the record's Python value."""
    if name in INT_COLUMNS:
        return int(v)
    if name in NUMBER_COLUMNS:
        if v != v:
            return None
        return int(v) if name in OPTIONAL_INT_COLUMNS else float(v)
    if name in BOOL_COLUMNS:
        return None if v != v else bool(v)
    return v
