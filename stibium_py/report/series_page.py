"""The report of a series of repeated runs: the runs side by side (each run's rate with its own
interval, per test point), the rate across runs with its two-level interval, the spread between
runs, and the warning when runs differ beyond their own intervals. Links to each run's report."""

from __future__ import annotations

from typing import Any

from . import plot
from rich.markup import escape
from rich.table import Table

from .. import registry
from ..results.series import kind_entries
from ..analysis.estimate import estimate_text
from ..rundir.store import REPORT_HTML
from ..analysis.rates import key_of, rate_format, unit_of
from .figures import interval_bars, layout
from .page import esc, figure, page, table
from .terminal import Column, fitted_table, notices, with_caption


def _interval(e: dict[str, Any], test: dict[str, Any]) -> str:
    """An estimate of a test point's rate in its kind's unit (bytes, or a tree's files, per second)."""
    return estimate_text(e, rate_format(key_of(test)))


def _spread(e: dict[str, Any]) -> str:
    return estimate_text(e, lambda v: f"{v:.1%}")


def _differ(differ: bool | None, no: str) -> str:
    """Whether the runs' own intervals leave each other (unknown where fewer than two runs have one)."""
    return "unknown" if differ is None else "yes" if differ else no


def has_points(summary: dict[str, Any]) -> bool:
    """Whether the series has test points (one of only streams or sustained tests has none: their own sections)."""
    return bool(summary["tests"])


def _no_warning(summary: dict[str, Any]) -> str:
    """The words where no warning was given, true of the runs: they agree only where their intervals say so (a
    kind's own results, each run's beside the others, are said in its section)."""
    if not has_points(summary):
        return "No warning."
    known = [t for t in summary["tests"] if t["runs_differ"] is not None]
    if known and len(known) == len(summary["tests"]):
        return "No warning: the runs agree within their own intervals."
    if known:
        return "No warning: where the runs have intervals, they agree within them; the other tests' runs have none."
    return "No warning. No test point's runs have intervals of their own, so whether they agree is not known."


def _runs_figure(test: dict[str, Any]) -> plot.Figure:
    runs = test["per_run"]
    names = [esc(r["run"]) for r in runs]
    est = [r["estimate"] for r in runs]
    fig = plot.Figure(plot.Scatter(
        x=names, y=est, mode="markers", marker={"size": 10, "color": plot.BLUE}, name="rate of each run",
        error_y=interval_bars(runs)))
    rate = test["rate"]
    if rate.get("estimate") is not None:
        fig.add_hline(y=rate["estimate"], line_color=plot.RED, annotation_text="across runs")
        if rate.get("low") is not None and rate.get("high") is not None:
            fig.add_hrect(y0=rate["low"], y1=rate["high"], fillcolor=plot.RED, opacity=0.12, line_width=0)
    return layout(fig, f"{test['label']}: rate of each run (95% intervals) and across runs", "run",
                  f"{unit_of(key_of(test))}/s")


def render(summary: dict[str, Any]) -> str:
    rows = [[t["label"], _interval(t["rate"], t), _spread(t["spread"]), t["runs"], _differ(t["runs_differ"], "no")]
            for t in summary["tests"]]
    warn = "".join(f"<div class=\"warn\"><b>{esc(w['test'])}</b>: {esc(w['message'])}. <i>What to do:</i> "
                   f"{esc(w['what_to_do'])}.</div>" for w in summary["warnings"])
    links = " ".join(f"<a href=\"{esc(r)}/{REPORT_HTML}\">{esc(r)}</a>" for r in summary["runs"])
    sections = [f"<h1>stibium: {esc(summary['plan'])}, {len(summary['runs'])} runs</h1>",
                f"<p class=\"muted\">Each run's own report: {links}</p>"]
    if has_points(summary):
        sections += ["<h2>Across runs</h2>",
                     table(["test", "rate across runs (95% interval, includes the variance between runs)",
                            "spread between runs", "runs", "runs differ"], rows)]
    sections.append("<h2>Warnings</h2>" + (warn or f"<p>{_no_warning(summary)}</p>"))
    for n, t in enumerate(summary["tests"]):
        sections.append(figure(_runs_figure(t), f"runs{n}"))
    for kind, entries in kind_entries(summary).items():
        sections.append(registry.spec(kind).view.series_section(entries))
    if has_points(summary):
        sections.append("<p class=\"muted\">Rate across runs: the geometric mean of the runs' rates, with a two-level "
                        "bootstrap interval (runs resampled, then measurements within each) widened for the few runs "
                        "by t/z sqrt(K/(K-1)). Spread: 1.4826 x the median absolute deviation of the runs' log "
                        "rates.</p>")
    return page(f"stibium: {summary['plan']} ({len(summary['runs'])} runs)", sections)


def terminal_table(summary: dict[str, Any], width: int) -> Table:
    """The series across runs, one line a test with every value whole (terminal.fitted_table)."""
    columns = [Column("test", shortened=True), Column("across runs (95% interval)"), Column("spread"),
               Column("runs", "right", drop=1), Column("differ")]
    variants = [[[t["label"], estimate_text(t["rate"], rate_format(key_of(t)), compact), _spread(t["spread"]),
                  str(t["runs"]), _differ(t["runs_differ"], "")] for t in summary["tests"]] for compact in (False, True)]
    table, dropped, _ = fitted_table(f"stibium summary: {len(summary['runs'])} runs", columns, variants, width)
    with_caption(table, dropped, "the page")
    return table


def terminal(summary: dict[str, Any], runs_said: dict[tuple[str, str, str, str], list[str]],
             width: int = 80) -> list[Any]:
    """What the terminal shows of a series: the table across runs, the kinds' own results (each run's sustained
    headlines), the series' warnings, then each run's warnings said once with the runs that gave them."""
    out: list[Any] = [terminal_table(summary, width)] if has_points(summary) else []
    for kind, entries in kind_entries(summary).items():
        out += [escape(line) for line in registry.spec(kind).view.series_lines(entries)]
    out += notices(summary["warnings"], "the report")
    return out + notices([{"level": level, "test": f"{', '.join(names)}: {test}" if test != "all" else ", ".join(names),
                           "message": message, "what_to_do": todo}
                          for (level, test, message, todo), names in runs_said.items()], "each run's report")
