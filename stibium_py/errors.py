"""The errors a user meets, each one line: declared here, with no imports, so that the command line can name
them without loading what raises them (statistics, plotting, pydantic). The modules that raise them import
them from here."""

from __future__ import annotations


class StibiumError(Exception):
    """Every error a user meets: its message is one line, and it carries the exit status the command ends with
    (2: bad input, the default; 1: an I/O failure, a measurement or a helper that failed; 130: a run cut by a
    signal). The command line says any of them the same way (cli.user_errors)."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class PlanError(StibiumError):
    """A plan that cannot be run; the message is one line for the user. `loc` is the key path
    in the plan (("tests", 0, "sizes", 2)) where it points, when it points somewhere."""

    def __init__(self, message: str, loc: tuple = ()):
        super().__init__(message)
        self.loc = loc


class RunError(StibiumError):
    """A run that cannot start or go on. exit_code 2: bad input; 1 (the default): an I/O failure."""

    exit_code = 1


class PathError(StibiumError):
    """A path that cannot be used; the message is one line for the user."""


class SizeError(StibiumError, ValueError):
    """A size that cannot be read."""


class RunDirError(StibiumError):
    """A run directory that cannot be read; the message is one line for the user."""


class RecordError(StibiumError):
    """A run.json that is not one of stibium's formats; the message is one line."""


class CompareError(StibiumError):
    """Runs that cannot be compared; the message is one line for the user."""


class MeasurementError(StibiumError):
    """A helper answer that does not fit its operation; the message is one line."""

    exit_code = 1


class HelperError(StibiumError):
    """The helper could not be found, started, or answered nonsense."""

    exit_code = 1


class HelperTimeout(HelperError):
    """The helper did not answer within the time allowed for one operation."""


class FioError(StibiumError):
    """fio's output that cannot be read, or fio that cannot run a plan's bench; the message is one line."""


class JsonRefused(StibiumError, ValueError):
    """JSON from a stranger past stibium's bounds (nesting, NaN, overflow); the message is one line."""


class HistoryError(StibiumError):
    """The history database cannot be read or written, or a file to import is not a history; one line.
    exit_code 2 (the default): bad input (a damaged database, a file that is no export); 1: the database busy or
    unwritable."""


class TraceError(StibiumError):
    """A trace that cannot be read or recorded; the message is one line."""
