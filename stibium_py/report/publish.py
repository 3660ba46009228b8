"""Publishing, the step between the analysis and the views for a run, a series and a comparison: summarise
(pipeline.py, series.py, compare.py), write summary.json and the page, print the terminal's renderables
and open a browser where asked. The views (report/) render what they are given and touch no file."""

from __future__ import annotations

import json
import sys
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from rich.console import Console

from ..analysis.summary import Summary
from ..results.pipeline import summarize_run
from ..rundir.store import REPORT_HTML, SUMMARY_JSON, write_json_atomic, write_text_atomic


def _print(console: Console | None, renderables: Iterable[Any]) -> None:
    if console is not None:
        for r in renderables:
            console.print(r)


def _open(page: Path, open_browser: bool) -> None:
    """The page in the person's browser where asked; where no browser can be started here (a server, ssh), said
    on stderr with where the page is, rather than nothing."""
    if open_browser and not webbrowser.open(page.resolve().as_uri()):
        print(f"stibium: no browser could be started here to open {page}; open that file in one yourself",
              file=sys.stderr)


def publish_run(run_dir: Path, console: Console | None = None, open_browser: bool = False) -> Summary:
    """A run's summary.json and report.html; its table and warnings on the console."""
    from . import build

    run, _, summary = summarize_run(run_dir)
    write_json_atomic(run_dir / SUMMARY_JSON, summary.to_json())
    page = run_dir / REPORT_HTML
    write_text_atomic(page, build.render(run, summary))
    if console is not None:
        _print(console, [*build.terminal(summary, console.width), f"report: {page}"])
    _open(page, open_browser)
    return summary


def publish_series(series: Path, console: Console | None = None, open_browser: bool = False) -> dict[str, Any]:
    """Every run's own report, then the series' summary.json and report.html."""
    from . import series_page
    from ..results.series import summarize_series

    summary = summarize_series(series)
    runs_said: dict[tuple[str, str, str, str], list[str]] = {}   # each run's warnings, with the runs that gave them
    for name in summary["runs"]:
        for w in publish_run(series / name).warnings:
            runs_said.setdefault((w.level, w.test, w.message, w.what_to_do), []).append(name)
    write_json_atomic(series / SUMMARY_JSON, summary)
    page = series / REPORT_HTML
    write_text_atomic(page, series_page.render(summary))
    if console is not None:
        _print(console, [*series_page.terminal(summary, runs_said, console.width), f"report: {page}"])
    _open(page, open_browser)
    return summary


def publish_report(run_dir: Path, console: Console | None = None, open_browser: bool = False) -> dict[str, Any]:
    """A run's report, or a series' (each run's and the one across runs); the summary's JSON form."""
    from ..rundir.store import is_series
    if is_series(run_dir):
        return publish_series(run_dir, console, open_browser)
    return publish_run(run_dir, console, open_browser).to_json()


@dataclass(frozen=True)
class CompareRequest:
    runs: tuple[Path, ...]
    reference: int = 0
    out_file: Path | None = None
    allow_different_plans: bool = False
    allow_mixed_clients: bool = False


def publish_compare(request: CompareRequest, console: Console | None = None, as_json: bool = False,
                    open_browser: bool = False) -> Any:
    """Two runs (B / A) or many against a reference: the comparison (analysis/comparison.py: TwoRuns or
    ManyRuns), its page, and its table or its JSON form."""
    from ..results.compare import check_clients, compare_many, compare_runs, drawn, draws_pool, load_side
    from . import compare_page, compare_terminal

    with draws_pool(request.runs) as pool:      # where the runs are large, its workers start while they are read
        sides = [load_side(path) for path in request.runs]
        check_clients(sides, request.allow_mixed_clients)
        if len(sides) == 2 and request.reference == 0:
            result: Any = compare_runs(sides[0], sides[1], request.allow_different_plans, pool=pool)
        else:
            result = compare_many(sides, request.reference, request.allow_different_plans, pool=pool)
    names = [path.name for path in request.runs]
    if len(sides) == 2 and request.reference == 0:
        name = f"compare-{names[0]}-vs-{names[1]}.html"
        html_text = compare_page.render(result, drawn(sides[0], sides[1]))
        lines = compare_terminal.two_runs(result, console.width) if console is not None else []
    else:
        name = f"compare-{len(sides)}-runs-vs-{names[request.reference]}.html"
        html_text = compare_page.render_many(result)
        lines = compare_terminal.many_runs(result, console.width) if console is not None else []
    page = request.out_file or Path("reports") / name
    page.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(page, html_text)
    if as_json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        _print(console, [*lines, f"comparison page: {page}"])
    _open(page, open_browser)
    return result


def publish_history(found: list[Any], database: Any, out_dir: Path, console: Console | None = None,
                    open_browser: bool = False) -> list[Path]:
    """The drives' table and each drive's page (history/drives.py: DriveHistory), their lines on the console;
    `database` is the history's location (a file's path, or a team's URL)."""
    from ..history.db import open_at
    from . import history_page, history_terminal
    from .history_text import page_name

    pages = []
    if found:
        out_dir.mkdir(parents=True, exist_ok=True)
    for h in found:
        page = out_dir / page_name(h.drive.label, h.drive.key)
        write_text_atomic(page, history_page.render(h))
        pages.append(page)
    if console is not None:
        with open_at(database, create=False) as history:
            drives = [d for d in history.drives() if d.drive.key in {h.drive.key for h in found}]
        lines: list[Any] = [f"history: {database}"]
        if drives:
            lines.append(history_terminal.drives_table(drives, console.width))
        for h, page in zip(found, pages):
            lines.append(history_terminal.runs_table(h, console.width))
            lines.extend(history_terminal.drive_lines(h, str(page)))
        if not found:
            lines.append("no runs in the history yet")
        _print(console, lines)
    if pages:
        _open(pages[0], open_browser)
    return pages


def publish_site(found: list[Any], database: Any, out_dir: Path) -> Path:
    """`stibium history site`: the index, a page per drive and a page per plan (report/history_site.py) in
    `out_dir`; the index's path."""
    from . import history_page, history_site
    plans = history_site.plans_of(found)
    (out_dir / history_site.DRIVES).mkdir(parents=True, exist_ok=True)
    (out_dir / history_site.PLANS).mkdir(parents=True, exist_ok=True)
    for h in found:
        write_text_atomic(out_dir / history_site.drive_file(h), history_page.render(h, back="../index.html"))
    for plan in plans:
        write_text_atomic(out_dir / history_site.PLANS / plan.file, history_site.render_plan(plan))
    index = out_dir / "index.html"
    write_text_atomic(index, history_site.render_index(found, plans, str(database)))
    return index
