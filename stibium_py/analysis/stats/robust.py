"""The robust lines of the named libraries, called here: Siegel's repeated medians (scipy.stats.siegelslopes) and
the Tukey-biweight line (statsmodels' RLM), each the references a files test's Theil-Sen line is held to."""

from __future__ import annotations

import numpy as np

from .imports import library


def siegel(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Siegel's repeated medians (slope, intercept): for each point the median slope to every point of another x,
    the median of those; the intercept median(y - b x) (scipy.stats.siegelslopes, method "hierarchical")."""
    stats = library("scipy.stats")
    result = stats.siegelslopes(np.asarray(y, dtype=float).ravel(), np.asarray(x, dtype=float).ravel(),
                                method="hierarchical")
    return float(result.slope), float(result.intercept)


def tukey_biweight_line(x: np.ndarray, y: np.ndarray, intercept: float, slope: float) -> tuple[float, float]:
    """(intercept, slope) of y = a + b x by statsmodels' RLM with Tukey's biweight and its defaults (iteratively
    reweighted least squares, the MAD scale, convergence on the deviance), started from (intercept, slope).
    Raises ValueError where the weights are not finite and ZeroDivisionError for two points (no residual degrees
    of freedom), as statsmodels does."""
    import warnings

    TukeyBiweight = library("statsmodels.robust.norms").TukeyBiweight
    RLM = library("statsmodels.robust.robust_linear_model").RLM
    ConvergenceWarning = library("statsmodels.tools.sm_exceptions").ConvergenceWarning
    # a scale of 0 is a weighted fit through every point, where the iterations end with that line: not a
    # failure to report (one filter, not catch_warnings, which is not safe in the summary's threads)
    warnings.filterwarnings("ignore", message="Estimated scale is 0.0", category=ConvergenceWarning)
    y = np.asarray(y, dtype=float)
    X = np.column_stack([np.ones(len(y)), np.asarray(x, dtype=float)])
    if X.shape[0] <= X.shape[1]:
        raise ZeroDivisionError("no residual degrees of freedom")
    with np.errstate(divide="ignore", invalid="ignore"):      # a line through every point: 0/0 ends the loop
        params = RLM(y, X, M=TukeyBiweight()).fit(start_params=np.array([intercept, slope], dtype=float)).params
    return float(params[0]), float(params[1])
