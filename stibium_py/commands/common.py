"""What the commands share: the terminal's console (a pipe closed under it ends nothing; under MPI plain lines), the
one line an error is said in with its exit status, the options several commands take, the completion of plan
names, and what a run's end does (its history line, its report beside the removal of its files)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..errors import StibiumError
from ..paths import existing_folder
from ..plan.find import builtin_plans


def _terminal_console() -> Any:
    """The terminal's console (rich's, imported here: `--version`, `--help` and a completion never need it); when
    the reader of stdout goes away (`| head`), the rest of the output goes nowhere and the command carries on to
    its end (rich's own way ends the process: a run cut so would leave its files behind and its record saying
    running); command_line says it on stderr and exits 1."""
    from rich.console import Console

    class _Console(Console):
        pipe_closed = False

        def on_broken_pipe(self) -> None:
            self.pipe_closed = True
            self.quiet = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

        def as_log(self) -> None:
            """Lines of plain text, no progress bar redrawn and no colour: under an MPI launcher, whose ranks see
            a terminal (Open MPI gives each a pty) even where the launcher's own output goes to a file."""
            self._force_terminal = False
            self._color_system = None

    return _Console(stderr=False)


class _Deferred:
    """The terminal's console, made at its first use; every attribute is the console's. `pipe_closed` is also
    answered before it is made (a command that printed nothing through it, such as `--help`, can still have had
    its reader go away). A test that patches the console patches `made()`, the console itself: pytest's
    monkeypatch restores an attribute from the object's own __dict__, which here holds none of the console's."""

    def __init__(self) -> None:
        object.__setattr__(self, "_made", None)
        object.__setattr__(self, "_closed", False)

    def made_yet(self) -> bool:
        return object.__getattribute__(self, "_made") is not None

    def made(self) -> Any:
        """The console itself (made now where it was not yet)."""
        made = object.__getattribute__(self, "_made")
        if made is None:
            made = _terminal_console()
            object.__setattr__(self, "_made", made)
        return made

    @property
    def pipe_closed(self) -> bool:      # set through __setattr__, which every assignment here goes through
        made = object.__getattribute__(self, "_made")
        return bool(object.__getattribute__(self, "_closed") or (made is not None and made.pipe_closed))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)

    # Python looks special methods up on the type, never through __getattr__: rich's progress bar enters the
    # console (`with console:`, Live.refresh) on a terminal
    def __enter__(self) -> Any:
        return self.made().__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.made().__exit__(*exc)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "pipe_closed":
            object.__setattr__(self, "_closed", value)
        else:
            setattr(self.made(), name, value)


console: Any = _Deferred()


PIPE_CLOSED = "the output's reader closed it (as `| head` does); the rest of it was not printed"


def say(message: str) -> None:
    from ..report.visible import visible
    try:
        click.echo("stibium: " + "\n".join(visible(line) for line in message.split("\n")), err=True)
    except OSError:         # no terminal to say it on (closed: SIGHUP); the exit status still says it
        pass


def fail(message: str, code: int) -> None:
    say(message)
    sys.exit(code)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the project's errors into one line and an exit status."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StibiumError as e:            # every error of ours: its line and its exit status
            fail(str(e), e.exit_code)
        except OSError as e:
            fail(f"{e.filename or ''}: {e.strerror or e}", 1)
        except Exception as e:  # a bug of ours: one line, and the traceback on request
            team = sys.modules.get("stibium_py.clients.team")
            if team is not None and isinstance(e, team.Silent):     # outside a run's steps: before it began
                names = ", ".join(map(str, e.ranks))
                say(f"rank{'s' if len(e.ranks) > 1 else ''} {names} not heard from for {e.waited_s:.0f} s before "
                     f"the run began; check that every host can reach the others, then run again")
                team.end_every_rank(2)
                raise SystemExit(2) from None
            if os.environ.get("STIBIUM_DEBUG"):
                raise
            message = (f"internal error: {type(e).__name__}: {e}; run again with STIBIUM_DEBUG=1 for the traceback "
                       f"and report it")
            team = sys.modules.get("stibium_py.clients.team")
            if team is not None and team.joined_many():    # one of many ranks: none may wait for this one
                say(message)
                team.end_every_rank(1)
            fail(message, 1)

    return wrapper


def history_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--no-history", is_flag=True, help="Do not record the run in the history.")(fn)
    return click.option("--history", "history_path", metavar="PATH|URL",
                        help="The history: a SQLite file (default: STIBIUM_HOME, else the platform's data folder), or "
                             "a team's PostgreSQL database (postgresql://user@host/db) the run is sent to as well as "
                             "kept in this machine's file; default: STIBIUM_HISTORY. See `stibium history --help`."
                        )(fn)


def silence_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    # the default is team.SILENCE_S, written here so that --help does not import the team
    return click.option("--client-silence", type=click.FloatRange(min=1.0), default=120.0, show_default=True,
                        metavar="SECONDS", help="With many clients: a client not heard from for this long (or for ten "
                        "times as long as rank 0's own part of a step, where that is longer) is taken for lost, and "
                        "the run stops, marked, naming its host.")(fn)


def _set_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value or console.made_yet():     # a console not yet made starts loud: --quiet alone makes it now
        console.quiet = value
    return value


quiet_option = click.option("--quiet", "-q", is_flag=True, expose_value=False, callback=_set_quiet,
                            help="Print no table, progress or notices (for scripts: the exit status says how it "
                                 "went, and the files it writes say the rest).")


def complete_plan(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of PLAN: the built-in plans' names that begin so, else files. Never both: click's bash
    script empties the list when a file item comes (COMPREPLY=(), then the shell's own file names), so names
    given beside one were dropped and TAB only rang the bell. A path (./, ../, /) completes files."""
    from click.shell_completion import CompletionItem
    names = [CompletionItem(n) for n in builtin_plans() if n.startswith(incomplete)]
    return names or [CompletionItem(incomplete, type="file")]


def recorder(given: str | None) -> Callable[[Path], None]:
    """What a run calls as it ends: the history records it (and sends it to the team's database where the person
    named one), and says where (or, on stderr, why not)."""
    from ..history.where import where_here
    where = where_here(given)

    def record(run_dir: Path) -> None:
        from ..history.remember import remember
        from ..report.visible import visible
        for line in remember(run_dir, where):
            line = visible(line)         # the drive's label is the drive's (a serial may hold [/x])
            if line.startswith("history: not"):
                click.echo(line, err=True)
            else:
                console.print(line, highlight=False, soft_wrap=True, markup=False)
    return record


def after_run(finished: Any, open_report: bool) -> dict[str, Any] | None:
    """The report of a complete run, built while its test files are removed (run.options.Removal); the command
    ends when both are done. The summary's JSON form, where the run is complete."""
    summary = None
    try:
        if finished.status == "complete":
            from ..report.publish import publish_report
            summary = publish_report(finished.path, console, open_report)
    finally:
        finished.wait_for_removal()
    if not console.quiet:            # --quiet prints nothing: the exit status and the run directory say it all
        click.echo(f"run directory: {finished.path} ({finished.status})")
    return summary


def check_run_dir(path: Path) -> None:
    existing_folder(path, "run directory", "give a folder that `stibium run` wrote (reports/...)")
