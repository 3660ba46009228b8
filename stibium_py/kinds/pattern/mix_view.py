"""What a mixed or timed pattern test adds to the report: a line per mixed point for the terminal (its reads
and writes, each at its rate) and the same as a table for the page, and a line on how the trials were bounded:
by time (its duration, its warm-ups kept out of the rates) or by a stonewall (what it stopped)."""

from __future__ import annotations

from ...analysis.estimate import estimate_text
from .result import Mix, PatternPoint, PatternResult
from ...units import format_bytes, format_rate, format_seconds, format_size, in_flight_label, op_label
from ...report.page import esc, table


def _point(p: PatternPoint) -> str:
    """random 4 KiB Q32T1"""
    flight = in_flight_label(p.queue_depth, p.threads)
    return " ".join(v for v in (p.access, format_size(p.granularity_bytes), flight) if v)


def _mixed(e: PatternResult) -> list[tuple[PatternPoint, Mix]]:
    """Its mixed points, each with its reads and writes."""
    return [(p, p.mix) for p in e.points if p.mix is not None]


def timing_lines(e: PatternResult) -> list[str]:
    """How a test's trials were bounded: by time (duration, warm-up), or by a stonewall."""
    return [line for line in (_by_time(e), f"{e.name} {e.op}: {e.stonewall.line()}" if e.stonewall else None) if line]


def _by_time(e: PatternResult) -> str | None:
    t = e.timing
    if t is None:
        return None
    warm = (f" after a {format_seconds(t.warmup_s)} warm-up; the warm-ups moved {format_bytes(t.warmup_bytes)} in "
            f"{t.warmup_requests:,} requests, kept out of the rates" if t.warmup_s else "")
    return (f"{e.name} {e.op}: each trial ran {format_seconds(t.duration_s)}{warm}; the last request ended at most "
            f"{format_seconds(max(t.overrun_max_s, 0.0))} after the duration")


def terminal_lines(e: PatternResult) -> list[str]:
    """A mixed point: its reads and writes, each at its rate; and a test by time's line."""
    lines = [f"{e.name} {op_label('mixed', mix.read_fraction)} {_point(p)}: {format_rate(p.throughput.estimate)} = "
             f"reads {format_rate(mix.read_rate.estimate)} + writes {format_rate(mix.write_rate.estimate)} "
             f"(reads {mix.read_share_bytes:.1%} of the bytes)" for p, mix in _mixed(e)]
    return lines + timing_lines(e)


def section(entries: list[PatternResult]) -> str:
    """The page's table of a test's mixed points, and its timing line; "" where it has neither."""
    rows = [[op_label("mixed", mix.read_fraction), _point(p), estimate_text(p.throughput, format_rate),
             estimate_text(mix.read_rate, format_rate), estimate_text(mix.write_rate, format_rate),
             f"{mix.read_share_bytes:.1%}", *(format_seconds(v) if v is not None else "-" for v in mix.latency_s.values())]
            for e in entries for p, mix in _mixed(e)]
    html = ""
    if rows:
        html += ("<h3>Mixed reads and writes</h3><p class=\"muted\">Each request of a mixed measurement is a read or "
                 "a write, in the share the plan asked (exactly, over each pass of the requests; which ones drawn "
                 "from the seed), all in one interval: the reads' and the writes' rates add up to the whole. Each "
                 "rate is the median over trials with its 95 % interval; latencies are medians over trials of the "
                 "helper's percentiles.</p>"
                 + table(["mix", "point", "reads and writes", "reads", "writes", "read share of bytes", "read p50",
                          "read p99", "write p50", "write p99"], rows))
    timed = [line for e in entries for line in timing_lines(e)]
    html += "".join(f"<p class=\"muted\">{esc(line)}.</p>" for line in timed)
    return html
