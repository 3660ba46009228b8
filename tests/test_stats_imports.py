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
    """scipy's decorators parse each marked function's docstring at import to add a note or a parameter, and its
    distributions fill theirs from templates; through library() the docstrings stay as written (imports._AsWritten,
    imports._as_written), and numpydoc's parse and doccer's fill are back after, in every module that holds them: a
    distribution made after the import fills its own."""
    code = textwrap.dedent("""
        import json
        import numpy as np
        from stibium_py.analysis.stats import library
        stats = library("scipy.stats")
        import scipy._lib._array_api as api, scipy._lib._util as util, scipy._lib.doccer as doccer
        import scipy._lib._docscrape as scrape, scipy.stats._axis_nan_policy as axis
        doc = stats.kendalltau.__doc__ or ""
        fresh = type(stats.norm)(name="norm")
        line = stats.siegelslopes(np.array([1.0, 2.5, 3.0, 4.5]), np.array([0.0, 1.0, 2.0, 3.0]))
        print(json.dumps([[m.FunctionDoc is scrape.FunctionDoc for m in (api, util, axis)],
                          [scrape.FunctionDoc.__name__, doccer.docformat.__module__, doccer.docformat.__name__],
                          doc.splitlines()[0], "%(" in (fresh.__doc__ or "%("),
                          float(stats.kendalltau([1, 2, 3, 4], [1, 3, 2, 4]).statistic), float(line.slope),
                          float(stats.norm.ppf(0.975))]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    held, parse, first, unfilled, tau, slope, z = json.loads(out.stdout)
    assert held == [True, True, True]
    assert parse == ["FunctionDoc", "scipy._lib.doccer", "docformat"]
    assert first.startswith("Calculate Kendall's tau")
    assert unfilled is False                # the fill is doccer's own again: no template left in a new one
    assert abs(tau - 2 / 3) < 1e-12         # 5 of 6 pairs concordant: (5 - 1) / 6
    # each point's median slope to the others (7/6, 1, 1, 7/6), and their median
    assert abs(slope - 13 / 12) < 1e-12
    assert abs(z - 1.959963984540054) < 1e-12


def test_scipy_stats_is_imported_without_a_docstring_parsed_or_filled():
    """The work the shortcuts leave out is not done: numpydoc's parse and doccer's fill, counted from before the
    import, are never called while scipy.stats is imported through library() (scipy 1.17: 159 parses, 437 fills
    without the shortcuts), and both count again after."""
    code = textwrap.dedent("""
        import json
        import scipy._lib._docscrape as scrape, scipy._lib.doccer as doccer
        calls = {"parse": 0, "fill": 0}
        parse, fill = scrape.NumpyDocString._parse, doccer.docformat
        def counted_parse(self, *args, **kwargs):
            calls["parse"] += 1
            return parse(self, *args, **kwargs)
        def counted_fill(*args, **kwargs):
            calls["fill"] += 1
            return fill(*args, **kwargs)
        scrape.NumpyDocString._parse, doccer.docformat = counted_parse, counted_fill
        from stibium_py.analysis.stats import library
        stats = library("scipy.stats")
        during = dict(calls)
        scrape.FunctionDoc(stats.kendalltau)
        type(stats.norm)(name="norm")
        print(json.dumps([during, calls]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    during, after = json.loads(out.stdout)
    assert during == {"parse": 0, "fill": 0}
    assert after["parse"] == 1 and after["fill"] >= 1


def test_statsmodels_through_library_leaves_formulaic_out_and_fits_as_it_does_with_both_engines():
    """statsmodels imported through library() without formulaic, its second formula engine (patsy installed): the
    engine it uses and the biweight line it fits are those of a plain import, where both engines are loaded, in a
    fresh interpreter each; formulaic is importable after."""
    code = textwrap.dedent("""
        import json, sys
        import numpy as np
        {imported}
        import statsmodels.formula._manager as formulas
        x = np.repeat([1e6, 2e6, 4e6, 8e6], 5)
        y = 1e-4 + x / 5e8 + np.tile([0.0, 1e-5, -1e-5, 2e-5, 5e-3], 4)
        X = np.column_stack([np.ones(len(x)), x])
        fit = rlm.RLM(y, X, M=norms.TukeyBiweight()).fit(start_params=np.array([1e-4, 2e-9]))
        loaded = "formulaic" in sys.modules
        import formulaic
        print(json.dumps([loaded, formulas.DEFAULT_FORMULA_ENGINE, [float(p) for p in fit.params], formulaic.__name__]))
    """)
    through = "from stibium_py.analysis.stats import library\n" \
        "rlm = library('statsmodels.robust.robust_linear_model')\nnorms = library('statsmodels.robust.norms')"
    plain = "import statsmodels.robust.robust_linear_model as rlm, statsmodels.robust.norms as norms"
    got = [json.loads(subprocess.run([sys.executable, "-c", code.format(imported=imported)], capture_output=True,
                                     text=True, timeout=120, check=True).stdout) for imported in (through, plain)]
    assert got[0][0] is False and got[1][0] is True
    assert got[0][1:] == got[1][1:]
    assert got[0][1] == "patsy" and got[0][3] == "formulaic"


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
