"""The Estimate: a point value with its interval, the method and the sample size; the one way it is written
(estimate_text); and the interval estimators every module shares (percentile, the median's order statistics)."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .stats import binom_cdf


@dataclass(frozen=True)
class Estimate:
    estimate: float
    low: float
    high: float
    method: str
    n: int

    def as_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}

    def scaled(self, factor: float, method: str) -> "Estimate":
        """factor * x with its interval (a throughput in B/s becomes IOPS at a fixed number of requests per
        byte)."""
        return Estimate(self.estimate * factor, self.low * factor, self.high * factor, method, self.n)

    def at_least(self, bound: float) -> "Estimate":
        """A quantity that cannot be below `bound` (a latency: 0) with its interval held to the values it can take.
        The interval is a confidence set for the quantity; the values below the bound are values the quantity
        cannot have, so leaving them out keeps the set's coverage (a fitted intercept's interval is computed on
        the whole line, where it may reach below 0 s). A point estimate below the bound is the bound: the closest
        value the quantity can take. NaN ends (no interval) stay NaN."""
        def held(v: float) -> float:
            return max(v, bound) if math.isfinite(v) else v
        if not (self.estimate < bound or self.low < bound):
            return self
        if self.high < bound:         # the whole interval below: it holds no value the quantity can take
            return Estimate(bound, math.nan, math.nan, f"{self.method}; no interval: all of it lies below {bound:g}, "
                            f"which a latency cannot be", self.n)
        return Estimate(held(self.estimate), held(self.low), held(self.high),
                        f"{self.method}; held to {bound:g} or more (the range a latency can take)", self.n)

    def inverted(self, method: str) -> "Estimate":
        """1/x with the interval's ends swapped (a slope in s/B becomes a rate in B/s)."""
        def inv(v: float) -> float:
            return 1.0 / v if v > 0 else math.inf
        return Estimate(inv(self.estimate), inv(self.high), inv(self.low), method, self.n)


def estimate_text(e: "Estimate | dict[str, Any] | None", fmt: Any, compact: bool = False) -> str:
    """The one way an estimate with its interval is written, from the record or its JSON form
    (Estimate.as_dict): "488 MB/s [470 MB/s, 501 MB/s]", compact "488 MB/s ±4%" (the larger side of the
    interval), "488 MB/s (no interval)" where it has none, "-" where there is no estimate; the range of too few
    trials for the confidence asked says its own: "488 MB/s [470 MB/s, 501 MB/s] (75%)", compact
    "488 MB/s ±4%*" (the table's caption says what * is)."""
    d = e.as_dict() if isinstance(e, Estimate) else (e or {})
    est, lo, hi = d.get("estimate"), d.get("low"), d.get("high")
    if est is None:
        return "-"
    if lo is None or hi is None:
        return f"{fmt(est)} (no interval)"
    # the range of too few trials for the confidence asked: said beside it, where a column's title says 95 %
    other = _ACHIEVED.search(str(d.get("method") or ""))
    confidence = f"{float(other.group(1)):.0f}%" if other else ""
    if compact:
        said = "*" if confidence else ""
        return f"{fmt(est)} ±{max(hi / est - 1, 1 - lo / est):.0%}{said}" if est else \
            f"{fmt(est)} [{fmt(lo)}, {fmt(hi)}]{said}"
    return f"{fmt(est)} [{fmt(lo)}, {fmt(hi)}]" + (f" ({confidence})" if confidence else "")


def ratio_text(e: "Estimate | dict[str, Any] | None", suffix: str = "", digits: int = 3) -> str:
    """A ratio B / A with its interval: "1.063 [0.991, 1.140]" (suffix "x": "1.063x [0.991x, 1.140x]")."""
    return estimate_text(e, lambda v: f"{v:.{digits}f}{suffix}")


def percentile_interval(values: Any, confidence: float) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha])
    return float(lo), float(hi)


def median_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """A distribution-free interval of the median from order statistics, interpolated between the two
    neighbouring ones to the confidence asked (Hettmansperger and Sheather 1986): (low, high, the
    confidence it has). Where even the widest interval, [min, max], has less than the confidence asked
    (5 trials or fewer at 95 %), that interval with its real confidence, 1 - 2 / 2^n."""
    x = np.sort(np.asarray(values, float))
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0.0
    if n == 1:
        return float(x[0]), float(x[0]), 0.0

    # cover(d) = P(d <= B <= n - d), B ~ Binomial(n, 1/2): the confidence of [X(d), X(n-d+1)], 1-based;
    # it falls as d grows, so the last d that holds the confidence is bisected for: some 15 covers at 35,000
    # values, where computing every d's took 11 ms (a million-row report has 28 such sizes)
    def cover(d: int) -> float:
        k = np.array([n - d, d - 1])
        upper, lower = binom_cdf(k, n, 0.5)
        return float(upper - lower)

    if cover(1) < confidence:
        return float(x[0]), float(x[-1]), cover(1)
    d = n // 2                      # the last d whose interval holds the confidence
    if cover(d) < confidence:
        d, short = 1, d             # cover(d) holds it, cover(short) falls short
        while short - d > 1:
            mid = (d + short) // 2
            d, short = (mid, short) if cover(mid) >= confidence else (d, mid)
    g_d, g_next = cover(d), cover(d + 1) if d + 1 <= (n + 1) // 2 else 0.0
    if g_d == confidence or g_d == g_next:
        return float(x[d - 1]), float(x[n - d]), g_d
    share = (g_d - confidence) / (g_d - g_next)
    lam = (n - d) * share / (d + (n - 2 * d) * share)
    low = lam * x[d] + (1 - lam) * x[d - 1]
    high = lam * x[n - d - 1] + (1 - lam) * x[n - d]
    return float(low), float(high), confidence


_ACHIEVED = re.compile(r"range of \d+ trials, a ([0-9.]+)% interval \(a ")    # median_estimate's words


def median_estimate(values: np.ndarray, resamples: int, seed: int, confidence: float, what: str) -> Estimate:
    """The median over trials with its order-statistic interval (median_interval). With too few trials for
    the confidence asked, the interval is [min, max] and the method says what confidence it has."""
    values = np.asarray(values, float)
    n = len(values)
    med = float(np.median(values))
    lo, hi, achieved = median_interval(values, confidence)
    if achieved < confidence:
        need = next(k for k in range(2, 64) if 1 - 2 * 0.5 ** k >= confidence)
        return Estimate(med, lo, hi, f"median of {what}; range of {n} trials, a {achieved:.1%} interval (a "
                        f"{confidence:.0%} one needs {need} trials)", n)
    return Estimate(med, lo, hi, f"median of {what}, interpolated order-statistic interval", n)
