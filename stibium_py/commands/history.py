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
@click.option("--history", "history_path", metavar="PATH|URL",
              help="The history: a SQLite file (default: $STIBIUM_HOME/history.sqlite, else ~/Library/Application "
                   "Support/stibium on macOS, $XDG_DATA_HOME/stibium or ~/.local/share/stibium elsewhere), or a team's "
                   "PostgreSQL database, postgresql://user@host/database (its password from ~/.pgpass or the "
                   "environment, as libpq reads them). Default: STIBIUM_HISTORY, where set.")
@click.option("--drive", help="Only the drives whose name holds this text.")
@click.option("--since", help="Only the runs started on or after this date (UTC).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports") / "history",
              show_default=True, help="Folder for each drive's page.")
@click.option("--open", "open_page", is_flag=True, help="Open the first drive's page in a browser.")
@quiet_option
@click.pass_context
@user_errors
def history_group(ctx: click.Context, history_path: str | None, drive: str | None, since: str | None, out_dir: Path,
                  open_page: bool) -> None:
    """The runs of each drive in a table, a page per drive (each point over time with its interval, the steps
    found, the versions that changed, the notes written). Every run that ends complete or interrupted is recorded
    in this machine's file, and sent to a team's PostgreSQL database where --history or STIBIUM_HISTORY names one;
    `stibium run --no-history` leaves one out."""
    from ..history.where import where_here
    ctx.obj = where_here(history_path)
    if ctx.invoked_subcommand is not None:
        return
    from ..history.actions import histories
    from ..report.publish import publish_history
    publish_history(histories(ctx.obj.read, drive, _since(since)), ctx.obj.read, out_dir, console, open_page)


def _where(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A history subcommand's history: its own --history (after the subcommand's name) or the group's."""
    @click.option("--history", "history_path", metavar="PATH|URL", help="The history: a file, or a team's "
                  "PostgreSQL URL (see `stibium history --help`).")
    @click.pass_obj
    @functools.wraps(fn)
    def wrapper(where: Any, history_path: str | None, *args: Any, **kwargs: Any) -> Any:
        from ..history.where import where_here
        return fn(where_here(history_path) if history_path else where, *args, **kwargs)
    return wrapper


def _database(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A subcommand that reads and writes one history: the team's where one is named, else this machine's file."""
    @_where
    @functools.wraps(fn)
    def wrapper(where: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(where.read, *args, **kwargs)
    return wrapper


@history_group.command("add", short_help="Add run directories (or series, or folders of them).")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@_database
@user_errors
def history_add(database: Any, paths: tuple[Path, ...]) -> None:
    """Add the runs in PATHS (run directories, series, or folders of them such as reports) to the history; a
    run already there is read again."""
    from ..history.actions import add_runs
    read = add_runs(list(paths), database)
    for line in read.skipped:
        say(f"left out: {line}")
    click.echo(f"history: {len(read.entries)} run{'s' if len(read.entries) != 1 else ''} added to {database}")


@history_group.command("rebuild", short_help="Make the database again from the run directories.")
@click.argument("folders", nargs=-1, type=click.Path(path_type=Path))
@_where
@user_errors
def history_rebuild(where: Any, folders: tuple[Path, ...]) -> None:
    """Make this machine's history file again from the run directories in FOLDERS (default: reports) and those the
    old history names that are still there (its imported runs and its notes are kept as they are). The old file is
    replaced at the end."""
    from ..history.actions import rebuild
    database = where.local
    read = rebuild(list(folders) or [Path("reports")], database)
    for line in read.skipped:
        say(f"left out: {line}")
    click.echo(f"history: {database} made again with {len(read.entries)} run{'s' if len(read.entries) != 1 else ''}")


@history_group.command("check", short_help="Exit 1 if a drive's latest run is a step down beyond the threshold.")
@click.option("--drive", help="Only the drives whose name holds this text.")
@click.option("--since", help="Only the runs started on or after this date (UTC).")
@click.option("--threshold", type=click.FloatRange(0, 100), default=5.0, show_default=True,
              help="The drop, in percent, that counts: the latest run's whole interval must lie below its level by more.")
@click.option("--confirm", "again", type=click.IntRange(0, 20), default=0, show_default=True, metavar="N",
              help="Where a drive's latest run is slower, run its plan N more times on this machine (each recorded "
                   "in the history) and call the step only if every new run is slower too: a transient is not called.")
@click.option("--format", "form", type=click.Choice(["line", "markdown"]), default="line", show_default=True,
              help="line: one line; markdown: the lines a pull request's comment or a CI job's summary shows (the "
                   "drive, the point, the change with its interval, the run, its drive's page).")
@click.option("--pages", default="reports/history", show_default=True, metavar="URL|FOLDER",
              help="Where the drives' pages are (`stibium history --out` or `history site --out`), for markdown's links.")
@_where
@user_errors
def history_check(where: Any, drive: str | None, since: str | None, threshold: float, again: int, form: str,
                  pages: str) -> None:
    """For CI: exit 1 when the latest complete run of a drive is slower than the runs before it (since their last
    step) beyond their intervals and by more than THRESHOLD percent at some point; 0 otherwise. A step a person's
    note calls expected (`stibium history note ... --expected`) is named, not called. One line says why."""
    from ..history.actions import check, confirm_check
    from ..report.history_text import check_line, check_markdown
    from ..report.visible import visible
    if again:
        from ..history.confirm import rerun_here
        result = confirm_check(where.read, threshold / 100, again, rerun_here(where, console), drive, _since(since))
    else:
        result = check(where.read, threshold / 100, drive, _since(since))
    if form == "markdown":
        click.echo(check_markdown(result, threshold, pages))
    else:
        click.echo(visible(check_line(result, threshold)))
    if result.slower:
        sys.exit(1)


@history_group.command("note", short_help="Write why a run or a drive changed (--expected: not an alarm).")
@click.argument("about", metavar="RUN|DRIVE")
@click.argument("text")
@click.option("--expected", is_flag=True, help="The change is meant (a firmware update, a new NAS): `history "
              "check` names it and does not call it a step down.")
@_database
@user_errors
def history_note(database: Any, about: str, text: str, expected: bool) -> None:
    """Write TEXT as a note of the run RUN (its folder's name or path) or the drive DRIVE (text of its name),
    shown on its pages."""
    import datetime as dt
    from ..history.actions import note
    from ..report.visible import visible
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    made, said = note(database, about, text, expected, now)
    click.echo(visible(f"history: noted{' as expected' if made.expected else ''} of {said} in {database}"))


@history_group.command("push", short_help="Send this machine's runs to the team's PostgreSQL database.")
@click.option("--to", "to_url", metavar="URL", help="The team's database, postgresql://user@host/database "
              "(default: --history's URL, else STIBIUM_HISTORY).")
@_where
@user_errors
def history_push(where: Any, to_url: str | None) -> None:
    """Send the runs and notes of this machine's history file that the team's database does not hold as they are
    here (a run that ended while the database could not be reached, every run of a machine that joins). Run again,
    it sends what is new since; a run is never kept twice."""
    from ..history.actions import push
    from ..history.where import TeamUrl, parse_location
    team = parse_location(to_url) if to_url else where.team
    if not isinstance(team, TeamUrl):
        raise HistoryError("history push: name the team's database with --to postgresql://user@host/database (or "
                           "STIBIUM_HISTORY)", 2)
    done = push(where.local, team)
    click.echo(f"history: {done.sent} run{'s' if done.sent != 1 else ''} sent to {team.shown}"
               + (f", {done.already} there already" if done.already else "")
               + (f", {done.notes} note{'s' if done.notes != 1 else ''}" if done.notes else ""))


@history_group.command("site", short_help="Write the lab's history as a static site: drives, machines, plans.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports") / "site", show_default=True,
              help="Folder for the site (index.html, drives/, plans/); serve it or copy it anywhere.")
@click.option("--drive", help="Only the drives whose name holds this text.")
@click.option("--since", help="Only the runs started on or after this date (UTC).")
@click.option("--open", "open_page", is_flag=True, help="Open the index in a browser.")
@_database
@user_errors
def history_site(database: Any, out_dir: Path, drive: str | None, since: str | None, open_page: bool) -> None:
    """Write every drive and machine of the history (the team's, where one is named) as a static site of
    self-contained pages: an index of drives and machines with each drive's latest rates, steps and notes, a page
    per drive, and a page per plan with its latest run on every drive side by side."""
    from ..history.actions import histories
    from ..report.publish import publish_site, _open
    found = histories(database, drive, _since(since))
    index = publish_site(found, database, out_dir)
    click.echo(f"history site: {index} ({len(found)} drive{'s' if len(found) != 1 else ''})")
    _open(index, open_page)


@history_group.command("export", short_help="Write the history as a JSON file another machine can import.")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--drive", help="Only the drives whose name holds this text.")
@_database
@user_errors
def history_export(database: Any, file: Path, drive: str | None) -> None:
    """Write the runs of the history (of some drives) to FILE (JSON, stibium-history/1)."""
    from ..history.actions import export
    count = export(database, file, drive)
    click.echo(f"history: {count} run{'s' if count != 1 else ''} written to {file}")


@history_group.command("import", short_help="Add the runs of a file `history export` wrote.")
@click.argument("file", type=click.Path(path_type=Path))
@_database
@user_errors
def history_import(database: Any, file: Path) -> None:
    """Add the runs of FILE (written by `stibium history export` on this or another machine) to the history."""
    from ..history.actions import import_runs
    new, again = import_runs(file, database)
    click.echo(f"history: {new} new run{'s' if new != 1 else ''} imported into {database}"
               + (f" ({again} {'was' if again == 1 else 'were'} there already, read again)" if again else ""))
