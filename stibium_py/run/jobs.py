"""fio beside the road test (bench: fio): fio and its engines checked before anything is written, each test's
own job file read as data (fio/jobfile.py's allow-list) from beside the plan or from the run directory's copy,
and that copy kept for resume."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..rundir import received
from ..errors import FioError
from ..fio.job import JOB_FILES, JobFile, checked_job_file, find_fio
from ..fio.jobfile import read_plan_file
from ..beside import Named, read_beside
from ..plan import Expanded
from ..plan.expand import PlanFiles
from .preflight import RunError

TRACES = "traces"                   # the run directory's copies of the traces its replay tests replay
JobSource = Callable[[str, str], tuple[bytes, str]]     # (test, bench_job as given) -> the file's bytes, its name


def bench_checked(expanded: Expanded, job_file: JobSource | None) -> dict[str, JobFile]:
    """Where the plan measures with fio too (bench: fio): fio, and the engine of each of its queue depths on this
    platform (sys.platform names it as the helper does: linux, darwin), refused in one line before anything is
    written; each test's own job file (bench_job), its bytes from job_file(test, path as given), held to the
    allow-list and then checked by fio (none read where job_file is None: a rank that takes them from rank 0)."""
    depths = sorted({o.queue_depth for o in expanded.ops if o.instrument != "helper" and not o.bench_job})
    given = {o.test: o.bench_job for o in expanded.ops if o.bench_job}
    if not depths and not given:
        return {}
    try:
        fio = find_fio()
        for depth in depths:
            fio.ioengine(depth, sys.platform)
        return {test: checked_job_file(fio, *job_file(test, path)) for test, path in given.items()} \
            if job_file is not None else {}
    except FioError as e:
        raise RunError(str(e), 2) from None


def beside(plan_path: Path) -> JobSource:
    """A job file as a plan gives its path: inside the plan's folder, a regular file of a few lines."""
    return lambda test, given: (read_plan_file(plan_path.parent, given, f"test {test}: bench_job {given}"), given)


def kept(run_dir: Path) -> JobSource:
    """A job file as the run directory keeps it (fio-jobs/TEST.fio), read as a plan's is: resume holds the copy
    to the same allow-list, since a run directory comes from strangers too."""
    def read(test: str, _given: str) -> tuple[bytes, str]:
        folder, name, where = _kept_copy(run_dir, JOB_FILES, f"{test}.fio", "job file")
        return read_plan_file(folder, name, where), where
    return read


def _kept_copy(run_dir: Path, folder_name: str, name: str, noun: str) -> tuple[Path, str, str]:
    """Where a run directory keeps its copy of a file its plan named (its folder, checked not to be a link, which
    would lead the read out; the copy's name; the words naming it); RunError where the folder is missing."""
    where = f"{run_dir}/{folder_name}/{name}"
    try:
        return received.folder_inside(run_dir, folder_name), name, where
    except FileNotFoundError:
        raise RunError(f"{where}: missing; the run directory lost its copy of the {noun}: restore the run from a "
                       f"copy", 2) from None


def with_job_files(expanded: Expanded, jobs: dict[str, JobFile]) -> Expanded:
    """The plan with each test's own job file (bench_job) as read before the run."""
    return replace(expanded, tests=[replace(t, bench_job=jobs.get(t.name, t.bench_job)) for t in expanded.tests])


def keep_job_files(run_dir: Path, expanded: Expanded) -> None:
    """The job files a run's fio runs, copied into its run directory as they were read (resume runs these); the
    traces its replay tests replay, likewise (traces/TEST.trace)."""
    for t in expanded.tests:
        if t.bench_job is not None:
            (run_dir / JOB_FILES).mkdir(exist_ok=True)
            received.write_atomic(received.folder_inside(run_dir, JOB_FILES) / f"{t.name}.fio", t.bench_job.text)
        if t.kept_bytes is not None:
            (run_dir / TRACES).mkdir(exist_ok=True)
            received.write_atomic(received.folder_inside(run_dir, TRACES) / f"{t.name}.trace", t.kept_bytes)


def kept_files(run_dir: Path) -> PlanFiles:
    """The files a run's plan named, as its run directory keeps them (a replay's trace: traces/TEST.trace), read as
    the plan's were: a run directory comes from strangers too."""
    def read(test: str, _given: str, _what: str, cap_bytes: int, named: Named) -> bytes:
        folder, name, where = _kept_copy(run_dir, TRACES, f"{test}.trace", named.noun)
        return read_beside(folder, name, where, cap_bytes, named)
    return read
