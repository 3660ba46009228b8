"""Fast reads, each with its reasons (docs/methods.md):
- statistical: r < median(r) - 5 * 1.4826 * MAD(r) and t < t_hat / 2;
- physical: the rate exceeds a ceiling (the plan's ceiling_bytes_per_s);
- resident: more than 1 % of the file's pages were in the page cache just before
  the read (mincore, reported by the helper).
Named for what the evidence says: a page-cache suspect where residency was above the threshold or
not measured; a fast outlier where the helper measured the file (nearly) absent from the page cache
just before the read, so the speed came from a device cache or a burst allowance, not the page cache."""

from __future__ import annotations

import numpy as np

MAD_SCALE = 1.4826
MAD_K = 5.0
RESIDENT_THRESHOLD = 0.01


def suspects(r: np.ndarray, y_s: np.ndarray, predicted_s: np.ndarray, rate_bytes_per_s: np.ndarray,
             resident_before: np.ndarray, ceiling_bytes_per_s: float | None) -> dict[int, list[str]]:
    """The fast points (their indexes) with their reasons; a point that is not fast is not listed."""
    finite = r[np.isfinite(r)]
    med = float(np.median(finite)) if finite.size else np.nan
    mad = float(np.median(np.abs(finite - med))) if finite.size else np.nan
    threshold = med - MAD_K * MAD_SCALE * max(mad, 1e-9)
    with np.errstate(invalid="ignore"):
        resident = resident_before > RESIDENT_THRESHOLD
        physical = (rate_bytes_per_s > ceiling_bytes_per_s) if ceiling_bytes_per_s else np.zeros(len(y_s), bool)
        statistical = np.isfinite(r) & (r < threshold) & (y_s < predicted_s / 2)
    out: dict[int, list[str]] = {}
    for k in np.flatnonzero(resident | physical | statistical):
        reasons = []
        if resident[k]:
            reasons.append(f"resident: {resident_before[k]:.0%} of the file was in the page cache before the read")
        if physical[k]:
            reasons.append(f"physical: {rate_bytes_per_s[k] / 1e6:.0f} MB/s is above the ceiling of "
                           f"{ceiling_bytes_per_s / 1e6:.0f} MB/s")
        if statistical[k]:
            reasons.append(f"statistical: {np.exp(-r[k]):.1f}x faster than the fit, far below the other points")
        out[int(k)] = reasons
    return out


PAGE_CACHE, FAST_OUTLIER, BELOW = "page-cache suspect", "fast outlier", "cache below the file system"


def classify(reasons: dict[int, list[str]], resident_before: np.ndarray,
             below: np.ndarray | None = None) -> np.ndarray:
    """Per point: PAGE_CACHE, FAST_OUTLIER, BELOW or '' (not fast). A fast point is a fast outlier where the
    file was measured (nearly) absent from the page cache just before, else a page-cache suspect; a point
    absent from the page cache that ran at memory speed (below: analysis/below.py) is served by a cache below
    the file system, fast by the statistics or not (where every read is, none stands out)."""
    out = np.full(len(resident_before), "", dtype=object)
    for k in reasons:
        absent = resident_before[k] == resident_before[k] and resident_before[k] <= RESIDENT_THRESHOLD
        out[k] = FAST_OUTLIER if absent else PAGE_CACHE
    if below is not None:
        out[below] = BELOW
    return out


def fast_outlier_note(resident_before: float) -> str:
    return f"not the page cache ({resident_before:.0%} resident): a device cache or burst"
