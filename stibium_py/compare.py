"""Two runs, or two series of repeated runs, side by side (docs/methods.md, comparing machines):
tests matched by name, op, access, granularity and stride; ratio = B's rate / A's rate. Each run is
bootstrapped on its own (B = 10000); a side of several runs gets a two-level bootstrap (runs, then
measurements) so that its interval holds the variance between runs, widened for the few runs it
has (analysis/runs.py). With one run on a side the verdict is about these runs only, and says so.
Per test and op the geometric mean ratio across granularities with its interval; a verdict with a
2 % noise band. Not hyperfine's +- sigma ratio, not pyperf's pooled t-test."""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import runs as runs_analysis
from .analysis.estimate import Estimate
from .analysis.rates import by_point, describe, rate_draws, valid
from .definitions import differences, test_definitions
from .store import RunDirError, is_series, read_measurements, read_run_json, series_run_dirs

RESAMPLES = 10000
NOISE_BAND = 0.02
CONFIDENCE = 0.95
SEED = 2024
RUNS_ADVISED = 5
# Facts that name one machine and one disk: equal on both sides means a repeatability check.
SAME_MACHINE_FACTS = (("machine", "hostname"), ("machine", "cpu"), ("machine", "ram_bytes"), ("machine", "os_release"),
                      ("target_facts", "device"), ("target_facts", "device_model"), ("target_facts", "fs_type"))


class CompareError(Exception):
    """Runs that cannot be compared; the message is one line for the user."""


@dataclass(frozen=True)
class Run:
    path: Path
    facts: dict[str, Any]
    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: one run directory, or the complete runs of a series."""

    path: Path
    runs: list[Run]
    skipped: tuple[str, ...] = ()     # runs of a series left out, each with why

    @property
    def facts(self) -> dict[str, Any]:
        return self.runs[0].facts

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [r for run in self.runs for r in run.rows]

    @property
    def label(self) -> str:
        m = self.facts.get("machine", {})
        count = f", {len(self.runs)} runs" if len(self.runs) > 1 else ""
        return f"{m.get('hostname', '?')} ({self.path.name}{count})"


def _load_one(path: Path, complete_only: bool = False) -> Run | None:
    """A run with its valid measurements; None when it has none (or, complete_only, is not complete)."""
    facts = read_run_json(path)
    if complete_only and facts.get("status") != "complete":
        return None
    rows, _ = read_measurements(path)
    good = valid(rows)
    return Run(path, facts, good) if good else None


def load_run(path: Path) -> Side:
    """A run directory, or a series of runs (its complete runs with measurements)."""
    if is_series(path):
        runs, skipped = [], []
        for d in series_run_dirs(path):
            try:
                run = _load_one(d, complete_only=True)
            except RunDirError as e:
                skipped.append(f"{d.name}: {e}")
                continue
            if run is None:
                skipped.append(f"{d.name}: not complete, or no measurements")
            else:
                runs.append(run)
        if not runs:
            raise RunDirError(f"{path}: no complete run with measurements to compare")
        return Side(path, runs, tuple(skipped))
    run = _load_one(path)
    if run is None:
        raise RunDirError(f"{path}: no measurements to compare")
    return Side(path, [run])


def verdict(ratio: Estimate, band: float = NOISE_BAND) -> tuple[str, str]:
    if not (math.isfinite(ratio.low) and math.isfinite(ratio.high)):
        return "inconclusive", "no interval could be computed; add repeats or trials"
    if ratio.low > 1 + band:
        return "faster", ""
    if ratio.high < 1 - band:
        return "slower", ""
    if ratio.low >= 1 - band and ratio.high <= 1 + band:
        return "same within noise", ""
    return "inconclusive", "the interval straddles the noise band: add repeats (files) or trials (patterns)"


def _check_definitions(a: Side, b: Side, tests: set[str], allow: bool) -> list[str]:
    """Compare what was measured: refuse a difference that changes what a number means (unless allowed),
    return the other differences. Runs without their plan fall back to the plans' names."""
    da, db = test_definitions(a.facts), test_definitions(b.facts)
    if da is None or db is None:
        plan_a = a.facts.get("plan", {}).get("name")
        plan_b = b.facts.get("plan", {}).get("name")
        if plan_a != plan_b and not allow:
            raise CompareError(f"the runs are of different plans ({plan_a} and {plan_b}); compare runs of one "
                               f"plan, or pass --allow-different-plans")
        return []
    refused, listed = differences(da, db, tests)
    if refused and not allow:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise CompareError(f"the runs measured different things: {refused[0]}{more}; compare like with like, or "
                           f"pass --allow-different-plans")
    return refused + listed


def same_machine(a: Side, b: Side) -> bool:
    """Both sides ran on one machine and disk (every identifying fact known and equal)."""
    for section, key in SAME_MACHINE_FACTS:
        va, vb = a.facts.get(section, {}).get(key), b.facts.get(section, {}).get(key)
        if va is None or va != vb:
            return False
    return True


def runs_needed(spread_log: float | None, ratio: float, band: float = NOISE_BAND, confidence: float = CONFIDENCE) -> int | None:
    """Runs per side for an interval of the ratio narrower than the difference to tell (at least the noise
    band), given a spread between runs (log scale); None where the spread is unknown."""
    if spread_log is None or not math.isfinite(spread_log) or spread_log <= 0:
        return None
    z = 0.5 + confidence / 2
    from scipy import stats
    d = max(abs(math.log(ratio)) if ratio > 0 and math.isfinite(ratio) else 0.0, math.log(1 + band))
    return max(2, math.ceil(2 * (stats.norm.ppf(z) * spread_log / d) ** 2))


def _side_rates(side: Side, key: tuple, results: dict) -> list[runs_analysis.RunRate]:
    return [runs_analysis.run_rate(run.path.name, *results[(id(run), key)], CONFIDENCE) for run in side.runs
            if (id(run), key) in results]


def compare_runs(a: Side, b: Side, allow_different_plans: bool = False, resamples: int = RESAMPLES,
                 seed: int = SEED) -> dict[str, Any]:
    ga, gb = by_point(a.rows), by_point(b.rows)
    listed = _check_definitions(a, b, {k[0] for k in ga if k in gb}, allow_different_plans)
    matched = [k for k in ga if k in gb]
    # every run's bootstrap of every matched point is independent: one process per core
    points = {id(run): by_point(run.rows) for side in (a, b) for run in side.runs}
    jobs, counts, results, latencies = {}, {}, {}, {}
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for key in matched:
            for run in (*a.runs, *b.runs):
                rows = points[id(run)].get(key)
                if rows:
                    jobs[(id(run), key)] = pool.submit(rate_draws, rows, resamples, seed + len(jobs))
                    counts[(id(run), key)] = len(rows)
        for k, fut in jobs.items():
            rate, lat, draws, _ = fut.result()
            results[k] = (rate, draws, counts[k])
            latencies[k] = lat
    scope = "machines" if len(a.runs) > 1 and len(b.runs) > 1 else "these runs only"
    rows = []
    per_run_logs: dict[tuple, tuple[list[float], list[float]]] = {}
    draws_by_key = {}
    for i, key in enumerate(matched):
        ra, rb = _side_rates(a, key, results), _side_rates(b, key, results)
        la = [math.log(r.estimate) for r in ra if r.estimate > 0 and math.isfinite(r.estimate)]
        lb = [math.log(r.estimate) for r in rb if r.estimate > 0 and math.isfinite(r.estimate)]
        da = runs_analysis.two_level_draws([r.draws for r in ra], resamples, seed + 7919 * (2 * i + 1))
        db = runs_analysis.two_level_draws([r.draws for r in rb], resamples, seed + 7919 * (2 * i + 2))
        m = min(len(da), len(db))
        ratios = db[:m] / da[:m]
        rate_a, rate_b = runs_analysis.geometric_mean([r.estimate for r in ra]), \
            runs_analysis.geometric_mean([r.estimate for r in rb])
        point = rate_b / rate_a if rate_a else math.nan
        factor = runs_analysis.widening(CONFIDENCE, la, lb)
        lo, hi = runs_analysis.widened_interval(point, ratios, CONFIDENCE, factor)
        method = ("ratio of the runs' geometric means, two-level bootstraps (runs, then measurements) "
                  f"B={m}, widened x{factor:.2f} for the few runs" if factor != 1.0 else
                  f"ratio of {'theil-sen rate' if key[2] == 'files' else 'median throughput'}s, independent "
                  f"bootstraps B={m}, percentile interval")
        est = Estimate(point, lo, hi, method, len(ga[key]) + len(gb[key]))
        word, hint = verdict(est)
        draws_by_key[key] = ratios
        per_run_logs[key] = (la, lb)
        test, op, access, gran, stride = key
        lat_a = [latencies[(id(r), key)] for r in a.runs if latencies.get((id(r), key)) is not None]
        lat_b = [latencies[(id(r), key)] for r in b.runs if latencies.get((id(r), key)) is not None]
        rows.append({"test": test, "op": op, "access": access, "granularity_bytes": gran, "stride_bytes": stride,
                     "rate_a_bytes_per_s": rate_a, "rate_b_bytes_per_s": rate_b,
                     "latency_a_s": float(np.median(lat_a)) if lat_a else None,
                     "latency_b_s": float(np.median(lat_b)) if lat_b else None,
                     "n_a": len(ga[key]), "n_b": len(gb[key]), "runs_a": len(ra), "runs_b": len(rb),
                     "ratio": est.as_dict(), "verdict": word, "hint": hint, "scope": scope})
    summaries = []
    for test, op in dict.fromkeys((k[0], k[1]) for k in matched):
        keys = [k for k in matched if k[0] == test and k[1] == op]
        if len(keys) < 2:
            continue
        m = min(len(draws_by_key[k]) for k in keys)
        logs = np.vstack([np.log(draws_by_key[k][:m]) for k in keys])
        point_list = [r["ratio"]["estimate"] for r in rows if (r["test"], r["op"]) == (test, op)]
        point = float(np.exp(np.mean(np.log(point_list))))
        # per run, the mean log rate over the granularities: the spread between runs of the summary
        la = [float(np.mean(v)) for v in zip(*[per_run_logs[k][0] for k in keys])]
        lb = [float(np.mean(v)) for v in zip(*[per_run_logs[k][1] for k in keys])]
        factor = runs_analysis.widening(CONFIDENCE, la, lb)
        with np.errstate(invalid="ignore"):
            lo, hi = runs_analysis.widened_interval(point, np.exp(np.nanmean(logs, axis=0)), CONFIDENCE, factor)
        est = Estimate(point, lo, hi, f"geometric mean over {len(keys)} granularities, bootstrap B={m}", len(keys))
        word, hint = verdict(est)
        summaries.append({"test": test, "op": op, "ratio": est.as_dict(), "verdict": word, "hint": hint,
                          "scope": scope})
    only_a = [describe(k) for k in ga if k not in gb]
    only_b = [describe(k) for k in gb if k not in ga]
    return {"format": "stibium-compare/2", "a": _facts(a), "b": _facts(b),
            "settings": {"resamples": resamples, "seed": seed, "confidence": CONFIDENCE, "noise_band": NOISE_BAND},
            "scope": scope, "same_machine": same_machine(a, b), "advice": _advice(a, b, rows, per_run_logs),
            "differences": listed,
            "rows": rows, "summaries": summaries, "unmatched": {"only_in_a": only_a, "only_in_b": only_b}}


def _advice(a: Side, b: Side, rows: list[dict[str, Any]], per_run_logs: dict[tuple, tuple[list[float], list[float]]]) -> str:
    """What the verdicts cover, and how many runs a comparison of machines would need."""
    if len(a.runs) > 1 and len(b.runs) > 1:
        return (f"{len(a.runs)} and {len(b.runs)} runs: the intervals include the variance between runs, so the "
                f"verdicts are about the machines")
    spreads = [float(np.std(logs, ddof=1)) for pair in per_run_logs.values() for logs in pair if len(logs) > 1]
    estimates = [r["ratio"]["estimate"] for r in rows if r["ratio"]["estimate"] and r["ratio"]["estimate"] > 0]
    ratio = float(np.exp(np.median(np.log(estimates)))) if estimates else 1.0
    needed = runs_needed(float(np.median(spreads)) if spreads else None, ratio)
    base = ("one run on a side: the intervals cannot see the variance between runs (the host's cache, background "
            "work, the drive's temperature), so the verdicts are about these runs only")
    if needed is None:
        return f"{base}; run each side with --runs {RUNS_ADVISED} (at least 3) to compare the machines"
    return (f"{base}; with the spread between runs measured here, about {min(needed, 1000)}"
            f"{'+' if needed > 1000 else ''} runs per side would tell a ratio of {ratio:.2f} from 1")


def _facts(run: Side) -> dict[str, Any]:
    m = run.facts.get("machine", {})
    t = run.facts.get("target_facts", {})
    return {"run": run.path.name, "plan": run.facts.get("plan", {}).get("name"), "hostname": m.get("hostname"),
            "os": f"{m.get('os')} {m.get('os_release')}", "cpu": m.get("cpu"), "ram_bytes": m.get("ram_bytes"),
            "fs_type": t.get("fs_type"), "device_model": t.get("device_model"), "started_utc": run.facts.get("started_utc"),
            "measurements": len(run.rows), "runs": len(run.runs)}


def compare_many(sides: list[Side], reference: int = 0, allow_different_plans: bool = False,
                 resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Many machines in one table: every run against the reference run, per test point its rate and its
    ratio to the reference with an interval (each pair compared as compare_runs does)."""
    ref = sides[reference]
    others = [s for i, s in enumerate(sides) if i != reference]
    pairs = [compare_runs(ref, other, allow_different_plans, resamples, seed + 1000 * i)
             for i, other in enumerate(others)]
    rows = []
    for pair, other in zip(pairs, others):
        for r in pair["rows"]:
            rows.append({**{k: r[k] for k in ("test", "op", "access", "granularity_bytes", "stride_bytes")},
                         "run": other.path.name, "label": other.label, "rate_bytes_per_s": r["rate_b_bytes_per_s"],
                         "reference_rate_bytes_per_s": r["rate_a_bytes_per_s"], "ratio": r["ratio"],
                         "verdict": r["verdict"], "scope": r["scope"], "runs": r["runs_b"]})
    return {"format": "stibium-compare-many/1", "reference": _facts(ref), "runs": [_facts(o) for o in others],
            "settings": pairs[0]["settings"], "rows": rows,
            "summaries": [{**s, "run": o.path.name} for pair, o in zip(pairs, others) for s in pair["summaries"]],
            "advice": [p["advice"] for p in pairs], "differences": sorted({d for p in pairs for d in p["differences"]})}
