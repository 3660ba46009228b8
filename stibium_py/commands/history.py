"""`stibium history`: every run remembered, by drive; its check, export, import, and the database made again."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..errors import HistoryError
from .names import short_help
from .common import console, say, user_errors, quiet_option


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


@click.group("history", invoke_without_command=True, short_help=short_help("history"))
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
    from ..history.where import default_database
    ctx.obj = default_database(history_path)
    if ctx.invoked_subcommand is not None:
        return
    from ..history.actions import histories
    from ..report.publish import publish_history
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
    from ..history.actions import add_runs
    read = add_runs(list(paths), database)
    for line in read.skipped:
        say(f"left out: {line}")
    click.echo(f"history: {len(read.entries)} run{'s' if len(read.entries) != 1 else ''} added to {database}")


@history_group.command("rebuild", short_help="Make the database again from the run directories.")
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path))
@_database
@user_errors
def history_rebuild(database: Path, folders: tuple[Path, ...]) -> None:
    """Make the history again from the run directories in FOLDERS (default: reports) and those the old history
    names that are still there (its imported runs are kept as they are). The old file is replaced at the end."""
    from ..history.actions import rebuild
    read = rebuild(list(folders) or [Path("reports")], database)
    for line in read.skipped:
        say(f"left out: {line}")
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
    from ..history.actions import check
    from ..report.history_text import check_line
    from ..report.visible import visible
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
    from ..history.actions import export
    count = export(database, file, drive)
    click.echo(f"history: {count} run{'s' if count != 1 else ''} written to {file}")


@history_group.command("import", short_help="Add the runs of a file `history export` wrote.")
@click.argument("file", type=click.Path(path_type=Path))
@_database
@user_errors
def history_import(database: Path, file: Path) -> None:
    """Add the runs of FILE (written by `stibium history export` on this or another machine) to the history."""
    from ..history.actions import import_runs
    new, again = import_runs(file, database)
    click.echo(f"history: {new} new run{'s' if new != 1 else ''} imported into {database}"
               + (f" ({again} {'was' if again == 1 else 'were'} there already, read again)" if again else ""))
