"""The errors a user meets, each one line: declared here, with no imports, so that the command line can name
them without loading what raises them (statistics, plotting, pydantic). The modules that raise them import
them from here."""

from __future__ import annotations


class PlanError(Exception):
    """A plan that cannot be run; the message is one line for the user. `loc` is the key path
    in the plan (("tests", 0, "sizes", 2)) where it points, when it points somewhere."""

    def __init__(self, message: str, loc: tuple = ()):
        super().__init__(message)
        self.loc = loc


class RunError(Exception):
    """A run that cannot start or go on. exit_code 2: bad input; 1: an I/O failure."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


class PathError(Exception):
    """A path that cannot be used; the message is one line for the user."""


class SizeError(ValueError):
    """A size that cannot be read."""


class RunDirError(Exception):
    """A run directory that cannot be read; the message is one line for the user."""


class RecordError(Exception):
    """A run.json that is not one of stibium's formats; the message is one line."""


class CompareError(Exception):
    """Runs that cannot be compared; the message is one line for the user."""


class MeasurementError(Exception):
    """A helper answer that does not fit its operation; the message is one line."""


class HelperError(Exception):
    """The helper could not be found, started, or answered nonsense."""


class HelperTimeout(HelperError):
    """The helper did not answer within the time allowed for one operation."""


class FioError(Exception):
    """fio's output that cannot be read, or fio that cannot run a plan's bench; the message is one line."""


class JsonRefused(ValueError):
    """JSON from a stranger past stibium's bounds (nesting, NaN, overflow); the message is one line."""


class HistoryError(Exception):
    """The history database cannot be read or written, or a file to import is not a history; one line.
    exit_code 2: bad input (a damaged database, a file that is no export); 1: the database busy or unwritable."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code
