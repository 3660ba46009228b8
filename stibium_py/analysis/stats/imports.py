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
from typing import Iterator

# reentrant: a library's own imports never come back here, but an analysis may ask inside another's call
_ONE_AT_A_TIME = threading.RLock()

# numpy's submodules that scipy's first import would load for nothing. scipy copies numpy's namespace for its array
# API layer (scipy/_lib/array_api_compat/numpy: `from numpy import *`, then every name of dir(numpy)), and numpy
# imports a submodule named there at its first mention: f2py, numpy's Fortran wrapper generator (which brings
# charset_normalizer), and numpy.testing. scipy's numerics use neither (docs/performance.md)
NOT_FOR_SCIPY = frozenset({"f2py", "testing"})


def library(name: str) -> ModuleType:
    """The module `name`, imported under the process's one lock of these imports."""
    with _ONE_AT_A_TIME:
        if "scipy" in sys.modules:
            return importlib.import_module(name)
        with _numpy_naming_less():
            return importlib.import_module(name)


@contextlib.contextmanager
def _numpy_naming_less() -> Iterator[None]:
    """numpy's list of names (`__all__`) and its dir() without NOT_FOR_SCIPY while scipy is first imported; both
    as they were after. The submodules stay importable: `import numpy.f2py` works as before."""
    import numpy
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
