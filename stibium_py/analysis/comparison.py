"""The statistics of comparing two sides (a run, or the runs of a series) point by point (docs/methods.md,
comparing machines): ratio = B's rate / A's rate. Each run is bootstrapped on its own; a side of several
runs gets a two-level bootstrap (runs, then measurements) so that its interval holds the variance
between runs, widened for the few runs it has (runs.py). Per test and op the geometric mean ratio across
granularities with its interval; a verdict with a noise band. Not hyperfine's +- sigma ratio, not
pyperf's pooled t-test. Pure: measurements grouped by point in, typed results out; the caller owns any
process pool."""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..rundir.table import Table
from . import runs as runs_analysis
from .estimate import Estimate
from .stats import norm_ppf
from .stats.bootstrap import two_level_draws
from .. import registry
from .rates import PointDraws, PointKey, draws_per_run, key_json
from .settings import Settings

RunPoints = dict[PointKey, Table]
# the kind whose own results compare's and the series summary's JSON keep under a key of their own (registry.py)
OWN_KEY = registry.KEPT_APART
REFUSAL_HINT = "a side has no interval, as in its summary: add trials (patterns), or sizes and repeats (files)"


@dataclass(frozen=True)
class PointRatio:
    key: PointKey
    rate_a_bytes_per_s: float
    rate_b_bytes_per_s: float
    latency_a_s: float | None
    latency_b_s: float | None
    n_a: int
    n_b: int
    runs_a: int
    runs_b: int
    ratio: Estimate
    verdict: str
    hint: str
    scope: str
    refused: str | None = None        # why the ratio has no interval: a side's (rates.PointRate.refused)

    def to_json(self) -> dict[str, Any]:
        return {**key_json(self.key),
                "rate_a_bytes_per_s": _finite(self.rate_a_bytes_per_s),
                "rate_b_bytes_per_s": _finite(self.rate_b_bytes_per_s),
                "latency_a_s": self.latency_a_s, "latency_b_s": self.latency_b_s, "n_a": self.n_a, "n_b": self.n_b,
                "runs_a": self.runs_a, "runs_b": self.runs_b, "ratio": self.ratio.as_dict(), "verdict": self.verdict,
                "hint": self.hint, "scope": self.scope, "refused": self.refused}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class GroupRatio:
    """The geometric mean ratio of one test and op over its granularities."""

    test: str
    op: str
    ratio: Estimate
    verdict: str
    hint: str
    scope: str

    def to_json(self) -> dict[str, Any]:
        return {"test": self.test, "op": self.op, "ratio": self.ratio.as_dict(), "verdict": self.verdict,
                "hint": self.hint, "scope": self.scope}


@dataclass(frozen=True)
class Comparison:
    points: list[PointRatio]
    groups: list[GroupRatio]
    scope: str                     # "machines" (several runs a side) or "these runs only"
    log_rates: dict[PointKey, tuple[list[float], list[float]]]   # per point each run's log rate, A and B


def verdict(ratio: Estimate, band: float, refused: str | None = None) -> tuple[str, str]:
    """The word for a ratio with its interval, and what to do where it tells nothing; `refused`: why a side
    has no interval (rates.PointRate.refused), which the verdict repeats."""
    if refused is not None:
        return f"inconclusive: {refused}", REFUSAL_HINT
    if not (math.isfinite(ratio.low) and math.isfinite(ratio.high)):
        return "inconclusive", "no interval could be computed; add repeats or trials"
    if ratio.low > 1 + band:
        return "faster", ""
    if ratio.high < 1 - band:
        return "slower", ""
    if ratio.low >= 1 - band and ratio.high <= 1 + band:
        return "same within noise", ""
    return "inconclusive", "the interval straddles the noise band: add repeats (files) or trials (patterns)"


def runs_needed(spread_log: float | None, ratio: float, band: float, confidence: float) -> int | None:
    """Runs per side for an interval of the ratio narrower than the difference to tell (at least the noise
    band), given a spread between runs (log scale); None where the spread is unknown."""
    if spread_log is None or not math.isfinite(spread_log) or spread_log <= 0:
        return None
    z = 0.5 + confidence / 2
    d = max(abs(math.log(ratio)) if ratio > 0 and math.isfinite(ratio) else 0.0, math.log(1 + band))
    return max(2, math.ceil(2 * (norm_ppf(z) * spread_log / d) ** 2))


def _logs(rates: list[runs_analysis.RunRate]) -> list[float]:
    return [math.log(r.estimate) for r in rates if r.estimate > 0 and math.isfinite(r.estimate)]


def compare_points(a: list[tuple[str, RunPoints]], b: list[tuple[str, RunPoints]], matched: list[PointKey],
                   s: Settings, executor: Executor | None = None) -> Comparison:
    """Every matched point of side A (its runs, each a name and its measurements by point) against side B."""
    runs = [points for _, points in (*a, *b)]
    names = [name for name, _ in (*a, *b)]
    results = draws_per_run(runs, matched, s, executor)
    scope = "machines" if len(a) > 1 and len(b) > 1 else "these runs only"

    def side_rates(first: int, count: int, key: PointKey) -> list[runs_analysis.RunRate]:
        got: list[tuple[int, PointDraws]] = [(i, results[(i, key)]) for i in range(first, first + count)
                                             if (i, key) in results]
        return [runs_analysis.run_rate(names[i], d.rate, d.draws, d.n, s.confidence, d.refused) for i, d in got]

    def latencies(first: int, count: int, key: PointKey) -> float | None:
        lat = [results[(i, key)].latency_s for i in range(first, first + count)
               if (i, key) in results and results[(i, key)].latency_s is not None]
        return float(np.median(lat)) if lat else None

    points, draws_by_key, log_rates = [], {}, {}
    for i, key in enumerate(matched):
        ra, rb = side_rates(0, len(a), key), side_rates(len(a), len(b), key)
        la, lb = _logs(ra), _logs(rb)
        rate_a = runs_analysis.geometric_mean([r.estimate for r in ra])
        rate_b = runs_analysis.geometric_mean([r.estimate for r in rb])
        point = rate_b / rate_a if rate_a else math.nan
        n_a = sum(len(p[key]) for _, p in a if key in p)
        n_b = sum(len(p[key]) for _, p in b if key in p)
        refused = runs_analysis.refusal(ra + rb)
        if refused is not None:
            # the summary gives this point no interval: neither does its ratio, and no verdict is drawn
            est = Estimate(point, math.nan, math.nan, f"no interval: {refused}", n_a + n_b)
            ratios = np.array([])
        else:
            da = two_level_draws([r.draws for r in ra], s.resamples, s.seed + 7919 * (2 * i + 1))
            db = two_level_draws([r.draws for r in rb], s.resamples, s.seed + 7919 * (2 * i + 2))
            m = min(len(da), len(db))
            ratios = db[:m] / da[:m]
            factor = runs_analysis.widening(s.confidence, la, lb)
            lo, hi = runs_analysis.widened_interval(point, ratios, s.confidence, factor)
            method = ("ratio of the runs' geometric means, two-level bootstraps (runs, then measurements) "
                      f"B={m}, widened x{factor:.2f} for the few runs" if factor != 1.0 else
                      f"ratio of {registry.spec(key.kind).points.name}s, independent bootstraps B={m}, percentile interval")
            est = Estimate(point, lo, hi, method, n_a + n_b)
        word, hint = verdict(est, s.noise_band, refused)
        draws_by_key[key] = ratios
        log_rates[key] = (la, lb)
        points.append(PointRatio(key, rate_a, rate_b, latencies(0, len(a), key), latencies(len(a), len(b), key),
                                 n_a, n_b, len(ra), len(rb), est, word, hint, scope, refused))
    return Comparison(points, _groups(points, draws_by_key, log_rates, s, scope), scope, log_rates)


def _groups(points: list[PointRatio], draws_by_key: dict[PointKey, np.ndarray],
            log_rates: dict[PointKey, tuple[list[float], list[float]]], s: Settings, scope: str) -> list[GroupRatio]:
    out = []
    for test, op in dict.fromkeys((p.key[0], p.key[1]) for p in points):
        keys = [p.key for p in points if p.key[:2] == (test, op)]
        if len(keys) < 2:
            continue
        point = float(np.exp(np.mean(np.log([p.ratio.estimate for p in points if p.key[:2] == (test, op)]))))
        refused = next((p.refused for p in points if p.key[:2] == (test, op) and p.refused), None)
        if refused is not None:
            est = Estimate(point, math.nan, math.nan, f"no interval: {refused}", len(keys))
            out.append(GroupRatio(test, op, est, *verdict(est, s.noise_band, refused), scope))
            continue
        m = min(len(draws_by_key[k]) for k in keys)
        logs = np.vstack([np.log(draws_by_key[k][:m]) for k in keys])
        # per run, the mean log rate over the granularities: the spread between runs of the summary
        la = [float(np.mean(v)) for v in zip(*[log_rates[k][0] for k in keys])]
        lb = [float(np.mean(v)) for v in zip(*[log_rates[k][1] for k in keys])]
        factor = runs_analysis.widening(s.confidence, la, lb)
        with np.errstate(invalid="ignore"):
            lo, hi = runs_analysis.widened_interval(point, np.exp(np.nanmean(logs, axis=0)), s.confidence, factor)
        est = Estimate(point, lo, hi, f"geometric mean over {len(keys)} granularities, bootstrap B={m}", len(keys))
        word, hint = verdict(est, s.noise_band)
        out.append(GroupRatio(test, op, est, word, hint, scope))
    return out


def ratio_of_intervals(a: Estimate, b: Estimate) -> Estimate:
    """B / A from two independent estimates with their intervals: each log estimate taken as normal, its
    interval's half-width on the log scale a multiple of its spread; the spreads add in quadrature, so the
    half-widths do, and the ratio's interval is at the confidence of the sides' (the normal quantile that turns
    each half-width into a spread turns the sum back into a half-width)."""
    point = b.estimate / a.estimate if a.estimate > 0 else math.nan
    if not all(math.isfinite(e.low) and math.isfinite(e.high) and 0 < e.low <= e.high for e in (a, b)) or \
            not math.isfinite(point) or point <= 0:
        return Estimate(point, math.nan, math.nan, "no interval: a side has none", a.n + b.n)
    half = math.hypot(*[(math.log(e.high) - math.log(e.low)) / 2 for e in (a, b)])
    return Estimate(point, point * math.exp(-half), point * math.exp(half),
                    "ratio of two independent bootstrap estimates, log-normal from their intervals", a.n + b.n)


# ---------------------------------------------------------------- the comparison of two sides, typed

@dataclass(frozen=True)
class SideFacts:
    """What the reader needs to know of one side: its run (or series), plan, machine and disk."""

    run: str
    plan: str
    hostname: str | None
    os: str
    cpu: str | None
    ram_bytes: int | None
    fs_type: str | None
    device_model: str | None
    started_utc: str | None
    measurements: int
    runs: int
    label: str                  # for people: "host (run, 3 runs)"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        del out["label"]
        return out


@dataclass(frozen=True)
class TwoRuns:
    """B against A: the ratios per point and per test and op, the sustained tests, the cautions (points served
    by a cache below the file system), whether both ran on one machine, what the verdicts cover (advice),
    how the plans differ, and what has no partner."""

    a: SideFacts
    b: SideFacts
    settings: Settings
    comparison: Comparison
    cautions: dict[PointKey, str]
    same_machine: bool
    advice: str
    differences: list[str]
    only_in_a: list[str]
    only_in_b: list[str]
    kinds: dict[str, list[Any]] = field(default_factory=dict)    # a kind's own pairs (KindSpec.compare), by kind

    FORMAT = "stibium-compare/3"

    @property
    def points(self) -> list[PointRatio]:
        return self.comparison.points

    @property
    def sustained(self) -> list[Any]:
        """The sustained tests both sides ran (the sustained kind's pairs)."""
        return self.kinds.get(OWN_KEY, [])

    @property
    def groups(self) -> list[GroupRatio]:
        return self.comparison.groups

    def to_json(self) -> dict[str, Any]:
        return {"format": self.FORMAT, "a": self.a.to_json(), "b": self.b.to_json(), "settings": self.settings.to_json(),
                "scope": self.comparison.scope, "same_machine": self.same_machine, "advice": self.advice,
                "differences": self.differences,
                "rows": [{**p.to_json(), "caution": self.cautions.get(p.key)} for p in self.points],
                "summaries": [g.to_json() for g in self.groups], OWN_KEY: [s.to_json() for s in self.sustained],
                "unmatched": {"only_in_a": self.only_in_a, "only_in_b": self.only_in_b},
                "kinds": {kind: [p.to_json() for p in pairs] for kind, pairs in self.kinds.items()
                          if kind != OWN_KEY}}


def advice(runs_a: int, runs_b: int, comparison: Comparison, s: Settings, runs_advised: int) -> str:
    """What the verdicts cover, and how many runs a comparison of machines would need."""
    if runs_a > 1 and runs_b > 1:
        return (f"{runs_a} and {runs_b} runs: the intervals include the variance between runs, so the "
                f"verdicts are about the machines")
    spreads = [float(np.std(logs, ddof=1)) for pair in comparison.log_rates.values() for logs in pair if len(logs) > 1]
    estimates = [p.ratio.estimate for p in comparison.points
                 if math.isfinite(p.ratio.estimate) and p.ratio.estimate > 0]
    ratio = float(np.exp(np.median(np.log(estimates)))) if estimates else 1.0
    needed = runs_needed(float(np.median(spreads)) if spreads else None, ratio, s.noise_band, s.confidence)
    base = ("one run on a side: the intervals cannot see the variance between runs (the host's cache, background "
            "work, the drive's temperature), so the verdicts are about these runs only")
    if needed is None:
        return f"{base}; run each side with --runs {runs_advised} (at least 3) to compare the machines"
    return (f"{base}; with the spread between runs measured here, about {min(needed, 1000)}"
            f"{'+' if needed > 1000 else ''} runs per side would tell a ratio of {ratio:.2f} from 1")


@dataclass(frozen=True)
class Drawn:
    """What the comparison page draws besides the comparison's numbers: each side's label, and per matched
    point each side's measurements (the column its rate is computed from, and seconds), every run of a side
    together."""

    labels: tuple[str, str]
    measured: dict[PointKey, tuple[tuple[np.ndarray, np.ndarray], ...]]


@dataclass(frozen=True)
class ManyRow:
    """One run's point against the reference's."""

    run: SideFacts
    point: PointRatio
    caution: str | None

    def to_json(self) -> dict[str, Any]:
        p = self.point
        return {**key_json(p.key), "run": self.run.run, "label": self.run.label,
                "rate_bytes_per_s": _finite(p.rate_b_bytes_per_s),
                "reference_rate_bytes_per_s": _finite(p.rate_a_bytes_per_s), "ratio": p.ratio.as_dict(),
                "verdict": p.verdict, "scope": p.scope, "runs": p.runs_b, "caution": self.caution}


@dataclass(frozen=True)
class ManyRuns:
    """Many runs in one table, each against the reference (a TwoRuns per run), pivoted by point."""

    reference: SideFacts
    pairs: list[TwoRuns]

    FORMAT = "stibium-compare-many/2"

    @property
    def rows(self) -> list[ManyRow]:
        return [ManyRow(pair.b, p, pair.cautions.get(p.key)) for pair in self.pairs for p in pair.points]

    @property
    def advice(self) -> list[str]:
        return list(dict.fromkeys(pair.advice for pair in self.pairs))

    def to_json(self) -> dict[str, Any]:
        return {"format": self.FORMAT, "reference": self.reference.to_json(),
                "runs": [pair.b.to_json() for pair in self.pairs], "settings": self.pairs[0].settings.to_json(),
                "rows": [r.to_json() for r in self.rows],
                "summaries": [{**g.to_json(), "run": pair.b.run} for pair in self.pairs for g in pair.groups],
                OWN_KEY: [{"test": s.a.name, "op": s.a.op, "run": pair.b.run, "label": pair.b.label,
                           "headline": s.b.result.headline, "reference_headline": s.a.result.headline,
                           "ratios": [r.to_json() for r in s.ratios]} for pair in self.pairs for s in pair.sustained],
                "kinds": {kind: [{**p.to_json(), "run": pair.b.run, "label": pair.b.label}
                                 for pair in self.pairs for p in pair.kinds.get(kind, [])]
                          for kind in dict.fromkeys(k for pair in self.pairs for k in pair.kinds)
                          if kind != OWN_KEY},
                "advice": [pair.advice for pair in self.pairs],
                "differences": sorted({d for pair in self.pairs for d in pair.differences})}
