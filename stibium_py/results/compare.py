"""Comparing runs: load each side (a run directory, or the complete runs of a series), check that they
measured the same things, run the statistics (analysis/comparison.py) in a process pool this module owns,
and return the typed result (analysis/comparison.py: TwoRuns, ManyRuns), which the terminal tables and
the comparison page draw and whose JSON form (stibium-compare/3; many runs: stibium-compare-many/2) is made
where it is written."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from .. import registry
from ..errors import CompareError
from ..analysis import below, rates
from ..analysis.durability import sync_caution
from ..analysis.comparison import Drawn, ManyRuns, SideFacts, TwoRuns, advice, compare_points
from ..analysis.rates import PointKey, by_point, describe, draw_inputs, shape_matches
from ..analysis.settings import COMPARE, Settings
from .definitions import differences, test_definitions
from ..rundir.table import Table
from .pipeline import load_run as load_run_dir
from ..analysis.pool import WhenWorthIt, process_pool
from ..rundir.csvread import MEASUREMENTS_CSV
from ..rundir.record import RunRecord, RunStatus
from ..rundir.store import RunDirError, is_series, series_run_dirs

RUNS_ADVISED = 5
# The measurements of the runs compared (their files' bytes) from which the draws' pool begins with the reading
# (pool.WhenWorthIt.begin), at a comparison's 10,000 resamples: about 4,000 rows, whose draws take seconds however
# they fall into points (a run's point of 150 rows or more costs about a second of draws: docs/performance.md).
# Draws of fewer resamples cost that much less: the bytes are scaled by COMPARE.resamples / resamples
EARLY_POOL_BYTES = 1 << 20
# Facts that name one machine and one disk: equal on both sides means a repeatability check.
SAME_MACHINE_FACTS = (("machine", "hostname"), ("machine", "cpu"), ("machine", "ram_bytes"), ("machine", "os_release"),
                      ("target_facts", "device"), ("target_facts", "device_model"), ("target_facts", "fs_type"))


@dataclass(frozen=True)
class Run:
    path: Path
    record: RunRecord
    rows: Table                   # the valid measurements (a test by rounds: its window's, as the summary's)
    unsteady: frozenset[str] = frozenset()     # tests by rounds that did not reach steady state


@dataclass(frozen=True)
class Side:
    """One side of a comparison: one run directory, or the complete runs of a series."""

    path: Path
    runs: list[Run]
    skipped: tuple[str, ...] = ()     # runs of a series left out, each with why

    @property
    def record(self) -> RunRecord:
        return self.runs[0].record

    @property
    def rows(self) -> Table:
        return self.runs[0].rows if len(self.runs) == 1 else Table.concat([run.rows for run in self.runs])

    @property
    def label(self) -> str:
        count = f", {len(self.runs)} runs" if len(self.runs) > 1 else ""
        return f"{self.record.hostname or 'host unknown'} ({self.path.name}{count})"


def _renamed(points: dict[PointKey, Table], renames: dict[PointKey, PointKey]) -> dict[PointKey, Table]:
    """B's points under the keys of A's points they were matched to by shape."""
    return {renames.get(k, k): v for k, v in points.items()}


def points_of(a: Side, b: Side) -> tuple[dict[PointKey, Table], dict[PointKey, Table], dict[PointKey, PointKey]]:
    """Both sides' points, B's matched to A's by key, else by shape (rates.shape_matches): B's under A's keys,
    and which of B's were matched by shape."""
    ga, gb = by_point(a.rows), by_point(b.rows)
    renames = shape_matches(list(ga), list(gb))
    return ga, _renamed(gb, renames), renames


def drawn(a: Side, b: Side) -> Drawn:
    ga, gb, _ = points_of(a, b)
    return Drawn((a.label, b.label), {key: tuple(draw_inputs(g[key])[1:] for g in (ga, gb)) for key in ga if key in gb})


def _load_one(path: Path) -> Run | None:
    """A run with its valid measurements; None when it has none."""
    return run_of(load_run_dir(path))


def run_of(loaded: Any) -> Run | None:
    """A loaded run directory (pipeline.LoadedRun) as compare reads it: its valid measurements (a test by rounds:
    its window's); None when it has none."""
    path, good = loaded.path, loaded.valid
    rated, judged = rates.rated(good)
    return Run(path, loaded.record, rated,
               frozenset(name for name, s in judged.items() if not s.steady)) if len(good) else None


def load_side(path: Path) -> Side:
    """A run directory, or a series of runs (its complete runs with measurements)."""
    if is_series(path):
        runs, skipped = [], []
        for d in series_run_dirs(path):
            try:
                loaded = load_run_dir(d)
            except RunDirError as e:
                skipped.append(f"{d.name}: {e}")
                continue
            record = loaded.record
            if record.status != RunStatus.COMPLETE:    # the run's own words for why: interrupted (SIGINT at rank 0)
                skipped.append(f"{d.name}: {record.status}" + (f" ({record.stopped_by})" if record.stopped_by else ""))
                continue
            run = run_of(loaded)
            if run is None:
                skipped.append(f"{d.name}: no measurements")
            else:
                runs.append(run)
        if not runs:
            raise RunDirError(f"{path}: no complete run with measurements to compare")
        return Side(path, runs, tuple(skipped))
    run = _load_one(path)
    if run is None:
        raise RunDirError(f"{path}: no measurements to compare")
    return Side(path, [run])


def _check_definitions(a: Side, b: Side, tests: set[str], allow: bool) -> list[str]:
    """Compare what was measured: refuse a difference that changes what a number means (unless allowed),
    return the other differences. Runs without their plan fall back to the plans' names."""
    da, db = test_definitions(a.record.plan.as_given), test_definitions(b.record.plan.as_given)
    if da is None or db is None:
        plan_a, plan_b = a.record.plan.name, b.record.plan.name
        if plan_a != plan_b and not allow:
            raise CompareError(f"the runs are of different plans ({plan_a} and {plan_b}); compare runs of one "
                               f"plan, or pass --allow-different-plans")
        return []
    refused, listed = differences(da, db, tests)
    if refused and not allow:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise CompareError(f"the runs measured different things: {refused[0]}{more}; compare like with like, or "
                           f"pass --allow-different-plans")
    return refused + listed


def same_machine(a: Side, b: Side) -> bool:
    """Both sides ran on one machine and disk (every identifying fact known and equal)."""
    for section, key in SAME_MACHINE_FACTS:
        va, vb = getattr(a.record, section).get(key), getattr(b.record, section).get(key)
        if va is None or va != vb:
            return False
    return True


def draws_pool(paths: Sequence[Path], resamples: int = COMPARE.resamples) -> WhenWorthIt:
    """The pool the draws of these runs (run directories or series) are made in, `resamples` each, begun now,
    beside their reading, where their measurements are large enough (EARLY_POOL_BYTES); else it starts when its
    jobs have shown it worth it."""
    pool = process_pool()
    if measured_bytes(paths) * resamples >= EARLY_POOL_BYTES * COMPARE.resamples:
        pool.begin(rates.ready_to_draw)
    return pool


def measured_bytes(paths: Sequence[Path]) -> int:
    """The bytes of the runs' measurement files, as their folders list them (a link or a run that cannot be listed
    counts nothing here: its reading says what is wrong with it)."""
    total = 0
    for path in paths:
        try:
            folders = series_run_dirs(path) if is_series(path) else [path]
        except (OSError, RunDirError):
            continue
        for folder in folders:
            try:
                found = os.lstat(folder / MEASUREMENTS_CSV)
            except OSError:
                continue
            if stat.S_ISREG(found.st_mode):
                total += found.st_size
    return total


def compare_runs(a: Side, b: Side, allow_different_plans: bool = False, settings: Settings = COMPARE,
                 pool: Executor | None = None) -> TwoRuns:
    """B against A; their draws in `pool` where the caller gives one (draws_pool), else in one of this call's."""
    ga, gb, renames = points_of(a, b)
    # the kinds that compare their own results (a sustained test's stretches, a stream test's counts)
    kinds, kinds_only_a, kinds_only_b = {}, [], []
    for spec in registry.specs():
        if spec.compare is not None:
            found, only_a, only_b = spec.compare([run.rows for run in a.runs], [run.rows for run in b.runs], settings)
            if found:
                kinds[spec.name] = found
            kinds_only_a += only_a
            kinds_only_b += only_b
    listed = _check_definitions(a, b, {k[0] for k in ga if k in gb and k not in renames.values()}
                                | {p.test for found in kinds.values() for p in found}, allow_different_plans)
    listed += [f"{describe(kb)} in B matched {describe(ka)} in A by its shape (the names differ)"
               for kb, ka in renames.items()]
    listed = [*_not_whole(a, "A"), *_not_whole(b, "B"), *listed,
              *(f"{kind} tests ({', '.join(names)}) are not compared yet: each run's report has them"
                for kind, names in kinds_apart([a, b], compared=True).items())]
    matched = [k for k in ga if k in gb]
    below_a, below_b = (below.point_shares({k: side_points[k] for k in matched}, _memory_rates(side))
                        for side, side_points in ((a, ga), (b, gb)))
    # every run's bootstrap of every matched point is independent: one process per core
    with nullcontext(pool) if pool is not None else process_pool() as executor:
        result = compare_points([(run.path.name, by_point(run.rows)) for run in a.runs],
                                [(run.path.name, _renamed(by_point(run.rows), renames)) for run in b.runs], matched,
                                settings, executor)
    platforms = (a.record.helper.get("platform"), b.record.helper.get("platform"))
    cautions = {k: c for k in matched for c in (_caution(k, below_a, below_b, platforms, ga[k], gb[k], a, b),) if c}
    return TwoRuns(
        a=_facts(a), b=_facts(b), settings=settings, comparison=result, cautions=cautions,
        same_machine=same_machine(a, b), advice=advice(len(a.runs), len(b.runs), result, settings, RUNS_ADVISED),
        differences=listed, only_in_a=[describe(k) for k in ga if k not in gb] + kinds_only_a,
        only_in_b=[describe(k) for k in gb if k not in ga] + kinds_only_b, kinds=kinds)


def kinds_apart(sides: list[Side], compared: bool = False) -> dict[str, list[str]]:
    """The kinds of test without points in the sides' runs, and their tests' names: what a series does not put
    together yet (compared: what a comparison does not, which a kind's own compare does)."""
    apart: dict[str, set[str]] = {}
    for side in sides:
        for run in side.runs:
            kinds = run.rows.col("kind")
            for kind in set(kinds.tolist()):
                spec = registry.find(kind)
                if spec is not None and spec.points is None and (spec.compare if compared else spec.series) is None:
                    apart.setdefault(kind, set()).update(run.rows.col("test")[kinds == kind].tolist())
    return {kind: sorted(names) for kind, names in apart.items()}


def _not_whole(side: Side, name: str) -> list[str]:
    """A run of the side that did not end whole (interrupted, failed, cut off, still running), in words first."""
    out = []
    for run in side.runs:
        record = run.record
        if record.status != "complete":
            why = f" ({record.stopped_by})" if record.stopped_by else ""
            todo = "wait for its end" if record.status == "running" else f"finish it with `stibium resume {run.path}`"
            out.append(f"{name}'s run {run.path.name} is {record.status}{why}: its numbers are of the measurements "
                       f"taken before; {todo}")
    return out


def _memory_rates(side: Side) -> dict[Any, float]:
    rates: dict[Any, float] = {}
    for run in side.runs:
        rates.update(run.record.memory_rates)
    return rates


def _caution(key: Any, below_a: dict[Any, float], below_b: dict[Any, float], platforms: tuple[Any, Any],
             rows_a: Table, rows_b: Table, a: Side, b: Side) -> str | None:
    """A matched point whose reads on one side or both came from a cache below the file system, whose
    writes were made durable differently (the drive's cache flushed on one side only), or whose test by
    rounds did not reach steady state on a side."""
    found = []
    sides = [f"{name} at {shares[key]:.0%} of memory speed" for name, shares in (("A", below_a), ("B", below_b))
             if key in shares]
    if sides:
        found.append(f"served by a cache below the file system ({' and '.join(sides)}): not the drive's speed")
    if key.op == "write":
        synced = sync_caution(platforms[0], rows_a.sync_used.tolist(), platforms[1], rows_b.sync_used.tolist())
        if synced:
            found.append(synced)
    unsteady = [name for name, side in (("A", a), ("B", b)) if any(key.test in run.unsteady for run in side.runs)]
    if unsteady:
        found.append(f"not steady on {' and '.join(unsteady)} (the rates are of the last rounds, still moving): not "
                     f"a comparison of steady-state rates")
    return "; ".join(found) or None


def _facts(run: Side) -> SideFacts:
    m = run.record.machine
    t = run.record.target_facts
    return SideFacts(run=run.path.name, plan=run.record.plan.name, hostname=m.get("hostname"),
                     os=" ".join(str(v) for v in (m.get("os"), m.get("os_release")) if v) or None, cpu=m.get("cpu"),
                     ram_bytes=m.get("ram_bytes"),
                     fs_type=t.get("fs_type"), device_model=t.get("device_model"),
                     started_utc=run.record.started_utc, measurements=len(run.rows), runs=len(run.runs),
                     label=run.label)


def check_clients(sides: list[Side], allow_mixed: bool) -> None:
    """A run of many clients measures the store's aggregate, a run of one measures one client: refused side by
    side unless asked for (4 clients against 8, or store A against store B, compare as they are)."""
    counts = [side.record.ranks for side in sides]
    if not allow_mixed and min(counts) == 1 and max(counts) > 1:
        many = next(side for side in sides if side.record.ranks > 1)
        one = next(side for side in sides if side.record.ranks == 1)
        raise CompareError(f"{many.path.name} ran {many.record.ranks} clients (its rates are their aggregate) and "
                           f"{one.path.name} one; compare runs of many clients with each other, or pass "
                           f"--allow-mixed-clients")


def compare_many(sides: list[Side], reference: int = 0, allow_different_plans: bool = False,
                 settings: Settings = COMPARE, pool: Executor | None = None) -> ManyRuns:
    """Many machines in one table: every run against the reference run, per test point its rate and its
    ratio to the reference with an interval (each pair compared as compare_runs does, in `pool` where given)."""
    ref = sides[reference]
    others = [s for i, s in enumerate(sides) if i != reference]
    return ManyRuns(_facts(ref), [compare_runs(ref, other, allow_different_plans,
                                               settings.with_seed(settings.seed + 1000 * i), pool)
                                  for i, other in enumerate(others)])
