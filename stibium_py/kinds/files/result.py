"""A files test and op: the rate and latency of a Theil-Sen line of time against size with intervals,
references (least squares, biweight, Siegel), outliers, page-cache suspects and fast outliers, rate per
size (size bands), nonlinearity and drift (docs/methods.md). Pure: measurements in, a `FilesResult` out.
The result carries what the views draw (each measurement with its residual and its classes), so no
view recomputes anything."""

from __future__ import annotations

import functools
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np

from ...rundir.table import Table
from ...analysis import below, cache, drift, outliers, rates, regression
from ...analysis.estimate import Estimate, median_estimate
from ...analysis.stats import siegel
from ...analysis.settings import Settings

BURST_FACTOR = 1.5
NONLINEAR_RESAMPLES = 500


def column(rows: Table, name: str) -> np.ndarray:
    """One column of many measurements as floats (missing is NaN)."""
    return rows.col(name).astype(float)


@dataclass(frozen=True)
class References:
    """The reference lines beside Theil-Sen (regression.ReferenceLine), each None where it is not computed
    (one size; Siegel above 5000 points; biweight above 20 000, or where least squares agrees with Theil-Sen)."""

    ols: regression.ReferenceLine | None
    biweight: regression.ReferenceLine | None
    siegel: regression.ReferenceLine | None

    def to_json(self) -> dict[str, Any]:
        return {name: line.to_json() if line is not None else None
                for name, line in (("ols", self.ols), ("biweight", self.biweight), ("siegel", self.siegel))}


@dataclass(frozen=True)
class SizeBand:
    """The rate of one size: the median over its files with its interval; a burst where the whole interval
    lies above BURST_FACTOR times the fitted rate."""

    size_bytes: int
    median_rate: Estimate
    burst: bool

    def to_json(self) -> dict[str, Any]:
        return {"size_bytes": self.size_bytes, "median_rate_bytes_per_s": self.median_rate.as_dict(),
                "burst": self.burst}


@dataclass(frozen=True)
class Nonlinearity:
    """Small and large files against each other: the Theil-Sen rates below and above the middle size, and
    whether their intervals are apart. With fewer than four sizes, not tested (reason)."""

    detected: bool
    reason: str | None = None
    split_bytes: int | None = None
    lower_rate: Estimate | None = None
    upper_rate: Estimate | None = None

    def to_json(self) -> dict[str, Any]:
        if self.lower_rate is None or self.upper_rate is None:
            return {"detected": self.detected, "reason": self.reason}
        return {"detected": self.detected, "split_bytes": self.split_bytes,
                "lower_rate_bytes_per_s": self.lower_rate.as_dict(), "upper_rate_bytes_per_s": self.upper_rate.as_dict()}


@dataclass(frozen=True)
class ChangePoint:
    """Where the rate changed during the run, with the Theil-Sen rate of the stretch before and after."""

    index: int
    seq: int
    started_s: float
    rate_before_bytes_per_s: float
    rate_after_bytes_per_s: float
    step_fraction: float
    method: str = "theil-sen on each stretch between change points"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Drift:
    """Drift over the run (drift.py): the trend of the residuals in run order and the change points.
    `fitted` False where there is no line to take residuals from."""

    detected: bool
    fitted: bool = True
    p_value: float | None = None
    drift_fraction: float = 0.0
    n: int = 0
    method: str = ""
    change_points: tuple[ChangePoint, ...] = ()

    def to_json(self) -> dict[str, Any]:
        if not self.fitted:
            return {"detected": False}
        return {"detected": self.detected, "p_value": self.p_value, "drift_fraction": self.drift_fraction,
                "n": self.n, "method": self.method, "change_points": [c.to_json() for c in self.change_points]}


@dataclass(frozen=True)
class FilesResult:
    name: str
    op: str
    measurements: Table                       # the valid measurements of this test and op, in file order
    fit: regression.Fit
    log_residuals: np.ndarray                 # ln(t / fitted t), per measurement
    fences: outliers.Fences
    outlier_class: np.ndarray                 # "" or low/high mild/severe, per measurement
    cache_kind: np.ndarray                    # cache.PAGE_CACHE, FAST_OUTLIER, BELOW or "", per measurement
    cache_reasons: dict[int, list[str]]       # why, for each fast measurement
    references: References
    size_bands: list[SizeBand]
    nonlinearity: Nonlinearity
    drift: Drift
    without_suspects: regression.Fit | None   # the fit without the page-cache suspects, where there are some
    latency_smallest_size_s: float | None     # the median time of the smallest size: what one small file costs
    memory_shares: np.ndarray                 # reads: each one's rate as a share of memory's (below.py), NaN unknown
    kind: str = "files"

    @property
    def n(self) -> int:
        return len(self.measurements)

    @property
    def rate(self) -> Estimate:
        return self.fit.rate_bytes_per_s

    @property
    def latency(self) -> Estimate:
        return self.fit.latency_s

    @property
    def slope_s_per_byte(self) -> float | None:
        s = self.fit.line.slope_s_per_byte
        return s if math.isfinite(s) else None

    def flagged(self, which: str) -> list[int]:
        """Indexes of the measurements of one class: 'outlier', or a cache kind (a copy: the caller's to keep)."""
        return list(self._classes.get(which, ()))

    @functools.cached_property
    def _classes(self) -> dict[str, list[int]]:
        """The indexes of every class, found in one pass over the measurements (the views and the summary ask
        for them some 20 times a result, each a pass over every measurement when compared one by one)."""
        out: dict[str, list[int]] = {"outlier": np.flatnonzero(self.outlier_class != "").tolist()}
        fast = np.flatnonzero(self.cache_kind != "")
        kinds = self.cache_kind[fast]
        for kind in set(kinds.tolist()):
            out[str(kind)] = fast[kinds == kind].tolist()
        return out

    @property
    def outliers(self) -> list[int]:
        return self.flagged("outlier")

    @property
    def cache_suspects(self) -> list[int]:
        return self.flagged(cache.PAGE_CACHE)

    @property
    def fast_outliers(self) -> list[int]:
        return self.flagged(cache.FAST_OUTLIER)

    @property
    def below_cache(self) -> list[int]:
        return self.flagged(cache.BELOW)

    @property
    def flagged_any(self) -> list[int]:
        """Indexes of the measurements flagged in any way (an outlier can also be a cache suspect)."""
        return np.flatnonzero((self.outlier_class != "") | (self.cache_kind != "")).tolist()

    def reasons(self, k: int) -> list[str]:
        """Why measurement k is fast (a fast outlier also says why it is not the page cache)."""
        rs = list(self.cache_reasons.get(k, []))
        if self.cache_kind[k] == cache.FAST_OUTLIER:
            rs.append(cache.fast_outlier_note(self.measurements.value(k, "resident_before") or 0.0))
        return rs

    def _points(self, ks: list[int], extras: Callable[[int], dict[str, Any]]) -> list[dict[str, Any]]:
        """The summary's record of measurements ks (column by column: a million-row run has tens of thousands)."""
        rows = self.measurements.take(np.asarray(ks, dtype=np.int64))
        cols = [rows.values(c) for c in ("seq", "file", "size_bytes", "seconds", "bytes", "started_s")]
        return [{"seq": seq, "file": file, "size_bytes": size, "seconds": seconds, "rate_bytes_per_s": nbytes / seconds,
                 "started_s": started, **extras(k)} for k, seq, file, size, seconds, nbytes, started in zip(ks, *cols)]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name, "op": self.op, "kind": "files", "n": self.n,
            "rate_bytes_per_s": self.rate.as_dict(), "latency_s": self.latency.as_dict(),
            "slope_s_per_byte": self.slope_s_per_byte, "references": self.references.to_json(),
            "latency_smallest_size_s": self.latency_smallest_size_s,
            "fences": self.fences.to_json(),
            "outliers": self._points(self.outliers, lambda k: {"class": self.outlier_class[k],
                                                                "log_residual": float(self.log_residuals[k])}),
            "cache_suspects": self._points(self.cache_suspects, lambda k: {"reasons": self.reasons(k)}),
            "size_bands": [b.to_json() for b in self.size_bands], "nonlinearity": self.nonlinearity.to_json(),
            "drift": self.drift.to_json(),
            "fast_outliers": self._points(self.fast_outliers, lambda k: {"reasons": self.reasons(k)}),
            "below_cache": self._points(self.below_cache, lambda k: {"reasons": self.reasons(k)}),
        }
        if self.without_suspects is not None:
            out["rate_without_suspects_bytes_per_s"] = self.without_suspects.rate_bytes_per_s.as_dict()
            out["latency_without_suspects_s"] = self.without_suspects.latency_s.as_dict()
        return out


INPUT_COLUMNS = ("size_bytes", "seconds", "bytes", "resident_before", "seq", "started_s")


def files_inputs(rows: Table, shares: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The columns a files test's numbers are computed from, as floats: a few arrays, which is what a
    worker process is sent; memory_share: each read's rate as a share of memory's (below.py), NaN unknown."""
    return {**{c: column(rows, c) for c in INPUT_COLUMNS},
            "memory_share": shares if shares is not None else np.full(len(rows), np.nan)}


def files_result(name: str, op: str, rows: Table, s: Settings,
                 ceiling_bytes_per_s: float | None = None) -> FilesResult:
    return FilesResult(name=name, op=op, measurements=rows,
                       **files_numbers(op, files_inputs(rows), s, ceiling_bytes_per_s))


def files_numbers(op: str, cols: dict[str, np.ndarray], s: Settings,
                  ceiling_bytes_per_s: float | None = None) -> dict[str, Any]:
    """Everything a FilesResult holds but its name and its measurements, from files_inputs. The bootstrap
    fits run two at a time (numpy leaves the interpreter lock in their heavy parts): the same numbers as
    one after the other, sooner on a machine with two cores or more."""
    x = cols["size_bytes"]
    y = cols["seconds"]
    rate = cols["bytes"] / y
    point, nonlinearity = _together(lambda: rates.line_rate(x, y, s.resamples, s.seed, s.confidence),
                                    lambda: _nonlinearity(x, y, s))
    fit = point.fit
    predicted = fit.line.predict(x)
    r = outliers.log_residuals(y, predicted)
    f = outliers.fences(r)
    several_sizes = len(np.unique(x)) > 1
    kinds = np.full(len(x), "", dtype=object)
    reasons: dict[int, list[str]] = {}
    without_suspects: Callable[[], regression.Fit | None] = lambda: None  # noqa: E731
    if op == "read":
        resident = cols["resident_before"]
        reasons = cache.suspects(r, y, predicted, rate, resident, ceiling_bytes_per_s)
        at_memory_speed = below.flagged(cols["memory_share"], resident)
        for k in np.flatnonzero(at_memory_speed):
            reasons.setdefault(int(k), []).append(below.reason(float(cols["memory_share"][k])))
        kinds = cache.classify(reasons, resident, at_memory_speed)
        flagged = kinds == cache.PAGE_CACHE
        if flagged.any() and (~flagged).sum() >= 3 and len(np.unique(x[~flagged])) > 1:
            without_suspects = lambda: regression.fit_rate(  # noqa: E731
                x[~flagged], y[~flagged], s.resamples, s.seed, s.confidence)
    found_drift = (lambda: _drift(cols, r, fit)) if math.isfinite(fit.line.slope_s_per_byte) \
        else (lambda: Drift(detected=False, fitted=False))
    without, drift_result = _together(without_suspects, found_drift)
    return dict(
        fit=fit, log_residuals=r, fences=f,
        outlier_class=outliers.classify(r, f), cache_kind=kinds, cache_reasons=reasons,
        references=_references(x, y, fit, several_sizes, s.confidence),
        size_bands=_size_bands(x, rate, fit.rate_bytes_per_s.estimate, s),
        nonlinearity=nonlinearity, drift=drift_result, without_suspects=without,
        latency_smallest_size_s=float(np.median(y[x == x.min()])) if len(x) else None,
        memory_shares=cols["memory_share"])


def _references(x: np.ndarray, y: np.ndarray, fit: regression.Fit, several_sizes: bool,
                confidence: float) -> References:
    """The reference lines beside Theil-Sen. The biweight only where least squares and Theil-Sen disagree (the
    least-squares rate outside Theil-Sen's interval, or Theil-Sen without one): there a third line says which of
    the two the data follow; where they agree it adds nothing, and fitting it imports statsmodels (with pandas,
    0.3-1 s of a quick run's report: docs/performance.md)."""
    ols = regression.ols(x, y, confidence) if several_sizes else None
    rate = fit.rate_bytes_per_s
    agree = (ols is not None and ols.rate is not None and math.isfinite(rate.low) and math.isfinite(rate.high)
             and rate.low <= ols.rate.estimate <= rate.high)
    return References(ols, regression.biweight(x, y, fit.line) if several_sizes and not agree else None,
                      _siegel(x, y))


def _together(first: Callable[[], Any], second: Callable[[], Any]) -> tuple[Any, Any]:
    """first() and second() at the same time, on a thread of their own for the second."""
    with ThreadPoolExecutor(1) as side:
        later = side.submit(second)
        return first(), later.result()


def _size_bands(x: np.ndarray, rate: np.ndarray, fitted_rate: float, s: Settings) -> list[SizeBand]:
    bands = []
    for size in np.unique(x):
        vals = rate[x == size]
        est = median_estimate(vals, s.resamples, s.seed, s.confidence, "rate")
        burst = bool(math.isfinite(fitted_rate) and est.low > BURST_FACTOR * fitted_rate)
        bands.append(SizeBand(int(size), est, burst))
    return bands


def _nonlinearity(x: np.ndarray, y: np.ndarray, s: Settings) -> Nonlinearity:
    sizes = np.unique(x)
    if len(sizes) < 4:
        return Nonlinearity(False, "fewer than four sizes")
    cut = sizes[len(sizes) // 2]
    lower = regression.fit_rate(x[x < cut], y[x < cut], NONLINEAR_RESAMPLES, s.seed, s.confidence, False)
    upper = regression.fit_rate(x[x >= cut], y[x >= cut], NONLINEAR_RESAMPLES, s.seed, s.confidence, False)
    a, b = lower.rate_bytes_per_s, upper.rate_bytes_per_s
    apart = a.high < b.low or b.high < a.low
    return Nonlinearity(bool(apart), None, int(cut), a, b)


def _segment_rate(x: np.ndarray, y: np.ndarray, fallback: float) -> float:
    """The Theil-Sen rate of one stretch of the run (its own line); where it has one size only, the
    fitted rate scaled by the stretch's median residual."""
    if len(np.unique(x)) >= 2:
        slope = regression.theil_sen(x, y).slope_s_per_byte
        if slope > 0:
            return 1.0 / slope
    return fallback


def _drift(cols: dict[str, np.ndarray], r: np.ndarray, fit: regression.Fit) -> Drift:
    order = np.argsort(cols["seq"], kind="stable")
    r_run = r[order]
    ok = np.isfinite(r_run)
    trend = drift.trend(r_run)
    idx_ok = np.flatnonzero(ok)
    cps = drift.change_points(r_run[ok])
    if not cps:
        return Drift(**trend)
    bounds = [0] + cps + [len(idx_ok)]
    rate = fit.rate_bytes_per_s.estimate
    segments = []
    for lo, hi in zip(bounds, bounds[1:]):
        # a change point's place is uncertain by about one measurement: each stretch's rate leaves out the
        # measurement next to a change on either side (while four remain), so that a point of the other
        # stretch cannot tilt its line
        trim_lo = 1 if lo > 0 and hi - lo >= 6 else 0
        trim_hi = 1 if hi < len(idx_ok) and hi - lo - trim_lo >= 5 else 0
        seg = order[idx_ok[lo + trim_lo:hi - trim_hi]]
        segments.append(_segment_rate(cols["size_bytes"][seg], cols["seconds"][seg],
                                      rate / math.exp(float(np.median(r_run[ok][lo:hi])))))
    changes = []
    for i, cp in enumerate(cps):
        first = int(order[idx_ok[cp]])
        changes.append(ChangePoint(int(cp), int(cols["seq"][first]), float(cols["started_s"][first]), segments[i],
                                   segments[i + 1], segments[i + 1] / segments[i] - 1))
    return Drift(**trend, change_points=tuple(changes))


def _siegel(x: np.ndarray, y: np.ndarray) -> regression.ReferenceLine | None:
    if len(np.unique(x)) < 2 or len(x) > 5000:
        return None
    slope, intercept = siegel(x, y)
    return regression.ReferenceLine(slope, intercept, "siegel repeated medians",
                                    latency_given=False)
