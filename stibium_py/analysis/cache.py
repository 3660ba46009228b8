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
             resident_before: np.ndarray, ceiling_bytes_per_s: float | None) -> list[list[str]]:
    """Reasons per point (an empty list: not a suspect)."""
    finite = r[np.isfinite(r)]
    med = float(np.median(finite)) if finite.size else np.nan
    mad = float(np.median(np.abs(finite - med))) if finite.size else np.nan
    threshold = med - MAD_K * MAD_SCALE * max(mad, 1e-9)
    out: list[list[str]] = []
    for k in range(len(y_s)):
        reasons = []
        if resident_before[k] == resident_before[k] and resident_before[k] > RESIDENT_THRESHOLD:
            reasons.append(f"resident: {resident_before[k]:.0%} of the file was in the page cache before the read")
        if ceiling_bytes_per_s and rate_bytes_per_s[k] > ceiling_bytes_per_s:
            reasons.append(f"physical: {rate_bytes_per_s[k] / 1e6:.0f} MB/s is above the ceiling of "
                           f"{ceiling_bytes_per_s / 1e6:.0f} MB/s")
        if np.isfinite(r[k]) and r[k] < threshold and y_s[k] < predicted_s[k] / 2:
            reasons.append(f"statistical: {np.exp(-r[k]):.1f}x faster than the fit, far below the other points")
        out.append(reasons)
    return out


PAGE_CACHE, FAST_OUTLIER = "page-cache suspect", "fast outlier"


def classify(reasons: list[list[str]], resident_before: np.ndarray) -> list[str | None]:
    """Per point: PAGE_CACHE, FAST_OUTLIER or None (not fast)."""
    out: list[str | None] = []
    for k, rs in enumerate(reasons):
        if not rs:
            out.append(None)
        elif resident_before[k] == resident_before[k] and resident_before[k] <= RESIDENT_THRESHOLD:
            out.append(FAST_OUTLIER)
        else:
            out.append(PAGE_CACHE)
    return out


def fast_outlier_note(resident_before: float) -> str:
    return f"not the page cache ({resident_before:.0%} resident): a device cache or burst"
