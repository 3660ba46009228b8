"""Views of requests in flight: throughput and IOPS against queue depth with the queue-depth knee,
latency percentiles against queue depth, and the disk-mark table: CrystalDiskMark's layout, a row per
access, request size and requests in flight (SEQ1M Q8T1), reads and writes side by side, each cell with
its interval."""

from __future__ import annotations

from typing import Any

from ...report import plot

from ...analysis.estimate import Estimate
from .result import PatternPoint, PatternResult
from ...analysis.summary import Summary
from ...analysis.estimate import estimate_text
from ...units import format_rate, op_label
from ...report.figures import layout
from ...report.page import esc, table
from ...report.terminal import Column, fitted_table

ACCESS_ORDER = {"sequential": 0, "strided": 1, "random": 2}
ACCESS_SHORT = {"sequential": "SEQ", "strided": "STR", "random": "RND"}

Line = tuple[str, str, int, int, int, Any]     # op, access, granularity, stride, threads, read share (mixed)


def _size(n: int) -> str:
    """1M, 128K, 4K as the disk-mark tools write binary sizes; bytes otherwise."""
    for unit, suffix in ((2**30, "G"), (2**20, "M"), (2**10, "K")):
        if n % unit == 0:
            return f"{n // unit}{suffix}"
    return f"{n}B"


def _shape(access: str, granularity: int, stride: int) -> str:
    """SEQ1M, RND4K, STR4K+64K: access, request size and stride as the disk-mark tools write them."""
    return f"{ACCESS_SHORT.get(access, access)}{_size(granularity)}" + (f"+{_size(stride)}" if stride else "")


def mark_label(p: PatternPoint) -> str:
    """SEQ1M Q8T1, RND4K Q1T1, STR4K+64K Q1T1."""
    return f"{_shape(p.access, p.granularity_bytes, p.stride_bytes)} Q{p.queue_depth}T{p.threads}"


def depth_lines(entries: list[PatternResult]) -> dict[Line, list[PatternPoint]]:
    """Per op, access, granularity, stride and threads with two or more queue depths: its points by depth."""
    lines: dict[Line, list[PatternPoint]] = {}
    for e in entries:
        for p in e.points:
            if p.fill != e.main_fill or p.load is not None:   # the other fills' points are on the granularity
                continue                                        # figure, with their fill; an open loop's on its own
            lines.setdefault((e.op, p.access, p.granularity_bytes, p.stride_bytes, p.threads, p.read_fraction),
                             []).append(p)
    return {k: sorted(v, key=lambda p: p.queue_depth)
            for k, v in sorted(lines.items(), key=lambda kv: (kv[0][:5], kv[0][5] or 0)) if len(v) > 1}


def _line_name(line: Line) -> str:
    """read RND4K T1, mixed 70/30 RND4K T1: a line over queue depths."""
    op, access, gran, stride, threads, mix = line
    return f"{op_label(op, mix)} {_shape(access, gran, stride)} T{threads}"


def _knee(entries: list[PatternResult], line: Line) -> int | None:
    op, access, gran, stride, threads, mix = line
    e = next((e for e in entries if e.op == op), None)
    return e.depth_knees.get((access, gran, stride, threads, mix)) if e is not None else None


def _errors(values: list[Estimate]) -> dict[str, Any]:
    return {"type": "data", "symmetric": False, "array": [v.high - v.estimate for v in values],
            "arrayminus": [v.estimate - v.low for v in values]}


def throughput_vs_queue_depth(entries: list[PatternResult]) -> plot.Figure | None:
    """Throughput (left) and IOPS (right) against queue depth, a line per op, access, granularity and
    threads, the median over trials with its interval; the knee ringed. None without two depths."""
    lines = depth_lines(entries)
    if not lines:
        return None
    fig = plot.make_subplots(rows=1, cols=2, subplot_titles=["throughput", "IOPS"], horizontal_spacing=0.1)
    depths = sorted({p.queue_depth for pts in lines.values() for p in pts})
    for i, (line, pts) in enumerate(lines.items()):
        name = _line_name(line)
        colour = plot.QUALITATIVE[i % len(plot.QUALITATIVE)]
        x = [p.queue_depth for p in pts]
        for col, values, unit in ((1, [p.throughput for p in pts], "B/s"), (2, [p.iops_estimate for p in pts], "IOPS")):
            fig.add_trace(plot.Scatter(x=x, y=[v.estimate for v in values], mode="lines+markers", name=esc(name),
                                     legendgroup=name, showlegend=col == 1, error_y=_errors(values),
                                     marker={"color": colour}, line={"color": colour},
                                     text=[f"p50 {1e3 * (p.lat_p50_s or 0):.3f} ms, {p.trials} trials, {p.io_method}"
                                           for p in pts],
                                     hovertemplate=f"QD %{{x}}: %{{y:.4s}} {unit}<br>%{{text}}<extra></extra>"),
                          row=1, col=col)
        knee = _knee(entries, line)
        at = next((p for p in pts if p.queue_depth == knee), None)
        if at is not None and knee != pts[-1].queue_depth:
            fig.add_trace(plot.Scatter(x=[knee], y=[at.throughput.estimate], mode="markers", legendgroup=name,
                                     marker={"symbol": "circle-open", "size": 16, "color": colour,
                                             "line": {"width": 2}},
                                     showlegend=False, hovertemplate=f"{esc(name)}: throughput stops growing "
                                                                     f"beyond QD {knee}<extra></extra>"),
                          row=1, col=1)
    fig.update_xaxes(type="log", tickvals=depths, ticktext=[str(d) for d in depths], title_text="queue depth")
    fig.update_yaxes(type="log")
    name = entries[0].name if entries else ""
    fig = layout(fig, f"{name}: throughput and IOPS against queue depth (ringed: the knee)", "", "")
    fig.add_annotation(text="median over trials with its 95 % interval; the knee: the depth beyond which throughput "
                            "stops growing within its interval", xref="paper", yref="paper", x=0, y=-0.22,
                       showarrow=False, font={"size": 11, "color": "#666"}, xanchor="left")
    return fig


def latency_vs_queue_depth(entries: list[PatternResult]) -> plot.Figure | None:
    """Per-request latency percentiles (p50 solid, p99 dashed, p99.9 dotted) against queue depth."""
    lines = depth_lines(entries)
    if not lines:
        return None
    fig = plot.Figure()
    depths = sorted({p.queue_depth for pts in lines.values() for p in pts})
    for line, pts in lines.items():
        name = _line_name(line)
        for key, dash in (("lat_p50_s", "solid"), ("lat_p99_s", "dash"), ("lat_p999_s", "dot")):
            fig.add_trace(plot.Scatter(x=[p.queue_depth for p in pts], y=[p.latency_s.get(key) for p in pts],
                                     mode="lines+markers", name=esc(f"{name} {key[4:-2]}"), legendgroup=name,
                                     line={"dash": dash}, hovertemplate="QD %{x}: %{y:.3s}s<extra></extra>"))
    fig.update_xaxes(type="log", tickvals=depths, ticktext=[str(d) for d in depths])
    name = entries[0].name if entries else ""
    return layout(fig, f"{name}: per-request latency against queue depth", "queue depth",
                  "seconds", log_y=True)


def mark_columns(summary: Summary) -> list[str]:
    """The disk-mark table's columns: read and write, then a mixed load's (CrystalDiskMark's Mix) per read share."""
    mixes = sorted({p.read_fraction for e in summary.tests if isinstance(e, PatternResult) for p in e.points
                    if p.read_fraction is not None}, reverse=True)
    return ["read", "write", *(op_label("mixed", f) for f in mixes)]


def mark_rows(summary: Summary) -> list[tuple[str, dict[str, PatternPoint]]]:
    """The disk-mark table's rows: (label, its points by column), sequential before strided before random,
    large requests and more in flight first (CrystalDiskMark's order); the test's name before every label
    where two tests have the same one (a row without it beside rows with it would read as another test's)."""
    cells: dict[tuple, dict[str, PatternPoint]] = {}
    for e in summary.tests:
        if isinstance(e, PatternResult):
            for p in e.points:
                if p.load is not None:      # an open loop's points are in its own table, by offered rate
                    continue
                cells.setdefault((e.name, p.access, p.granularity_bytes, p.stride_bytes, p.queue_depth, p.threads),
                                 {})[op_label(e.op, p.read_fraction)] = p
    order = sorted(cells, key=lambda k: (ACCESS_ORDER.get(k[1], 9), -k[2], k[3], -k[4] * k[5], -k[4]))
    labels = [mark_label(next(iter(cells[k].values()))) for k in order]
    named = len(set(labels)) < len(labels)
    return [(f"{k[0]}: {lab}" if named else lab, cells[k]) for k, lab in zip(order, labels)]


def shows_mark_table(summary: Summary) -> bool:
    """A run with requests in flight gets the disk-mark table."""
    return any(p.in_flight > 1 and p.load is None for e in summary.tests if isinstance(e, PatternResult)
               for p in e.points)


def _cell(p: PatternPoint | None, compact: bool) -> str:
    if p is None:
        return "-"
    text = estimate_text(p.throughput, format_rate, compact)
    if compact:
        return text
    if p.access != "sequential":
        text += f", {p.iops_estimate.estimate:,.0f} IOPS"
    if p.mix is not None:
        text += f" (reads {format_rate(p.mix.read_rate.estimate)}, writes {format_rate(p.mix.write_rate.estimate)})"
    return text


def mark_table_html(summary: Summary) -> str:
    columns = mark_columns(summary)
    rows = [[label, *(_cell(cells.get(c), False) for c in columns)] for label, cells in mark_rows(summary)]
    mixed = ("; a mixed column is both at once, each request a read or a write in the share its heading gives "
             "(CrystalDiskMark's Mix), its reads' and writes' rates beside" if len(columns) > 2 else "")
    return ("<h2>Disk-mark table</h2><p class=\"muted\">Laid out as CrystalDiskMark's: SEQ1M Q8T1 is sequential "
            "1 MiB requests, 8 in flight on 1 thread. Each cell is the median over trials with its 95 % interval (too "
            "few trials for one: their range, with the confidence it has) "
            f"(IOPS for non-sequential access){mixed}. The helper moves fresh incompressible data, syncs each write "
            "and keeps every trial.</p>" + table(["", *columns], rows))


def mark_table_terminal(summary: Summary, width: int) -> Any:
    """The same for the terminal, one line a row with every value whole (terminal.fitted_table): with IOPS and
    a mix's reads and writes where they fit, else the intervals alone, else as +-%."""
    columns = mark_columns(summary)
    rows = mark_rows(summary)
    variants = [[[label, *(_cell(cells.get(c), False) for c in columns)] for label, cells in rows],
                [[label, *(estimate_text(p.throughput, format_rate) if p is not None else "-"
                           for p in (cells.get(c) for c in columns))] for label, cells in rows],
                [[label, *(_cell(cells.get(c), True) for c in columns)] for label, cells in rows]]
    table, _, _ = fitted_table("disk-mark table (median over trials; 95 % interval, or the % in brackets; * less)",
                               [Column("", shortened=True), *(Column(c) for c in columns)], variants, width)
    return table