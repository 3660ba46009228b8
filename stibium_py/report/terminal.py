"""The terminal's renderables (rich tables and lines of text), printed by the publishing step (publish.py): a
table is fitted to the terminal's width, one line per row with every value whole (fitted_table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from rich.cells import cell_len
from rich.table import Table

from ..units import middle_cut

DEFAULT_COLUMNS = 120          # a table laid out for no terminal in particular (tests, JSON callers)


@dataclass(frozen=True)
class Column:
    """A column of a table fitted to the terminal (fitted_table)."""

    name: str
    justify: str = "left"
    drop: int = 0               # 0: always shown; 1, 2, ...: left out in this order where the terminal is narrow
    shortened: bool = False     # a name (a test's) that may be cut in the middle; a value never is
    # the name that says which row this is (a drive's): cut only once every column that may be left out is
    identity: bool = False


NAME_MIN_CHARS = 8              # a name cut in the middle keeps this many characters, the ellipsis among them


def fitted_table(title: str, columns: list[Column], variants: list[list[list[str]]], width: int
                 ) -> tuple[Table, list[str], int]:
    """A table of one line per row whose every value is whole, in `width` columns: each column as wide as its
    widest cell. Where it is too wide: the first of `variants` (the rows written ever more briefly: full intervals,
    then +-%) that fits as it is; else the briefest with its names cut in the middle (a name stays more readable
    than an interval stays exact); else, names cut, the columns left out in their `drop` order. A column empty in
    every row is not shown. Returns the table, the names of the columns left out (to say under it) and which
    variant it shows. A row's identity (Column.identity: a drive's name) is cut last, after every column that may
    be left out is."""
    empty = [i for i in range(len(columns)) if all(not r[i] for rows in variants for r in rows)]
    if empty and len(empty) < len(columns):
        columns = [c for i, c in enumerate(columns) if i not in empty]
        variants = [[[v for i, v in enumerate(r) if i not in empty] for r in rows] for rows in variants]
    for k, rows in enumerate(variants):
        if _width(columns, rows) <= width:
            return _table(title, columns, rows), [], k
    last = len(variants) - 1
    table = _fit(title, columns, variants[-1], width)
    if table is not None:
        return table, [], last
    shown, rows = list(columns), variants[-1]
    dropped: list[str] = []
    for column in sorted((c for c in columns if c.drop), key=lambda c: c.drop):
        k = shown.index(column)
        shown.pop(k)
        rows = [r[:k] + r[k + 1:] for r in rows]
        dropped.append(column.name)
        table = _fit(title, shown, rows, width)
        if table is not None:
            return table, dropped, last
    table = _fit(title, shown, rows, width, identity=True)
    if table is not None:
        return table, dropped, last
    return _table(title, shown, rows), dropped, last   # as narrow as it gets: wider than the terminal


def left_out(dropped: list[str], where: str = "the report") -> str:
    """What fitted_table left out, for under the table ("" where nothing was): "left out at this width: fast,
    outliers (the report has them)"."""
    return f"left out at this width: {', '.join(dropped)} ({where} has them)" if dropped else ""


def with_caption(table: Table, dropped: list[str], where: str = "the report") -> Table:
    """The table with what was left out of it said under it."""
    if dropped:
        table.caption, table.caption_justify = left_out(dropped, where), "left"
    return table


def _fit(title: str, columns: list[Column], rows: list[list[str]], width: int,
         identity: bool = False) -> Table | None:
    """The table in width columns, its names cut in the middle as far as needed (to NAME_MIN_CHARS), or None;
    identity: the rows' identities (Column.identity) cut too, after the other names."""
    over = _width(columns, rows) - width
    if over <= 0:
        return _table(title, columns, rows)
    cut = [i for i, c in enumerate(columns) if c.shortened and not c.identity] + \
        [i for i, c in enumerate(columns) if c.shortened and c.identity and identity]
    rows = [list(r) for r in rows]
    for i in cut:
        widest = max([cell_len(r[i]) for r in rows] + [cell_len(columns[i].name)])
        target = max(widest - over, NAME_MIN_CHARS, cell_len(columns[i].name))
        for r in rows:
            r[i] = middle_cut(r[i], target)
        over = _width(columns, rows) - width
        if over <= 0:
            return _table(title, columns, rows)
    return None


def _width(columns: list[Column], rows: list[list[str]]) -> int:
    """The table's width: each column its widest cell or header, two blanks between columns (the cell's padding
    and the box's blank rule)."""
    widths = [max([cell_len(c.name)] + [cell_len(r[i]) for r in rows]) for i, c in enumerate(columns)]
    return sum(widths) + 2 * (len(widths) - 1)


def _table(title: str, columns: list[Column], rows: list[list[str]]) -> Table:
    from rich import box
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), collapse_padding=True,
              show_edge=False)
    for i, c in enumerate(columns):
        t.add_column(c.name, justify=c.justify, no_wrap=True,
                     min_width=max([cell_len(c.name)] + [cell_len(r[i]) for r in rows]))
    for r in rows:
        t.add_row(*r)
    return t


def notices(found: Iterable[Any], where: str) -> list[Any]:
    """What the report warns, for under the table: each warning a line of its own with what to do; the notes
    of level info counted and pointed to the report (where). A notice is a Notice or its JSON form."""
    from rich.text import Text

    lines: list[Any] = []
    infos = 0
    for n in found:
        d = n if isinstance(n, dict) else n.to_json()
        if d.get("level") != "warning":
            infos += 1
            continue
        test = "" if d.get("test") in ("all", "", None) else f"{d['test']}: "
        line = Text("warning: ", style="bold yellow")
        line.append(f"{test}{d.get('message', '')}. What to do: {d.get('what_to_do', '')}.")
        lines.append(line)
    if infos:
        lines.append(Text(f"{infos} note{'s' if infos > 1 else ''} more (outliers, facts) in {where}"))
    return lines


def cautions(found: Iterable[tuple[str, str]]) -> list[Any]:
    """compare's cautions, a line each: (the point, and its run where there are many; the caution)."""
    from rich.text import Text

    lines = []
    for point, caution in found:
        line = Text("caution: ", style="bold yellow")
        line.append(f"{point}: {caution}")
        lines.append(line)
    return lines
