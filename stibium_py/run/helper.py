"""The helper binary: where it is, and talking to it.

One helper process answers many measurements (`stibium-helper batch`: one JSON
array of arguments per line in, one JSON object per line out), so a run pays
Foundation's start-up once, not per measurement. Each answer is parsed
into a `HelperResult`.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol
from .. import fills
from ..errors import HelperError, HelperTimeout

if TYPE_CHECKING:
    from ..rundir.op import Op

HELPER_NAME = "stibium-helper"
ENV_VAR = "STIBIUM_HELPER"


def find_helper() -> Path:
    """STIBIUM_HELPER, then the helper installed inside the package, then an editable build."""
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise HelperError(f"{ENV_VAR}={env} is not an executable file; unset it or point it at a built helper")
        return path
    package = Path(__file__).resolve().parent.parent      # stibium_py, where the build installs the helper
    candidates = [package / HELPER_NAME]
    try:
        dist = importlib.metadata.distribution("stibium")
        candidates.append(Path(str(dist.locate_file(f"stibium_py/{HELPER_NAME}"))))
        candidates.extend(sorted((package.parent / "build").glob(f"cp3*/helper/{HELPER_NAME}")))
    except importlib.metadata.PackageNotFoundError:
        pass
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise HelperError(f"{HELPER_NAME} not found; install stibium with `pip install .` or set {ENV_VAR}")


@dataclass(frozen=True)
class HelperResult:
    """One answer of the helper: status 0 (ok), 1 (I/O failure) or 2 (usage)."""

    status: int
    data: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def error(self) -> str:
        return str(self.data.get("error", "")) if not self.ok else ""


def op_args(command: str, path: Path, **flags: Any) -> list[str]:
    """Arguments of one helper command; flags with value None are left out, True is a bare flag."""
    args = [command, "--path", str(path)]
    for key, value in flags.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [flag, str(value)]
    return args


def raw_clock_source(platform: str, monotonic_implementation: str, has_monotonic_raw: bool) -> str | None:
    """Which of Python's clocks is the helper's: "monotonic_raw" (clock_gettime(CLOCK_MONOTONIC_RAW)) on Linux;
    "monotonic" on macOS where CPython reads time.monotonic from mach_absolute_time scaled by the timebase,
    as the helper does (the clock's own description says so); None elsewhere."""
    if platform.startswith("linux") and has_monotonic_raw:
        return "monotonic_raw"
    if platform == "darwin" and monotonic_implementation == "mach_absolute_time()":
        return "monotonic"
    return None


def raw_clock_ns() -> int | None:
    """The helper's clock, read here (raw_clock_source); None where Python cannot read it."""
    source = raw_clock_source(sys.platform, time.get_clock_info("monotonic").implementation,
                              hasattr(time, "CLOCK_MONOTONIC_RAW"))
    if source == "monotonic_raw":
        return time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
    return time.monotonic_ns() if source == "monotonic" else None


LAYOUT_GRANULARITY_BYTES = 8 * 2**20


def measure_args(op: "Op", path: Path, device_block_bytes: int | None = None, wearout: bool = False) -> list[str]:
    """The helper command of one planned measurement. device_block_bytes: the disk's block size where the
    target's facts know it (macOS: diskutil's DeviceBlockSize), which xnu's uncached-read rule uses; wearout (many
    clients): where the operation has a stonewall, the helper asks there how many requests to reach."""
    return op_args(op.op, path, bytes=op.bytes, granularity=op.granularity_bytes, access=op.access,
                   stride=op.stride_bytes or None, span=op.span_bytes, offset=op.offset_bytes or None,
                   seed=op.seed, data_seed=op.data_seed, fill=fills.helper_text(op.fill), engine=op.engine,
                   sync=op.sync if op.writes else None, existing=op.existing,
                   queue_depth=op.queue_depth if op.queue_depth > 1 else None,
                   threads=op.threads if op.threads > 1 else None, chunk=op.chunk_bytes or None,
                   device_block=device_block_bytes or None, read_fraction=op.read_fraction,
                   duration=op.duration_s or None, warmup=op.warmup_s or None, stonewall=op.stonewall_s or None,
                   wearout=wearout and bool(op.stonewall_s), fps=repr(op.frames.fps) if op.frames else None,
                   rate=repr(op.rate_per_s) if op.rate_per_s else None, arrivals=op.arrivals or None)


PRECONDITION_GRANULARITY_BYTES = 128 * 1024


def precondition_args(path: Path, span_bytes: int, offset_bytes: int, engine: str, fill: str,
                      data_seed: int) -> list[str]:
    """One pass of preconditioning (SNIA PTS's workload-independent preconditioning, written twice): the
    laid-out span written sequentially in 128 KiB requests with the test's engine, synced (untimed)."""
    return op_args("write", path, bytes=span_bytes, granularity=min(span_bytes, PRECONDITION_GRANULARITY_BYTES),
                   span=span_bytes, offset=offset_bytes or None, engine=engine, fill=fills.helper_text(fill), data_seed=data_seed,
                   sync="fsync", existing=True, latency="off")


def device_block_of(target_facts: dict[str, Any]) -> int | None:
    """The disk's block size from the target's facts (macOS: diskutil's DeviceBlockSize), or None."""
    value = target_facts.get("device_block_bytes")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def layout_args(path: Path, size_bytes: int, engine: str, fill: str, data_seed: int) -> list[str]:
    """Laying out a file before its measurements (untimed): in large requests, synced, direct where the
    test is, so that nothing but an unaligned tail is left in the page cache."""
    return op_args("write", path, bytes=size_bytes, granularity=min(size_bytes, LAYOUT_GRANULARITY_BYTES),
                   engine="direct" if engine == "direct" else "buffered", fill=fills.helper_text(fill), data_seed=data_seed,
                   sync="fsync", latency="off")


JOB_FILE_TIMEOUT_S = 6 * 3600.0


def op_timeout_s(op: "Op") -> float:
    """Time one operation may take before the helper counts as hung: generous for a
    slow disk (1 MB/s, 50 ms a request) and never under a minute; one by time, twice its time (a sync after
    it may write out what a buffered engine held); a plan's own fio job file, six hours."""
    if op.bench_job:              # a plan's own fio job file: its time is the job's, unknown to stibium
        return JOB_FILE_TIMEOUT_S
    if op.duration_s:
        return 60.0 + 2 * (op.warmup_s + op.duration_s)
    if op.phase:                  # a phase of files: 50 ms a file (one thread), its bytes at 1 MB/s
        return 60.0 + op.bytes / 1e6 + 0.05 * op.phase.files
    requests = -(-op.bytes // op.granularity_bytes)
    paced_s = op.bytes / op.chunk_bytes / op.frames.fps if op.frames else 0.0     # a stream's frames wait for their times
    return 60.0 + paced_s + op.bytes / 1e6 + 0.05 * requests


class Helper:
    """A running `stibium-helper batch` process; use as a context manager."""

    def __init__(self, path: Path | None = None):
        self.path = path or find_helper()
        self._proc: subprocess.Popen[str] | None = None
        self._pending = b""          # read from the helper, not yet a whole line

    def __enter__(self) -> "Helper":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self._pending = b""
        try:
            self._proc = subprocess.Popen([str(self.path), "batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, bufsize=1,
                                          start_new_session=True)
        except OSError as e:
            raise HelperError(f"cannot start {self.path}: {e.strerror}") from None

    def call(self, args: list[str], timeout_s: float | None = None,
             on_row: Callable[[dict[str, Any]], None] | None = None,
             on_stonewall: Callable[[int], int] | None = None) -> HelperResult:
        """Send one command, wait for its answer (at most timeout_s for each line). A measurement with
        --chunk writes a row per chunk before its answer: each goes to on_row as it arrives. One with --wearout
        says at its stonewall how many requests it had done: on_stonewall gives the count to reach, sent back."""
        if self._proc is None or self._proc.poll() is not None:
            self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(args) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            raise HelperError(f"the helper exited unexpectedly (status {proc.poll()})") from None
        while True:
            line = self._readline(proc, timeout_s)
            done = _stonewall_row(line)
            if done is not None:
                target = on_stonewall(done) if on_stonewall is not None else done
                try:
                    proc.stdin.write(f"{target}\n")
                    proc.stdin.flush()
                except BrokenPipeError:
                    raise HelperError(f"the helper exited unexpectedly (status {proc.poll()})") from None
                continue
            row = _chunk_row(line)
            if row is None:
                break
            if on_row is not None:
                on_row(row)
        if not line:
            status = proc.wait()
            stderr = proc.stderr.read().strip() if proc.stderr else ""
            self._proc = None
            detail = f": {stderr.splitlines()[-1]}" if stderr else ""
            raise HelperError(f"the helper crashed (exit status {status}){detail}")
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            raise HelperError(f"the helper answered something that is not JSON: {line[:200]!r}") from None
        return HelperResult(status=int(data.pop("status", 1)), data=data)

    def _readline(self, proc: subprocess.Popen[str], timeout_s: float | None) -> str:
        """The helper's next line ("" at its end), at most timeout_s after it was asked for. Read from the
        descriptor with a buffer of its own: a streamed measurement's last chunk row and its answer can come in
        one read, and a line already in a file object's buffer is invisible to select."""
        import selectors

        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while b"\n" not in self._pending:
            if deadline is not None:
                with selectors.DefaultSelector() as sel:
                    sel.register(fd, selectors.EVENT_READ)
                    if not sel.select(max(0.0, deadline - time.monotonic())):
                        self.kill()
                        raise HelperTimeout(f"the helper did not answer within {timeout_s:.0f} s")
            data = os.read(fd, 1 << 16)
            if not data:
                line, self._pending = self._pending, b""
                return line.decode(errors="replace")
            self._pending += data
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode(errors="replace") + "\n"

    def kill(self) -> None:
        """Stop the helper at once (and anything it started)."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        self._proc = None

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self.kill()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
        self._proc = None


def _chunk_row(line: str) -> dict[str, Any] | None:
    """A chunk row of a streamed measurement (it has "chunk" and no "status"), or None for anything else."""
    if not line.startswith('{"chunk":'):
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    return data if "status" not in data else None


def _stonewall_row(line: str) -> int | None:
    """--wearout: the requests done by the stonewall, from the helper's line that says so; None for any other."""
    if not line.startswith('{"stonewall":'):
        return None
    try:
        done = json.loads(line)["stonewall"]
    except (json.JSONDecodeError, KeyError):
        return None
    return done if isinstance(done, int) else None


class HelperSession(Protocol):
    """A helper that answers commands one after another (`stibium-helper batch`, or a test's fake)."""

    def call(self, args: list[str], timeout_s: float | None = None,
             on_row: Callable[[dict[str, Any]], None] | None = None,
             on_stonewall: Callable[[int], int] | None = None) -> HelperResult: ...

    def kill(self) -> None: ...

    def __enter__(self) -> "HelperSession": ...

    def __exit__(self, *exc: object) -> None: ...


class HelperFactory(Protocol):
    """How the runner reaches a helper: one invocation of its own (info), and a session of many commands.
    The runner's tests give it a fake that needs no compiled binary (tests/fake_helper.py)."""

    def once(self, args: list[str]) -> HelperResult: ...

    def session(self) -> HelperSession: ...


@dataclass(frozen=True)
class CompiledHelper:
    """The compiled helper at `path`."""

    path: Path

    def once(self, args: list[str]) -> HelperResult:
        return run_once(args, self.path)

    def session(self) -> Helper:
        return Helper(self.path)


def run_once(args: list[str], helper: Path | None = None, timeout_s: float = 60) -> HelperResult:
    """One helper invocation in its own process (for `info` and tests)."""
    path = helper or find_helper()
    try:
        proc = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise HelperTimeout(f"{HELPER_NAME} {args[0]} did not answer within {timeout_s:.0f} s") from None
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise HelperError(f"{HELPER_NAME} answered something that is not JSON: {proc.stdout[:200]!r}") from None
    return HelperResult(status=proc.returncode, data=data)

