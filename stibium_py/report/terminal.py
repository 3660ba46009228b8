"""Terminal tables: below WIDE_TERMINAL_COLUMNS a table is laid out one line per row."""

from __future__ import annotations

from rich.table import Table

WIDE_TERMINAL_COLUMNS = 120


def compact_table(title: str, columns: tuple[tuple[str, str, int], ...]) -> Table:
    """A table for a narrow terminal: one line per row, each column (name, justify, width) of a fixed width
    and cut with an ellipsis."""
    from rich import box
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), collapse_padding=True)
    for name, justify, size in columns:
        t.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis", width=size)
    return t
