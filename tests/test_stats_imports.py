"""The analyses' libraries imported one at a time (analysis/stats/imports.py): the summary computes on threads, and
two threads importing parts of statsmodels at once deadlock inside Python's import system (a `_DeadlockError` on a
module lock, or ImportError from a "partially initialized module" in one of them: `stibium report` failed so with
its files tests computed on two threads). Each check runs in fresh interpreters, where nothing is imported yet. The
plain imports raced the same way fail in most of them (tests/bench/bench_import_race.py: 15 of 15 on an idle
machine, fewer under load, so that is a measurement, not a test); the guarded ones never fail."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

RACE = textwrap.dedent("""
    import threading
    import numpy as np
    import scipy.special
    {setup}
    gate = threading.Barrier(3)
    errors = []
    def race(names):
        gate.wait()
        try:
            for name in names:
                {imported}
        except Exception as e:
            errors.append(repr(e))
    parts = [["statsmodels.robust.robust_linear_model"], ["scipy.stats", "ruptures"],
             ["statsmodels.tools.sm_exceptions", "statsmodels.robust.norms"]]
    threads = [threading.Thread(target=race, args=(p,)) for p in parts]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(errors[0] if errors else "whole")
""")
TRIES = 3


def _race(setup: str, imported: str) -> list[str]:
    code = RACE.format(setup=setup, imported=imported)
    return [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.strip()
            for _ in range(TRIES)]


def test_imported_through_library_every_thread_gets_whole_modules():
    found = _race("from stibium_py.analysis.stats import library", "library(name)")
    assert found == ["whole"] * TRIES, found


def test_the_robust_line_computed_on_threads_at_once_in_a_fresh_interpreter():
    code = textwrap.dedent("""
        import threading
        import numpy as np
        from stibium_py.analysis.stats import kendall_tau, siegel, tukey_biweight_line
        x = np.arange(40.0)
        y = 3 * x + 2 + np.sin(x)
        gate, errors = threading.Barrier(4), []
        def fit(f):
            gate.wait()
            try:
                f()
            except Exception as e:
                errors.append(repr(e))
        jobs = [lambda: tukey_biweight_line(x, y, 2.0, 3.0), lambda: siegel(x, y), lambda: kendall_tau(x, y),
                lambda: tukey_biweight_line(x, y, 2.0, 3.0)]
        threads = [threading.Thread(target=fit, args=(j,)) for j in jobs]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(errors[0] if errors else "whole")
    """)
    found = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.strip()
             for _ in range(TRIES)]
    assert found == ["whole"] * TRIES, found


def test_scipy_imported_through_library_leaves_numpy_s_unused_submodules_unloaded_and_numpy_as_it_was():
    """scipy's copy of numpy's namespace would import numpy.f2py and numpy.testing at its first import
    (imports.NOT_FOR_SCIPY); through library() it does not, and numpy's names are the same after."""
    code = textwrap.dedent("""
        import json, sys
        import numpy
        names, listed = list(numpy.__all__), dir(numpy)
        from stibium_py.analysis.stats import library
        stats = library("scipy.stats")
        unloaded = [m for m in ("numpy.f2py", "numpy.testing") if m not in sys.modules]
        same = numpy.__all__ == names and dir(numpy) == listed
        tau = float(stats.kendalltau([1, 2, 3, 4], [1, 3, 2, 4]).statistic)
        import numpy.f2py, numpy.testing
        print(json.dumps([unloaded, same, tau, numpy.f2py.__name__]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    unloaded, same, tau, f2py = json.loads(out.stdout)
    assert unloaded == ["numpy.f2py", "numpy.testing"]
    assert same is True
    assert abs(tau - 2 / 3) < 1e-12
    assert f2py == "numpy.f2py"


def test_scipy_s_docstrings_stay_as_written_and_its_parse_is_its_own_again_after():
    """scipy's array-API decorator parses each marked function's docstring at import to add a table; through
    library() it is given the docstring as written (imports._AsWritten), and numpydoc's parse is back after."""
    code = textwrap.dedent("""
        import json
        from stibium_py.analysis.stats import library
        stats = library("scipy.stats")
        import scipy._lib._array_api as api
        doc = stats.kendalltau.__doc__ or ""
        print(json.dumps([api.FunctionDoc.__module__, api.FunctionDoc.__name__, doc.splitlines()[0],
                          float(stats.kendalltau([1, 2, 3, 4], [1, 3, 2, 4]).statistic)]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    module, name, first, tau = json.loads(out.stdout)
    assert (module, name) == ("scipy._lib._docscrape", "FunctionDoc")
    assert first.startswith("Calculate Kendall's tau")
    assert abs(tau - 2 / 3) < 1e-12        # 5 of 6 pairs concordant: (5 - 1) / 6


def test_a_scipy_the_shortcuts_do_not_fit_is_imported_as_written():
    code = textwrap.dedent("""
        import json
        from stibium_py.analysis.stats import imports
        def refuse(self, *args, **kwargs):
            raise TypeError("a FunctionDoc of another form")
        imports._AsWritten.__init__ = refuse
        stats = imports.library("scipy.stats")
        import scipy._lib._array_api as api
        print(json.dumps([api.FunctionDoc.__name__, float(stats.kendalltau([1, 2, 3], [1, 2, 3]).statistic)]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout) == ["FunctionDoc", 1.0]


def test_a_module_imported_whole_is_given_while_another_library_holds_the_lock():
    """One thread imports a library for a second under the lock (statsmodels, for a biweight); another asks for one
    imported long before (scipy.stats, for a drift) and has it at once. A module still being imported is not given
    before the lock is let go."""
    import threading
    import time
    import types
    from importlib.machinery import ModuleSpec

    from stibium_py.analysis.stats import imports

    held, let_go = threading.Event(), threading.Event()

    def importing() -> None:
        with imports._ONE_AT_A_TIME:
            held.set()
            let_go.wait(10)

    half = types.ModuleType("stibium_half_imported")
    half.__spec__ = ModuleSpec("stibium_half_imported", None)
    half.__spec__._initializing = True          # as Python's import marks a module while it runs its code
    given: list[types.ModuleType] = []
    holder = threading.Thread(target=importing)
    holder.start()
    held.wait(5)
    sys.modules["stibium_half_imported"] = half
    asker = threading.Thread(target=lambda: given.append(imports.library("stibium_half_imported")))
    try:
        start = time.monotonic()
        assert imports.library("json") is json and time.monotonic() - start < 1
        asker.start()
        time.sleep(0.3)
        assert given == []                      # waits for the lock
    finally:
        let_go.set()
        holder.join()
        asker.join(5)
        del sys.modules["stibium_half_imported"]
    assert given == [half]
