"""The report of one run: read the run directory, summarise (analysis), write
summary.json and report.html, print the terminal table."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..analysis import calibration
from ..analysis.rates import valid
from ..analysis.summary import Settings, summarize
from ..store import REPORT_HTML, SUMMARY_JSON, RunDirError, read_measurements, read_run_json, write_json_atomic
from ..units import format_bytes, format_rate, format_seconds, format_size
from . import figures
from .page import esc, figure, page, table


def analyse(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """The run's facts, its whole measurement rows, and their summary."""
    run = read_run_json(run_dir)
    rows, damaged = read_measurements(run_dir)
    if not rows:
        raise RunDirError(f"{run_dir}: no measurements yet; nothing to report")
    ceiling = (run.get("plan", {}).get("as_given") or {}).get("ceiling_bytes_per_s")
    summary = summarize(rows, Settings(ceiling_bytes_per_s=ceiling), run.get("helper", {}), damaged)
    return run, rows, summary


def build_report(run_dir: Path, console: Console | None = None, open_browser: bool = False) -> dict[str, Any]:
    run, rows, summary = analyse(run_dir)
    write_json_atomic(run_dir / SUMMARY_JSON, summary)
    html_text = render(run, rows, summary)
    out = run_dir / REPORT_HTML
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html_text, encoding="utf-8")
    tmp.replace(out)
    if console is not None:
        console.print(terminal_table(summary, console.width))
        console.print(f"report: {out}")
    if open_browser:
        webbrowser.open(out.resolve().as_uri())
    return summary


def _est(e: dict[str, Any] | None, fmt: Any) -> str:
    if not e or e.get("estimate") is None:
        return "-"
    lo = fmt(e["low"]) if e.get("low") is not None else "?"
    hi = fmt(e["high"]) if e.get("high") is not None else "?"
    return f"{fmt(e['estimate'])} [{lo}, {hi}]"


def _headline(e: dict[str, Any]) -> tuple[str, str]:
    if e["kind"] == "files":
        return _est(e["rate_bytes_per_s"], format_rate), _est(e["latency_s"], format_seconds)
    best = max(e["points"], key=lambda p: p["throughput_bytes_per_s"]["estimate"])
    lat = best.get("lat_p50_s")
    return (f"{_est(best['throughput_bytes_per_s'], format_rate)} at {format_size(best['granularity_bytes'])} "
            f"{best['access']}", f"p50 {format_seconds(lat)}" if lat is not None else "-")


WIDE_TERMINAL_COLUMNS = 120


def _plus_minus(e: dict[str, Any] | None) -> str:
    """An estimate with the larger side of its interval in percent: 488 MB/s ±2%."""
    if not e or e.get("estimate") is None:
        return "-"
    est, lo, hi = e["estimate"], e.get("low"), e.get("high")
    if lo is None or hi is None or not est:
        return f"{format_rate(est)} (no interval)"
    return f"{format_rate(est)} ±{max(hi / est - 1, 1 - lo / est):.0%}"


def _compact_row(e: dict[str, Any]) -> list[str]:
    d = e.get("drift", {})
    drift = f"{d['drift_fraction']:+.0%}" + ("!" if d.get("detected") else "") if "drift_fraction" in d else "-"
    if e["kind"] == "files":
        label, rate = f"{e['name']} {e['op']}", _plus_minus(e["rate_bytes_per_s"])
        lat = format_seconds(e["latency_s"]["estimate"]) if e["latency_s"].get("estimate") is not None else "-"
    else:
        best = max(e["points"], key=lambda p: p["throughput_bytes_per_s"]["estimate"])
        label = f"{e['name']} {e['op']} @{format_size(best['granularity_bytes'])}"
        rate = _plus_minus(best["throughput_bytes_per_s"])
        lat = f"p50 {format_seconds(best['lat_p50_s'])}" if best.get("lat_p50_s") is not None else "-"
    return [label, rate, lat, str(e["n"]), str(len(e["outliers"])), str(len(e["cache_suspects"])),
            str(len(e.get("fast_outliers", []))), drift]


def terminal_table(summary: dict[str, Any], width: int = WIDE_TERMINAL_COLUMNS) -> Table:
    """The summary for the terminal: below WIDE_TERMINAL_COLUMNS one line per row (the interval as ± %,
    the exact one is in the report); wider, the intervals in full."""
    if width < WIDE_TERMINAL_COLUMNS:
        from rich import box
        t = Table(title="stibium summary (1 run; intervals 95 %, exact in the report)", box=box.SIMPLE_HEAD,
                  pad_edge=False, padding=(0, 1, 0, 0), collapse_padding=True)
        # widths that add up to 78 columns with the separators; the test's name is cut with an ellipsis
        for name, justify, size in (("test", "left", 20), ("rate", "left", 15), ("latency", "left", 11),
                                    ("n", "right", 4), ("out", "right", 3), ("cache", "right", 6),
                                    ("fast", "right", 4), ("drift", "right", 6)):
            t.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis", width=size)
        for e in summary["tests"]:
            t.add_row(*_compact_row(e))
        return t
    t = Table("test", "op", "rate (95% interval)", "latency", "n", "outliers", "cache suspects", "fast", "drift",
              title="stibium summary (1 run)")
    for e in summary["tests"]:
        rate, lat = _headline(e)
        d = e.get("drift", {})
        t.add_row(e["name"], e["op"], rate, lat, str(e["n"]), str(len(e["outliers"])), str(len(e["cache_suspects"])),
                  str(len(e.get("fast_outliers", []))),
                  f"{d['drift_fraction']:+.0%}" + (" !" if d.get("detected") else "") if "drift_fraction" in d else "-")
    return t


def _header(run: dict[str, Any]) -> str:
    m = run.get("machine", {})
    t = run.get("target_facts", {})
    plan = run.get("plan", {})
    facts = [
        ["machine", f"{m.get('hostname')} — {m.get('os')} {m.get('os_release')}, {m.get('cpu')}, "
                    f"{m.get('cpu_count')} CPUs, {format_bytes(m.get('ram_bytes') or 0)} RAM"],
        ["target", f"{run.get('target')} on {t.get('fs_type')} ({t.get('device')}, {t.get('device_model')}), "
                   f"mount options {t.get('mount_options')}"],
        ["direct I/O", f"{t.get('direct_how')}, honoured: {t.get('direct_honoured')}, alignment "
                       f"{t.get('direct_offset_align_bytes')} B"],
        ["plan", f"{plan.get('name')}: {plan.get('description')}"],
        ["versions", f"stibium {run.get('stibium_version')}, helper {run.get('helper_version')}, "
                     f"{run.get('helper', {}).get('foundation_implementation')}, clock {run.get('clock', {}).get('clock')}"],
        ["run", f"{run.get('started_utc')} to {run.get('ended_utc')}, status {run.get('status')}"],
    ]
    return (f"<h1>stibium: {esc(plan.get('name'))}</h1><p class=\"muted\">{esc(plan.get('description'))}</p>"
            + table(["fact", "value"], facts))


def _summary_section(summary: dict[str, Any]) -> str:
    rows = []
    for e in summary["tests"]:
        rate, lat = _headline(e)
        d = e.get("drift", {})
        rows.append([e["name"], e["op"], e["kind"], rate, lat, e["n"], len(e["outliers"]), len(e["cache_suspects"]),
                     len(e.get("fast_outliers", [])),
                     f"{d['drift_fraction']:+.1%}" if "drift_fraction" in d else "-"])
    warn = "".join(f"<div class=\"{'warn' if w['level'] == 'warning' else 'info'}\"><b>{esc(w['test'])}</b>: "
                   f"{esc(w['message'])}. <i>What to do:</i> {esc(w['what_to_do'])}.</div>" for w in summary["warnings"])
    return ("<h2>Summary</h2>" + table(["test", "op", "kind", "rate or throughput (95% interval)", "latency", "n",
                                        "outliers", "cache suspects", "fast outliers (not the page cache)", "drift"],
                                       rows)
            + "<h2>Warnings</h2>" + (warn or "<p>None: no outliers, cache hits or drift were found.</p>"))


def render(run: dict[str, Any], rows: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    sections = [_header(run), _summary_section(summary)]
    good = valid(rows)
    n = 0
    pattern_tests: dict[str, list[dict[str, Any]]] = {}
    for e in summary["tests"]:
        if e["kind"] == "pattern":
            pattern_tests.setdefault(e["name"], []).append(e)
            continue
        rs = [r for r in good if r["test"] == e["name"] and r["op"] == e["op"]]
        sections.append(f"<h2>{esc(e['name'])}: {esc(e['op'])}s of whole files</h2>")
        figs = [figures.time_vs_size(rs, e), figures.residuals(rs, e), figures.rate_vs_size(rs, e),
                figures.rate_vs_elapsed(rs, e)]
        sections.append("<div class=\"grid\">" + "".join(figure(f, f"fig{n + i}") for i, f in enumerate(figs)) + "</div>")
        n += len(figs)
        for title, points in (("Page-cache suspects", e["cache_suspects"]),
                              ("Fast outliers: not the page cache", e.get("fast_outliers", []))):
            if points:
                sections.append(f"<h3>{title}</h3>" + table(
                    ["seq", "file", "size", "seconds", "rate", "reasons"],
                    [[p["seq"], p["file"], format_bytes(p["size_bytes"]), f"{p['seconds']:.6f}",
                      format_rate(p["rate_bytes_per_s"]), "; ".join(p["reasons"])] for p in points]))
    for name, entries in pattern_tests.items():
        sections.append(f"<h2>{esc(name)}: access patterns</h2>")
        figs = [figures.throughput_vs_granularity(entries), figures.latency_percentiles(entries)]
        heat = figures.stride_heatmap(entries)
        if heat is not None:
            figs.append(heat)
        sections.append("<div class=\"grid\">" + "".join(figure(f, f"fig{n + i}") for i, f in enumerate(figs)) + "</div>")
        n += len(figs)
    sections.append("<h2>Methods</h2><p class=\"muted\">Every measurement is in measurements.csv beside this page; "
                    "the numbers above are in summary.json. Rates: Theil-Sen with stratified bootstrap intervals, "
                    "widened for small strata; no interval below 3 repeats per size. Outliers flagged by Tukey fences "
                    "on log residuals and never removed. Fast reads: page-cache suspects where the file was resident "
                    "or residency unknown, fast outliers where it was measured absent. Coverage of the 95 % intervals "
                    "of rate / latency in simulation (300 runs per cell):</p>"
                    + table(["repeats per size", *calibration.NOISES], calibration.rows()))
    return page(f"stibium: {run.get('plan', {}).get('name')}", sections)
