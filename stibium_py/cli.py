"""The `stibium` command line (click): commands only; the work is done elsewhere.

Errors reach the user as one line on stderr: exit status 2 for bad input (plan,
target, run directory), 1 for an I/O failure, never a traceback.

Start-up is cheap: this module imports only click, rich and modules of no weight (errors, units, kinds, the
plan finder); each command imports what it uses, so `--version`, `--help` and a shell completion never load
numpy, scipy, pydantic or plotly (tests/test_startup.py holds the list).
"""

from __future__ import annotations

import errno
import functools
import gc
import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .errors import HistoryError, PathError, PlanError, RunDirError, RunError, StibiumError
from . import registry
from .paths import existing_folder
from .plan.find import builtin_plans, plan_description, resolve_plan_path

class _Console(Console):
    """The terminal's console; when the reader of stdout goes away (`| head`), the rest of the output goes
    nowhere and the command carries on to its end (rich's own way ends the process: a run cut so would leave its
    files behind and its record saying running); command_line says it on stderr and exits 1."""

    pipe_closed = False

    def on_broken_pipe(self) -> None:
        self.pipe_closed = True
        self.quiet = True
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    def as_log(self) -> None:
        """Lines of plain text, no progress bar redrawn and no colour: under an MPI launcher, whose ranks see a
        terminal (Open MPI gives each a pty) even where the launcher's own output goes to a file."""
        self._force_terminal = False
        self._color_system = None


console = _Console(stderr=False)
PIPE_CLOSED = "the output's reader closed it (as `| head` does); the rest of it was not printed"


def _say(message: str) -> None:
    from .visible import visible         # a message may quote a record's words: no escape sequence reaches the terminal
    try:
        click.echo("stibium: " + "\n".join(visible(line) for line in message.split("\n")), err=True)
    except OSError:         # no terminal to say it on (closed: SIGHUP); the exit status still says it
        pass


def _fail(message: str, code: int) -> None:
    _say(message)
    sys.exit(code)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the project's errors into one line and an exit status."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StibiumError as e:            # every error of ours: its line and its exit status
            _fail(str(e), e.exit_code)
        except OSError as e:
            _fail(f"{e.filename or ''}: {e.strerror or e}", 1)
        except Exception as e:  # a bug of ours: one line, and the traceback on request
            team = sys.modules.get("stibium_py.team")
            if team is not None and isinstance(e, team.Silent):     # outside a run's steps: before it began
                names = ", ".join(map(str, e.ranks))
                _say(f"rank{'s' if len(e.ranks) > 1 else ''} {names} not heard from for {e.waited_s:.0f} s before "
                     f"the run began; check that every host can reach the others, then run again")
                team.end_every_rank(2)
                raise SystemExit(2) from None
            if os.environ.get("STIBIUM_DEBUG"):
                raise
            message = (f"internal error: {type(e).__name__}: {e}; run again with STIBIUM_DEBUG=1 for the traceback "
                       f"and report it")
            team = sys.modules.get("stibium_py.team")
            if team is not None and team.joined_many():    # one of many ranks: none may wait for this one
                _say(message)
                team.end_every_rank(1)
            _fail(message, 1)

    return wrapper


def history_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--no-history", is_flag=True, help="Do not record the run in the history.")(fn)
    return click.option("--history", "history_path", type=click.Path(path_type=Path),
                        help="The history database (default: STIBIUM_HOME, else the platform's data folder; see "
                             "`stibium history --help`).")(fn)


def silence_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    # the default is team.SILENCE_S, written here so that --help does not import the team
    return click.option("--client-silence", type=click.FloatRange(min=1.0), default=120.0, show_default=True,
                        metavar="SECONDS", help="With many clients: a client not heard from for this long (or for ten "
                        "times as long as rank 0's own part of a step, where that is longer) is taken for lost, and "
                        "the run stops, marked, naming its host.")(fn)


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    console.quiet = value
    return value


quiet_option = click.option("--quiet", "-q", is_flag=True, expose_value=False, callback=_set_quiet,
                            help="Print no table, progress or notices (for scripts: the exit status says how it "
                                 "went, and the files it writes say the rest).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="stibium")
def main() -> None:
    """stibium: road-test file I/O the way applications do it, and see every measurement."""
    if not os.environ.get("STIBIUM_DEBUG"):
        # numpy's RuntimeWarning (a mean of nothing, a log of 0 from a damaged row) prints its source line on
        # stderr: not a word for the user. What it signals reaches them as the report's own words (NaN shown as
        # a dash, a damaged row counted); STIBIUM_DEBUG=1 shows them again.
        warnings.simplefilter("ignore", RuntimeWarning)


def _complete_plan(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of PLAN: the built-in plans' names that begin so, else files. Never both: click's bash
    script empties the list when a file item comes (COMPREPLY=(), then the shell's own file names), so names
    given beside one were dropped and TAB only rang the bell. A path (./, ../, /) completes files."""
    from click.shell_completion import CompletionItem
    names = [CompletionItem(n) for n in builtin_plans() if n.startswith(incomplete)]
    return names or [CompletionItem(incomplete, type="file")]


@main.command(short_help="Run a plan (a file or a built-in name) and report it.")
@click.argument("plan", shell_complete=_complete_plan)
@click.option("--target", type=click.Path(path_type=Path), help="Folder for the test files (overrides the plan's target).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Folder that receives the run directory.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed for every random choice (overrides defaults.seed).")
@click.option("--keep-files", is_flag=True, help="Leave the test files in the target.")
@click.option("--allow-nonempty", is_flag=True, help="Use a target folder that holds other files.")
@click.option("--runs", type=click.IntRange(1, 100), help="Complete runs of the plan, one after another (overrides "
              "the plan's runs); two or more let compare see the variance between runs.")
@click.option("--dry-run", is_flag=True, help="Check and show the plan, write nothing.")
@click.option("--open", "open_report", is_flag=True, help="Open the report in a browser at the end.")
@click.option("--link-rate", help="The rate of the slowest link between this machine and a store across a network, "
              "such as 1Gb/s or 110MB/s (default: the interface's negotiated speed, where the system states one); "
              "reads faster than it are named as answered on this side of the link.")
@silence_option
@history_options
@quiet_option
@user_errors
def run(plan: str, target: Path | None, out_dir: Path, seed: int | None, keep_files: bool, allow_nonempty: bool,
        runs: int | None, dry_run: bool, open_report: bool, link_rate: str | None, client_silence: float,
        history_path: Path | None, no_history: bool) -> None:
    """Run PLAN (a plan file or a built-in plan's name) and write a run directory."""
    from .plan import expand_at
    from .preflight import preflight
    from .link import parse_rate
    from .run import RunOptions, read_plan_once, start_series
    from .team import join
    try:
        link_bytes_per_s = parse_rate(link_rate) if link_rate is not None else None
    except ValueError as e:
        raise RunError(f"--link-rate: {e}", 2) from None
    team = join(silence_s=client_silence)      # many clients under mpiexec or srun; else one
    if team.size > 1:
        console.as_log()
    if team.rank:
        console.quiet = True       # rank 0 speaks for the run
    loaded = read_plan_once(team, plan)
    options = RunOptions(target=target, out_dir=out_dir, seed=seed, keep_files=keep_files,
                         allow_nonempty=allow_nonempty, remove_beside_report=True,
                         on_end=None if no_history or team.rank else _recorder(history_path),
                         link_bytes_per_s=link_bytes_per_s)
    if dry_run and team.rank:
        return
    if dry_run:
        expanded = expand_at(loaded.source, loaded.plan, loaded.text, seed, target)
        preflight(expanded, (target or Path(loaded.plan.target)).expanduser(), expanded.space_needed_bytes(keep_files),
                  allow_nonempty, out_dir)
        _show_plan(loaded.plan, expanded, brief=True)
        click.echo("dry run: nothing was written")
        return
    finished = start_series(loaded, options, runs, console, team=team)
    if not team.rank:
        _after_run(finished, open_report)


@main.command(short_help="Finish an interrupted run (or series), or one after its reboot.")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--open", "open_report", is_flag=True, help="Open the report in a browser at the end.")
@click.option("--target", type=click.Path(path_type=Path),
              help="The folder to measure in, where this machine does not show the run as its own (a run directory "
                   "from elsewhere): its record never chooses where to write.")
@click.option("--keep-files", is_flag=True, help="Leave the test files in place at the end (a record's word does not).")
@click.option("--allow-nonempty", is_flag=True,
              help="A series' runs to come may start in a target that holds other files (a record's word does not).")
@silence_option
@history_options
@quiet_option
@user_errors
def resume(run_dir: Path, open_report: bool, target: Path | None, keep_files: bool, allow_nonempty: bool,
           client_silence: float, history_path: Path | None, no_history: bool) -> None:
    """Finish RUN_DIR (or a series of runs) after an interruption or a reboot, without repeating completed
    operations. It writes in the test folder the run recorded only where this machine shows the run as its own
    (the folder's marker, or the history); else give the folder with --target."""
    from .run import RunOptions, resume_run, resume_series
    from .run.crew import every_rank_or_none
    from .store import is_series
    from .team import join
    team = join(silence_s=client_silence)
    from .history.where import default_database
    options = RunOptions(remove_beside_report=True, on_end=None if no_history or team.rank else _recorder(history_path),
                         target=target, keep_files=keep_files, allow_nonempty=allow_nonempty,
                         history_db=default_database(history_path))
    if team.size > 1:
        console.as_log()
    if team.rank:
        console.quiet = True

    def series_or_run() -> bool | None:
        """Rank 0 reads the folder and tells the others what it is (they need not see it)."""
        if team.rank:
            return None
        _run_dir(run_dir)
        return is_series(run_dir)
    resume = resume_series if team.share(every_rank_or_none(team, series_or_run)) else resume_run
    finished = resume(run_dir, options, console, team=team)
    if not team.rank:
        _after_run(finished, open_report)


def _recorder(given: Path | None) -> Callable[[Path], None]:
    """What a run calls as it ends: the history records it, and says where (or, on stderr, why not)."""
    from .history.where import default_database
    database = default_database(given)

    def record(run_dir: Path) -> None:
        from .history.remember import remember
        from .visible import visible
        line = visible(remember(run_dir, database))     # the drive's label is the drive's (a serial may hold [/x])
        if line.startswith("history: not written"):
            click.echo(line, err=True)
        else:
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    return record


def _after_run(finished: Any, open_report: bool) -> dict[str, Any] | None:
    """The report of a complete run, built while its test files are removed (run.options.Removal); the command
    ends when both are done. The summary's JSON form, where the run is complete."""
    summary = None
    try:
        if finished.status == "complete":
            from .publish import publish_report
            summary = publish_report(finished.path, console, open_report)
    finally:
        finished.wait_for_removal()
    if not console.quiet:            # --quiet prints nothing: the exit status and the run directory say it all
        click.echo(f"run directory: {finished.path} ({finished.status})")
    return summary


def _run_dir(path: Path) -> None:
    existing_folder(path, "run directory", "give a folder that `stibium run` wrote (reports/...)")


@main.command(short_help="Analyse a run (or a series): its summary and report page.")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--open", "open_report", is_flag=True, help="Open the report in a browser.")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json instead of the table.")
@quiet_option
@user_errors
def report(run_dir: Path, open_report: bool, as_json: bool) -> None:
    """Analyse RUN_DIR (a run, a series of runs, or a verify): write summary.json and report.html."""
    from .publish import publish_report
    _run_dir(run_dir)
    earlier = registry.part("verify", "earlier")      # a verify an earlier stibium wrote: its own record
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


@main.command(short_help="Compare runs: B / A with intervals and a verdict.")
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
    from .publish import CompareRequest, publish_compare
    if len(runs) < 2:
        raise RunDirError("compare needs two runs or more: stibium compare RUN_A RUN_B [RUN_C ...]")
    if reference is not None and reference not in runs:
        runs = (reference, *runs)
    for path in runs:
        _run_dir(path)
    if out_file is not None and out_file.is_dir():
        raise PathError(f"--out {out_file}: a folder; give the comparison page's file name, such as "
                        f"{out_file / 'compare.html'}")
    index = runs.index(reference) if reference is not None else 0
    publish_compare(CompareRequest(runs, index, out_file, allow_different_plans, allow_mixed_clients), console, as_json,
                    open_page)


@main.group("import", short_help="Read fio's JSON results into a run directory.")
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
    from .fio.imported import import_fio
    from .publish import publish_report
    if name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise PathError(f"--name {name!r}: use letters, digits, . _ - (at most 64), starting with a letter or digit")
    from .paths import folder_to_write
    for path in results:
        if not path.is_file():
            raise PathError(f"{path}: no such file; give the file fio wrote with --output-format=json or json+")
    folder_to_write(out_dir, "output folder", "choose another with --out")
    run_dir = import_fio(list(results), out_dir, name)
    publish_report(run_dir, console)
    click.echo(f"run directory: {run_dir} (imported)")


def _since(value: str | None) -> str | None:
    """--since as the ISO time runs are compared with (a date is its midnight, UTC)."""
    if value is None:
        return None
    import datetime as dt
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise HistoryError(f"--since {value!r}: give a date or a time, such as 2026-11-01 or 2026-11-01T12:00") from None
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return when.strftime("%Y-%m-%dT%H:%M:%S")


@main.group("history", invoke_without_command=True, short_help="Every run remembered, by drive; steps across runs.")
@click.option("--history", "history_path", type=click.Path(path_type=Path),
              help="The history database (default: $STIBIUM_HOME/history.sqlite, else ~/Library/Application Support/"
                   "stibium on macOS, $XDG_DATA_HOME/stibium or ~/.local/share/stibium elsewhere).")
@click.option("--drive", help="Only the drives whose name holds this text.")
@click.option("--since", help="Only the runs started on or after this date (UTC).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports") / "history",
              show_default=True, help="Folder for each drive's page.")
@click.option("--open", "open_page", is_flag=True, help="Open the first drive's page in a browser.")
@quiet_option
@click.pass_context
@user_errors
def history_group(ctx: click.Context, history_path: Path | None, drive: str | None, since: str | None, out_dir: Path,
                  open_page: bool) -> None:
    """The runs of each drive in a table, a page per drive (each point over time with its interval, the steps
    found, the versions that changed). Every run that ends complete or interrupted is recorded; `stibium run
    --no-history` leaves one out."""
    from .history.where import default_database
    ctx.obj = default_database(history_path)
    if ctx.invoked_subcommand is not None:
        return
    from .history.actions import histories
    from .publish import publish_history
    publish_history(histories(ctx.obj, drive, _since(since)), ctx.obj, out_dir, console, open_page)


def _database(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A history subcommand's database: its own --history (after the subcommand's name) or the group's."""
    @click.option("--history", "history_path", type=click.Path(path_type=Path), help="The history database.")
    @click.pass_obj
    @functools.wraps(fn)
    def wrapper(database: Path, history_path: Path | None, *args: Any, **kwargs: Any) -> Any:
        return fn(history_path or database, *args, **kwargs)
    return wrapper


@history_group.command("add", short_help="Add run directories (or series, or folders of them).")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@_database
@user_errors
def history_add(database: Path, paths: tuple[Path, ...]) -> None:
    """Add the runs in PATHS (run directories, series, or folders of them such as reports) to the history; a
    run already there is read again."""
    from .history.actions import add_runs
    read = add_runs(list(paths), database)
    for line in read.skipped:
        _say(f"left out: {line}")
    click.echo(f"history: {len(read.entries)} run{'s' if len(read.entries) != 1 else ''} added to {database}")


@history_group.command("rebuild", short_help="Make the database again from the run directories.")
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path))
@_database
@user_errors
def history_rebuild(database: Path, folders: tuple[Path, ...]) -> None:
    """Make the history again from the run directories in FOLDERS (default: reports) and those the old history
    names that are still there (its imported runs are kept as they are). The old file is replaced at the end."""
    from .history.actions import rebuild
    read = rebuild(list(folders) or [Path("reports")], database)
    for line in read.skipped:
        _say(f"left out: {line}")
    click.echo(f"history: {database} made again with {len(read.entries)} run{'s' if len(read.entries) != 1 else ''}")


@history_group.command("check", short_help="Exit 1 if a drive's latest run is a step down beyond the threshold.")
@click.option("--drive", help="Only the drives whose name holds this text.")
@click.option("--since", help="Only the runs started on or after this date (UTC).")
@click.option("--threshold", type=click.FloatRange(0, 100), default=5.0, show_default=True,
              help="The drop, in percent, that counts: the latest run's whole interval must lie below its level by more.")
@_database
@user_errors
def history_check(database: Path, drive: str | None, since: str | None, threshold: float) -> None:
    """For CI: exit 1 when the latest complete run of a drive is slower than the runs before it (since their last
    step) beyond their intervals and by more than THRESHOLD percent at some point; 0 otherwise. One line says why."""
    from .history.actions import check
    from .report.history_text import check_line
    from .visible import visible
    result = check(database, threshold / 100, drive, _since(since))
    click.echo(visible(check_line(result, threshold)))
    if result.slower:
        sys.exit(1)


@history_group.command("export", short_help="Write the history as a JSON file another machine can import.")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--drive", help="Only the drives whose name holds this text.")
@_database
@user_errors
def history_export(database: Path, file: Path, drive: str | None) -> None:
    """Write the runs of the history (of some drives) to FILE (JSON, stibium-history/1)."""
    from .history.actions import export
    count = export(database, file, drive)
    click.echo(f"history: {count} run{'s' if count != 1 else ''} written to {file}")


@history_group.command("import", short_help="Add the runs of a file `history export` wrote.")
@click.argument("file", type=click.Path(path_type=Path))
@_database
@user_errors
def history_import(database: Path, file: Path) -> None:
    """Add the runs of FILE (written by `stibium history export` on this or another machine) to the history."""
    from .history.actions import import_runs
    new, again = import_runs(file, database)
    click.echo(f"history: {new} new run{'s' if new != 1 else ''} imported into {database}"
               + (f" ({again} {'was' if again == 1 else 'were'} there already, read again)" if again else ""))


@main.group("plan", short_help="Check or show a plan.")
def plan_group() -> None:
    """Check or show a plan."""


@plan_group.command("check")
@click.argument("plan", shell_complete=_complete_plan)
@click.option("--seed", type=click.IntRange(min=0))
@user_errors
def plan_check(plan: str, seed: int | None) -> None:
    """Validate PLAN; exit status 0 if it can run."""
    from .plan import load_and_expand
    from .fio.jobfile import check_job_file, read_plan_file
    path = resolve_plan_path(plan)
    parsed, _, expanded = load_and_expand(path, seed)
    for test in parsed.tests:       # a plan's own job files held to the allow-list (fio itself is asked by run)
        if getattr(test, "bench_job", None):
            check_job_file(read_plan_file(path.parent, test.bench_job, f"test {test.name}: bench_job {test.bench_job}"),
                           test.bench_job)
    click.echo(f"{path}: ok ({len(expanded.ops)} measurements in {len(parsed.tests)} tests)")


@plan_group.command("show", short_help="The expanded operations, the bytes, the space and the time.")
@click.argument("plan", shell_complete=_complete_plan)
@click.option("--seed", type=click.IntRange(min=0))
@click.option("--all", "show_all", is_flag=True, help="List every operation, not the first ones of each test.")
@user_errors
def plan_show(plan: str, seed: int | None, show_all: bool) -> None:
    """Show PLAN's expanded operations, bytes written, space needed and an estimated duration."""
    from .plan import load_and_expand
    parsed, _, expanded = load_and_expand(resolve_plan_path(plan), seed)
    _show_plan(parsed, expanded, brief=not show_all)


def _show_plan(parsed: Any, expanded: Any, brief: bool) -> None:
    from .report.plan_show import plan_lines
    for line in plan_lines(parsed, expanded, brief, console.width):
        console.print(line, highlight=False)


@main.command(short_help="List the built-in plans.")
@user_errors
def plans() -> None:
    """List the built-in plans."""
    table = Table("plan", "description")
    for name, path in builtin_plans().items():
        table.add_row(name, plan_description(path))
    console.print(table)


@main.command(short_help="The helper, its clock and engines; direct I/O on a target.")
@click.option("--target", type=click.Path(path_type=Path), help="Folder whose file system to examine.")
@click.option("--json", "as_json", is_flag=True, help="Print the helper's facts as JSON.")
@user_errors
def info(target: Path | None, as_json: bool) -> None:
    """The helper, its clock and engines, and direct I/O on the target's file system."""
    from .helper import find_helper, run_once
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
    from .report.facts import fact_rows
    table = Table(show_header=False)
    table.add_column("fact", no_wrap=True)
    table.add_column("value", overflow="fold")        # a path is shown whole, folded, never cut
    for name, value in fact_rows(data):
        table.add_row(name, value)
    console.print(table, markup=False, highlight=False)


@main.command(short_help="Does this drive keep what it is given? Fill it with signed blocks and read them back.")
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--size", help="Bytes to fill, such as 64GB (GB is 1000^3 bytes, GiB 1024^3; default: the free space "
              "less the run's margin, 5 % of the fill and 64 MB).")
@click.option("--file-size", default="1GiB", show_default=True, help="Bytes in each file of the fill.")
@click.option("--keep", is_flag=True, help="Leave the fill's files in the target.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Folder for the verify's run directory.")
@click.option("--resume", "resume_dir", type=click.Path(path_type=Path),
              help="Carry on a verify that was cut short (its run directory; TARGET must be its own).")
@history_options
@quiet_option
@user_errors
def verify(target: Path, size: str | None, file_size: str, keep: bool, out_dir: Path, resume_dir: Path | None,
           history_path: Path | None, no_history: bool) -> None:
    """Fill TARGET's free space with files whose every block is signed, written uncached, then read every block
    back uncached and check it: the bytes that read back right, blocks holding another block (a fake capacity),
    corrupted and unreadable ones. A plan of one verify test, run as every plan is (resumable, in the history);
    its files go in a folder of its own in TARGET, removed at the end unless --keep. Exit status 1 where a byte
    did not read back as written."""
    command = registry.part("verify", "command")
    from .run import RunOptions, resume_run, start_series
    from .history.where import default_database
    options = RunOptions(target=target, out_dir=out_dir, keep_files=keep, allow_nonempty=True, whole_drive=True,
                         remove_beside_report=True, on_end=None if no_history else _recorder(history_path),
                         history_db=default_database(history_path))
    if resume_dir is not None:
        if size is not None:
            raise RunError("--resume carries on with the verify's own size and files; drop --size", 2)
        _run_dir(resume_dir)
        if registry.part("verify", "earlier").holds(resume_dir):
            raise RunError(f"{resume_dir} is a verify of an earlier stibium, which this one reads but does not carry "
                           f"on; `stibium report {resume_dir}` shows its verdict; start a new verify of {target}", 2)
        finished = resume_run(resume_dir, options, console)
    else:
        size_bytes = None if size is None else command.size_given("--size", size)
        file_bytes = command.size_given("--file-size", file_size)
        command.files_checked(size_bytes, file_bytes)
        try:
            finished = start_series(command.verify_plan(size_bytes, file_bytes), options, None, console)
        except PlanError as e:
            raise command.in_command_words(e) from None
    summary = _after_run(finished, False)
    if summary is not None and not command.kept_everything(summary):
        sys.exit(1)


@main.command(short_help="Prove on this disk that uncached I/O is uncached.")
@click.option("--target", type=click.Path(path_type=Path), default=Path("."), show_default=True,
              help="Folder on the disk to check (made if missing and removed again; a temporary folder inside it is "
                   "removed at the end).")
@click.option("--json", "json_path", type=click.Path(path_type=Path),
              help="Where to write the results as JSON (default: reports/selftest-<host>-<time>.json).")
@user_errors
def selftest(target: Path, json_path: Path | None) -> None:
    """Prove on this machine and disk that uncached I/O is uncached and the clock sound (about 10 s)."""
    from .selftest import run_selftest
    from .store import utc_now, write_json_atomic

    result = run_selftest(target)
    colour = {"pass": "green", "fail": "bold red", "cannot tell": "yellow"}
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


def command_line() -> None:
    """The `stibium` program (the console script and `python -m stibium_py`): the command, then the
    interpreter's exit without its last collection of every object a report or a comparison left (plotly's
    figures and validators, the tables): gc.freeze() takes them out of it, and the operating system takes
    their memory back with the process (docs/performance.md has the exit's time with and without it). The exit
    is otherwise Python's own: atexit
    handlers (an MPI launcher's finalize), flushed output. Not in main itself, which tests call in their
    own process."""
    try:
        try:
            code: Any = _main_in_one_line()
        except SystemExit as e:
            code = e.code
        if console.pipe_closed:
            _say(PIPE_CLOSED)      # on stderr, not the pipe: exit status 1 alone reads as a failure of the command
            code = code or 1
        sys.exit(code)
    finally:
        gc.freeze()


def _main_in_one_line() -> int:
    """The command, with click's own errors (an unknown option, a missing argument) in stibium's one line and
    exit status 2 instead of click's usage, hint and error on three lines; `stibium` alone still shows its help."""
    try:
        code = main(standalone_mode=False)
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as e:     # click 8.2 and later: the help, as asked
        e.show()
        return e.exit_code
    except click.UsageError as e:
        where = e.ctx.command_path if e.ctx is not None else "stibium"
        _say(f"{e.format_message().rstrip('.')}; see `{where} --help`")
        return e.exit_code
    except click.ClickException as e:
        _say(e.format_message())
        return e.exit_code
    except click.Abort:
        _say("aborted")
        return 1
    except OSError as e:                 # the reader of our output went away (| head)
        if e.errno != errno.EPIPE:
            raise
        from click.utils import PacifyFlushWrapper
        sys.stdout = PacifyFlushWrapper(sys.stdout)       # type: ignore[assignment]
        console.pipe_closed = True                        # command_line says so
        return 1
    return code if isinstance(code, int) else 0
