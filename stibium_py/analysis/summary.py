"""The summary of a run: per files test and op the rate and latency with
intervals, references, outliers, cache suspects, drift and size bands; per
pattern test the throughput points and the knee; warnings with what to do.
Pure: measurement rows in, a JSON-ready dict out (its format: docs/run-directory.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from . import cache, drift, outliers, patterns, regression
from .rates import valid

BURST_FACTOR = 1.5
NONLINEAR_RESAMPLES = 500


@dataclass(frozen=True)
class Settings:
    resamples: int = 2000
    seed: int = 12345
    confidence: float = 0.95
    ceiling_bytes_per_s: float | None = None


def _arr(rows: list[dict[str, Any]], key: str) -> np.ndarray:
    return np.array([np.nan if r.get(key) is None else r[key] for r in rows], float)


def _point(row: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return {"seq": row["seq"], "file": row["file"], "size_bytes": row["size_bytes"], "seconds": row["seconds"],
            "rate_bytes_per_s": row["bytes"] / row["seconds"] if row["seconds"] else None,
            "started_s": row["started_s"], **extra}


def _size_bands(x: np.ndarray, rate: np.ndarray, fitted_rate: float, s: Settings) -> list[dict[str, Any]]:
    bands = []
    for size in np.unique(x):
        vals = rate[x == size]
        est = patterns.median_estimate(vals, s.resamples, s.seed, s.confidence, "rate")
        burst = bool(math.isfinite(fitted_rate) and est.low > BURST_FACTOR * fitted_rate)
        bands.append({"size_bytes": int(size), "median_rate_bytes_per_s": est.as_dict(), "burst": burst})
    return bands


def _nonlinearity(x: np.ndarray, y: np.ndarray, s: Settings) -> dict[str, Any]:
    sizes = np.unique(x)
    if len(sizes) < 4:
        return {"detected": False, "reason": "fewer than four sizes"}
    cut = sizes[len(sizes) // 2]
    lower = regression.fit_rate(x[x < cut], y[x < cut], NONLINEAR_RESAMPLES, s.seed, s.confidence)
    upper = regression.fit_rate(x[x >= cut], y[x >= cut], NONLINEAR_RESAMPLES, s.seed, s.confidence)
    a, b = lower.rate_bytes_per_s, upper.rate_bytes_per_s
    apart = a.high < b.low or b.high < a.low
    return {"detected": bool(apart), "split_bytes": int(cut), "lower_rate_bytes_per_s": a.as_dict(),
            "upper_rate_bytes_per_s": b.as_dict()}


def _segment_rate(rows: list[dict[str, Any]], fallback: float) -> float:
    """The Theil-Sen rate of one stretch of the run (its own line); where it has one size only, the
    fitted rate scaled by the stretch's median residual."""
    x = _arr(rows, "size_bytes")
    y = _arr(rows, "seconds")
    if len(np.unique(x)) >= 2:
        slope = regression.theil_sen(x, y).slope_s_per_byte
        if slope > 0:
            return 1.0 / slope
    return fallback


def _drift(rows: list[dict[str, Any]], r: np.ndarray, fit: regression.Fit) -> dict[str, Any]:
    order = np.argsort([row["seq"] for row in rows])
    r_run = r[order]
    ok = np.isfinite(r_run)
    result = drift.trend(r_run)
    idx_ok = np.flatnonzero(ok)
    cps = drift.change_points(r_run[ok])
    bounds = [0] + cps + [len(idx_ok)]
    rate = fit.rate_bytes_per_s.estimate
    segments = []
    for lo, hi in zip(bounds, bounds[1:]):
        # a change point's place is uncertain by about one measurement: each stretch's rate leaves out the
        # measurement next to a change on either side (while four remain), so that a point of the other
        # stretch cannot tilt its line
        trim_lo = 1 if lo > 0 and hi - lo >= 6 else 0
        trim_hi = 1 if hi < len(idx_ok) and hi - lo - trim_lo >= 5 else 0
        seg_rows = [rows[order[k]] for k in idx_ok[lo + trim_lo:hi - trim_hi]]
        segments.append(_segment_rate(seg_rows, rate / math.exp(float(np.median(r_run[ok][lo:hi])))))
    changes = []
    for i, cp in enumerate(cps):
        first = rows[order[idx_ok[cp]]]
        changes.append({"index": int(cp), "seq": first["seq"], "started_s": first["started_s"],
                        "rate_before_bytes_per_s": segments[i], "rate_after_bytes_per_s": segments[i + 1],
                        "step_fraction": segments[i + 1] / segments[i] - 1,
                        "method": "theil-sen on each stretch between change points"})
    result["change_points"] = changes
    return result


def files_entry(name: str, op: str, rows: list[dict[str, Any]], s: Settings) -> dict[str, Any]:
    x = _arr(rows, "size_bytes")
    y = _arr(rows, "seconds")
    moved = _arr(rows, "bytes")
    rate = moved / y
    fit = regression.fit_rate(x, y, s.resamples, s.seed, s.confidence)
    predicted = fit.line.predict(x)
    r = outliers.log_residuals(y, predicted)
    f = outliers.fences(r)
    classes = outliers.classify(r, f)
    entry: dict[str, Any] = {
        "name": name, "op": op, "kind": "files", "n": len(rows),
        "rate_bytes_per_s": fit.rate_bytes_per_s.as_dict(), "latency_s": fit.latency_s.as_dict(),
        "slope_s_per_byte": fit.line.slope_s_per_byte if math.isfinite(fit.line.slope_s_per_byte) else None,
        "references": {"ols": regression.ols(x, y, s.confidence) if len(np.unique(x)) > 1 else None,
                       "biweight": regression.biweight(x, y, fit.line) if len(np.unique(x)) > 1 else None,
                       "siegel": _siegel(x, y)},
        "latency_smallest_size_s": float(np.median(y[x == x.min()])) if len(x) else None,
        "fences": f,
        "outliers": [_point(row, {"class": c, "log_residual": float(r[k])})
                     for k, (row, c) in enumerate(zip(rows, classes)) if c],
        "cache_suspects": [],
        "size_bands": _size_bands(x, rate, fit.rate_bytes_per_s.estimate, s),
        "nonlinearity": _nonlinearity(x, y, s),
        "drift": _drift(rows, r, fit) if math.isfinite(fit.line.slope_s_per_byte) else {"detected": False},
    }
    entry["fast_outliers"] = []
    if op == "read":
        resident = _arr(rows, "resident_before")
        reasons = cache.suspects(r, y, predicted, rate, resident, s.ceiling_bytes_per_s)
        kinds = cache.classify(reasons, resident)
        entry["cache_suspects"] = [_point(row, {"reasons": rs}) for row, rs, kind in zip(rows, reasons, kinds)
                                   if kind == cache.PAGE_CACHE]
        entry["fast_outliers"] = [_point(row, {"reasons": rs + [cache.fast_outlier_note(resident[k])]})
                                  for k, (row, rs, kind) in enumerate(zip(rows, reasons, kinds))
                                  if kind == cache.FAST_OUTLIER]
        flagged = np.array([kind == cache.PAGE_CACHE for kind in kinds])
        if flagged.any() and (~flagged).sum() >= 3 and len(np.unique(x[~flagged])) > 1:
            clean = regression.fit_rate(x[~flagged], y[~flagged], s.resamples, s.seed, s.confidence)
            entry["rate_without_suspects_bytes_per_s"] = clean.rate_bytes_per_s.as_dict()
            entry["latency_without_suspects_s"] = clean.latency_s.as_dict()
    return entry


def _siegel(x: np.ndarray, y: np.ndarray) -> dict[str, Any] | None:
    if len(np.unique(x)) < 2 or len(x) > 5000:
        return None
    res = stats.siegelslopes(y, x)
    return {"slope_s_per_byte": float(res.slope), "intercept_s": float(res.intercept),
            "rate_bytes_per_s": 1 / res.slope if res.slope > 0 else None, "method": "siegel repeated medians (scipy)"}


def pattern_entry(name: str, op: str, rows: list[dict[str, Any]], s: Settings) -> dict[str, Any]:
    pts = patterns.points(rows, s.resamples, s.seed, s.confidence)
    knees: dict[str, int | None] = {}
    for access in sorted({p["access"] for p in pts}):
        # strided access: the knee over all strides together (the heatmap shows them apart)
        sel = [p for p in pts if p["access"] == access and (p["stride_bytes"] == 0 or access == "strided")]
        by_g: dict[int, list[float]] = {}
        for p in sel:
            # the knee is a property of the calls the device saw: their real size, not the plan's
            by_g.setdefault(p.get("call_bytes") or p["granularity_bytes"], []).append(
                p["throughput_bytes_per_s"]["estimate"])
        knees[access] = patterns.knee(list(by_g), [float(np.median(v)) for v in by_g.values()])
    first = "sequential" if "sequential" in knees else next(iter(knees), None)
    return {"name": name, "op": op, "kind": "pattern", "n": len(rows), "rate_bytes_per_s": None, "latency_s": None,
            "outliers": [], "cache_suspects": [], "fast_outliers": [], "drift": {"detected": False},
            "points": pts, "knee_bytes": knees.get(first) if first else None, "knees_bytes": knees}


def warnings(entries: list[dict[str, Any]], rows: list[dict[str, Any]], facts: dict[str, Any]) -> list[dict[str, str]]:
    out = []

    def add(level: str, test: str, message: str, todo: str) -> None:
        out.append({"level": level, "test": test, "message": message, "what_to_do": todo})

    for e in entries:
        label = f"{e['name']} ({e['op']})"
        if e["outliers"]:
            add("info", label, f"{len(e['outliers'])} of {e['n']} points are outliers (flagged, kept in the fit)",
                "look at them in the residual plot; many severe ones mean background activity: repeat the run on a "
                "quiet machine")
        if e["cache_suspects"]:
            add("warning", label, f"{len(e['cache_suspects'])} reads look served from the page cache",
                "use between: evict (or drop-caches) and the direct engine; the rate without them is given beside")
        if e.get("fast_outliers"):
            add("info", label, f"{len(e['fast_outliers'])} reads were fast outliers: not the page cache (measured "
                "absent from it just before), a device cache or burst",
                "they are what the device did and stay in the fit; see the rate per size (size bands)")
        if e["drift"].get("detected"):
            add("warning", label, f"the rate drifted by {e['drift']['drift_fraction']:+.0%} over the run "
                f"({len(e['drift'].get('change_points', []))} change points)",
                "throttling or background work (backups, indexing): see rate against elapsed time; repeat or cool down")
        if e.get("nonlinearity", {}).get("detected"):
            add("warning", label, "small and large files give different rates: one line does not describe this device",
                "read the rate per size (size bands) rather than the single fitted rate")
        rate = e.get("rate_bytes_per_s") or {}
        if e["kind"] == "files" and rate.get("estimate") is not None and rate.get("low") is None \
                and "no interval" in (rate.get("method") or ""):
            add("warning", label, "no interval for the rate: " + rate["method"].split("no interval: ")[-1],
                "set repeats: 3 or more in the plan")
        slope = e.get("slope_s_per_byte")
        if e["kind"] == "files" and slope is not None and not slope > 0:
            add("warning", label, "time does not grow with size here, so no transfer rate can be fitted",
                "use larger sizes (at least a few MB): these files are dominated by latency")
        lat = e.get("latency_s")
        if lat and lat.get("estimate") is not None and lat["estimate"] < 0:
            add("info", label, f"the fitted latency is negative ({lat['estimate'] * 1e3:.3f} ms)",
                "reported as it is; the latency from the smallest sizes is given beside")
    fs_cached = [r for r in rows if r.get("direct_honoured") is False and not r.get("cached_reason")]
    if fs_cached or any(r.get("cached_reason") == FS_CACHES_REASON for r in rows):
        add("warning", "all", "the file system accepted direct I/O but caches anyway (tmpfs, FUSE)",
            "these are memory speeds, not the device's: choose a target on a disk-backed file system")
    for label, count, total, reason in _not_honoured(rows):
        add("warning", label, f"{count} of {total} direct measurements went through the page cache: {reason}",
            "these are not uncached numbers; on macOS write requests of at least 16 KiB at offsets aligned to the "
            "kernel page (16 KiB on Apple Silicon) bypass the cache")
    for label, count, largest in _split_calls(rows):
        add("info", label, f"{count} measurements moved each request in more than one call (the largest "
            f"{largest:,} bytes), smaller than the granularity the plan names",
            "the platform's largest single transfer (or the engine) splits larger requests; the knee uses the real "
            "call size")
    engines = {r["engine"] for r in rows}
    if "foundation" in engines and facts.get("platform") == "linux":
        add("info", "all", "the foundation engine ran on GNUstep Base, whose implementation is not Apple's",
            "compare foundation numbers only with other GNUstep runs; use direct or buffered across platforms")
    return out


FS_CACHES_REASON = "this file system caches uncached I/O anyway"


def _by_test(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(f"{r['test']} ({r['op']})", []).append(r)
    return groups


def _not_honoured(rows: list[dict[str, Any]]) -> list[tuple[str, int, int, str]]:
    """Per test and op: direct measurements the platform sent through the page cache, by its rules for the
    requests' sizes and offsets (the helper names the reason)."""
    out = []
    for label, rs in _by_test([r for r in rows if r.get("engine") == "direct"]).items():
        cached = [r for r in rs if r.get("direct_honoured") is False and r.get("cached_reason")
                  and r["cached_reason"] != FS_CACHES_REASON]
        if cached:
            out.append((label, len(cached), len(rs), cached[0]["cached_reason"]))
    return out


def _split_calls(rows: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """Per test and op: measurements whose requests took more calls than one each (plus the buffered tail)."""
    out = []
    for label, rs in _by_test(rows).items():
        split = [r for r in rs if r.get("syscalls") is not None and r.get("requests")
                 and r["syscalls"] > r["requests"] + (1 if r.get("tail_bytes_buffered") else 0)]
        if split:
            out.append((label, len(split), max(r["largest_syscall_bytes"] or 0 for r in split)))
    return out


def summarize(rows: list[dict[str, Any]], s: Settings, facts: dict[str, Any] | None = None,
              damaged_rows: int = 0) -> dict[str, Any]:
    good = valid(rows)
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in good:
        groups.setdefault((r["test"], r["op"], r["kind"]), []).append(r)
    order = {}
    for r in rows:
        order.setdefault((r["test"], r["op"]), r["seq"])
    entries = []
    for (name, op, kind), rs in sorted(groups.items(), key=lambda kv: order[kv[0][:2]]):
        entries.append(files_entry(name, op, rs, s) if kind == "files" else pattern_entry(name, op, rs, s))
    result = {
        "format": "stibium-summary/1",
        "settings": {"resamples": s.resamples, "seed": s.seed, "confidence": s.confidence,
                     "ceiling_bytes_per_s": s.ceiling_bytes_per_s},
        "measurements": len(rows), "failed_measurements": len(rows) - len(good), "damaged_rows": damaged_rows,
        "tests": entries,
    }
    result["warnings"] = warnings(entries, good, facts or {})
    if damaged_rows:
        result["warnings"].append({"level": "warning", "test": "all",
                                   "message": f"{damaged_rows} damaged rows of measurements.csv were skipped",
                                   "what_to_do": "the report uses the rows that are whole"})
    return result
