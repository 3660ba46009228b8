"""Outliers: flagged, never removed. Tukey fences on the log-residuals
r = ln(t / t_hat) at 1.5 (mild) and 3 (severe) IQR, the IQR floored at 0.01 so
that identical points do not make everything an outlier (docs/methods.md)."""

from __future__ import annotations

import numpy as np

IQR_FLOOR = 0.01
MILD_FENCE = 1.5
SEVERE_FENCE = 3.0


def log_residuals(y_s: np.ndarray, predicted_s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(np.asarray(y_s, float) / np.asarray(predicted_s, float))
    return np.where(np.asarray(predicted_s) > 0, r, np.nan)


def fences(r: np.ndarray) -> dict[str, float]:
    finite = r[np.isfinite(r)]
    if finite.size == 0:
        return {"q1": np.nan, "q3": np.nan, "iqr": np.nan, "low_severe": np.nan, "low_mild": np.nan,
                "high_mild": np.nan, "high_severe": np.nan}
    q1, q3 = np.quantile(finite, [0.25, 0.75])
    iqr = max(q3 - q1, IQR_FLOOR)
    return {"q1": float(q1), "q3": float(q3), "iqr": float(iqr),
            "low_severe": float(q1 - SEVERE_FENCE * iqr), "low_mild": float(q1 - MILD_FENCE * iqr),
            "high_mild": float(q3 + MILD_FENCE * iqr), "high_severe": float(q3 + SEVERE_FENCE * iqr)}


def classify(r: np.ndarray, f: dict[str, float]) -> np.ndarray:
    """Per point '' for an ordinary one, else low/high and mild/severe (NaN residuals are ordinary)."""
    r = np.asarray(r, float)
    with np.errstate(invalid="ignore"):
        return np.select([r < f["low_severe"], r < f["low_mild"], r > f["high_severe"], r > f["high_mild"]],
                         ["low severe", "low mild", "high severe", "high mild"], "")
