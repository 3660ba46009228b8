"""Rates that depend on the data written: a pattern test that measured its points with several fills (a list of
fills in the plan) sets each fill's point beside the same point with the test's main fill (random data where it
was measured). Where their intervals do not meet, the device or the file system below treats the data
differently (compresses them, or keeps one copy of repeated blocks) and the rate is a property of the fill; where
they meet, or a point has no interval (one trial), nothing is claimed (docs/methods.md, "Fills")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import fills
from .estimate import Estimate


@dataclass(frozen=True)
class FillRate:
    """One point measured with another fill than the test's main one, against the main fill's point."""

    where: str               # the point without its fill, as people read it ("sequential 128 KiB Q1T1")
    fill: str
    base_fill: str
    rate: Estimate
    base_rate: Estimate

    @property
    def ratio(self) -> float:
        return self.rate.estimate / self.base_rate.estimate

    @property
    def apart(self) -> bool:
        """The two intervals do not meet (both points have one)."""
        r, b = self.rate, self.base_rate
        if not (_has_interval(r) and _has_interval(b)):
            return False
        return r.low > b.high or r.high < b.low

    def to_json(self) -> dict[str, Any]:
        return {"point": self.where, "fill": self.fill, "base_fill": self.base_fill,
                "ratio": self.ratio, "apart": self.apart}


def _has_interval(e: Estimate) -> bool:
    return e.low is not None and e.high is not None and e.low == e.low and e.high == e.high


def fill_rates(points: list[Any], main: str, where: Any) -> list[FillRate]:
    """Each point of another fill than `main` beside the point of the same shape with `main`; where(p) names a
    point's shape."""
    base = {_shape(p): p for p in points if p.fill == main}
    out = []
    for p in points:
        b = base.get(_shape(p))
        if p.fill != main and b is not None and b.throughput.estimate > 0:
            out.append(FillRate(where(p), p.fill, main, p.throughput, b.throughput))
    return out


def _shape(p: Any) -> tuple:
    return p.access, p.granularity_bytes, p.stride_bytes, p.queue_depth, p.threads, p.read_fraction


def what_it_does(faster: list[str]) -> str:
    """What a device that writes these fills faster than the main one does with them."""
    shares = [fills.shares(f) for f in faster]
    compress = any(s is None or s[0] for s in shares)
    dedupe = any(s is not None and s[1] for s in shares)
    if all(s is None for s in shares):
        return "compresses what it writes, or skips a repeated byte"
    return "compresses or deduplicates what it writes" if compress and dedupe else \
        "compresses what it writes" if compress else "keeps one copy of repeated blocks (deduplicates)"


def sentence(op: str, differing: list[FillRate], rate_text: Any) -> str:
    """The terminal's and the page's words for the points whose rate moved with the fill."""
    first = differing[0]
    faster = [d for d in differing if d.ratio > 1]
    parts = [f"{fills.describe(d.fill)} at {d.where}: {d.ratio:.2f}x ({rate_text(d.rate.estimate)} against "
             f"{rate_text(d.base_rate.estimate)})" for d in differing[:4]]
    more = f", and {len(differing) - 4} more points" if len(differing) > 4 else ""
    verdict = (f"the device or file system below {what_it_does([d.fill for d in faster])}" if faster else
               "the device or file system below is slower with these data")
    return (f"{op} rates depend on the data written, against {fills.describe(first.base_fill)} (intervals apart): "
            f"{'; '.join(parts)}{more}: {verdict}, so a rate measured with one fill is a property of that fill")
