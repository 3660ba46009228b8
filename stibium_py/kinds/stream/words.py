"""A stream result in words: its sentence, its format described, its clients named, and its notices (the
findings of burst.py among them), the same on the terminal, the page and in summary.json."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...units import format_rate, format_size
from .burst import add_findings
from .model import MAX_STREAMS

if TYPE_CHECKING:
    from .analysis import StreamResult


def frames(n: int) -> str:
    return f"{n:,} frame{'s' if n != 1 else ''}"


def sentence(e: StreamResult) -> str:
    """The result in one sentence: "clips playback: 3 streams ran without a drop in every trial, 4 dropped 2.1 %
    of their frames; one stream's frames moved at 412 MB/s, a sequential rate that promises 111 streams"."""
    def streams(n: int) -> str:
        each = f"{n} stream{'s' if n != 1 else ''}"
        return each if e.clients == 1 else f"{e.clients} clients x {each} ({e.clients * n} on the store)"
    above = next((p for p in e.points if p.streams > e.most and p.dropped), None)
    if e.most:
        said = f"{streams(e.most)} ran without a drop in every trial"
        if e.most == e.points[-1].streams:
            said += (f" (the most a test may ask for, {MAX_STREAMS}: more may run)" if e.most == MAX_STREAMS else
                     " (the most the test asked for: more may run)")
        elif above is not None:
            more = str(above.streams) if e.clients == 1 else \
                f"{e.clients} x {above.streams} ({e.clients * above.streams})"
            said += f", {more} dropped {_percent(above.dropped_share)} of their frames"
    else:
        first = e.points[0]
        said = f"even {streams(first.streams)} dropped {_percent(first.dropped_share)} of their frames"
    if e.carried_by_burst and e.burst is not None:
        said += (f"; {_counts_text(e.carried_by_burst)} on a burst: they need more than the "
                 f"{format_rate(e.burst.sustained_bytes_per_s)} the drive sustained after it")
    straggling = next((p for p in e.points if p.stragglers), None)
    if straggling is not None:
        said += (f"; {client_names(e, straggling.stragglers)} dropped frames at {straggling.streams} a client where "
                 f"the others dropped none (a straggler)")
    if e.promised is not None and e.sequential_bytes_per_s is not None:
        said += (f"; one stream's frames moved at {format_rate(e.sequential_bytes_per_s)}, a sequential rate that "
                 f"promises {e.promised} stream{'s' if e.promised != 1 else ''}")
    return f"{e.name} {e.action}{f' ({e.format_title})' if e.format_title else ''}: {said}"


def _counts_text(counts: list[int]) -> str:
    """ "2 streams ran", "2 and 3 streams ran"."""
    named = str(counts[0]) if len(counts) == 1 else ", ".join(map(str, counts[:-1])) + f" and {counts[-1]}"
    return f"{named} stream{'s' if counts[-1] != 1 else ''} ran"


def described(e: StreamResult) -> str:
    """The test's format (or its frame and rate) in words, as a comparison and a series name it."""
    return (f"{e.format_title}: " if e.format_title else "") + (
        f"{format_size(e.frame_bytes)} at {e.fps:.3f} fps, {format_rate(e.stream_bytes_per_s)} a stream")


def client_names(e: StreamResult, ranks: list[int]) -> str:
    """ "client 2 (edit-3)", "clients 1 (edit-2) and 3 (edit-4)"."""
    names = [f"{r} ({e.hosts[r]})" if r in e.hosts else str(r) for r in ranks]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"client{'s' if len(names) > 1 else ''} {joined}"


def _percent(share: float) -> str:
    pct = 100 * share
    return f"{pct:.1f} %" if pct >= 0.1 else f"{pct:.2g} %"


def add_warnings(e: StreamResult, add: Any) -> None:
    label = f"{e.name} ({e.op})"
    if e.promised is not None and e.promised > e.most and e.most < max(p.streams for p in e.points):
        add("info", label, f"a sequential rate alone promises {e.promised} streams of this format; "
            f"{e.most} ran without a drop in every trial", "plan for the streams that ran, not for the rate: frames "
            "must arrive by their time, and streams at once share the disk")
    if not e.most:
        first = e.points[0]
        on = f" a client on {e.clients} clients" if e.clients > 1 else ""
        add("warning", label, f"even {first.streams} stream{'s' if first.streams > 1 else ''}{on} dropped "
            f"{first.dropped:,} of {first.frames:,} frames (a buffer of {frames(e.buffer_frames)})",
            f"{client_names(e, first.stragglers)} dropped alone: see to that client before the store"
            if first.stragglers else
            f"this {'store' if e.clients > 1 else 'disk'} does not carry the format: choose a lighter codec, a "
            f"larger buffer or a faster {'store' if e.clients > 1 else 'disk'}")
    for p in e.points:
        if p.stragglers:
            lost = sum(p.dropped_by_client[c] for c in p.stragglers)
            add("warning", label, f"{p.streams} stream{'s' if p.streams > 1 else ''} a client: "
                f"{client_names(e, p.stragglers)} dropped {lost:,} frames where the other clients dropped none",
                "the store carried the others: look at the straggler's own link, mount and load")
    if e.left_out:
        add("info", label, f"{frames(e.left_out)} of streams cut short are not counted (a measurement cut by an "
            f"interruption and done again on resume{', or a trial left out' if e.cut else ''})",
            "nothing to do: every count is of streams that ran whole")
    add_findings(e, label, add)
    for n, t in e.cut:
        add("warning", label, f"{n} stream{'s' if n > 1 else ''}{' a client' if e.clients > 1 else ''}, trial "
            f"{t + 1}: not every stream ran to its last "
            f"frame; the trial is left out", "resume the run to measure it again")
