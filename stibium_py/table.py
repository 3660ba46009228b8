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
import typing
from typing import Any, Iterable, Iterator, Optional

import numpy as np

from .measurement import COLUMNS, Measurement

_HINTS = typing.get_type_hints(Measurement)
INT_COLUMNS = tuple(c for c in COLUMNS if _HINTS[c] is int)
NUMBER_COLUMNS = tuple(c for c in COLUMNS if _HINTS[c] in (Optional[int], Optional[float], float))
BOOL_COLUMNS = tuple(c for c in COLUMNS if _HINTS[c] is Optional[bool])
TEXT_COLUMNS = tuple(c for c in COLUMNS if _HINTS[c] is str)
OPTIONAL_TEXT_COLUMNS = tuple(c for c in COLUMNS if _HINTS[c] is Optional[str])
_OPTIONAL_INT = frozenset(c for c in COLUMNS if _HINTS[c] is Optional[int])


class Table:
    __slots__ = ("_cols", "_n")

    def __init__(self, columns: dict[str, np.ndarray]):
        n = {len(v) for v in columns.values()}
        if len(n) > 1 or set(columns) != set(COLUMNS):
            raise ValueError("a table needs every column of a measurement, all of one length")
        self._cols = columns
        self._n = n.pop() if n else 0

    # -- building
    @classmethod
    def empty(cls) -> "Table":
        return cls.from_rows([])

    @classmethod
    def from_rows(cls, rows: Iterable[Measurement]) -> "Table":
        rows = list(rows)
        values = list(zip(*rows)) if rows else [()] * len(COLUMNS)
        return cls({name: _array(name, vals) for name, vals in zip(COLUMNS, values)})

    @classmethod
    def concat(cls, tables: list["Table"]) -> "Table":
        if not tables:
            return cls.empty()
        return cls({c: np.concatenate([t._cols[c] for t in tables]) for c in COLUMNS})

    # -- reading
    def __len__(self) -> int:
        return self._n

    def col(self, name: str) -> np.ndarray:
        return self._cols[name]

    def take(self, index: Any) -> "Table":
        """The measurements at an index array, a boolean mask or a slice."""
        return Table({c: v[index] for c, v in self._cols.items()})

    def row(self, k: int) -> Measurement:
        return Measurement._make(_value(c, self._cols[c][k]) for c in COLUMNS)

    def rows(self) -> list[Measurement]:
        return [self.row(k) for k in range(self._n)]

    def __iter__(self) -> Iterator[Measurement]:
        return (self.row(k) for k in range(self._n))

    @property
    def ok(self) -> np.ndarray:
        """Per measurement: it counts (no error and a positive time; see Measurement.ok)."""
        err = self._cols["error"]
        no_error = np.array([not e for e in err], bool) if self._n else np.zeros(0, bool)
        with np.errstate(invalid="ignore"):
            return no_error & (self._cols["seconds"] > 0)

    def valid(self) -> "Table":
        return self.take(self.ok)

    def groups(self, *names: str) -> dict[tuple, np.ndarray]:
        """The indexes of the measurements per distinct value of the named columns, in the order each value
        first appears."""
        if not self._n:
            return {}
        keys = list(zip(*(self._cols[n].tolist() for n in names)))
        out: dict[tuple, list[int]] = {}
        for k, key in enumerate(keys):
            out.setdefault(key, []).append(k)
        return {key: np.array(idx, dtype=np.int64) for key, idx in out.items()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and self.rows() == other.rows()

    def __repr__(self) -> str:
        return f"Table({self._n} measurements)"


for _name in COLUMNS:
    setattr(Table, _name, property(lambda self, n=_name: self._cols[n]))


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


def _value(name: str, v: Any) -> Any:
    """One cell back as the record's Python value."""
    if name in INT_COLUMNS:
        return int(v)
    if name in NUMBER_COLUMNS:
        if v != v:
            return None
        return int(v) if name in _OPTIONAL_INT else float(v)
    if name in BOOL_COLUMNS:
        return None if v != v else bool(v)
    return v
