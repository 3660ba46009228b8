"""The one way from a run directory to its numbers: read run.json and measurements.csv into typed
records, then summarise. The report, compare and series all start here, so every view sees the same
measurements with the same definition of a valid one (Measurement.ok)."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from .analysis.settings import SUMMARY, Settings
from .analysis.summary import Summary, summarize
from .record import RunRecord
from .store import RunDirError, read_measurements, read_run_json
from .table import Table


@dataclass(frozen=True)
class LoadedRun:
    path: Path
    record: RunRecord
    measurements: Table                 # every whole row, failed ones included
    damaged_rows: int

    @property
    def valid(self) -> Table:
        return self.measurements.valid()


def load_run(run_dir: Path) -> LoadedRun:
    record = read_run_json(run_dir)
    rows, damaged = read_measurements(run_dir)
    return LoadedRun(run_dir, record, rows, damaged)


def summarize_run(run_dir: Path, settings: Settings = SUMMARY) -> tuple[RunRecord, Table, Summary]:
    """The run's record, its measurements and their summary; a run without measurements is refused."""
    with _pool(run_dir) as pool:
        run = load_run(run_dir)
        if not len(run.measurements):
            raise RunDirError(f"{run_dir}: no measurements yet; nothing to report")
        summary = summarize(run.measurements, settings, run.record.helper, run.damaged_rows,
                            run.record.plan.ceiling_bytes_per_s, pool)
    return run.record, run.measurements, summary


PARALLEL_ABOVE_BYTES = 20 * 2**20     # measurements.csv of about 120,000 rows


def _pool(run_dir: Path) -> ProcessPoolExecutor | nullcontext:
    """For a large run, processes that summarise its files tests in parallel, one per core. They come from
    a fork server that has imported the analysis once (started here, while the run is read): forked from
    this process instead, each would carry its memory (the peak would double), and spawned, each would
    import for a second or two."""
    csv_path = run_dir / "measurements.csv"
    workers = min(os.cpu_count() or 1, 4)
    if workers < 2 or not csv_path.is_file() or csv_path.stat().st_size < PARALLEL_ABOVE_BYTES:
        return nullcontext()
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["stibium_py.analysis.files"])
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    pool.submit(int).result   # start the server and the workers now, while the run is read
    return pool
