"""The terminal's view of a comparison (its JSON form, compare.py): two runs point by point, or many runs
against a reference. Renderables only; publish.py prints them."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from ..analysis.estimate import ratio_text
from ..analysis.rates import key_of, label
from ..units import format_rate, format_size, in_flight_label
from .sustained import ratio_text as sustained_ratio_text
from .terminal import WIDE_TERMINAL_COLUMNS, cautions, compact_table


def verdict_text(r: dict[str, Any]) -> str:
    """A row's verdict, with "(these runs)" where one run a side cannot speak for the machines."""
    return r["verdict"] + (" (these runs)" if r["scope"] != "machines" and r["verdict"] in ("faster", "slower")
                           else "")


def many_runs(result: dict[str, Any]) -> list[Any]:
    """Many runs against a reference: the table, the cautions, the sustained tests, the advice."""
    out: list[Any] = []
    table = Table("test", "run", "rate", "ratio to the reference (95% interval)", "verdict",
                  title=f"against {result['reference']['run']}")
    for r in result["rows"]:
        what = label(key_of(r))
        interval = ratio_text(r["ratio"])
        table.add_row(what, r["run"], format_rate(r["rate_bytes_per_s"]), interval, verdict_text(r))
    if result["rows"]:
        out.append(table)
    out += cautions(result["rows"], with_run=True)
    for s in result.get("sustained", []):
        out.append(f"[bold]{s['test']} {s['op']}, sustained[/], {s['run']}: {s['headline']}")
        out += [f"  {sustained_ratio_text(r)} against the reference" for r in s["ratios"]]
    return out + list(dict.fromkeys(result["advice"]))


_SHORT_ACCESS = {"sequential": "seq", "random": "rand", "strided": "str",
                 "(geometric mean)": "geo-mean"}


def two_runs(result: dict[str, Any], width: int) -> list[Any]:
    """B / A per point: below WIDE_TERMINAL_COLUMNS one line per row (the point in one column, cut with an
    ellipsis); wider, a column each. Then the cautions, the sustained tests, the advice and the differences."""
    out: list[Any] = []
    a, b = result["a"], result["b"]
    title = "B / A: a repeatability check (both runs on one machine)" if result["same_machine"] else "B / A"
    compact = width < WIDE_TERMINAL_COLUMNS
    if compact:
        # widths that add up to 78 columns with the separators
        table = compact_table(title, (("point", "left", 24), ("runs", "right", 5), ("B / A (95% interval)", "left", 20),
                                      ("verdict", "left", 26)))
    else:
        table = Table("test", "op", "access", "granularity", "stride", "in flight", "runs", "B / A (95% interval)",
                      "verdict", title=title)
    for r in result["rows"] + [dict(s, access="(geometric mean)", granularity_bytes=0, stride_bytes=0)
                               for s in result["summaries"]]:
        flight = in_flight_label(r.get("queue_depth", 1), r.get("threads", 1))
        interval = ratio_text(r["ratio"])
        runs = f"{r['runs_a']}+{r['runs_b']}" if "runs_a" in r else f"{a['runs']}+{b['runs']}"
        word = verdict_text(r)
        size = format_size(r["granularity_bytes"]) if r["granularity_bytes"] else ""
        stride = format_size(r["stride_bytes"]) if r.get("stride_bytes") else ""
        if compact:
            point = " ".join(v for v in (r["test"], r["op"], _SHORT_ACCESS.get(r["access"], r["access"]), size,
                                         f"+{stride}" if stride else "", flight) if v)
            table.add_row(point, runs, interval, word)
        else:
            table.add_row(r["test"], r["op"], r["access"], size, stride, flight, runs, interval, word)
    if result["rows"]:
        out.append(table)
    out += cautions(result["rows"])
    for entry in result.get("sustained", []):
        out.append(f"[bold]{entry['test']} {entry['op']}, sustained[/]: A {entry['a']['headline']}; "
                   f"B {entry['b']['headline']}")
        out += [f"  B / A: {sustained_ratio_text(r)}" for r in entry["ratios"]]
    if compact and any(r["access"] for r in result["rows"]):
        out.append("seq, rand, str: sequential, random, strided access; +S: S skipped after each request; "
                   "Q8T1: 8 requests in flight on 1 thread")
    out.append(result["advice"])
    out += [f"differs: {line}" for line in result.get("differences", [])]
    un = result["unmatched"]
    if un["only_in_a"] or un["only_in_b"]:
        out.append(f"without a partner: only in A: {', '.join(un['only_in_a']) or 'none'}; "
                   f"only in B: {', '.join(un['only_in_b']) or 'none'}")
    return out
