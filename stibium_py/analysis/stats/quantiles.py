"""Quantiles and binomial sums: scipy.special's."""

from __future__ import annotations

import numpy as np
from scipy import special


def norm_ppf(p: float) -> float:
    """The standard normal quantile."""
    return float(special.ndtri(p))


def t_ppf(p: float, df: float) -> float:
    """Student's t quantile, df > 0 (not necessarily whole)."""
    return float(special.stdtrit(df, p))


def binom_cdf(k: np.ndarray, n: int, p: float) -> np.ndarray:
    """P(X <= k) for X ~ Binomial(n, p), k whole numbers: 0 below 0, 1 from n."""
    k = np.asarray(k)
    return np.where(k < 0, 0.0, np.where(k >= n, 1.0, special.bdtr(np.clip(k, 0, n), n, p)))
