"""`stibium info`'s facts in words: the helper's answer flattened to one row a fact, in the order of its keys'
names (a nested fact under its parent's name: `target.fs_type`), each value as a person reads it (yes or no,
lists joined, sizes in bytes with their unit, a nested fact's own facts on one line). A clock's reading
(`now_ns`) is left out: it says nothing to a person and `--json` keeps it. Draws only."""

from __future__ import annotations

from typing import Any

# a fact that means nothing on the terminal: its JSON form keeps it
LEFT_OUT = {"now_ns"}


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_word(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')}: {_word(v)}" for k, v in sorted(value.items()))
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _named(key: str, value: Any) -> str:
    """A value with the unit its key names (page_size_bytes: 4,096 bytes; clock_resolution_ns: 1 ns)."""
    if isinstance(value, int) and not isinstance(value, bool):
        for suffix, unit in (("_bytes", "bytes"), ("_ns", "ns")):
            if key.endswith(suffix):
                return f"{value:,} {unit}"
    return _word(value)


def fact_rows(facts: dict[str, Any], parent: str = "") -> list[tuple[str, str]]:
    """(name, value in words) for every fact, sorted by name; a nested mapping of mappings (the engines'
    capabilities) a row each of its members, an empty value (a reason not given) left out."""
    rows: list[tuple[str, str]] = []
    for key in sorted(facts):
        value, name = facts[key], f"{parent}{key}"
        if key in LEFT_OUT or value is None or value == "":
            continue
        if isinstance(value, dict) and (not value or all(isinstance(v, dict) for v in value.values()) or
                                        not parent):
            rows.extend(fact_rows(value, f"{name}."))
        else:
            rows.append((name, _named(key, value)))
    return rows
