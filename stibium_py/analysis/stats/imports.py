"""The libraries the analyses import where they first need them (scipy.stats, statsmodels, ruptures), one import at
a time in a process: the summary computes on threads (files tests: two parts of a fit side by side), and two
threads importing parts of statsmodels at once deadlock inside Python's import system, which then raises in one of
them (`_DeadlockError` on a module lock, or ImportError from a "partially initialized module": measured on a fresh
interpreter, 15 of 15 tries on an idle machine; tests/bench/bench_import_race.py). Under one lock each import is
whole before the next begins; a module already imported costs only the lock."""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from types import ModuleType
from typing import Any, Iterator

# reentrant: a library's own imports never come back here, but an analysis may ask inside another's call
_ONE_AT_A_TIME = threading.RLock()

# numpy's submodules that scipy's first import would load for nothing. scipy copies numpy's namespace for its array
# API layer (scipy/_lib/array_api_compat/numpy: `from numpy import *`, then every name of dir(numpy)), and numpy
# imports a submodule named there at its first mention: f2py, numpy's Fortran wrapper generator (which brings
# charset_normalizer), and numpy.testing. scipy's numerics use neither (docs/performance.md)
NOT_FOR_SCIPY = frozenset({"f2py", "testing"})


def library(name: str) -> ModuleType:
    """The module `name`, imported under the process's one lock of these imports, without the work at scipy's import
    that its numerics never use (NOT_FOR_SCIPY, _AsWritten). A module imported whole is returned without the lock:
    another thread may hold it for a second importing another library (a files test's biweight bringing statsmodels,
    while the other op's drift asks for scipy.stats, imported long before), and the module asked for is ready (one
    still being imported says so in its spec, which Python's own import checks too)."""
    found = sys.modules.get(name)
    if found is not None and not getattr(getattr(found, "__spec__", None), "_initializing", False):
        return found
    with _ONE_AT_A_TIME:
        if name in sys.modules:
            return sys.modules[name]
        try:
            with _numpy_naming_less(), _scipy_docstrings_as_written():
                return importlib.import_module(name)
        except Exception:
            # a numpy or scipy these shortcuts do not fit: the import as the libraries wrote it
            return importlib.import_module(name)


class _AsWritten(dict[str, Any]):
    """What scipy's array-API decorator (scipy._lib._array_api.xp_capabilities) asks of numpydoc's FunctionDoc, at
    the import of every function it marks: a section to add a note to, and the text, whose first line (the
    signature) it drops. The parse it stands in for took 0.4 s of scipy.stats' 1.5 s import here, for a table of
    array libraries in a docstring (docs/performance.md); each docstring stays as written."""

    def __init__(self, function: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._text = getattr(function, "__doc__", None) or ""

    def __missing__(self, section: str) -> list[Any]:
        return self.setdefault(section, [])

    def __str__(self) -> str:
        return "\n" + self._text


@contextlib.contextmanager
def _scipy_docstrings_as_written() -> Iterator[None]:
    """scipy's array-API decorator given _AsWritten for numpydoc's parse while a library is imported; the parse
    as it was after. Where a scipy has no such decorator module or name, nothing changes."""
    api = importlib.import_module("scipy._lib._array_api")
    parse = getattr(api, "FunctionDoc", None)
    if parse is None:
        yield
        return
    setattr(api, "FunctionDoc", _AsWritten)
    try:
        yield
    finally:
        setattr(api, "FunctionDoc", parse)


@contextlib.contextmanager
def _numpy_naming_less() -> Iterator[None]:
    """numpy's list of names (`__all__`) and its dir() without NOT_FOR_SCIPY while scipy is first imported; both
    as they were after. The submodules stay importable: `import numpy.f2py` works as before."""
    import numpy
    if "scipy" in sys.modules:
        yield
        return
    names = numpy.__all__
    listing = numpy.__dict__.get("__dir__")
    numpy.__all__ = [n for n in names if n not in NOT_FOR_SCIPY]
    if callable(listing):
        setattr(numpy, "__dir__", lambda: [n for n in listing() if n not in NOT_FOR_SCIPY])
    try:
        yield
    finally:
        numpy.__all__ = names
        if callable(listing):
            setattr(numpy, "__dir__", listing)
