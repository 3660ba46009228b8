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
from ..plan import Expanded
from .preflight import RunError

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
        where = f"{run_dir}/{JOB_FILES}/{test}.fio"
        try:
            folder = received.folder_inside(run_dir, JOB_FILES)     # a link there would lead the read out
        except FileNotFoundError:
            raise RunError(f"{where}: missing; the run directory lost its copy of the job file: restore the run "
                           f"from a copy", 2) from None
        return read_plan_file(folder, f"{test}.fio", where), where
    return read


def with_job_files(expanded: Expanded, jobs: dict[str, JobFile]) -> Expanded:
    """The plan with each test's own job file (bench_job) as read before the run."""
    return replace(expanded, tests=[replace(t, bench_job=jobs.get(t.name, t.bench_job)) for t in expanded.tests])


def keep_job_files(run_dir: Path, expanded: Expanded) -> None:
    """The job files a run's fio runs, copied into its run directory as they were read (resume runs these)."""
    for t in expanded.tests:
        if t.bench_job is not None:
            (run_dir / JOB_FILES).mkdir(exist_ok=True)
            received.write_atomic(received.folder_inside(run_dir, JOB_FILES) / f"{t.name}.fio", t.bench_job.text)
