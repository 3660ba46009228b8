"""A trace's summary in the terminal (trace/summary.py computes it): lines of what it is, a table of its calls."""

from __future__ import annotations

from typing import Any

from ..trace.model import NOT_REPLAYED
from ..trace.summary import TraceSummary
from ..units import format_bytes, format_seconds


def summary_lines(s: TraceSummary) -> list[str]:
    threads = f"{s.threads} thread{'s' if s.threads != 1 else ''}"
    lines = [f"{s.program}, recorded by {s.tool} on {s.system}: {s.calls:,} calls by {threads} on {s.files:,} files "
             f"and folders ({s.existing:,} there before it ran, {format_bytes(s.existing_bytes)} in their files)"]
    if s.calls:
        share = s.in_calls_ns / (s.in_calls_ns + s.between_ns) if s.in_calls_ns + s.between_ns else 0.0
        lines.append(f"time in these calls {format_seconds(s.in_calls_ns / 1e9)}, between them "
                     f"{format_seconds(s.between_ns / 1e9)} ({share:.0%} of the threads' time was spent in the calls), "
                     f"from the first call to the last {format_seconds(s.span_ns / 1e9)}; the program ran "
                     f"{format_seconds(s.elapsed_ns / 1e9)}")
    if s.not_replayed:
        lines.append(f"{s.not_replayed:,} call{'s' if s.not_replayed != 1 else ''} a replay cannot make "
                     f"({', '.join(NOT_REPLAYED)}: the reads and writes of a mapped file are page faults, which no "
                     f"call shows)")
    if s.outside:
        lines.append(f"{s.outside:,} calls on files outside the recorded folder were not kept")
    return lines


def summary_table(s: TraceSummary) -> Any:
    from rich.table import Table
    table = Table(title="calls by kind", title_justify="left")
    for name, justify in (("call", "left"), ("count", "right"), ("bytes", "right"), ("time in calls", "right"),
                          ("share", "right"), ("errors", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for k in s.kinds:
        share = k.in_calls_ns / s.in_calls_ns if s.in_calls_ns else 0.0
        table.add_row(k.call, f"{k.count:,}", format_bytes(k.bytes) if k.bytes else "-",
                      format_seconds(k.in_calls_ns / 1e9), f"{share:.1%}", f"{k.errors:,}" if k.errors else "-")
    return table
