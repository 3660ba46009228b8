"""The analysis of a series of repeated runs: per test point, each run's rate with its own interval,
the rate across runs with a two-level interval, the spread between runs, and whether runs differ
beyond their own intervals (analysis/runs.py). Written to the series folder as summary.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import registry
from ..analysis import runs as runs_analysis
from ..analysis.rates import by_point, draws_per_run, key_json, label
from ..analysis.comparison import OWN_KEY
from ..analysis.settings import SERIES, Settings
from .compare import Side, draws_pool, kinds_apart, load_side
from ..rundir.store import RunDirError, is_series, read_series_json


def summarize_series(path: Path, settings: Settings = SERIES) -> dict[str, Any]:
    if not is_series(path):
        raise RunDirError(f"{path}: not a series of runs (no series.json)")
    meta = read_series_json(path)
    with draws_pool([path], settings.resamples) as pool:    # large runs: its workers start while they are read
        side: Side = load_side(path)
        points = [by_point(run.rows) for run in side.runs]
        keys = list(dict.fromkeys(k for p in points for k in p))
        results = draws_per_run(points, keys, settings, pool)
    tests = []
    for j, key in enumerate(keys):
        rates = [runs_analysis.run_rate(side.runs[i].path.name, results[(i, key)].rate, results[(i, key)].draws,
                                        results[(i, key)].n, settings.confidence)
                 for i in range(len(points)) if (i, key) in results]
        tests.append({**key_json(key), "label": label(key),
                      **runs_analysis.across_runs(rates, settings.resamples, settings.seed + 104729 * (j + 1),
                                                  settings.confidence)})
    # the kinds that put their own results together (a sustained test's curve per run, side by side)
    kinds = {spec.name: found for spec in registry.specs() if spec.series is not None
             for found in (spec.series([(run.path.name, run.rows) for run in side.runs], settings),) if found}
    differ = [t["label"] for t in tests if t["runs_differ"]]
    warnings = []
    if differ:
        warnings.append({"level": "warning", "test": ", ".join(differ),
                         "message": "runs differ: results depend on when you measure (the runs' intervals share no "
                                    "point)",
                         "what_to_do": "quote the rate across runs with its interval, which includes the variance "
                                       "between runs; look for what changed between them (caches, background work, "
                                       "temperature)"})
    # what a kind's entries warn of (a stream test whose runs differ), said where every warning is said
    warnings += [w for entries in kinds.values() for e in entries for w in e.pop("warnings", [])]
    for kind, names in kinds_apart([side]).items():
        warnings.append({"level": "warning", "test": ", ".join(names),
                         "message": f"{kind} tests are not put together across runs: this summary leaves them out",
                         "what_to_do": "read each run's report for them"})
    for why in side.skipped:
        warnings.append({"level": "warning", "test": "all", "message": f"left out {why}",
                         "what_to_do": "restore the run from a copy, or read the series without it"})
    if len(side.runs) < meta.runs:
        warnings.append({"level": "warning", "test": "all",
                         "message": f"{len(side.runs)} of {meta.runs} runs are complete",
                         "what_to_do": f"finish the series with `stibium resume {path}`"})
    return {"format": "stibium-series-summary/1", "plan": meta.plan, "runs_planned": meta.runs,
            "runs": [run.path.name for run in side.runs],
            "settings": settings.to_json(),
            "tests": tests, "warnings": warnings, OWN_KEY: kinds.pop(OWN_KEY, []), "kinds": kinds}


def kind_entries(summary: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each kind's own results across the runs in a series summary (under its own key, or under kinds), in the
    order of the page."""
    found = {**summary.get("kinds", {}), OWN_KEY: summary.get(OWN_KEY, [])}
    return {spec.name: found[spec.name] for spec in registry.specs() if found.get(spec.name)}
