"""Whether a series moves: Kendall's tau and its p-value (scipy.stats), change points by binary segmentation
(ruptures), and Kendall's exact distribution at a count of pairs out of order (own: Sen's interval needs it for
a count, which no library surface gives)."""

from __future__ import annotations

import math

import numpy as np

from .imports import library


def kendall_tau(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b and its two-sided p-value (scipy.stats.kendalltau with its defaults: exact without ties
    for short series, else the normal approximation with the tie corrections); NaN for an empty or constant
    series."""
    stats = library("scipy.stats")
    x, y = np.asarray(x).ravel(), np.asarray(y).ravel()
    if x.size == 0 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan, math.nan
    result = stats.kendalltau(x, y)
    return float(result.statistic), float(result.pvalue)


def change_points(signal: np.ndarray, min_size: int, pen: float) -> list[int]:
    """Binary segmentation with the l1 cost, every index admissible: the ends of the segments, the signal's
    length last (ruptures.Binseg(model="l1", jump=1))."""
    ruptures = library("ruptures")
    signal = np.asarray(signal, dtype=float)
    if signal.ndim == 1:
        signal = signal.reshape(-1, 1)
    if max(min_size, 2) > signal.shape[0]:
        raise ValueError(f"a signal of {signal.shape[0]} points cannot hold a segment of {min_size}")
    return [int(b) for b in ruptures.Binseg(model="l1", min_size=min_size, jump=1).fit(signal).predict(pen=pen)]


def kendall_p_exact(n: int, c: int) -> float:
    """The two-sided exact p-value of c concordant pairs among n points without ties (Kendall 1970): the
    count of permutations with at most min(c, pairs - c) inversions, by the recurrence over n, doubled. Held
    to scipy.stats.kendalltau(method="exact") by tests/test_stats.py."""
    c = int(min(c, (n * (n - 1)) // 2 - c))
    if n <= 2:
        return 1.0
    if c == 0:
        prob = 2.0 / math.factorial(n) if n < 171 else 0.0
    elif c == 1:
        prob = 2.0 / math.factorial(n - 1) if n < 172 else 0.0
    elif 4 * c == n * (n - 1):
        prob = 1.0
    else:
        new = np.zeros(c + 1)
        new[0:2] = 1.0
        for j in range(3, n + 1):
            new = np.cumsum(new)
            if j <= c:
                new[j:] -= new[:c + 1 - j]
        prob = 2.0 * np.sum(new) / math.factorial(n)
    return float(np.clip(prob, 0, 1))
