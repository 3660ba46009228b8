"""An open loop's point (a pattern test with a rate): what it was offered, what it achieved, its response times
(each request from its due time) beside its service times (from its issue), and whether the instrument kept the
rate. The percentiles of every trial's requests together come from their histograms merged bin by bin (the
helper's fixed bins), never from averaging the trials' percentiles (docs/load.md). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...analysis.estimate import Estimate
from ...analysis.histogram import HistogramError, LatencyHistogram
from ...rundir.table import Table
from ...units import format_per_s_short

# the helper counts a request as issued late past this (SB_LATE_NS)
LATE_S = 100e-6
# issued late over this share of its requests: the schedule was not kept (all slots busy: the drive did not carry
# the rate with these requests in flight; or the instrument was late). The achieved rate is no test of it: Poisson
# arrivals put a random number of due times in a trial's duration (500/s for 1 s: +-4.5 % at one standard deviation)
LATE_SHARE = 0.01

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))


@dataclass(frozen=True)
class Load:
    """An open loop's point over its trials."""

    offered_per_s: float                 # requests a second each client was offered
    arrivals: str                        # constant | poisson
    achieved: Estimate                   # requests a second done: the median over trials, with its interval
    response_s: dict[str, float | None]  # p50 .. p999 and max of every trial's requests (merged histograms)
    service_s: dict[str, float | None]   # the same of their service times
    requests: int                        # every trial's requests
    late_issues: int                     # ... issued over 100 us after their due time
    issue_late_p99_s: float | None       # the worst trial's 99th percentile of lateness
    issue_late_max_s: float | None
    unscheduled: int                     # requests a schedule ran out for (by time), every trial's
    response_hist: LatencyHistogram | None = None

    @property
    def late_share(self) -> float:
        return self.late_issues / self.requests if self.requests else 0.0

    @property
    def kept(self) -> bool:
        """The schedule was kept: at most 1 % of the requests issued over 100 us after their due times, and none
        left without one."""
        return self.late_share <= LATE_SHARE and not self.unscheduled

    def to_json(self) -> dict[str, Any]:
        return {"offered_per_s": self.offered_per_s, "arrivals": self.arrivals,
                "achieved_per_s": self.achieved.as_dict(),
                **{f"resp_{k}_s": v for k, v in self.response_s.items()},
                **{f"service_{k}_s": v for k, v in self.service_s.items()},
                "requests": self.requests, "late_issues": self.late_issues, "late_share": self.late_share,
                "issue_late_p99_s": self.issue_late_p99_s, "issue_late_max_s": self.issue_late_max_s,
                "unscheduled": self.unscheduled, "kept": self.kept,
                "resp_hist_ns": self.response_hist.to_text() if self.response_hist is not None else None}


def load_of(rs: Table, rate_per_s: float | None, achieved: Estimate,
            service: LatencyHistogram | None) -> Load | None:
    """The open loop of a point's trials; None for a closed loop. achieved: the point's IOPS with its interval;
    service: its trials' service-time histograms merged."""
    if not rate_per_s:
        return None
    response = _merged(rs.col("resp_hist_ns"))
    arrivals = next((str(a) for a in rs.col("arrivals") if a), "constant")
    return Load(offered_per_s=float(rate_per_s), arrivals=arrivals, achieved=achieved,
                response_s=_percentiles(response, rs.col("resp_max_s")),
                service_s=_percentiles(service, rs.col("lat_max_s")),
                requests=int(np.nansum(rs.requests)), late_issues=int(np.nansum(rs.col("late_issues"))),
                issue_late_p99_s=_worst(rs.col("issue_late_p99_s")), issue_late_max_s=_worst(rs.col("issue_late_max_s")),
                unscheduled=int(np.nansum(rs.col("unscheduled"))), response_hist=response)


def _merged(texts: np.ndarray) -> LatencyHistogram | None:
    """The trials' histograms in one; a damaged one leaves the point without (its other numbers stand)."""
    try:
        return LatencyHistogram.merged(texts)
    except HistogramError:
        return None


def _percentiles(hist: LatencyHistogram | None, maxima: np.ndarray) -> dict[str, float | None]:
    """p50 .. p999 of the merged requests (each a bin's upper bound, within a bin's width), and the longest (the
    trials' exact maxima, not a bin's bound)."""
    out: dict[str, float | None] = {name: (hist.quantile_s(q) if hist is not None and hist.n else None)
                                    for name, q in QUANTILES}
    out["max"] = _worst(maxima)
    return out


def _worst(values: np.ndarray) -> float | None:
    finite = np.asarray(values, float)
    finite = finite[np.isfinite(finite)]
    return float(finite.max()) if len(finite) else None


def not_kept_sentence(offered_label: str, load: Load) -> str:
    """Why an open loop's rate was not kept, in words."""
    parts = [f"achieved {format_per_s_short(load.achieved.estimate)} of {format_per_s_short(load.offered_per_s)} "
             f"offered"]
    if load.late_share > LATE_SHARE:
        parts.append(f"{load.late_issues:,} of {load.requests:,} requests ({load.late_share:.1%}) issued over "
                     f"{LATE_S * 1e6:.0f} us late" + (f", the latest {load.issue_late_max_s * 1e3:.3g} ms"
                                                     if load.issue_late_max_s is not None else ""))
    if load.unscheduled:
        parts.append(f"{load.unscheduled} requests had no due time left in the schedule")
    return f"{offered_label}: " + "; ".join(parts)
