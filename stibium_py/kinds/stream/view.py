"""How a stream test is drawn: its row of the summary table, its sentence and table on the terminal, its section of
the page (the "will it play?" table, each stream count's frames, a figure of frame lateness against time with the
drops marked) and what `plan show` says of it. Draws only: every number comes from StreamResult."""

from __future__ import annotations

from typing import Any

from ...report import plot
from ...report.build import KindView
from ...report.figures import layout
from ...report.page import esc, figure, table
from ...report.terminal import Column, fitted_table, with_caption
from ...units import format_rate, format_seconds, format_size
from .analysis import StreamResult
from .words import client_names, frames, sentence


def _streams(n: int) -> str:
    return f"{n} stream{'s' if n != 1 else ''}"


def headline(e: StreamResult, compact: bool) -> tuple[str, str, str]:
    """The most streams without a drop, and a frame's median time at that count (or at the fewest)."""
    at = next((p for p in e.points if p.streams == e.most), e.points[0])
    latency = format_seconds(at.frame_s["p50"]) if compact else f"p50 {format_seconds(at.frame_s['p50'])} a frame"
    most = ("none" if not e.most else _streams(e.most) if e.clients == 1 else
            f"{e.clients} x {_streams(e.most)}")
    if compact:
        return e.action, most, latency
    return f"{e.name} {e.action}", f"{most} without a drop", latency


def _count(e: StreamResult, n: int) -> str:
    """A stream count: each client's, times the clients where there are many ("4 x 2")."""
    return str(n) if e.clients == 1 else f"{e.clients} x {n}"


def _row(e: StreamResult, p: Any) -> list[str]:
    dropped = f"{p.dropped:,} ({100 * p.dropped_share:.1f} %)" if p.dropped else "0"
    return [e.name, e.action, _count(e, p.streams), f"{p.frames:,}", f"{p.on_time:,}", f"{p.late:,}", dropped,
            str(e.buffer_frames),
            format_seconds(p.frame_s["p50"]), format_seconds(p.frame_s["p99"]), format_seconds(p.frame_s["max"])]


_HEADER = ["test", "op", "streams", "frames", "on time", "late", "dropped", "buffer (frames)", "frame p50",
           "frame p99", "frame max"]


def lines(results: list[StreamResult], width: int) -> list[Any]:
    """One sentence per test and op first, then the table of every stream count."""
    if not results:
        return []
    columns = [Column("test", shortened=True), Column("op"), Column("streams", justify="right"),
               Column("frames", justify="right", drop=3), Column("on time", justify="right", drop=2),
               Column("late", justify="right"), Column("dropped", justify="right"),
               Column("buffer", justify="right", drop=5), Column("frame p50", justify="right", drop=1), Column("frame p99", justify="right"),
               Column("frame max", justify="right", drop=4)]
    rows = [_row(e, p) for e in results for p in e.points]
    shown, dropped, _ = fitted_table("streams: frames on time, late and dropped (beyond the buffer's frames)",
                                     columns, [rows], width)
    return [*(sentence(e) for e in results), with_caption(shown, dropped)]


def _figure(e: StreamResult, n: int) -> str:
    fig = plot.Figure()
    for k, p in enumerate(e.points):
        colour = plot.QUALITATIVE[k % len(plot.QUALITATIVE)]
        fig.add_trace(plot.Scatter(x=p.trace_s, y=[v * 1e3 for v in p.trace_late_s], mode="lines",
                                   name=esc(f"{_streams(p.streams)}"), line={"color": colour, "width": 1}))
        drops = [i for i, d in enumerate(p.trace_dropped) if d]
        if drops:
            fig.add_trace(plot.Scatter(x=[p.trace_s[i] for i in drops], y=[p.trace_late_s[i] * 1e3 for i in drops],
                                       mode="markers", marker={"color": colour, "symbol": "x", "size": 6},
                                       name=esc(f"{_streams(p.streams)}: dropped")))
    fig.add_hline(y=e.buffer_frames / e.fps * 1e3, line_dash="dash", line_color=plot.GREY,
                  annotation_text=f"buffer: {frames(e.buffer_frames)}")
    drawn = layout(fig, f"{e.name} {e.action}: each frame's end after its time (the worst stream of each count; "
                        f"above the dashed line a frame is dropped)", "seconds since the stream began",
                   "ms after its frame time")
    return figure(drawn, f"fig{n}")


def _distribution(e: StreamResult, n: int) -> str:
    """Each stream count's frame times as a cumulative distribution (log time)."""
    fig = plot.Figure()
    for k, p in enumerate(e.points):
        times = p.frames_sorted_s
        fig.add_trace(plot.Scatter(x=[v * 1e3 for v in times], y=[(i + 1) / len(times) for i in range(len(times))],
                                   mode="lines", name=esc(_streams(p.streams)),
                                   line={"color": plot.QUALITATIVE[k % len(plot.QUALITATIVE)], "shape": "hv"}))
    fig.add_vline(x=1e3 / e.fps, line_dash="dash", line_color=plot.GREY, annotation_text="a frame's time")
    drawn = layout(fig, f"{e.name} {e.action}: the time each frame's I/O took, every stream and trial of each count",
                   "ms", "share of frames at most this", log_x=True)
    return figure(drawn, f"fig{n}")


def _by_test(results: list[StreamResult]) -> list[list[StreamResult]]:
    """The results of each test (its capture and its playback), in the order of the tests."""
    names = list(dict.fromkeys(e.name for e in results))
    return [[e for e in results if e.name == name] for name in names]


def _most(e: StreamResult | None) -> str:
    """A cell of the will-it-play table: the most streams without a drop in every trial, and the range of each
    trial's own most (the count's interval); "not asked" where the test has no such op."""
    if e is None:
        return "not asked"
    low, high = min(e.most_by_trial), max(e.most_by_trial)
    spread = "in each trial" if low == high else f"trials: {_count(e, low)} to {_count(e, high)}"
    total = f" = {e.clients * e.most}" if e.clients > 1 else ""
    return f"{_count(e, e.most)}{total} ({spread})"


def _will_it_play(tests: list[StreamResult]) -> list[str]:
    """A row of the will-it-play table: a test's format, its capture's and its playback's most streams, and what
    each one's sequential rate would promise."""
    e = tests[0]
    what = (f"{e.format_title}: " if e.format_title else "") + (f"{format_size(e.frame_bytes)} a frame at "
                                                                   f"{e.fps:.3f} fps "
                                                                   f"({format_rate(e.stream_bytes_per_s)} a stream)")
    by_op = {t.action: t for t in tests}
    promised = [f"{t.action} {t.promised} ({format_rate(t.sequential_bytes_per_s)})" for t in tests
                if t.promised is not None and t.sequential_bytes_per_s is not None]
    return [e.name, what, _most(by_op.get("capture")), _most(by_op.get("playback")), ", ".join(promised) or "-"]


def sections(results: list[StreamResult], n: int) -> tuple[list[str], int]:
    if not results:
        return [], n
    play = table(["test", "format", "capture: most streams without a drop", "playback: most streams without a drop",
                  "a sequential rate promises"], [_will_it_play(tests) for tests in _by_test(results)])
    out = ["<h2>Streams: will it play?</h2><p>" + "<br>".join(esc(sentence(e)) for e in results) + "</p>" + play,
           table(_HEADER, [_row(e, p) for e in results for p in e.points])]
    many = [e for e in results if e.clients > 1]
    if many:
        out.append("<h3>Streams across clients</h3><p>Each client ran the count's streams at once, every client "
                   "together: the streams on the store are the clients times the count. A straggler dropped frames "
                   "where another client dropped none.</p>" + table(
                       ["test", "op", "streams a client", "clients", "streams on the store", "dropped",
                        "dropped by client", "stragglers"],
                       [[e.name, e.action, str(p.streams), str(e.clients), str(e.clients * p.streams),
                         f"{p.dropped:,}", ", ".join(f"{c}: {d:,}" for c, d in p.dropped_by_client.items()),
                         client_names(e, p.stragglers) if p.stragglers else "none"]
                        for e in many for p in e.points]))
    for e in results:
        out.append('<div class="grid">' + _figure(e, n) + _distribution(e, n + 1) + "</div>")
        n += 2
    return out, n


def plan_note(test: Any) -> str:
    """A stream test's frames, streams and time, in words."""
    first, part = test.ops[0], test.ops[0].frames
    counts = sorted({o.frames.streams for o in test.planned_ops})
    trials = max(o.trial for o in test.ops) + 1
    per_stream = first.bytes // first.chunk_bytes
    actions = list(dict.fromkeys("capture" if o.op == "write" else "playback" for o in test.ops))
    seconds = per_stream / part.fps * len(counts) * trials * len(actions)
    what = f"image sequences ({part.sequence} files, one a frame)" if part.sequence else "streams (a movie file each)"
    search = (" where none drops (a search for the most: where a count drops, it tries the counts between it and "
              "the last that ran clean, halving the gap)" if test.search_most else "")
    return (f"  {test.name}: {' then '.join(actions)} of {', '.join(map(str, counts))} {what} at once{search}, "
            f"{trials} "
            f"trial{'s' if trials > 1 else ''} each; a frame of {format_size(first.chunk_bytes)} every "
            f"{format_seconds(1 / part.fps)} ({format_rate(first.chunk_bytes * part.fps)} a stream), "
            f"{frames(per_stream)} a stream, a buffer of {frames(part.buffer_frames)}; takes about "
            f"{format_seconds(seconds)}.")


def _trials(values: list[int]) -> str:
    """The range of each trial's own most, where the trials differ: " (each trial's own: 3 to 4)"; "" where every
    trial's most is the side's."""
    low, high = min(values), max(values)
    return "" if low == high else f" (each trial's own: {low} to {high})"


def compare_text(p: Any, a: str = "A", b: str = "B") -> str:
    """A pair in one line: "clips playback (ProRes 422 HQ, ...): A 3 streams without a drop in every trial (each
    trial's own: 3 to 4), B 5: B carried more in every trial than A in any (1 more at the least)": the least is
    the fewest trial of the side that carried more against the best of the other."""
    said = (f"{p.name} {p.action} ({p.what}): {a} {_streams(p.a_most)} without a drop in every trial"
            f"{_trials(p.a)}, {b} {p.b_most}{_trials(p.b)}")
    if p.verdict == "more":
        return f"{said}: {b} carried more in every trial than {a} in any ({min(p.b) - max(p.a)} more at the least)"
    if p.verdict == "fewer":
        return (f"{said}: {b} carried fewer in every trial than {a} in any ({min(p.a) - max(p.b)} fewer at the "
                f"least)")
    return f"{said}: the trials' counts overlap, no difference is shown"


def compare_lines(pairs: list[Any], a: str, b: str) -> list[str]:
    return [compare_text(p, a, b) for p in pairs]


def compare_section(pairs: list[Any], label_a: str, label_b: str) -> str:
    """The compare page's table of the stream tests: each side's most streams (on the store) and every trial's."""
    rows = [[p.name, p.action, p.what, f"{p.a_most}{_trials(p.a)}", f"{p.b_most}{_trials(p.b)}",
             {"more": "B carried more", "fewer": "B carried fewer", "same range": "no difference shown"}[p.verdict]]
            for p in pairs]
    return (f"<h2>Streams: will it play, A and B</h2><p>A: {esc(label_a)}; B: {esc(label_b)}. The most streams on "
            f"the store without a drop in every trial of a side (every run's trials together), with the range of "
            f"each trial's own most; one side carried more only where its every trial carried more than the "
            f"other's any.</p>" + table(["test", "op", "format", "A", "B", "B against A"], rows))


def _runs(entry: dict[str, Any]) -> str:
    return f"{len(entry['runs'])} run{'s' if len(entry['runs']) != 1 else ''}"


def series_lines(entries: list[dict[str, Any]]) -> list[str]:
    """A series' stream tests on the terminal, a line a test and op: the most streams without a drop in every
    trial of every run, then each run's (its trials' range)."""
    def each(r: dict[str, Any]) -> str:
        low, high = min(r["most_streams_by_trial"]), max(r["most_streams_by_trial"])
        return f"{r['run']}: {low} in each trial" if low == high else f"{r['run']}: {low} (trials: {low} to {high})"
    return [f"{e['test']} {e['action']} ({e['format']}): {_streams(e['most_streams'])} without a drop in every "
            f"trial of {_runs(e)}; " + ", ".join(map(each, e["runs"])) for e in entries]


def series_section(entries: list[dict[str, Any]]) -> str:
    """A series' stream tests on its page: each run's most streams (on the store) and every trial's, then every
    run's together."""
    rows = [[e["test"], e["action"], e["format"], r["run"], str(r["most_streams"]),
             ", ".join(map(str, r["most_streams_by_trial"]))] for e in entries for r in e["runs"]]
    rows += [[e["test"], e["action"], e["format"], f"every run ({_runs(e)})", str(e["most_streams"]),
              "the runs differ" if e["runs_differ"] else "the runs' trials overlap"] for e in entries]
    return ("<h2>Streams across runs: will it play, run by run</h2><p>The most streams on the store without a drop "
            "in every trial of a run, and each trial's own most; a run differs from another only where its every "
            "trial carried more than the other's any.</p>"
            + table(["test", "op", "format", "run", "most streams without a drop", "each trial's most"], rows))


VIEW = KindView(headline, lambda e: ["0", "0", "0", "0"], lambda e: "-", sections, lines, compare_lines,
                compare_section, series_lines, series_section)
