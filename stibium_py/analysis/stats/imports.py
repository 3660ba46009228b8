"""The libraries the analyses import where they first need them (scipy.stats, statsmodels, ruptures), one import at
a time in a process: the summary computes on threads (files tests: two parts of a fit side by side), and two
threads importing parts of statsmodels at once deadlock inside Python's import system, which then raises in one of
them (`_DeadlockError` on a module lock, or ImportError from a "partially initialized module": measured on a fresh
interpreter, 15 of 15 tries on an idle machine; tests/bench/bench_import_race.py). Under one lock each import is
whole before the next begins; a module already imported costs only the lock."""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
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
    that its numerics never use (NOT_FOR_SCIPY, _AsWritten, _as_written) and without statsmodels' second formula
    engine (_one_formula_engine). A module imported whole is returned without the lock: another thread may hold it
    for a second importing another library (a files test's biweight bringing statsmodels, while the other op's drift
    asks for scipy.stats, imported long before), and the module asked for is ready (one still being imported says
    so in its spec, which Python's own import checks too)."""
    found = sys.modules.get(name)
    if found is not None and not getattr(getattr(found, "__spec__", None), "_initializing", False):
        return found
    with _ONE_AT_A_TIME:
        if name in sys.modules:
            return sys.modules[name]
        try:
            with _numpy_naming_less(), _scipy_docstrings_as_written(), _one_formula_engine():
                return importlib.import_module(name)
        except Exception:
            # a numpy or scipy these shortcuts do not fit: the import as the libraries wrote it
            return importlib.import_module(name)


# numpydoc's parses (scipy._lib._docscrape) that _AsWritten stands in for: of a function's docstring, and of a
# class's (scipy.stats' new distribution families combine theirs with their base class's at import)
PARSES = ("FunctionDoc", "ClassDoc")


class _AsWritten(dict[str, Any]):
    """What scipy asks of numpydoc's parses (PARSES) at the import of every function its decorators mark (the array-API
    table of scipy._lib._array_api, the axis and nan_policy parameters of scipy.stats._axis_nan_policy, the batch note
    and the rng parameter of scipy._lib._util, the deprecation note of scipy._lib.deprecation) and of each new
    distribution family: a section to read or add to, and the text, whose first line (the signature) it drops. Each
    only rewrites a docstring, which stibium never shows. The array-API table's parse took 0.4 s of scipy.stats'
    1.5 s import here with the scipy of 2026-11-29, and the others' 0.25 of 1.6 s under cProfile with scipy 1.17
    (docs/performance.md); each docstring stays as written."""

    def __init__(self, function: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._text = getattr(function, "__doc__", None) or ""

    def __missing__(self, section: str) -> list[Any]:
        return self.setdefault(section, [])

    def __str__(self) -> str:
        return "\n" + self._text


@contextlib.contextmanager
def _scipy_docstrings_as_written() -> Iterator[None]:
    """scipy's decorators given _AsWritten for numpydoc's parse while a library is imported (in numpydoc's module,
    where a module imported meanwhile takes it from, and in every scipy module already holding the parse), and
    _as_written for doccer's fill of templates; both as they were everywhere after. Where a scipy has no such
    module or name, nothing changes."""
    scrape = importlib.import_module("scipy._lib._docscrape")
    doccer = importlib.import_module("scipy._lib.doccer")
    parses = {name: getattr(scrape, name, None) for name in PARSES}
    fill = getattr(doccer, "docformat", None)
    if None in parses.values() or fill is None:
        yield
        return
    for module in _scipy_modules():
        for name, parse in parses.items():
            if getattr(module, name, None) is parse:
                setattr(module, name, _AsWritten)
    setattr(doccer, "docformat", _as_written)
    try:
        yield
    finally:
        setattr(doccer, "docformat", fill)
        for module in _scipy_modules():
            for name, parse in parses.items():
                if getattr(module, name, None) is _AsWritten:
                    setattr(module, name, parse)


def _as_written(docstring: Any, docdict: Any = None) -> Any:
    """What scipy's doccer.docformat gives while a library is imported: the docstring as written, its templates
    unfilled. scipy.stats fills each distribution's docstring from templates at its import (some 440 fills, 0.12 s
    of its import under cProfile), for help() only; a distribution made later fills its own, the parse being back."""
    return docstring


class _NotFormulaic(importlib.abc.MetaPathFinder):
    """Refuses formulaic, as a Python without it would (ModuleNotFoundError, which statsmodels catches)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "formulaic" or name.startswith("formulaic."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@contextlib.contextmanager
def _one_formula_engine() -> Iterator[None]:
    """statsmodels imports both of its formula engines where both are installed, patsy and formulaic (its import with
    formulaic and narwhals 0.66 s, without 0.55 s, medians of 8 fresh ones after scipy.stats here), and uses patsy
    where it has it. stibium fits no formula; while a library is imported, formulaic is refused where patsy is
    installed, as a Python without formulaic would refuse it, and statsmodels, with patsy, is as it would be with
    both. Importable again after."""
    if "statsmodels" in sys.modules or "formulaic" in sys.modules or importlib.util.find_spec("patsy") is None:
        yield
        return
    refuse = _NotFormulaic()
    sys.meta_path.insert(0, refuse)
    try:
        yield
    finally:
        sys.meta_path.remove(refuse)


def _scipy_modules() -> list[ModuleType]:
    return [m for name, m in list(sys.modules.items()) if name.startswith("scipy.") and isinstance(m, ModuleType)]


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
