"""`stibium import fio`: fio's JSON results read into a run directory whose report and compare work like any
other. Each file is a trial: a job of the same name in every file is one test point (its shape must be the same
in each), with one row of measurements.csv a trial (fio --client: one row a client, the clients a step as
stibium's many clients are). The run directory keeps every file as fio wrote it (`fio/`), so that what stibium
does not read stays at hand; run.json carries a plan made from the jobs (plan.as_given, one pattern test a job)
and `imported` (the files, fio's version). Everything is read and checked before anything is written: a damaged
file leaves no directory behind."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__, registry
from ..rundir import received
from ..errors import FioError
from ..rundir.measurement import Measurement
from ..analysis.rates import SHAPE_FIELDS
from ..rundir.record import PlanRecord, RunRecord
from ..rundir.store import MeasurementLog, iso, new_run_dir, write_run_json
from .result import INSTRUMENT, FioResult, Job, Shape, parse, point_columns, shape

SAVED = "fio"                 # the folder of the run directory that keeps the files as given
MAX_FILE_BYTES = 1 << 30


@dataclass(frozen=True)
class _Point:
    test: str
    shape: Shape


def import_fio(files: list[Path], out_dir: Path, name: str | None = None) -> Path:
    """A run directory in out_dir made from fio's JSON results `files` (each a trial); its path."""
    results = [_read(f) for f in files]
    points = _points(results, files)
    first = min((r.timestamp_s for r in results if r.timestamp_s is not None), default=None)
    started = dt.datetime.fromtimestamp(first, dt.timezone.utc) if first is not None else \
        dt.datetime.now(dt.timezone.utc)
    hosts = list(dict.fromkeys(h for r in results for h in r.clients))
    rows = _rows(results, points, first, hosts)
    plan_name = name or _safe(f"fio-{files[0].stem}")
    run_dir = new_run_dir(out_dir, plan_name, "imported", started)
    try:
        (run_dir / SAVED).mkdir()
        for i, f in enumerate(files):
            shutil.copyfile(f, run_dir / SAVED / f"{i + 1}-{f.name}")
        log = MeasurementLog(run_dir)
        for m in rows:
            log.append(m)
        log.close()
        write_run_json(run_dir, _record(plan_name, files, results, points, started, hosts))
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
    return run_dir


def _read(path: Path) -> FioResult:
    try:
        text = received.read_text(path, MAX_FILE_BYTES, follow=True, errors="replace")
    except received.Refused as e:
        raise FioError(f"{e}; that is no fio result: give the file fio wrote with --output-format=json or "
                       f"json+") from None
    except OSError as e:
        raise FioError(f"{path}: cannot be read ({e.strerror or e}); give a file fio wrote") from None
    return parse(text, str(path))


def _points(results: list[FioResult], files: list[Path]) -> dict[tuple[str, int], _Point]:
    """Each job (by name and group) as a test point; a job whose shape differs between the files is refused."""
    points: dict[tuple[str, int], _Point] = {}
    tests: set[str] = set()
    for result, path in zip(results, files):
        for job in result.jobs:
            got = shape(job, str(path))
            key = (job.name, job.groupid)
            if key not in points:
                test = _safe(job.name) or "job"
                while test in tests:                 # the same name in two groups
                    test = f"{test}.g{job.groupid}"
                tests.add(test)
                points[key] = _Point(test, got)
            elif _comparable(points[key].shape) != _comparable(got):
                raise FioError(f"{path}: job {job.name!r} is not the job of the same name in {files[0]} (its rw, bs, "
                               f"iodepth or numjobs differ); import the results of one job file together")
    versions = {r.version for r in results}
    if len(versions) > 1:
        raise FioError(f"the files were written by {' and '.join(sorted(versions))}; import the results of one fio "
                       f"together")
    return points


def _comparable(s: Shape) -> tuple:
    return (*(getattr(s, f) for f in SHAPE_FIELDS), s.direct)


def _rows(results: list[FioResult], points: dict[tuple[str, int], _Point], first_s: float | None,
          hosts: list[str]) -> list[Measurement]:
    """Every job of every file a row; a client's rank is its place among every file's clients (run.json's)."""
    out = []
    seq = 0
    for trial, result in enumerate(results):
        started = (result.timestamp_s - first_s) if result.timestamp_s is not None and first_s is not None else None
        steps: dict[tuple[str, int], int] = {}
        for job in result.jobs:
            key = (job.name, job.groupid)
            if key not in steps:                         # every client's row of one job is one step: one seq
                steps[key] = seq
                seq += 1
            out.append(_row(job, points[key], trial, steps[key], result.version, hosts, started))
    return out


def _row(job: Job, point: _Point, trial: int, seq: int, version: str, hosts: list[str],
         started_s: float | None) -> Measurement:
    values = point_columns(job, point.shape)
    rank = hosts.index(job.host) if job.host is not None and len(hosts) > 1 else None
    seconds = values.get("seconds")
    clients: dict[str, Any] = {}
    if rank is not None:                 # fio's clients start together on the server's go: one step's start
        clients = {"rank": rank, "host": job.host, "written_by": rank if point.shape.op != "write" else None,
                   "run_start_s": started_s or 0.0,
                   "run_end_s": (started_s or 0.0) + seconds if seconds is not None else None}
    return Measurement(seq=seq, test=point.test, trial=trial, started_s=started_s, instrument_version=version,
                       **clients, **values)


def _record(name: str, files: list[Path], results: list[FioResult], points: dict[tuple[str, int], _Point],
            started: dt.datetime, hosts: list[str]) -> RunRecord:
    tests = [{"name": p.test, "kind": registry.BENCHED, "op": p.shape.op if p.shape.op != "mixed" else None,
              "read_fraction": p.shape.read_fraction, "access": p.shape.access,
              "granularities": [p.shape.granularity_bytes], "strides": [p.shape.stride_bytes],
              "queue_depth": p.shape.queue_depth, "threads": p.shape.threads, "trials": len(files),
              "engine": "direct" if p.shape.direct else "buffered", "sync": "fsync" if p.shape.synced else "none",
              "fill": "random"} for p in points.values()]
    version = results[0].version
    return RunRecord(stibium_version=__version__, helper={"imported_from": INSTRUMENT},
                     plan=PlanRecord(name=name, description=f"fio results imported ({version})",
                                     source=str(files[0]), text=None,
                                     as_given={"name": name, "tests": tests, "defaults": {}}),
                     expanded={"tests": [{"name": t["name"], "kind": registry.BENCHED} for t in tests],
                               "ops_count": sum(len(r.jobs) for r in results)},
                     machine={"hostname": hosts[0] if len(hosts) == 1 else None},
                     started_utc=iso(started), started_epoch_s=started.timestamp(), ended_utc=iso(started),
                     status="complete",
                     clients={"ranks": len(hosts), "hosts": hosts} if len(hosts) > 1 else {},
                     extra={"imported": {"from": INSTRUMENT, "version": version,
                                         "files": [f"{SAVED}/{i + 1}-{f.name}" for i, f in enumerate(files)]}})


def _safe(text: str) -> str:
    """A name as a plan's test or a run directory takes it: letters, digits, . _ -, at most 64."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip("._-")[:64]
