"""The analyses' libraries imported one at a time (analysis/stats/imports.py): the summary computes on threads, and
two threads importing parts of statsmodels at once deadlock inside Python's import system (a `_DeadlockError` on a
module lock, or ImportError from a "partially initialized module" in one of them: `stibium report` failed so with
its files tests computed on two threads). Each check runs in fresh interpreters, where nothing is imported yet. The
plain imports raced the same way fail in most of them (tests/bench/bench_import_race.py: 15 of 15 on an idle
machine, fewer under load, so that is a measurement, not a test); the guarded ones never fail."""

from __future__ import annotations

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
