"""Pattern tests: throughput per (op, access, granularity, stride) with a
bootstrap interval of the median over trials, IOPS, latency percentiles (the
helper's), and the knee: the smallest granularity whose throughput reaches 90 %
of the plateau (the median of the top three granularities) (ANALYSIS.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .estimate import Estimate, percentile_interval

KNEE_FRACTION = 0.9
ORDER_STATISTIC_ABOVE = 200


def bootstrap_medians(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Medians of `resamples` bootstrap resamples of values."""
    values = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    return np.median(values[rng.integers(0, len(values), size=(resamples, len(values)))], axis=1)


def median_estimate(values: np.ndarray, resamples: int, seed: int, confidence: float, what: str) -> Estimate:
    values = np.asarray(values, float)
    n = len(values)
    med = float(np.median(values))
    if n < 3:
        return Estimate(med, float(values.min()), float(values.max()), f"median; range of {n} trials", n)
    if n > ORDER_STATISTIC_ABOVE:
        # distribution-free interval of the median from order statistics (binomial), cheap for large groups
        from scipy.stats import binom
        alpha = (1 - confidence) / 2
        lo_k = max(int(binom.ppf(alpha, n, 0.5)) - 1, 0)
        hi_k = min(int(binom.ppf(1 - alpha, n, 0.5)), n - 1)
        ordered = np.sort(values)
        return Estimate(med, float(ordered[lo_k]), float(ordered[hi_k]), f"median of {what}, order-statistic interval", n)
    lo, hi = percentile_interval(bootstrap_medians(values, resamples, seed), confidence)
    return Estimate(med, lo, hi, f"median of {what}, bootstrap B={resamples} seed={seed}", n)


def knee(granularities: list[int], throughputs: list[float]) -> int | None:
    if len(granularities) < 2:
        return None
    order = np.argsort(granularities)
    g = np.asarray(granularities)[order]
    t = np.asarray(throughputs, float)[order]
    plateau = float(np.median(np.sort(t)[-3:]))
    for gi, ti in zip(g, t):
        if ti >= KNEE_FRACTION * plateau:
            return int(gi)
    return None


def points(rows: list[dict[str, Any]], resamples: int, seed: int, confidence: float) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["access"], row["granularity_bytes"], row["stride_bytes"]), []).append(row)
    out = []
    for (access, gran, stride), rs in sorted(groups.items()):
        seconds = np.array([r["seconds"] for r in rs], float)
        tput = np.array([r["bytes"] for r in rs], float) / seconds
        iops = np.array([(r["requests"] or 1) for r in rs], float) / seconds

        def med(key: str) -> float | None:
            vals = [r[key] for r in rs if r.get(key) is not None]
            return float(np.median(vals)) if vals else None

        calls = [r["largest_syscall_bytes"] for r in rs if r.get("largest_syscall_bytes")]
        out.append({"access": access, "granularity_bytes": gran, "stride_bytes": stride,
                    # the size of the calls actually made (smaller than the granularity where the platform
                    # or engine split a request); rows of an older format lack it
                    "call_bytes": int(min(calls)) if calls else gran,
                    "throughput_bytes_per_s": median_estimate(tput, resamples, seed, confidence, "throughput").as_dict(),
                    "iops": float(np.median(iops)), "lat_p50_s": med("lat_p50_s"), "lat_p90_s": med("lat_p90_s"),
                    "lat_p99_s": med("lat_p99_s"), "lat_p999_s": med("lat_p999_s"), "lat_max_s": med("lat_max_s"),
                    "trials": len(rs), "resident_before_max": max((r.get("resident_before") or 0) for r in rs)})
    return out
