"""The terminal's renderables (rich tables and lines of text), printed by the publishing step (publish.py):
below WIDE_TERMINAL_COLUMNS a table is laid out one line per row."""

from __future__ import annotations

from typing import Any, Iterable

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
