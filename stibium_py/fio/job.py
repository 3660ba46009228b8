"""fio as the bench beside the road test: the fio job equivalent to one of a pattern test's measurements (pure:
`job_text`), finding fio before a run starts (`find_fio`), running one job (`run_job`) and its result as the
measurement's row (`row_of`). A plan's own job file instead (bench_job): read and checked by fio before the run
(`checked_job_file`), run as it is, each of its jobs a row (`rows_of_jobs`). docs/fio.md maps each plan field to
the fio option and back."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import fills
from ..errors import FioError
from ..rundir.measurement import OP_FIELDS, Measurement
from ..rundir.op import Op
from .jobfile import check_job_file
from .result import INSTRUMENT, Job, Side, measured, parse, point_columns, shape

FIO_OUTPUTS = "fio.jsonl"
JOB_FILES = "fio-jobs"                # the run directory's copies of the plan's job files, one a test (resume runs them)
# the requests in flight beyond one: fio's asynchronous engine of each platform, as the helper's own method
# (io_uring on Linux, where the helper uses it too; POSIX AIO on macOS, where the helper runs a thread per request)
ASYNC_ENGINES = {"linux": ("io_uring", "libaio"), "darwin": ("posixaio",)}
SYNC_ENGINE = "psync"                 # one request at a time: pread and pwrite, as the helper's sync method


@dataclass(frozen=True)
class Fio:
    """The fio a run uses: where it is, its version, and its I/O engines."""

    path: str
    version: str
    engines: frozenset[str]

    def ioengine(self, queue_depth: int, platform: str) -> str:
        """The engine of a measurement: psync one request at a time, else the platform's asynchronous engine."""
        if queue_depth == 1:
            return SYNC_ENGINE
        for engine in ASYNC_ENGINES.get(platform, ("posixaio",)):
            if engine in self.engines:
                return engine
        raise FioError(f"this fio ({self.path}) has none of {', '.join(ASYNC_ENGINES.get(platform, ('posixaio',)))}, "
                       f"which a queue depth above 1 needs; install a fio built with them or lower queue_depth")


def find_fio(command: str | None = None) -> Fio:
    """fio on the PATH (or `command`), refused in one line where it is missing or older than 3."""
    path = shutil.which(command or "fio")
    if path is None:
        raise FioError("bench: fio needs fio, which is not installed (Debian/Ubuntu: apt-get install fio; macOS: brew "
                       "install fio); install it or leave bench out of the plan")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        listed = subprocess.run([path, "--enghelp"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FioError(f"{path} does not run ({e}); reinstall fio or leave bench out of the plan") from None
    found = re.match(r"^fio-(\d+)\.", version)
    if not found or int(found.group(1)) < 3:
        raise FioError(f"{path} says its version is {version!r}; bench: fio needs fio 3.x: install a newer fio")
    engines = frozenset(line.strip() for line in listed.splitlines()[1:] if line.strip())
    return Fio(path, version, engines)


def job_text(op: Op, path: Path, ioengine: str) -> str:
    """The fio job that makes the same requests as the helper's measurement `op` of the file at `path`: its
    threads as numjobs, each job the part of the requests the helper gives that thread (thread t the requests
    [t*n/T, (t+1)*n/T), here t*n/T*(granularity+stride) bytes in by offset_increment), its queue depth as
    iodepth, the engine's cache path as direct, the sync at the end inside the time (end_fsync), the fill as
    buffer_pattern, by time as time_based with ramp_time. One report of all the jobs (group_reporting)."""
    requests = -(-op.bytes // op.granularity_bytes)
    per_thread = requests // op.threads
    step = op.granularity_bytes + op.stride_bytes
    region = per_thread * step - op.stride_bytes if op.access != "random" else \
        (op.size_bytes // op.threads) // op.granularity_bytes * op.granularity_bytes
    rw = {"read": "read", "write": "write", "mixed": "rw"}[op.op]
    if op.access == "random":
        rw = "rand" + rw
    lines = ["[global]", f"filename={_escaped(path)}", f"rw={rw}" + (f":{op.stride_bytes}" if op.stride_bytes else ""),
             f"bs={op.granularity_bytes}", f"size={region}", f"io_size={per_thread * op.granularity_bytes}",
             f"numjobs={op.threads}", f"iodepth={op.queue_depth}", f"ioengine={ioengine}",
             f"direct={1 if op.engine == 'direct' else 0}", "thread=1", "group_reporting=1",
             f"randseed={op.seed % 2**32}", "fallocate=none", "invalidate=1"]
    if op.offset_bytes or op.threads > 1:
        lines += [f"offset={op.offset_bytes}", f"offset_increment={region if op.access == 'random' else per_thread * step}"]
    if op.read_fraction is not None:
        lines.append(f"rwmixread={round(op.read_fraction * 100)}")
    if op.writes and op.sync == "dsync":
        lines.append("sync=dsync")                 # every write O_DSYNC, as the helper's sync: dsync
    elif op.writes and op.sync != "none":
        lines.append("end_fsync=1")                # fio ends a job with fsync only (data and barrier included)
    # the helper writes one buffer of its fill in every request: fio's buffer, filled once with random bytes
    # (or the fill byte), not scrambled per request (scramble_buffers, on by default, made zram write 3.5 times
    # slower: tests/bench/bench_fio_twin.py)
    lines.append("scramble_buffers=0")
    lines += fills.fio_lines(op.fill)
    if op.duration_s:
        lines += ["time_based=1", f"runtime={round(op.duration_s * 1000)}ms"]
        if op.warmup_s:
            lines.append(f"ramp_time={round(op.warmup_s * 1000)}ms")
    lines += [f"[stibium-{op.seq}]", ""]
    return "\n".join(lines)


def run_job(fio: Fio, text: str, timeout_s: float, cwd: Path | None = None) -> tuple[str, str | None]:
    """fio's JSON output (json+) of one job (or job file, its relative file names in `cwd`), or the reason it gave
    none."""
    try:
        done = subprocess.run([fio.path, "--output-format=json+", "-"], input=text, capture_output=True, text=True,
                              timeout=timeout_s, cwd=cwd)
    except subprocess.TimeoutExpired:
        return "", f"fio did not finish in {timeout_s:.0f} s"
    if done.returncode != 0 and "{" not in done.stdout:
        lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
        return "", f"fio exited with status {done.returncode}: {lines[-1] if lines else 'no message'}"
    return done.stdout, None


def row_of(op: Op, output: str, failure: str | None, fio: Fio, started_s: float | None,
           resident_before: float | None) -> Measurement:
    """The measurement of `op` from fio's output (run_job's); where fio gave none (`failure`), or its output does
    not read, or it moved other bytes than the plan asked (fio stopped early), a failed measurement that says so."""
    base: dict[str, Any] = {**_fio_base(op, fio, started_s), "engine_requested": op.engine,
                            "resident_before": resident_before,
                            "sync_used": ({"none": "none", "dsync": "O_DSYNC"}.get(op.sync, "fsync")) if op.writes else None,
                            "span_bytes": op.size_bytes, "offset_bytes": op.offset_bytes or None}
    if op.duration_s:
        base.update(duration_s=op.duration_s, warmup_s=op.warmup_s)
    if failure is not None:
        return Measurement(**{**base, "bytes": 0, "error": failure})
    try:
        result = parse(output, f"fio's output for operation {op.seq}")
        job = _one_job(result.jobs, op)
        got = shape(job, f"fio's output for operation {op.seq}")
    except FioError as e:
        return Measurement(**{**base, "bytes": 0, "error": str(e)})
    values = measured(job, op.op)
    values["io_method"] = got.ioengine
    if values.get("error") is None and not op.duration_s and values["bytes"] != op.bytes:
        values.update(seconds=None, error=f"fio moved {values['bytes']} bytes where the plan asked for {op.bytes}")
    return Measurement(**{**base, **values})


@dataclass(frozen=True)
class JobFile:
    """A plan's own job file as read before the run: its text, and the files its jobs name (filename=, as fio reads
    them), whose residency is read before each run of it."""

    text: str
    files: tuple[str, ...]


def checked_job_file(fio: Fio, data: bytes, where: str) -> JobFile:
    """A plan's own job file (its bytes; `where` names it), refused in one line before the run where it steps off
    the allow-list (jobfile.check_job_file: before fio sees any of it), where fio cannot read what passed, where it
    has no job, or where a job of it has no stibium point (a trim, a range of request sizes): fio's own parse
    (--parse-only) of the checked text, then each job's options as fio reads them (--showcmd) given to the shape
    every fio row is read by. The checked text is what every run of it uses."""
    checked = check_job_file(data, where)
    for args in (["--parse-only", "-"], ["--showcmd", "-"]):
        try:
            done = subprocess.run([fio.path, *args], input=checked.text, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise FioError(f"{where}: fio could not read it ({e})") from None
        said = [ln.strip() for ln in done.stderr.splitlines() if ln.strip() and not ln[0].isspace()]
        if done.returncode != 0:
            raise FioError(f"{where}: fio refuses it: {said[0][:200] if said else f'status {done.returncode}'}; mend "
                           f"the job file (fio --parse-only FILE says the same)")
    for job in planned_jobs(done.stdout):
        shape(job, where)
    return JobFile(checked.text, checked.files)


def planned_jobs(showcmd: str) -> list[Job]:
    """The jobs of fio's --showcmd line (`fio --size=1m --name=a --rw=read --name=b ...`: the global options, then
    each job's from its --name), as jobs that have not run: their options, and no bytes."""
    idle = Side(0, 0, 0, {}, None, None)
    glob: dict[str, str] = {}
    jobs: list[dict[str, str]] = []
    for item in re.split(r"\s--(?=[A-Za-z_])", " " + showcmd.strip().removeprefix("fio"))[1:]:
        key, _, value = item.strip().partition("=")
        value = value.strip()            # fio shows a value with the blanks around it in the file; it reads it without
        if key == "name":
            jobs.append({"name": value})
        (jobs[-1] if jobs else glob)[key] = value
    return [Job(name=j["name"], groupid=0, host=None, options={**glob, **j}, error=0, read=idle, write=idle)
            for j in jobs]


def rows_of_jobs(op: Op, output: str, failure: str | None, fio: Fio, started_s: float | None,
                 resident_before: dict[str, float | None]) -> list[Measurement]:
    """The rows of a plan's own job file, run once (`op`): each of its jobs a row of the point its shape gives, its
    file's residency before the run (`resident_before`, by the job's filename); where fio gave no output, or it
    does not read, one failed row that says why."""
    base = _fio_base(op, fio, started_s)
    if failure is not None:
        return [Measurement(**{**base, "bytes": 0, "error": failure})]
    try:
        jobs = parse(output, f"fio's output for the job file of operation {op.seq}").jobs
        shapes = [shape(job, f"the job file of operation {op.seq}") for job in jobs]
    except FioError as e:
        return [Measurement(**{**base, "bytes": 0, "error": str(e)})]
    return [Measurement(**{**base, **point_columns(job, s),
                           "resident_before": resident_before.get(job.options.get("filename", ""))})
            for job, s in zip(jobs, shapes)]


def keep_output(run_dir: Path, seq: int, text: str, output: str) -> None:
    """fio's job and its whole output, a line of fio.jsonl in the run directory (what stibium's row leaves out)."""
    from ..rundir import received
    with received.open_append(run_dir / FIO_OUTPUTS) as f:        # a resumed run's folder may have come from anyone
        f.write(json.dumps({"seq": seq, "job": text, "output": output}, separators=(",", ":")) + "\n")


def _fio_base(op: Op, fio: Fio, started_s: float | None) -> dict[str, Any]:
    """The columns every fio row of `op` has: the operation's, fio as its instrument, when it started."""
    return {**{f: getattr(op, f) for f in OP_FIELDS}, "engine": op.engine, "instrument": INSTRUMENT,
            "instrument_version": fio.version, "started_s": started_s}


def _one_job(jobs: list[Job], op: Op) -> Job:
    if len(jobs) != 1:
        raise FioError(f"fio reported {len(jobs)} jobs for operation {op.seq}, where it was given one")
    return jobs[0]


def _escaped(path: Path) -> str:
    """A file name as fio reads it: a colon separates file names there, so it is escaped."""
    return str(path).replace(":", "\\:")
