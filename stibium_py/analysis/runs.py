"""Repeated runs: the variance between runs, which no interval from inside one run can see (the
host's cache, background work, the drive's temperature, where the files landed).

Pure functions of per-run rates and their within-run bootstrap draws:

- the rate across runs: the geometric mean of the runs' rates;
- its interval: a two-level bootstrap (resample the runs, then one within-run draw of each picked
  run), so that it holds the variance between runs and within them; its percentile interval is
  widened on the log scale by t_{K-1} / z * sqrt(K / (K - 1)): resampling K runs underestimates
  their variance by (K - 1) / K, and K runs estimate it with K - 1 degrees of freedom. Chosen by
  simulation (tests/bench/bench_runs_coverage.py): with 5 runs per side and runs that vary by 20 %,
  the plain two-level percentile interval of a ratio covered 87 %, the widened one 96 %;
- the spread between runs: 1.4826 x the median absolute deviation of the log rates (about the
  coefficient of variation for small spreads), with a percentile interval over resampled runs;
- whether runs disagree beyond their own intervals (their intervals share no point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .estimate import Estimate, percentile_interval
from .stats import norm_ppf, t_ppf
from .stats.bootstrap import two_level_draws

MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class RunRate:
    """One run's rate of one test point: its estimate, its own interval and its within-run draws."""

    run: str
    estimate: float
    low: float
    high: float
    n: int
    draws: np.ndarray
    refused: str | None = None      # why this run's rate has no interval (rates.PointRate.refused)


def run_rate(run: str, estimate: float, draws: np.ndarray, n: int, confidence: float,
             refused: str | None = None) -> RunRate:
    lo, hi = percentile_interval(draws, confidence) if refused is None else (math.nan, math.nan)
    return RunRate(run, estimate, lo, hi, n, draws, refused)


def refusal(rates: Sequence[RunRate]) -> str | None:
    """Why rates of runs give no interval together: the first run's refusal (one trial, one size, ...)."""
    return next((r.refused for r in rates if r.refused is not None), None)


def _variance_term(log_rates: Sequence[float]) -> tuple[float, int]:
    k = len(log_rates)
    return (float(np.var(log_rates, ddof=1)) / k if k > 1 else 0.0), k


def widening(confidence: float, *sides: Sequence[float]) -> float:
    """The factor that widens a two-level percentile interval of a mean of log rates (one side) or of a
    difference of such means (two sides, Welch-Satterthwaite degrees of freedom); 1 where no side has
    two runs or the runs agree exactly."""
    terms = [_variance_term(s) for s in sides]
    terms = [(v, k) for v, k in terms if k > 1]
    if not terms or sum(v for v, _ in terms) == 0:
        return 1.0
    total = sum(v for v, _ in terms)
    df = total ** 2 / sum(v ** 2 / (k - 1) for v, k in terms if v > 0)
    z = norm_ppf(0.5 + confidence / 2)
    t = t_ppf(0.5 + confidence / 2, df)
    # the resampling bias (K - 1) / K, weighted by each side's share of the variance
    bias = sum(v * k / (k - 1) for v, k in terms) / total
    return float(t / z * math.sqrt(bias))


def widened_interval(point: float, draws: np.ndarray, confidence: float, factor: float) -> tuple[float, float]:
    """The percentile interval of draws, its distances from the point stretched by factor on the log scale."""
    lo, hi = percentile_interval(draws, confidence)
    if not (point > 0 and lo > 0 and hi > 0) or factor == 1.0:
        return lo, hi
    c = math.log(point)
    return math.exp(c + (math.log(lo) - c) * factor), math.exp(c + (math.log(hi) - c) * factor)


def geometric_mean(values: Sequence[float]) -> float:
    v = np.asarray(values, float)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.mean(np.log(v)))) if v.size else math.nan


def across_runs(rates: Sequence[RunRate], resamples: int, seed: int, confidence: float) -> dict:
    """The rate across runs with its two-level interval, the spread between runs, and whether runs disagree."""
    logs = [math.log(r.estimate) for r in rates if r.estimate > 0 and math.isfinite(r.estimate)]
    point = geometric_mean([r.estimate for r in rates])
    refused = refusal(rates) or next((f"run {r.run} has no draws of its own rate" for r in rates
                                      if not math.isfinite(r.estimate) or not np.isfinite(r.draws).any()), None)
    if refused is not None:
        rate = Estimate(point, math.nan, math.nan, f"no interval: {refused}", sum(r.n for r in rates))
    else:
        draws = two_level_draws([r.draws for r in rates], resamples, seed)
        lo, hi = widened_interval(point, draws, confidence, widening(confidence, logs))
        method = (f"geometric mean of {len(rates)} runs, two-level bootstrap B={resamples} widened by t/z "
                  f"sqrt(K/(K-1))" if len(rates) > 1 else "one run: its own interval")
        rate = Estimate(point, lo, hi, method, sum(r.n for r in rates))
    lows = [r.low for r in rates if math.isfinite(r.low)]
    highs = [r.high for r in rates if math.isfinite(r.high)]
    # whether two runs' own intervals do not overlap: unknown (None) where fewer than two runs have one
    differ = (max(lows) > min(highs)) if len(rates) > 1 and len(lows) > 1 and len(highs) > 1 else None
    return {"runs": len(rates), "rate": rate.as_dict(), "spread": spread(logs, resamples, seed, confidence),
            "runs_differ": differ,
            "per_run": [{"run": r.run, "estimate": _finite(r.estimate), "low": _finite(r.low), "high": _finite(r.high),
                         "n": r.n, **({"refused": r.refused} if r.refused else {})} for r in rates]}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


SPREAD_INTERVAL_MIN_RUNS = 5


def spread(log_rates: Sequence[float], resamples: int, seed: int, confidence: float) -> dict:
    """Robust spread between runs: 1.4826 x MAD of the log rates, with a bootstrap interval over runs."""
    v = np.asarray(log_rates, float)
    if v.size < 2:
        return Estimate(math.nan, math.nan, math.nan, "needs two runs or more", int(v.size)).as_dict()
    if v.size < SPREAD_INTERVAL_MIN_RUNS:
        # resamples of so few runs hold only a handful of distinct spreads (two runs: 0 and their own), so a
        # percentile interval of them would put the estimate at its upper end: none is given
        return Estimate(float(MAD_TO_SD * np.median(np.abs(v - np.median(v)))), math.nan, math.nan,
                        f"1.4826 MAD of log rates over {v.size} runs; no interval: a bootstrap over fewer than "
                        f"{SPREAD_INTERVAL_MIN_RUNS} runs can only repeat their own values", int(v.size)).as_dict()

    def mad(a: np.ndarray) -> np.ndarray:
        return MAD_TO_SD * np.median(np.abs(a - np.median(a, axis=-1, keepdims=True)), axis=-1)

    rng = np.random.default_rng(seed)
    boot = mad(v[rng.integers(0, v.size, size=(resamples, v.size))])
    lo, hi = percentile_interval(boot, confidence)
    return Estimate(float(mad(v)), lo, hi, f"1.4826 MAD of log rates over {v.size} runs, bootstrap over runs "
                    f"(rough below 5 runs)", int(v.size)).as_dict()
