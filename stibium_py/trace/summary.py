"""What a trace holds, summed (`stibium trace show`): its calls by kind, with their bytes and their time in the
kernel; its threads; its files; and the time its threads spent in calls against the time between them (the
program's own work, or its waits on anything but these files)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import CALLS, NOT_REPLAYED, Trace

MOVED = ("read", "write", "copy")       # calls whose result is the bytes moved (a mapping: its length, below)


@dataclass(frozen=True)
class KindTotal:
    call: str
    count: int
    bytes: int                  # bytes moved (a read's, a write's, a copy's result; a mapping's length); 0 for others
    in_calls_ns: int            # time in the kernel, summed
    errors: int

    def to_json(self) -> dict[str, Any]:
        return {"call": self.call, "count": self.count, "bytes": self.bytes, "in_calls_ns": self.in_calls_ns,
                "errors": self.errors}


@dataclass(frozen=True)
class TraceSummary:
    program: str
    tool: str
    system: str
    elapsed_ns: int             # the program's whole run
    threads: int
    files: int                  # files and folders touched (the folder itself included where it was)
    existing: int               # of them, those that existed before the program ran
    existing_bytes: int         # their sizes then (what a replay lays out first)
    kinds: list[KindTotal]      # in CALLS' order, the kinds the trace holds
    in_calls_ns: int            # every thread's time in calls, summed
    between_ns: int             # every thread's time from its first call to its last call's end, outside calls
    span_ns: int                # the first call's start to the last call's end
    not_replayed: int           # calls a replay cannot make (mappings)
    outside: int                # calls on files outside the folder (not in the trace)
    quickest_ns: int = 0        # the shortest time in a call (0: none timed): the recorder's floor

    @property
    def calls(self) -> int:
        return sum(k.count for k in self.kinds)

    def to_json(self) -> dict[str, Any]:
        return {"program": self.program, "tool": self.tool, "system": self.system, "elapsed_ns": self.elapsed_ns,
                "threads": self.threads, "files": self.files, "existing_files": self.existing,
                "existing_bytes": self.existing_bytes, "calls": self.calls,
                "kinds": [k.to_json() for k in self.kinds], "in_calls_ns": self.in_calls_ns,
                "between_calls_ns": self.between_ns, "span_ns": self.span_ns, "not_replayed": self.not_replayed,
                "outside_calls": self.outside, "quickest_call_ns": self.quickest_ns}


def summarize(trace: Trace) -> TraceSummary:
    totals: dict[str, list[int]] = {}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    busy: dict[int, int] = {}
    for c in trace.calls:
        t = totals.setdefault(c.call, [0, 0, 0, 0])
        t[0] += 1
        t[1] += max(0, c.result) if c.call in MOVED else c.bytes if c.call == "mmap" else 0
        t[2] += c.took_ns
        t[3] += 1 if c.error else 0
        first[c.thread] = min(first.get(c.thread, c.start_ns), c.start_ns)
        last[c.thread] = max(last.get(c.thread, 0), c.start_ns + c.took_ns)
        busy[c.thread] = busy.get(c.thread, 0) + c.took_ns
    kinds = [KindTotal(k, *totals[k]) for k in CALLS if k in totals]
    in_calls = sum(busy.values())
    between = sum(max(0, last[t] - first[t] - busy[t]) for t in busy)
    span = max(last.values()) - min(first.values()) if busy else 0
    existing = [f for f in trace.files if f.size_bytes is not None]
    return TraceSummary(trace.program, trace.tool, trace.system, trace.elapsed_ns, len(busy), len(trace.files),
                        len(existing), sum(f.size_bytes or 0 for f in existing if not f.folder), kinds, in_calls,
                        between, span, sum(totals[k][0] for k in NOT_REPLAYED if k in totals), trace.outside,
                        min((c.took_ns for c in trace.calls if c.took_ns > 0), default=0))
