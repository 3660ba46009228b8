"""The Estimate: a point value with its interval, the method and the sample size."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


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

    def inverted(self, method: str) -> "Estimate":
        """1/x with the interval's ends swapped (a slope in s/B becomes a rate in B/s)."""
        def inv(v: float) -> float:
            return 1.0 / v if v > 0 else math.inf
        return Estimate(inv(self.estimate), inv(self.high), inv(self.low), method, self.n)


def interval_text(d: dict[str, Any], fmt: Any) -> str:
    """An estimate's JSON form (Estimate.as_dict) in words: "488 MB/s [470 MB/s, 501 MB/s]", or
    "488 MB/s (no interval)" where it has none."""
    if d.get("low") is None or d.get("high") is None:
        return f"{fmt(d['estimate'])} (no interval)"
    return f"{fmt(d['estimate'])} [{fmt(d['low'])}, {fmt(d['high'])}]"


def percentile_interval(values: Any, confidence: float) -> tuple[float, float]:
    import numpy as np
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha])
    return float(lo), float(hi)
