"""An open loop's point (a pattern test with a rate): what it was offered, what it achieved, its response times
(each request from its due time) beside its service times (from its issue), and whether the instrument kept the
rate. The percentiles of every trial's requests together come from their histograms merged bin by bin (the
helper's fixed bins), never from averaging the trials' percentiles (docs/load.md). Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...analysis.estimate import Estimate, median_estimate
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


# --- a target (slo): the search for the highest rate that meets it -------------------------------------------------

TARGET_KEYS = ("p50", "p90", "p99", "p999", "max")
STEPS_PER_OCTAVE = 16          # the search's grid: lowest x 2^k x (1 + j/16); neighbours 1/16 of an octave apart


def slo_text(targets: dict[str, float], highest_per_s: float) -> str:
    """A target as an operation and a row keep it, with the top of the search's grid: "p99=0.002 highest=1000000.0"
    (seconds; requests a second)."""
    return " ".join([*(f"{k}={targets[k]!r}" for k in TARGET_KEYS if k in targets), f"highest={highest_per_s!r}"])


def parse_slo(text: str | None) -> tuple[dict[str, float], float] | None:
    """A row's target and the top of its grid back; None where there is none, or the text is not one stibium writes
    (a stranger's file: such a row is read as a measurement at its rate, without a target)."""
    if not text or len(text) > 200:
        return None
    out: dict[str, float] = {}
    for part in text.split():
        key, _, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            return None
        if key not in (*TARGET_KEYS, "highest") or key in out or not math.isfinite(number) or number <= 0:
            return None
        out[key] = number
    highest = out.pop("highest", None)
    return (out, highest) if out and highest is not None else None


def rate_grid(lowest_per_s: float, highest_per_s: float) -> list[float]:
    """Every rate the search may ask for, ascending: lowest x 2^k x (1 + j/16) up to highest."""
    out = []
    k = 0
    while lowest_per_s * 2 ** k <= highest_per_s:
        out += [lowest_per_s * 2 ** k * (1 + j / STEPS_PER_OCTAVE) for j in range(STEPS_PER_OCTAVE)]
        k += 1
    return [r for r in out if r <= highest_per_s]


def next_rate_index(tried: dict[int, bool], count: int) -> int | None:
    """The search's next rate (an index into rate_grid's list of count rates), from those tried so far (index ->
    met): the first rate, then each octave up while the target is met (the grid's top where it ends inside an
    octave), then the gap between the highest met and the lowest missed halved until they are neighbours; None when
    they are (or the first missed, or the grid's top met)."""
    met = max((i for i, ok in tried.items() if ok), default=None)
    missed = min((i for i, ok in tried.items() if not ok), default=None)
    if not tried:
        return 0 if count else None
    if missed is None:
        assert met is not None
        up = (met // STEPS_PER_OCTAVE + 1) * STEPS_PER_OCTAVE
        if up < count:
            return up
        return count - 1 if met < count - 1 else None     # the grid ends inside an octave: its top next
    below = max((i for i, ok in tried.items() if ok and i < missed), default=None)
    if below is None or missed - below <= 1:
        return None
    return (below + missed) // 2


@dataclass(frozen=True)
class Judged:
    """One rate of a search: each target's percentile over the trials (the median with its interval), and whether
    every target was met (the upper end of each interval under its target)."""

    rate_per_s: float
    by_target: dict[str, Estimate]
    met: bool

    def to_json(self) -> dict[str, Any]:
        return {"rate_per_s": self.rate_per_s, "met": self.met,
                **{f"resp_{k}_s": e.as_dict() for k, e in self.by_target.items()}}


def judge(rows: Table, rate_per_s: float, targets: dict[str, float], confidence: float) -> Judged:
    """A rate's trials against the targets: met where, for every target, the upper end of the interval of its
    percentile's median over the trials is under the target (one trial: its value). No measurement: not met."""
    by: dict[str, Estimate] = {}
    met = True
    for key, target in targets.items():
        values = np.asarray(rows.col(f"resp_{key}_s"), float) if len(rows) else np.array([])
        values = values[np.isfinite(values)]
        if not len(values):
            return Judged(rate_per_s, by, False)
        # one trial has no interval (as a point's rate has none): its value is judged alone, and said so
        est = (median_estimate(values, 0, 0, confidence, f"response {key}") if len(values) > 1 else
               Estimate(float(values[0]), math.nan, math.nan, f"response {key}; no interval: one trial", 1))
        by[key] = est
        met = met and (est.high if math.isfinite(est.high) else est.estimate) < target
    return Judged(rate_per_s, by, met)


@dataclass(frozen=True)
class SloAnswer:
    """A search's answer for one point shape: the highest rate that met the target and the lowest that did not,
    each judged, and every rate searched in the order of their rates."""

    targets: dict[str, float]
    shape: tuple                        # (access, granularity, stride, queue depth, threads, read share, fill)
    searched: list[Judged]
    highest_allowed_per_s: float        # the top of the grid (slo.highest, rounded to the grid)

    @property
    def missed(self) -> Judged | None:
        return next((j for j in self.searched if not j.met), None)

    @property
    def met(self) -> Judged | None:
        """The highest rate met below the lowest missed (the bracket the search closed)."""
        missed = self.missed
        ok = [j for j in self.searched if j.met and (missed is None or j.rate_per_s < missed.rate_per_s)]
        return ok[-1] if ok else None

    def to_json(self) -> dict[str, Any]:
        met, missed = self.met, self.missed
        return {"targets_s": self.targets, "access": self.shape[0], "granularity_bytes": self.shape[1],
                "stride_bytes": self.shape[2], "queue_depth": self.shape[3], "threads": self.shape[4],
                "read_fraction": self.shape[5], "fill": self.shape[6],
                "met": met.to_json() if met else None, "missed": missed.to_json() if missed else None,
                "searched": [j.to_json() for j in self.searched],
                "highest_allowed_per_s": self.highest_allowed_per_s}


SHAPE_COLUMNS = ("access", "granularity_bytes", "stride_bytes", "queue_depth", "threads", "read_fraction", "fill")


def slo_answers(rows: Table, confidence: float) -> list[SloAnswer]:
    """Each point shape's search, from the rows of one test and op (the road test's): the rates measured with a
    target, judged as the run judged them."""
    if not len(rows):
        return []
    out = []
    for (*shape, text), idx in rows.groups(*SHAPE_COLUMNS, "slo").items():
        slo = parse_slo(text)
        if slo is None:
            continue
        targets, highest = slo
        mine = rows.take(idx)
        judged = [judge(mine.take(r_idx), float(rate), targets, confidence)
                  for (rate,), r_idx in sorted(mine.groups("rate_per_s").items(), key=lambda kv: kv[0][0] or 0.0)
                  if rate]
        out.append(SloAnswer(targets, tuple(shape), judged, highest))
    return out
