"""Per-request latency distributions: the helper's histogram of every request of a measurement (the
column lat_hist_ns, 'lo-hi:count' per bin [lo, hi) in ns), read back, merged over trials and turned into
the cumulative distribution the report draws. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np


class HistogramError(ValueError):
    """A histogram text that does not parse; the message is one line."""


@dataclass(frozen=True)
class LatencyHistogram:
    lo_ns: np.ndarray        # bin lower bounds, ascending, int64
    hi_ns: np.ndarray        # bin upper bounds (exclusive)
    counts: np.ndarray       # requests per bin

    @classmethod
    def parse(cls, text: str) -> "LatencyHistogram":
        lo, hi, counts = [], [], []
        for item in text.split():
            try:
                bounds, count = item.split(":")
                a, b = bounds.split("-")
                lo.append(int(a))
                hi.append(int(b))
                counts.append(int(count))
            except ValueError:
                raise HistogramError(f"latency histogram bin {item!r} is not 'lo-hi:count'") from None
            if not 0 <= lo[-1] < hi[-1] or counts[-1] < 0:     # a stranger's file: the helper writes none such
                raise HistogramError(f"latency histogram bin {item!r} is not 0 <= lo < hi with a count of 0 or more")
        return cls(np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64), np.array(counts, dtype=np.int64))

    @classmethod
    def merged(cls, texts: Iterable[str | None]) -> "LatencyHistogram | None":
        """The requests of several measurements in one histogram (their bins are the helper's fixed ones,
        so equal bounds are the same bin); None where none of them has a histogram."""
        parts = [cls.parse(t) for t in texts if t]
        if not parts:
            return None
        lo = np.concatenate([p.lo_ns for p in parts])
        hi = np.concatenate([p.hi_ns for p in parts])
        counts = np.concatenate([p.counts for p in parts])
        keys, where = np.unique(np.column_stack([lo, hi]), axis=0, return_inverse=True)
        summed = np.bincount(where.ravel(), weights=counts, minlength=len(keys)).astype(np.int64)
        return cls(keys[:, 0].copy(), keys[:, 1].copy(), summed)

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """The cumulative distribution as a line: x each bin's lower then upper bound (seconds), y the
        fraction of requests below it, rising linearly inside a bin (its requests spread evenly) and flat
        across empty ones."""
        upto = np.cumsum(self.counts) / max(self.n, 1)
        below = np.concatenate([[0.0], upto[:-1]])
        x = np.column_stack([self.lo_ns, self.hi_ns]).ravel() / 1e9
        y = np.column_stack([below, upto]).ravel()
        return x, y

    def quantile_s(self, q: float) -> float:
        """The upper bound of the bin holding quantile q, in seconds (within a bin's width of the truth)."""
        rank = max(1, int(np.ceil(q * self.n)))
        return float(self.hi_ns[int(np.searchsorted(np.cumsum(self.counts), rank))] / 1e9)

    def to_text(self) -> str:
        return " ".join(f"{a}-{b}:{c}" for a, b, c in zip(self.lo_ns, self.hi_ns, self.counts))
