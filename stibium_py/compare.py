"""Two runs side by side (ANALYSIS.md, Two machines): tests matched by name, op,
access, granularity and stride; ratio = B's rate / A's rate, each run bootstrapped
independently (B = 10000), percentile interval of the ratio; per test and op the
geometric mean ratio across granularities with its interval; a verdict with a 2 %
noise band. Not hyperfine's +- sigma ratio, not pyperf's pooled t-test."""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import patterns, regression
from .analysis.estimate import Estimate, percentile_interval
from .store import RunDirError, read_measurements, read_run_json

RESAMPLES = 10000
NOISE_BAND = 0.02
CONFIDENCE = 0.95
SEED = 2024


class CompareError(Exception):
    """Runs that cannot be compared; the message is one line for the user."""


@dataclass(frozen=True)
class Run:
    path: Path
    facts: dict[str, Any]
    rows: list[dict[str, Any]]

    @property
    def label(self) -> str:
        m = self.facts.get("machine", {})
        return f"{m.get('hostname', '?')} ({self.path.name})"


def load_run(path: Path) -> Run:
    facts = read_run_json(path)
    rows, _ = read_measurements(path)
    good = [r for r in rows if not r.get("error") and r.get("seconds") and r["seconds"] > 0]
    if not good:
        raise RunDirError(f"{path}: no measurements to compare")
    return Run(path, facts, good)


def _key(row: dict[str, Any]) -> tuple:
    if row["kind"] == "files":
        return (row["test"], row["op"], "files", 0, 0)
    return (row["test"], row["op"], row["access"], row["granularity_bytes"], row["stride_bytes"])


def _groups(run: Run) -> dict[tuple, list[dict[str, Any]]]:
    out: dict[tuple, list[dict[str, Any]]] = {}
    for r in run.rows:
        out.setdefault(_key(r), []).append(r)
    return out


def rate_draws(rows: list[dict[str, Any]], resamples: int, seed: int) -> tuple[float, float | None, np.ndarray, str]:
    """A rate, its latency (files tests) and its bootstrap draws: the Theil-Sen rate and
    intercept of a files test, the median throughput over trials of a pattern point."""
    if rows[0]["kind"] == "files":
        x = np.array([r["size_bytes"] for r in rows], float)
        y = np.array([r["seconds"] for r in rows], float)
        line = regression.theil_sen(x, y)
        slopes = regression.bootstrap_slopes(x, y, resamples, seed)
        with np.errstate(divide="ignore"):
            draws = np.where(slopes > 0, 1.0 / slopes, np.nan)
        rate = 1.0 / line.slope_s_per_byte if line.slope_s_per_byte > 0 else math.nan
        return rate, line.intercept_s, draws, f"theil-sen rate, stratified bootstrap B={len(draws)}"
    tput = np.array([r["bytes"] / r["seconds"] for r in rows], float)
    draws = patterns.bootstrap_medians(tput, resamples, seed)
    return float(np.median(tput)), None, draws, f"median throughput over trials, bootstrap B={resamples}"


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


def compare_runs(a: Run, b: Run, allow_different_plans: bool = False, resamples: int = RESAMPLES,
                 seed: int = SEED) -> dict[str, Any]:
    plan_a = a.facts.get("plan", {}).get("name")
    plan_b = b.facts.get("plan", {}).get("name")
    if plan_a != plan_b and not allow_different_plans:
        raise CompareError(f"the runs are of different plans ({plan_a} and {plan_b}); compare runs of one plan, "
                           f"or pass --allow-different-plans")
    ga, gb = _groups(a), _groups(b)
    matched = [k for k in ga if k in gb]
    rows = []
    draws_by_key = {}
    # the bootstraps of the matched rows are independent: one process per core
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = [(pool.submit(rate_draws, ga[key], resamples, seed + 2 * i),
                 pool.submit(rate_draws, gb[key], resamples, seed + 2 * i + 1)) for i, key in enumerate(matched)]
        draws = [(fa.result(), fb.result()) for fa, fb in jobs]
    for key, ((rate_a, lat_a, da, method_a), (rate_b, lat_b, db, _)) in zip(matched, draws):
        n = min(len(da), len(db))
        ratios = db[:n] / da[:n]
        lo, hi = percentile_interval(ratios, CONFIDENCE)
        est = Estimate(rate_b / rate_a if rate_a else math.nan, lo, hi,
                       f"ratio of {method_a.split(',')[0]}s, independent bootstraps B={n}, percentile interval",
                       len(ga[key]) + len(gb[key]))
        word, hint = verdict(est)
        draws_by_key[key] = ratios
        test, op, access, gran, stride = key
        rows.append({"test": test, "op": op, "access": access, "granularity_bytes": gran, "stride_bytes": stride,
                     "rate_a_bytes_per_s": rate_a, "rate_b_bytes_per_s": rate_b, "latency_a_s": lat_a,
                     "latency_b_s": lat_b, "n_a": len(ga[key]),
                     "n_b": len(gb[key]), "ratio": est.as_dict(), "verdict": word, "hint": hint})
    summaries = []
    for test, op in dict.fromkeys((k[0], k[1]) for k in matched):
        keys = [k for k in matched if k[0] == test and k[1] == op]
        if len(keys) < 2:
            continue
        n = min(len(draws_by_key[k]) for k in keys)
        logs = np.vstack([np.log(draws_by_key[k][:n]) for k in keys])
        point = [r["ratio"]["estimate"] for r in rows if (r["test"], r["op"]) == (test, op)]
        lo, hi = percentile_interval(np.exp(np.nanmean(logs, axis=0)), CONFIDENCE)
        est = Estimate(float(np.exp(np.mean(np.log(point)))), lo, hi,
                       f"geometric mean over {len(keys)} granularities, bootstrap B={n}", len(keys))
        word, hint = verdict(est)
        summaries.append({"test": test, "op": op, "ratio": est.as_dict(), "verdict": word, "hint": hint})
    only_a = [_describe(k) for k in ga if k not in gb]
    only_b = [_describe(k) for k in gb if k not in ga]
    return {"format": "stibium-compare/1", "a": _facts(a), "b": _facts(b),
            "settings": {"resamples": resamples, "seed": seed, "confidence": CONFIDENCE, "noise_band": NOISE_BAND},
            "rows": rows, "summaries": summaries, "unmatched": {"only_in_a": only_a, "only_in_b": only_b}}


def _describe(key: tuple) -> str:
    test, op, access, gran, stride = key
    if access == "files":
        return f"{test} {op}"
    return f"{test} {op} {access} {gran} B" + (f" stride {stride} B" if stride else "")


def _facts(run: Run) -> dict[str, Any]:
    m = run.facts.get("machine", {})
    t = run.facts.get("target_facts", {})
    return {"run": run.path.name, "plan": run.facts.get("plan", {}).get("name"), "hostname": m.get("hostname"),
            "os": f"{m.get('os')} {m.get('os_release')}", "cpu": m.get("cpu"), "ram_bytes": m.get("ram_bytes"),
            "fs_type": t.get("fs_type"), "device_model": t.get("device_model"), "started_utc": run.facts.get("started_utc"),
            "measurements": len(run.rows)}
