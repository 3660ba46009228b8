"""The `stibium` program (click): its group of commands (commands/ holds them, by what they do) and the one line
every error ends in; the work is done elsewhere.

Errors reach the user as one line on stderr: exit status 2 for bad input (plan,
target, run directory), 1 for an I/O failure, never a traceback.

Start-up is cheap: this module imports only click, rich and modules of no weight (errors, units, kinds, the
plan finder); each command imports what it uses, so `--version`, `--help` and a shell completion never load
numpy, scipy, pydantic or plotly (tests/test_startup.py holds the list).
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
import sys
import warnings
from typing import Any

import click

from . import __version__
from .commands.common import PIPE_CLOSED, console, say
from .commands.names import COMMANDS


class _Commands(click.Group):
    """The commands (commands/names.py), each loaded when it is run or completed: `--version` and `--help` load
    none of them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = COMMANDS.get(cmd_name)
        if found is None:
            return None
        module = importlib.import_module(f"{__package__}.commands.{found[0]}")
        command: click.Command = getattr(module, found[1])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # as click's own does for a command whose short help is given: whole, wrapped
        with formatter.section("Commands"):
            formatter.write_dl([(n, COMMANDS[n][2]) for n in self.list_commands(ctx)])


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="stibium")
def main() -> None:
    """stibium: road-test file I/O the way applications do it, and see every measurement."""
    if not os.environ.get("STIBIUM_DEBUG"):
        # numpy's RuntimeWarning (a mean of nothing, a log of 0 from a damaged row) prints its source line on
        # stderr: not a word for the user. What it signals reaches them as the report's own words (NaN shown as
        # a dash, a damaged row counted); STIBIUM_DEBUG=1 shows them again.
        warnings.simplefilter("ignore", RuntimeWarning)


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
            say(PIPE_CLOSED)      # on stderr, not the pipe: exit status 1 alone reads as a failure of the command
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
        say(f"{e.format_message().rstrip('.')}; see `{where} --help`")
        return e.exit_code
    except click.ClickException as e:
        say(e.format_message())
        return e.exit_code
    except click.Abort:
        say("aborted")
        return 1
    except OSError as e:                 # the reader of our output went away (| head)
        if e.errno != errno.EPIPE:
            raise
        from click.utils import PacifyFlushWrapper
        sys.stdout = PacifyFlushWrapper(sys.stdout)       # type: ignore[assignment]
        console.pipe_closed = True                        # command_line says so
        return 1
    return code if isinstance(code, int) else 0
