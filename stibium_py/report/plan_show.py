"""What `plan show` and `run --dry-run` say of a plan: its operations in a table of one line a row with every value
whole at the terminal's width (terminal.fitted_table: the file's path cut in the middle, then the columns that may
go left out and said), then each test's measurements, bytes and the kind's own words, the bytes written, the
space needed and the time it should take on the assumed device. Draws only."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from .. import registry
from ..plan.expand import (ASSUMED_OP_OVERHEAD_S, ASSUMED_PARALLEL_REQUESTS, ASSUMED_RATE_BYTES_PER_S,
                           ASSUMED_REQUEST_S, estimated_bytes)
from ..units import format_bytes, format_per_s_short, format_seconds, format_size, in_flight_label, op_label
from .terminal import Column, fitted_table, with_caption

SHOWN_A_TEST = 6          # operations listed of each test, unless every one is asked for (--all)
_SHORT_ACCESS = {"sequential": "seq", "random": "rand", "strided": "str"}


def operations_table(expanded: Any, brief: bool, width: int) -> Any:
    """The operations, the first SHOWN_A_TEST of each test (brief) or all, then a line of how many more."""
    flights = any(o.queue_depth * o.threads > 1 for o in expanded.ops)
    rated = any(o.rate_per_s for o in expanded.ops)          # an open loop's offered rate, where a test has one
    columns = [Column("seq", "right"), Column("test", shortened=True, identity=True), Column("op"), Column("access"),
               Column("file size / span", "right"), Column("granularity", "right"), Column("stride", "right", drop=2),
               *([Column("in flight", drop=3)] if flights else []),
               *([Column("offered", "right")] if rated else []), Column("trial", "right"),
               Column("file", shortened=True, drop=1)]
    full: list[list[str]] = []
    short: list[list[str]] = []
    for test in expanded.tests:
        ops = test.ops[:SHOWN_A_TEST] if brief else test.ops
        for o in ops:
            by = "" if o.instrument == "helper" else f" ({o.instrument})"
            row = [str(o.seq), o.test, op_label(o.op, o.read_fraction) + by, o.access, format_size(o.size_bytes),
                   f"{o.phase.files:,} files" if o.phase else format_size(o.granularity_bytes),   # a phase of a tree
                   format_size(o.stride_bytes), *([in_flight_label(o.queue_depth, o.threads) or "Q1T1"]
                                                  if flights else []),
                   *([format_per_s_short(o.rate_per_s) if o.rate_per_s else ""] if rated else []), str(o.trial),
                   o.file]
            full.append([escape(v) for v in row])
            row[3] = _SHORT_ACCESS.get(o.access, o.access)
            short.append([escape(v) for v in row])
        if len(ops) < len(test.ops):
            more = ["...", escape(test.name), f"{len(test.ops) - len(ops)} more", *[""] * (len(columns) - 3)]
            full.append(more)
            short.append(more)
    table, dropped, shown = fitted_table("", columns, [full, short], width)
    with_caption(table, dropped, "a wider terminal")
    if shown:
        table.caption = "\n".join(filter(None, [table.caption, "seq, rand, str: sequential, random, strided access"]))
        table.caption_justify = "left"
    return table


def _test_line(test: Any) -> str:
    """A test's measurements, its bytes written and read, and how its measurements are bounded."""
    moved = [estimated_bytes(o) for o in test.planned_ops]
    written = round(sum(w for _, w in moved)) + test.layout_bytes + test.precondition_bytes
    read = sum(r for r, _ in moved)
    timed = [o for o in test.ops if o.duration_s]
    about = (f" (by time: about, at {format_bytes(ASSUMED_RATE_BYTES_PER_S)}/s); each measurement runs "
             f"{format_seconds(timed[0].duration_s)}" + (f" after a {format_seconds(timed[0].warmup_s)} warm-up"
                                                        if timed[0].warmup_s else "") if timed else "")
    rounds = test.ops[0].steady_max_rounds if test.ops else 0
    at_most = (f" at most (rounds until steady: up to {rounds}, stopping at the first window of "
               f"{test.ops[0].steady_window} rounds in which every point is steady)" if rounds else "")
    count = len(test.planned_ops)
    searched = "where every rate meets the target" if test.ops and test.ops[0].slo else "where no count of streams drops"
    at_most += (f" {searched} (of {len(test.ops)} a search may ask for)" if count < len(test.ops) else "")
    pre = (f"; preconditioning writes the span twice ({format_size(test.precondition_bytes)}) first"
           if test.precondition_bytes else "")
    wall = test.ops[0].stonewall_s if test.ops else 0.0
    walled = (f"; each measurement stops at its stonewall, {format_seconds(wall)} after its start, if its "
              f"bytes take longer (the bytes are at most these)" if wall else "")
    benched = [o for o in test.ops if o.instrument != "helper"]
    bench = ""
    if benched:
        how = (f"the job file {benched[0].bench_job} once a trial, its jobs' time their own and not in the estimate"
               if benched[0].bench_job else "the equivalent job of each point, interleaved with the helper's")
        bench = f"; {len(benched)} of them by fio (bench: fio), {how}"
    return (f"  {escape(test.name)}: {count} measurements{at_most}; writes {written} bytes ({format_size(written)}), "
            f"reads {format_size(read)}{about}{pre}{walled}{bench}")


def plan_lines(parsed: Any, expanded: Any, brief: bool, width: int) -> list[Any]:
    """Everything `plan show` prints, in order."""
    out: list[Any] = [f"[bold]{escape(parsed.name)}[/]: {escape(parsed.description)}",
                      operations_table(expanded, brief, width)]
    out += [_test_line(test) for test in expanded.tests]
    for test in expanded.tests:
        note = registry.spec(test.kind).plan_note        # what `plan show` says beyond its operations
        if note is not None:
            out.append(note(test))
    planned = sum(len(t.planned_ops) for t in expanded.tests)
    needed = expanded.space_needed_bytes()
    steps = " and ".join(w for w, searched in (("counts", any(t.search_most for t in expanded.tests)),
                                               ("rates", any(t.ops and t.ops[0].slo for t in expanded.tests)))
                         if searched)
    out += [f"measurements: {planned}" + (f" ({len(expanded.ops)} expanded: a search skips the {steps} it does not "
                                          f"ask for)" if planned < len(expanded.ops) else ""),
            f"bytes written: {expanded.bytes_written} ({format_size(expanded.bytes_written)})",
            f"space needed: {needed} ({format_size(needed)}) at the peak, test files are removed after each test",
            f"estimated duration: {format_seconds(expanded.estimated_s)} (at {format_bytes(ASSUMED_RATE_BYTES_PER_S)}/s, "
            f"{ASSUMED_REQUEST_S * 1e6:.0f} us a request one at a time and up to {ASSUMED_PARALLEL_REQUESTS} at "
            f"once, {ASSUMED_OP_OVERHEAD_S * 1e3:.0f} ms a measurement)"]
    return out
