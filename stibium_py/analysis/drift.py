"""Drift over the run (throttling, background work, an SLC cache running out).

Trend: Mann-Kendall on the log-residuals in run order (Kendall's tau of index and r,
stats.kendall_tau: scipy's), flagged when p < 0.01 and the drift over the run is at least 3 %; the
drift is the Theil-Sen slope of r against the run order. Above 1000 points both read
the medians of consecutive blocks, as the change points do (a million points would
cost seconds; a thousand block medians show the same trend).
Where: change points by binary segmentation with the l1 cost (stats.change_points: ruptures', what
ruptures.Binseg(model="l1", min_size=10, jump=1) computes) on the
MAD-standardised residuals clipped at +-5, penalty 4 ln n (docs/methods.md). Binseg
costs O(n^2) with the l1 cost, so above 1000 points it runs on the medians of
consecutive blocks (at most 1000 of them), and each change is placed at the start
of its block."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .stats import change_points as segment_ends, kendall_tau
from .regression import theil_sen

P_THRESHOLD = 0.01
MIN_DRIFT = 0.03
MIN_SIZE = 10
CLIP = 5.0
MAX_SEGMENTED_POINTS = 1000


def blocks(r: np.ndarray) -> tuple[np.ndarray, int]:
    """The series the drift tests read, and how many measurements each of its points stands for: r
    itself up to MAX_SEGMENTED_POINTS, else the medians of consecutive blocks (at most that many)."""
    n = len(r)
    block = max(1, -(-n // MAX_SEGMENTED_POINTS))
    if block == 1:
        return r, 1
    usable = n // block * block
    return np.median(r[:usable].reshape(-1, block), axis=1), block


def trend(r: np.ndarray) -> dict[str, Any]:
    """Mann-Kendall on the series of blocks(r); the drift from its Theil-Sen slope, over the whole run."""
    r = r[np.isfinite(r)]
    n = len(r)
    if n < 8:
        return {"detected": False, "p_value": None, "drift_fraction": 0.0, "n": n, "method": "mann-kendall"}
    series, block = blocks(r)
    idx = np.arange(len(series)) * block + (block - 1) / 2          # each block at its middle measurement
    _, p = kendall_tau(idx, series)
    slope = theil_sen(idx.astype(float), series).slope_s_per_byte  # the slope of r against the run order
    # time grows by exp(slope * n) over the run, so the rate changes by its inverse
    drift = math.exp(-slope * (n - 1)) - 1
    return {"detected": bool(p < P_THRESHOLD and abs(drift) >= MIN_DRIFT), "p_value": p,
            "drift_fraction": float(drift), "n": n, "method": "mann-kendall (kendalltau of run order and ln residual)"}


def change_points(r: np.ndarray) -> list[int]:
    """Indices (into r) where a new segment starts."""
    n = len(r)
    if n < 2 * MIN_SIZE:
        return []
    series, block = blocks(r)
    med = np.median(series)
    mad = np.median(np.abs(series - med)) * 1.4826
    z = np.clip((series - med) / max(mad, 1e-9), -CLIP, CLIP)
    bkps = segment_ends(z, MIN_SIZE, pen=4 * math.log(len(series)))
    return [b * block for b in bkps if b * block < n]
