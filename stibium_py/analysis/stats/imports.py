"""The libraries the analyses import where they first need them (scipy.stats, statsmodels, ruptures), one import at
a time in a process: the summary computes on threads (files tests: two parts of a fit side by side), and two
threads importing parts of statsmodels at once deadlock inside Python's import system, which then raises in one of
them (`_DeadlockError` on a module lock, or ImportError from a "partially initialized module": measured on a fresh
interpreter, 15 of 15 tries on an idle machine; tests/bench/bench_import_race.py). Under one lock each import is
whole before the next begins; a module already imported costs only the lock."""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

# reentrant: a library's own imports never come back here, but an analysis may ask inside another's call
_ONE_AT_A_TIME = threading.RLock()


def library(name: str) -> ModuleType:
    """The module `name`, imported under the process's one lock of these imports."""
    with _ONE_AT_A_TIME:
        return importlib.import_module(name)
