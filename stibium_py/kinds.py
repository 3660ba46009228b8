"""The kinds of test, declared once. Every layer that treats kinds differently holds one table keyed by
kind, made with `by_kind`, which records it here so that one test (tests/test_kinds.py) finds a table
that misses a kind. Adding a kind: its name here, then one module per layer and one entry per table
(docs/architecture.md, "Adding a kind of test")."""

from __future__ import annotations

from typing import Literal, Mapping, TypeVar, get_args

Kind = Literal["files", "pattern", "sustained", "tree"]
KINDS: tuple[Kind, ...] = get_args(Kind)

T = TypeVar("T")

# every table made by by_kind: its name (layer: what it holds) and its entries
TABLES: dict[str, Mapping[str, object]] = {}


def by_kind(name: str, entries: dict[Kind, T]) -> dict[Kind, T]:
    """A table keyed by kind, recorded under `name` for the coverage test."""
    TABLES[name] = entries
    return entries


def missing(entries: Mapping[str, object]) -> list[str]:
    """The kinds a table lacks, and the keys it has that are no kind."""
    return [k for k in KINDS if k not in entries] + [f"{k} (no such kind)" for k in entries if k not in KINDS]


def listed(quoted: bool = False) -> str:
    """The kinds in words: "files, pattern, sustained or tree" (quoted: "'files', ... or 'tree'")."""
    names = [f"'{k}'" if quoted else k for k in KINDS]
    return ", ".join(names[:-1]) + f" or {names[-1]}"
