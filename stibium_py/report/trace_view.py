"""A trace's summary in the terminal (trace/summary.py computes it): lines of what it is, a table of its calls."""

from __future__ import annotations

from typing import Any

from ..trace.model import NOT_REPLAYED
from ..trace.summary import TraceSummary
from ..units import format_bytes, format_seconds


def summary_lines(s: TraceSummary) -> list[str]:
    where = f" on {s.system}" if s.system else ""
    lines = [f"{s.program}, recorded by {s.tool}{where}: {_count(s.calls, 'call')} by {_count(s.threads, 'thread')} "
             f"on {_count(s.files, 'file or folder', 'files and folders')} ({s.existing:,} there before it ran, "
             f"{format_bytes(s.existing_bytes)} in their files)"]
    ran = f"; the program ran {format_seconds(s.elapsed_ns / 1e9)}" if s.elapsed_ns else ""
    span = f"from the first call to the last {format_seconds(s.span_ns / 1e9)}{ran}"
    if s.calls and s.in_calls_ns:
        share = s.in_calls_ns / (s.in_calls_ns + s.between_ns)
        lines.append(f"time in these calls {format_seconds(s.in_calls_ns / 1e9)}, between them "
                     f"{format_seconds(s.between_ns / 1e9)} ({share:.0%} of the threads' time was spent in the calls), "
                     f"{span}")
        if s.tool.startswith("strace"):
            lines.append(f"the quickest call took {format_seconds(s.quickest_ns / 1e9)}: strace's own stop is in "
                         f"every call's time (docs/trace-format.md), so a fast call's time is mostly the tracer's")
        elif s.tool.startswith("bpftrace"):
            lines.append(f"the quickest call took {format_seconds(s.quickest_ns / 1e9)}: the recorder's probes at "
                         f"each call's entry and return are in its time (docs/trace-format.md), a few microseconds")
    elif s.calls:
        lines.append(f"the trace holds no call's time in the kernel (its recorder kept none); {span}")
    if s.not_replayed:
        lines.append(f"{_count(s.not_replayed, 'call')} a replay cannot make ({', '.join(NOT_REPLAYED)}: the reads "
                     f"and writes of a mapped file are page faults, which no call shows)")
    if s.outside:
        lines.append(f"{_count(s.outside, 'call')} on files outside the recorded folder were not kept")
    return lines


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"


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
