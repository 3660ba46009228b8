"""Outliers: flagged, never removed. Tukey fences on the log-residuals
r = ln(t / t_hat) at 1.5 (mild) and 3 (severe) IQR, the IQR floored at 0.01 so
that identical points do not make everything an outlier (docs/methods.md)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

IQR_FLOOR = 0.01
MILD_FENCE = 1.5
SEVERE_FENCE = 3.0


def log_residuals(y_s: np.ndarray, predicted_s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(np.asarray(y_s, float) / np.asarray(predicted_s, float))
    return np.where(np.asarray(predicted_s) > 0, r, np.nan)


@dataclass(frozen=True)
class Fences:
    """Tukey's fences on the log residuals: the quartiles, the (floored) IQR and the four fences; NaN
    where there is no residual."""

    q1: float
    q3: float
    iqr: float
    low_severe: float
    low_mild: float
    high_mild: float
    high_severe: float

    FENCES = ("low_severe", "low_mild", "high_mild", "high_severe")

    def to_json(self) -> dict[str, float]:
        return asdict(self)


def fences(r: np.ndarray, iqr_floor: float = IQR_FLOOR) -> Fences:
    finite = r[np.isfinite(r)]
    if finite.size == 0:
        return Fences(*[math.nan] * 7)
    q1, q3 = np.quantile(finite, [0.25, 0.75])
    iqr = max(q3 - q1, iqr_floor)
    return Fences(float(q1), float(q3), float(iqr), float(q1 - SEVERE_FENCE * iqr), float(q1 - MILD_FENCE * iqr),
                  float(q3 + MILD_FENCE * iqr), float(q3 + SEVERE_FENCE * iqr))


def classify(r: np.ndarray, f: Fences) -> np.ndarray:
    """Per point '' for an ordinary one, else low/high and mild/severe (NaN residuals are ordinary)."""
    r = np.asarray(r, float)
    with np.errstate(invalid="ignore"):
        return np.select([r < f.low_severe, r < f.low_mild, r > f.high_severe, r > f.high_mild],
                         ["low severe", "low mild", "high severe", "high mild"], "")
