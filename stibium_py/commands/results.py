"""Reading results and plans: report, compare, import of fio's results, plan check and show, the built-in plans,
the helper's facts, the selftest."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import click

from ..errors import PathError, RunDirError, RunError
from .. import registry
from ..paths import existing_folder
from ..plan.find import builtin_plans, plan_description, resolve_plan_path
from .names import short_help
from .common import console, fail, user_errors, quiet_option, complete_plan, check_run_dir
from .running import show_plan


@click.command(short_help=short_help("report"))
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--open", "open_report", is_flag=True, help="Open the report in a browser.")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json instead of the table.")
@quiet_option
@user_errors
def report(run_dir: Path, open_report: bool, as_json: bool) -> None:
    """Analyse RUN_DIR (a run, a series of runs, or a verify): write summary.json and report.html."""
    from ..report.publish import publish_report
    check_run_dir(run_dir)
    earlier = registry.part(registry.VERIFY, "earlier")      # a verify an earlier stibium wrote: its own record
    if earlier.holds(run_dir):
        if as_json:
            click.echo(json.dumps(earlier.summary_of(run_dir), indent=2))
            return
        for k, line in enumerate(earlier.report(run_dir)):
            console.print(line, style="bold" if k == 0 else None, highlight=False, markup=False)
        return
    summary = publish_report(run_dir, None if as_json else console, open_report)
    if as_json:
        click.echo(json.dumps(summary, indent=2))


@click.command(short_help=short_help("compare"))
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--reference", type=click.Path(path_type=Path),
              help="With three runs or more: the run the others are compared with (default: the first).")
@click.option("--out", "out_file", type=click.Path(path_type=Path), help="The comparison page (default: in reports/).")
@click.option("--open", "open_page", is_flag=True, help="Open the page in a browser.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON instead of the table.")
@click.option("--allow-different-plans", is_flag=True, help="Compare runs of different plans (matching tests only).")
@click.option("--allow-mixed-clients", is_flag=True, help="Compare a run of many clients (their aggregate) with a run "
              "of one.")
@quiet_option
@user_errors
def compare(runs: tuple[Path, ...], reference: Path | None, out_file: Path | None, open_page: bool, as_json: bool,
            allow_different_plans: bool, allow_mixed_clients: bool) -> None:
    """Compare RUN_B with RUN_A (ratios B / A with intervals, and a comparison page); or three runs or more,
    each against the first (or --reference), in one table."""
    from ..report.publish import CompareRequest, publish_compare
    if len(runs) < 2:
        raise RunDirError("compare needs two runs or more: stibium compare RUN_A RUN_B [RUN_C ...]")
    if reference is not None and reference not in runs:
        runs = (reference, *runs)
    for path in runs:
        check_run_dir(path)
    if out_file is not None and out_file.is_dir():
        raise PathError(f"--out {out_file}: a folder; give the comparison page's file name, such as "
                        f"{out_file / 'compare.html'}")
    index = runs.index(reference) if reference is not None else 0
    publish_compare(CompareRequest(runs, index, out_file, allow_different_plans, allow_mixed_clients), console, as_json,
                    open_page)


@click.group("import", short_help=short_help("import"))
def import_group() -> None:
    """Read another tool's results into a run directory (its report and compare work like any other's)."""


@import_group.command("fio", short_help="fio's JSON output (each file a trial) as a run directory.")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Folder for the run directory.")
@click.option("--name", help="Names the run directory (default: fio- and the first file's name).")
@quiet_option
@user_errors
def import_fio_command(results: tuple[Path, ...], out_dir: Path, name: str | None) -> None:
    """Read fio's JSON output (RESULTS: --output-format=json or json+, each file a trial) into a run directory."""
    from ..fio.imported import import_fio
    from ..report.publish import publish_report
    if name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise PathError(f"--name {name!r}: use letters, digits, . _ - (at most 64), starting with a letter or digit")
    from ..paths import folder_to_write
    for path in results:
        if not path.is_file():
            raise PathError(f"{path}: no such file; give the file fio wrote with --output-format=json or json+")
    folder_to_write(out_dir, "output folder", "choose another with --out")
    run_dir = import_fio(list(results), out_dir, name)
    publish_report(run_dir, console)
    click.echo(f"run directory: {run_dir} (imported)")


@click.group("plan", short_help=short_help("plan"))
def plan_group() -> None:
    """Check or show a plan."""


@plan_group.command("check")
@click.argument("plan", shell_complete=complete_plan)
@click.option("--seed", type=click.IntRange(min=0))
@user_errors
def plan_check(plan: str, seed: int | None) -> None:
    """Validate PLAN; exit status 0 if it can run."""
    from ..plan import load_and_expand
    from ..fio.jobfile import check_job_file, read_plan_file
    path = resolve_plan_path(plan)
    parsed, _, expanded = load_and_expand(path, seed)
    for test in parsed.tests:       # a plan's own job files held to the allow-list (fio itself is asked by run)
        if getattr(test, "bench_job", None):
            check_job_file(read_plan_file(path.parent, test.bench_job, f"test {test.name}: bench_job {test.bench_job}"),
                           test.bench_job)
    click.echo(f"{path}: ok ({len(expanded.ops)} measurements in {len(parsed.tests)} tests)")


@plan_group.command("show", short_help="The expanded operations, the bytes, the space and the time.")
@click.argument("plan", shell_complete=complete_plan)
@click.option("--seed", type=click.IntRange(min=0))
@click.option("--all", "show_all", is_flag=True, help="List every operation, not the first ones of each test.")
@user_errors
def plan_show(plan: str, seed: int | None, show_all: bool) -> None:
    """Show PLAN's expanded operations, bytes written, space needed and an estimated duration."""
    from ..plan import load_and_expand
    parsed, _, expanded = load_and_expand(resolve_plan_path(plan), seed)
    show_plan(parsed, expanded, brief=not show_all)


@click.command(short_help=short_help("plans"))
@user_errors
def plans() -> None:
    """List the built-in plans."""
    from rich.table import Table
    table = Table("plan", "description")
    for name, path in builtin_plans().items():
        table.add_row(name, plan_description(path))
    console.print(table)


@click.command(short_help=short_help("info"))
@click.option("--target", type=click.Path(path_type=Path), help="Folder whose file system to examine.")
@click.option("--json", "as_json", is_flag=True, help="Print the helper's facts as JSON.")
@user_errors
def info(target: Path | None, as_json: bool) -> None:
    """The helper, its clock and engines, and direct I/O on the target's file system."""
    from ..run.helper import find_helper, run_once
    helper = find_helper()
    args = ["info"] + (["--path", str(target)] if target else [])
    if target:
        existing_folder(target, "--target", "give a folder on the disk to examine")
    result = run_once(args, helper)
    if not result.ok:
        raise RunError(result.error, 1)
    data = {"helper_path": str(helper), **result.data}
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    from ..report.facts import fact_rows
    from rich.table import Table
    table = Table(show_header=False)
    table.add_column("fact", no_wrap=True)
    table.add_column("value", overflow="fold")        # a path is shown whole, folded, never cut
    for name, value in fact_rows(data):
        table.add_row(name, value)
    console.print(table, markup=False, highlight=False)


@click.command(short_help=short_help("selftest"))
@click.option("--target", type=click.Path(path_type=Path), default=Path("."), show_default=True,
              help="Folder on the disk to check (made if missing and removed again; a temporary folder inside it is "
                   "removed at the end).")
@click.option("--json", "json_path", type=click.Path(path_type=Path),
              help="Where to write the results as JSON (default: reports/selftest-<host>-<time>.json).")
@user_errors
def selftest(target: Path, json_path: Path | None) -> None:
    """Prove on this machine and disk that uncached I/O is uncached and the clock sound (about 10 s)."""
    from ..run.selftest import run_selftest
    from ..rundir.store import utc_now, write_json_atomic

    result = run_selftest(target)
    colour = {"pass": "green", "fail": "bold red", "cannot tell": "yellow"}
    from rich.table import Table
    table = Table("check", "result", "what was measured", title=f"stibium selftest on {target}")
    for check in result.checks:
        table.add_row(check.name, f"[{colour[check.status]}]{check.status}[/]", check.detail)
    console.print(table)
    if json_path is None:
        host = os.uname().nodename.split(".")[0] or "host"
        json_path = Path("reports") / f"selftest-{host}-{utc_now().strftime('%Y%m%dT%H%M%SZ')}.json"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(json_path, result.as_json())
    console.print(f"Written to {json_path}: attach it to a bug report.")
    if result.failed:
        sys.exit(1)
