"""The one way from a run directory to its numbers: read run.json and measurements.csv into typed
records, then summarise. The report, compare and series all start here, so every view sees the same
measurements with the same definition of a valid one (Measurement.ok)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .. import fills
from ..analysis.rates import ONE_TRIAL
from ..analysis.link_speed import faster_than_link, links_of
from ..analysis.settings import SUMMARY, Settings
from ..analysis.summary import Summary, summarize
from ..analysis.warnings import PRECONDITION_ADVICE, Notice
from .definitions import test_definitions
from ..rundir.liveness import as_found
from ..rundir.record import RunRecord
from ..rundir.store import RunDirError, completed_seqs, read_run_json
from ..rundir.csvread import read_measurements, shown_host
from ..rundir.table import Table


@dataclass(frozen=True)
class LoadedRun:
    path: Path
    record: RunRecord
    measurements: Table                 # every whole row, failed ones included; many clients: their aggregate
    damaged_rows: int
    per_client: Table | None = None     # many clients: every client's own rows

    @property
    def valid(self) -> Table:
        return self.measurements.valid()


def load_run(run_dir: Path) -> LoadedRun:
    """A run's record and measurements. A run of many clients is read as its aggregate (one measurement per
    step of all clients together, analysis/clients.py), so that every view and compare read the store's
    numbers; each client's rows are kept beside it."""
    record = as_found(read_run_json(run_dir))
    rows, damaged = read_measurements(run_dir)
    rows, unknown = fills_of_then(rows, record)
    damaged += unknown
    if record.ranks > 1:
        from ..analysis.clients import aggregate
        return LoadedRun(run_dir, record, aggregate(rows, record.ranks), damaged, rows)
    return LoadedRun(run_dir, record, rows, damaged)


def fills_of_then(rows: Table, record: RunRecord) -> tuple[Table, int]:
    """Rows of a file made before measurements carried their fill: each its test's fill, from the plan run.json
    keeps (random where the plan does not say), so that its points match a newer run's of the same fill. A fill
    there that no plan could say (an edited run.json) leaves its rows out, counted as damaged: labels print a
    fill, and a row's fill must be one of the forms a plan may say. The rows kept, and how many were left out."""
    fill = rows.col("fill")
    missing = np.flatnonzero(np.equal(fill, None))
    if not len(missing):
        return rows, 0
    plan = test_definitions(record.plan.as_given) or {}
    out = fill.copy()
    keep = np.ones(len(rows), bool)
    # by test, not by row: a run has a few tests and may have a million rows (docs/performance.md)
    for (name,), members in rows.take(missing).groups("test").items():
        at = missing[members]
        test = plan.get(str(name))
        try:
            out[at] = fills.canonical((test.get("fill") if isinstance(test, dict) else None) or fills.RANDOM)
        except ValueError:
            keep[at] = False
    rows = rows.with_column("fill", out)
    return (rows, 0) if keep.all() else (rows.take(np.flatnonzero(keep)), int((~keep).sum()))


def summarize_run(run_dir: Path, settings: Settings = SUMMARY) -> tuple[RunRecord, Table, Summary]:
    """The run's record, its measurements and their summary; a run without measurements is refused."""
    with _pool() as pool:
        run = load_run(run_dir)
        if not len(run.measurements):
            raise RunDirError(f"{run_dir}: no measurements yet; nothing to report")
        summary = summarize(run.measurements, settings, run.record.helper, run.damaged_rows,
                            run.record.plan.ceiling_bytes_per_s, pool, run.record.memory_rates,
                            run.record.target_facts)
        if run.per_client is not None:
            from ..analysis.clients import straggler_notices, summarize_clients
            clients = summarize_clients(run.per_client, run.record.clients, settings)
            summary = replace(summary, clients=clients, warnings=[*summary.warnings, *straggler_notices(clients)])
        links = links_of(run.record.target_facts, run.record.clients)
        if links:
            rows, hosts = (run.per_client, run.record.clients.get("hosts")) if run.per_client is not None else \
                (run.measurements, [run.record.hostname])
            names = {i: h for i, h in enumerate(hosts if isinstance(hosts, list) else []) if shown_host(h)}
            summary = replace(summary, warnings=[*summary.warnings, *faster_than_link(rows, links, names)])
    return run.record, run.measurements, held_to_plan(summary, run.record, run.measurements, run_dir)


def held_to_plan(summary: Summary, record: RunRecord, rows: Table, run_dir: Path) -> Summary:
    """The warnings held to the plan the run recorded and to how the run ended: advice the plan follows already
    is left out (precondition: true), and a run that did not end whole says so first, with how much of it ran and
    how to finish it, its advice to add trials turned into finishing the run (the plan's trials have not all
    run)."""
    plan_tests = test_definitions(record.plan.as_given) or {}
    preconditioned = tuple(f"{name} (" for name, t in plan_tests.items() if t.get("precondition"))
    summary = replace(summary, warnings=[
        replace(w, what_to_do=w.what_to_do.replace(PRECONDITION_ADVICE + ", ", ""))
        if w.test.startswith(preconditioned) else w for w in summary.warnings])
    if record.status == "complete":
        return summary
    planned = record.expanded.get("ops_count")
    done = len(completed_seqs(rows))
    taken = f"{done:,} of {planned:,} measurements" if isinstance(planned, int) and planned >= done else \
        f"{done:,} measurements"
    why = f" ({record.stopped_by})" if record.stopped_by else ""
    if record.status == "running":
        first = Notice("warning", "all", f"this run is still running (process {record.pid}): {taken} so far, and "
                       f"these numbers are of those alone", f"wait for its end, then `stibium report {run_dir}`")
    else:
        first = Notice("warning", "all", f"this run is {record.status}{why}: {taken} were taken, and these numbers "
                       f"are of those alone", f"finish it with `stibium resume {run_dir}`")
    finish = f"finish the run (`stibium resume {run_dir}`): not every trial of the plan has run"
    rest = [replace(w, what_to_do=finish) if ONE_TRIAL in w.message and record.status != "running" else w
            for w in summary.warnings]
    return replace(summary, warnings=[first, *rest])


def _pool() -> ThreadPoolExecutor | nullcontext:
    """Threads that summarise the files tests in parallel, one per core: the work is numpy's and scipy's,
    which let go of the interpreter lock (docs/performance.md: the summary of a million measurements on
    two threads and on one), without copying data or starting interpreters."""
    workers = min(os.cpu_count() or 1, 4)
    return ThreadPoolExecutor(max_workers=workers) if workers > 1 else nullcontext()
