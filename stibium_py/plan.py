"""Plans: the YAML a person writes, its validation, and its expansion into operations.

Two types, as in click + pydantic CLIs: `Plan` is the plan as written (pydantic,
unknown keys are errors, every field described); `Expanded` is what the runner
executes: tests with their operations, every random choice (orders, offsets)
drawn from the plan's seed, so the same plan and seed give the same run.
Errors are `PlanError`: one line naming the file, the line, the key and what is
allowed.
"""

from __future__ import annotations

import difflib
import hashlib
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator
from ruamel.yaml import YAML

from .paths import PathError, existing_part
from ruamel.yaml.error import YAMLError

from .units import SizeError, parse_bytes

MIN_GRANULARITY_BYTES = 4000            # 4 KB
MAX_GRANULARITY_BYTES = 2 * 1024**3     # 2 GiB
PLANS_DIR_NAME = "plans"
MAX_SIZES = 10000
MAX_QUEUE_DEPTH = 256
MAX_THREADS = 64
# Requests in flight at once (queue depth x threads): macOS runs one thread per request in flight, and xnu
# refuses a task's thread beyond task_threadmax (osfmk/kern/thread.c), at least 2048 on a Mac of 3 GB or
# more (osfmk/kern/startup.c; docs/platforms.md); a plan stays at 1024, well under it, so that it runs on
# every machine it is carried to.
MAX_IN_FLIGHT = 1024
MAX_OPS = 1_000_000
# A plan is untrusted input (pasted in forums, attached to bug reports): its reading is bounded before any
# parsing. The built-in plans are under 3 KB and the largest plan a person writes by hand a few dozen KB,
# so 256 KiB is generous; it parses in about 0.2 s.
MAX_PLAN_BYTES = 256 * 1024
# Nesting: a plan is 5 levels deep (tests, a test, sizes, a range); 32 leaves room and keeps the parser's
# recursion far from Python's limit.
MAX_PLAN_DEPTH = 32
# Values in the whole document (keys, scalars, lists), counted while the document is read.
MAX_PLAN_NODES = 100_000

Engine = Literal["direct", "buffered", "foundation", "app"]
Sync = Literal["fsync", "full", "none"]
Units = Literal["decimal", "binary"]
Access = Literal["sequential", "strided", "random"]
IoOp = Literal["read", "write"]
Size = Union[StrictInt, str]


class PlanError(Exception):
    """A plan that cannot be run; the message is one line for the user. `loc` is the key path
    in the plan (("tests", 0, "sizes", 2)) where it points, when it points somewhere."""

    def __init__(self, message: str, loc: tuple = ()):
        super().__init__(message)
        self.loc = loc


@dataclass(frozen=True)
class Where:
    """A place in the plan: its key path, and its label for people ("tests[0] (files).sizes[2]")."""

    loc: tuple = ()
    label: str = ""

    def __truediv__(self, key: str | int) -> "Where":
        label = f"{self.label}[{key}]" if isinstance(key, int) else f"{self.label}.{key}"
        return Where(self.loc + (key,), label)

    def error(self, message: str) -> PlanError:
        return PlanError(f"{self.label}: {message}", self.loc)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SizeRange(_Strict):
    """Sizes spaced evenly on a log scale between two ends."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    from_: Size = Field(alias="from", description="smallest size, such as 10KB")
    to: Size = Field(description="largest size, such as 2GB")
    count: int | None = Field(None, ge=2, le=10000, description="how many sizes, log-spaced (give count or factor)")
    factor: float | None = Field(None, gt=1, description="each size this many times the last (give count or factor)")

    @model_validator(mode="after")
    def _one_of(self) -> "SizeRange":
        if (self.count is None) == (self.factor is None):
            raise ValueError("give exactly one of count or factor")
        return self


Sizes = Union[list[Size], SizeRange]


class Defaults(_Strict):
    """Settings every test inherits unless it sets its own."""

    engine: Engine = Field("direct", description="direct | buffered | foundation | app (foundation on macOS, else buffered)")
    fill: str = Field("random", description="random (incompressible) or a byte such as 0x41")
    units: Units = Field("decimal", description="KB/MB/GB as 1000^n (decimal) or 1024^n (binary)")
    sync: Sync = Field("fsync", description="fsync | full (F_FULLFSYNC on macOS) | none")
    seed: StrictInt = Field(1, ge=0, description="every random choice (orders, offsets, data) follows from it")

    @field_validator("fill")
    @classmethod
    def _fill(cls, value: str) -> str:
        if value == "random":
            return value
        try:
            byte = int(value, 0)
        except ValueError:
            byte = -1
        if not 0 <= byte <= 255:
            raise ValueError(f"fill must be random or a byte such as 0x41, not {value!r}")
        return value


class _TestBase(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=64,
                      description="names the test in the run; letters, digits, . _ -")
    engine: Engine | None = Field(None, description="overrides defaults.engine")
    fill: str | None = Field(None, description="overrides defaults.fill")
    units: Units | None = Field(None, description="overrides defaults.units")
    sync: Sync | None = Field(None, description="overrides defaults.sync")
    seed: StrictInt | None = Field(None, ge=0, description="overrides defaults.seed")

    _fill = field_validator("fill")(lambda cls, v: v if v is None else Defaults._fill(v))


class FilesTest(_TestBase):
    """Whole-file writes of many sizes, then reads of the same files."""

    kind: Literal["files"] = Field(description="files: whole-file writes, then reads")
    sizes: Sizes = Field(description="file sizes: a list such as [10KB, 1MB] or {from, to, count|factor}")
    repeats: int = Field(1, ge=1, le=100000, description="files written per size")
    write_order: Literal["as-listed", "cycle", "random"] = Field(
        "random", description="as-listed (size by size) | cycle (all sizes, then again) | random")
    read_order: Literal["as-written", "random", "directory"] = Field(
        "random", description="as-written | random | directory (file-name order)")
    between: Literal["none", "evict", "drop-caches", "reboot"] = Field(
        "evict", description="what happens between the writes and the reads")


class PatternTest(_TestBase):
    """Requests of one granularity inside one file, over several trials."""

    kind: Literal["pattern"] = Field(description="pattern: requests of a granularity inside one file")
    op: IoOp | list[IoOp] = Field(description="read | write, or both as a list")
    access: Access | list[Access] = Field("sequential", description="sequential | strided | random, or a list")
    granularities: Sizes = Field(description="request sizes, 4 KB to 2 GB: a list or {from, to, count|factor}")
    strides: list[Size] = Field([0], description="bytes skipped after each request (strided access)")
    bytes: Size = Field(description="bytes moved per trial")
    span: Size | None = Field(None, description="size of the file the requests fall in (>= bytes; default = bytes)")
    queue_depth: Union[StrictInt, list[StrictInt]] = Field(
        1, description="requests in flight per thread, 1 to 256, or a list such as [1, 8, 32]")
    threads: Union[StrictInt, list[StrictInt]] = Field(
        1, description="threads, each with its own part of the requests, 1 to 64, or a list such as [1, 4]")
    trials: int = Field(5, ge=1, le=10000,
                        description="repeats of each (op, access, granularity, stride, queue depth, threads)")
    layout: Literal["laid-out", "fresh"] = Field(
        "laid-out", description="writes go into a file laid out beforehand, or a fresh file per trial")


class SustainedTest(_TestBase):
    """Writes without a pause, one file after another, timed chunk by chunk: where the fast cache ends."""

    kind: Literal["sustained"] = Field(description="sustained: a long write without pauses, a row per chunk")
    bytes: Size | None = Field(None, description="bytes to write, such as 50GB (give bytes or fraction_of_free)")
    fraction_of_free: float | None = Field(
        None, gt=0, le=0.9, description="or this part of the target's free space when the run starts, such as 0.5")
    max_bytes: Size | None = Field(None, description="with fraction_of_free: write at most this much, such as 100GB")
    file_size: Size = Field("2GiB", description="the bytes go into files of this size, one after another")
    granularity: Size = Field("1MiB", description="bytes per request, 4 KB to 2 GiB")
    chunk: Size = Field("256MiB", description="a row (rate, latency, temperature) after every this many bytes")
    queue_depth: StrictInt = Field(1, description="requests in flight per thread, 1 to 256")
    threads: StrictInt = Field(1, description="threads, each with its own part of every file's requests, 1 to 64")
    read_back: bool = Field(False, description="afterwards, read the files back the same way")

    @model_validator(mode="after")
    def _how_much(self) -> "SustainedTest":
        if (self.bytes is None) == (self.fraction_of_free is None):
            raise ValueError("give exactly one of bytes or fraction_of_free")
        if self.max_bytes is not None and self.fraction_of_free is None:
            raise ValueError("max_bytes caps fraction_of_free; with bytes, lower bytes instead")
        return self


TestSpec = Annotated[Union[FilesTest, PatternTest, SustainedTest], Field(discriminator="kind")]


class Plan(_Strict):
    """A benchmark plan, as written in plan.yaml."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=64, description="names the run directory")
    description: str = Field("", description="what the plan is for")
    target: str = Field("./stibium-test", description="folder for the test files (created; --target overrides)")
    ceiling_bytes_per_s: float | None = Field(
        None, gt=0, description="a rate no read can physically exceed on this device (cache detection)")
    runs: int = Field(1, ge=1, le=100, description="complete runs of the plan, one after another, each with fresh "
                      "test files (--runs overrides); two or more let compare see the variance between runs")
    defaults: Defaults = Field(Defaults(), description="settings every test inherits")
    tests: list[TestSpec] = Field(min_length=1, description="the tests, run in this order")

    @field_validator("tests")
    @classmethod
    def _unique_names(cls, tests: list[Any]) -> list[Any]:
        seen: set[str] = set()
        for test in tests:
            if test.name in seen:
                raise ValueError(f"two tests are named {test.name!r}; names must be unique")
            seen.add(test.name)
        return tests


# ---------------------------------------------------------------- expanded form

@dataclass(frozen=True)
class Op:
    """One helper measurement, in run order (`seq`)."""

    seq: int
    test: str
    kind: str               # files | pattern | sustained
    op: str                 # read | write
    access: str
    size_bytes: int         # file size (files) or span (pattern)
    granularity_bytes: int
    stride_bytes: int
    trial: int              # repeat (files) or trial (pattern), from 0
    file: str               # relative to the run's folder in the target
    bytes: int              # bytes moved
    engine: str
    fill: str
    sync: str
    seed: int               # order of random access
    data_seed: int          # fill data
    existing: bool          # write into a laid-out file
    queue_depth: int = 1    # requests in flight per thread
    threads: int = 1
    chunk_bytes: int = 0    # sustained: a row after every this many bytes (0: one answer at the end)

    def as_dict(self) -> dict[str, Any]:
        """Its fields; queue depth, threads and chunk only where they are set, so that the digest of a plan
        made before they existed stays what it was (a run of then still resumes)."""
        out = asdict(self)
        for key, unset in (("queue_depth", 1), ("threads", 1), ("chunk_bytes", 0)):
            if out[key] == unset:
                del out[key]
        return out


@dataclass(frozen=True)
class ExpandedTest:
    name: str
    kind: str
    ops: list[Op]
    between: str = "none"                      # files tests
    layout_file: str = ""                      # pattern tests: the laid-out file
    layout_bytes: int = 0
    files_bytes: int = 0                       # bytes of test files that exist at once
    free_bytes: int | None = None              # sustained with fraction_of_free: the free space it was taken of


@dataclass(frozen=True)
class Expanded:
    plan: Plan
    tests: list[ExpandedTest]
    ops: list[Op] = field(default_factory=list)

    @property
    def bytes_written(self) -> int:
        """Every byte the run writes: measured writes and layouts."""
        return sum(o.bytes for o in self.ops if o.op == "write") + sum(t.layout_bytes for t in self.tests)

    def space_needed_bytes(self, keep_files: bool = False) -> int:
        """Free space the run needs at its peak (test files are removed after each test)."""
        sizes = [t.files_bytes for t in self.tests]
        return sum(sizes) if keep_files else max(sizes, default=0)

    def ops_as_dicts(self) -> list[dict[str, Any]]:
        return [o.as_dict() for o in self.ops]


def _derive_seed(*parts: int | str) -> int:
    """A 63-bit seed from the plan seed and where it is used, stable across platforms."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def _size(value: Size, units: str, where: Where) -> int:
    try:
        n = parse_bytes(value, units)
    except SizeError as e:
        raise where.error(str(e)) from None
    if n <= 0:
        raise where.error(f"a size must be positive, not {value!r}")
    return n


def _sizes(spec: Sizes, units: str, where: Where) -> list[int]:
    if isinstance(spec, SizeRange):
        lo = _size(spec.from_, units, where / "from")
        hi = _size(spec.to, units, where / "to")
        if hi < lo:
            raise where.error(f"'to' ({spec.to}) is smaller than 'from' ({spec.from_})")
        if spec.count is not None:
            values = np.geomspace(lo, hi, spec.count)
        else:
            n = int(np.floor(np.log(hi / lo) / np.log(spec.factor) + 1e-9)) + 1
            if n > MAX_SIZES:
                raise (where / "factor").error(f"{spec.factor} gives {n} sizes between from and to; at most "
                                               f"{MAX_SIZES}: use a larger factor")
            values = lo * spec.factor ** np.arange(n)
        return sorted({int(round(v)) for v in values})
    if not spec:
        raise where.error("the list is empty; give at least one size")
    return [_size(v, units, where / i) for i, v in enumerate(spec)]


def _granularity(g: int, where: Where) -> int:
    """A request size, refused outside MIN_GRANULARITY_BYTES .. MAX_GRANULARITY_BYTES."""
    if not MIN_GRANULARITY_BYTES <= g <= MAX_GRANULARITY_BYTES:
        raise where.error(f"{g} bytes is outside 4 KB .. 2 GiB")
    return g


def _check_count(n_ops: int, where: Where) -> None:
    if n_ops > MAX_OPS:
        raise where.error(f"the test expands to {n_ops:,} measurements; at most {MAX_OPS:,} in one test")


def _files_ops(test: FilesTest, where: Where, s: dict[str, Any], seq0: int) -> ExpandedTest:
    sizes = _sizes(test.sizes, s["units"], where / "sizes")
    _check_count(2 * len(sizes) * test.repeats, where / "repeats")
    rng = np.random.default_rng(_derive_seed(s["seed"], test.name, "order"))
    pairs = [(size, r) for size in sizes for r in range(test.repeats)]          # as-listed
    if test.write_order == "cycle":
        pairs = [(size, r) for r in range(test.repeats) for size in sizes]
    elif test.write_order == "random":
        pairs = [pairs[i] for i in rng.permutation(len(pairs))]
    width = len(str(max(sizes)))
    name = {p: f"{test.name}/f-{p[0]:0{width}d}-r{p[1]:03d}.bin" for p in pairs}
    if test.read_order == "as-written":
        reads = list(pairs)
    elif test.read_order == "random":
        reads = [pairs[i] for i in rng.permutation(len(pairs))]
    else:
        reads = sorted(pairs, key=lambda p: name[p])
    ops = []
    for op, order in (("write", pairs), ("read", reads)):
        for size, r in order:
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="files", op=op, access="sequential",
                          size_bytes=size, granularity_bytes=size, stride_bytes=0, trial=r, file=name[(size, r)],
                          bytes=size, engine=s["engine"], fill=s["fill"], sync=s["sync"] if op == "write" else "none",
                          seed=s["seed"], data_seed=s["seed"], existing=False))
    return ExpandedTest(name=test.name, kind="files", ops=ops, between=test.between,
                        files_bytes=sum(sizes) * test.repeats)


def _counts(spec: int | list[int], most: int, where: Where) -> list[int]:
    """A count or a list of counts, each from 1 to `most`, in the order given, without repeats."""
    values = [spec] if isinstance(spec, int) else list(spec)
    if not values:
        raise where.error("the list is empty; give at least one value, such as 1")
    for i, v in enumerate(values):
        if not 1 <= v <= most:
            at = where if isinstance(spec, int) else where / i
            raise at.error(f"must be a whole number from 1 to {most}, not {v}")
    return list(dict.fromkeys(values))


def _in_flight_counts(test: "PatternTest | SustainedTest", engine: str, where: Where) -> tuple[list[int], list[int]]:
    """A test's queue depths and thread counts, each in range, refused together beyond what one request at a
    time engines and macOS allow."""
    depths = _counts(test.queue_depth, MAX_QUEUE_DEPTH, where / "queue_depth")
    threads = _counts(test.threads, MAX_THREADS, where / "threads")
    if engine in ("foundation", "app") and (max(depths) > 1 or max(threads) > 1):
        raise where.error(f"the {engine} engine moves one request at a time, as simple app code does; use "
                          f"engine: direct or buffered for queue_depth or threads above 1")
    if max(depths) * max(threads) > MAX_IN_FLIGHT:
        raise where.error(f"queue_depth {max(depths)} x threads {max(threads)} is {max(depths) * max(threads)} "
                          f"requests in flight; at most {MAX_IN_FLIGHT} (macOS needs a thread for each)")
    return depths, threads


def _in_flight(queue_depth: int, threads: int) -> tuple[int, ...]:
    """What a seed derives from besides the point: nothing at one request in flight, so that plans written
    before queue depth existed draw the same offsets."""
    return () if queue_depth == threads == 1 else (queue_depth, threads)


def _pattern_ops(test: PatternTest, where: Where, s: dict[str, Any], seq0: int) -> ExpandedTest:
    units = s["units"]
    grans = [_granularity(g, where / "granularities" / i)
             for i, g in enumerate(_sizes(test.granularities, units, where / "granularities"))]
    strides = [_size(v, units, where / "strides" / i) if v != 0 else 0 for i, v in enumerate(test.strides)]
    if not strides:
        raise (where / "strides").error("the list is empty; use [0] for no stride")
    moved = _size(test.bytes, units, where / "bytes")
    ops_list = [test.op] if isinstance(test.op, str) else list(dict.fromkeys(test.op))
    accesses = [test.access] if isinstance(test.access, str) else list(dict.fromkeys(test.access))
    if not ops_list or not accesses:
        raise where.error("op and access need at least one value")
    if any(st for st in strides) and "strided" not in accesses:
        raise (where / "strides").error("a stride needs strided access; add 'strided' to access or use strides: [0]")
    depths, threads = _in_flight_counts(test, s["engine"], where)
    combos = []
    for op in ops_list:
        for access in accesses:
            for g in grans:
                for st in strides if access == "strided" else [0]:
                    for qd in depths:
                        for t in threads:
                            combos.append((op, access, g, st, qd, t))
    _check_count(len(combos) * test.trials, where / "trials")
    needed = 0
    for op, access, g, st, _qd, _t in combos:
        if moved % g and access != "sequential":
            raise (where / "bytes").error(f"{moved} bytes is not a multiple of the granularity {g}, "
                                          f"as {access} access needs")
        n = -(-moved // g)
        needed = max(needed, n * (g + st) - st if access == "strided" else moved)
    span = _size(test.span, units, where / "span") if test.span is not None else needed
    if span < needed:
        raise (where / "span").error(f"the requests need {needed} bytes but span is {span}; raise span or lower bytes")
    big = [g for g in grans if g > span]
    if big:
        raise (where / "granularities").error(f"{big[0]} bytes is larger than the span ({span} bytes)")
    layout = f"{test.name}/data.bin"
    rng = np.random.default_rng(_derive_seed(s["seed"], test.name, "order"))
    ops = []
    for trial in range(test.trials):
        for ci in rng.permutation(len(combos)):
            op, access, g, st, qd, t = combos[ci]
            fresh = op == "write" and test.layout == "fresh"
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="pattern", op=op, access=access,
                          size_bytes=span, granularity_bytes=g, stride_bytes=st, trial=trial,
                          file=f"{test.name}/fresh-{seq0 + len(ops)}.bin" if fresh else layout,
                          bytes=moved, engine=s["engine"], fill=s["fill"], sync=s["sync"] if op == "write" else "none",
                          seed=_derive_seed(s["seed"], test.name, trial, op, access, g, st, *_in_flight(qd, t)),
                          data_seed=s["seed"], existing=not fresh, queue_depth=qd, threads=t))
    needs_layout = any(o.existing for o in ops)
    return ExpandedTest(name=test.name, kind="pattern", ops=ops, layout_file=layout if needs_layout else "",
                        layout_bytes=span if needs_layout else 0,
                        files_bytes=(span if needs_layout else 0) + (span if test.layout == "fresh" else 0))


def _granular(value: Size, granularity: int, units: str, where: Where) -> int:
    """A size rounded down to whole requests; refused below one request."""
    n = _size(value, units, where)
    if n < granularity:
        raise where.error(f"{value} is less than one request of the granularity ({granularity} bytes)")
    return n - n % granularity


def _sustained_ops(test: SustainedTest, where: Where, s: dict[str, Any], seq0: int,
                   free_bytes: int | None) -> ExpandedTest:
    units = s["units"]
    g = _granularity(_size(test.granularity, units, where / "granularity"), where / "granularity")
    if test.bytes is not None:
        total = _granular(test.bytes, g, units, where / "bytes")
    else:
        if free_bytes is None:
            raise (where / "fraction_of_free").error("needs the target's free space, which is not known here")
        total = int(free_bytes * test.fraction_of_free)
        if test.max_bytes is not None:
            total = min(total, _size(test.max_bytes, units, where / "max_bytes"))
        total -= total % g
        if total < g:
            raise (where / "fraction_of_free").error(f"{test.fraction_of_free} of {free_bytes} bytes free is less "
                                                     f"than one request; free some space or choose another target")
    (depth,), (threads,) = _in_flight_counts(test, s["engine"], where)
    file_bytes = min(_granular(test.file_size, g, units, where / "file_size"), total)
    chunk = min(_granular(test.chunk, g, units, where / "chunk"), file_bytes)
    if chunk < 2 * depth * threads * g and chunk < file_bytes:
        raise (where / "chunk").error(f"a chunk of {chunk} bytes holds fewer than twice the {depth * threads} requests "
                                      f"in flight ({2 * depth * threads * g} bytes): a chunk is timed from completion "
                                      f"to completion; raise chunk or lower queue_depth or threads")
    sizes = [file_bytes] * (total // file_bytes) + ([total % file_bytes] if total % file_bytes else [])
    _check_count(len(sizes) * (2 if test.read_back else 1), where / "file_size")
    width = len(str(len(sizes) - 1))
    ops: list[Op] = []
    for op in ("write", "read") if test.read_back else ("write",):
        for i, size in enumerate(sizes):
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="sustained", op=op, access="sequential",
                          size_bytes=size, granularity_bytes=g, stride_bytes=0, trial=i,
                          file=f"{test.name}/s-{i:0{width}d}.bin", bytes=size, engine=s["engine"], fill=s["fill"],
                          sync=s["sync"] if op == "write" else "none", seed=s["seed"], data_seed=s["seed"],
                          existing=False, queue_depth=depth, threads=threads, chunk_bytes=chunk))
    return ExpandedTest(name=test.name, kind="sustained", ops=ops, files_bytes=total,
                        free_bytes=free_bytes if test.fraction_of_free is not None else None)


def expand(plan: Plan, seed: int | None = None, free_bytes: int | None = None) -> Expanded:
    """The operations of a plan, in run order; `seed` overrides defaults.seed; `free_bytes` is the target's
    free space, which a sustained test's fraction_of_free is taken of."""
    tests = []
    seq = 0
    for i, test in enumerate(plan.tests):
        settings = {k: getattr(test, k) if getattr(test, k) is not None else getattr(plan.defaults, k)
                    for k in ("engine", "fill", "units", "sync", "seed")}
        if seed is not None:
            settings["seed"] = seed
        where = Where(("tests", i), f"tests[{i}] ({test.name})")
        if isinstance(test, SustainedTest):
            expanded = _sustained_ops(test, where, settings, seq, free_bytes)
        else:
            build = _files_ops if isinstance(test, FilesTest) else _pattern_ops
            expanded = build(test, where, settings, seq)
        seq += len(expanded.ops)
        tests.append(expanded)
    return Expanded(plan=plan, tests=tests, ops=[o for t in tests for o in t.ops])


# ---------------------------------------------------------------- loading

def builtin_plans_dir() -> Path:
    """The built-in plans: installed inside the package, or plans/ beside it in a checkout."""
    installed = Path(__file__).resolve().parent / PLANS_DIR_NAME
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / PLANS_DIR_NAME


def builtin_plans() -> dict[str, Path]:
    folder = builtin_plans_dir()
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))} if folder.is_dir() else {}


def resolve_plan_path(name_or_path: str) -> Path:
    """PLAN is a path to a YAML file or the name of a built-in plan."""
    path = Path(name_or_path)
    if "/" in name_or_path or path.suffix in (".yaml", ".yml"):
        try:
            existing_part(path, "plan", "give the path of a plan file, or a built-in plan's name")
        except PathError as e:
            raise PlanError(str(e)) from None
    if path.is_file():
        return path
    plans = builtin_plans()
    if name_or_path in plans:
        return plans[name_or_path]
    if path.suffix in (".yaml", ".yml") or "/" in name_or_path:
        raise PlanError(f"{name_or_path}: no such plan file")
    near = difflib.get_close_matches(name_or_path, list(plans), n=1)
    hint = f"did you mean '{near[0]}'? " if near else ""
    raise PlanError(f"{name_or_path}: not a plan file or a built-in plan; {hint}`stibium plans` lists the built-in ones")


def _line_of(data: Any, loc: tuple) -> int | None:
    """The YAML line (1-based) of the deepest key of `loc` that exists in the document."""
    line = None
    node = data
    for key in loc:
        try:
            if isinstance(key, int) and hasattr(node, "lc") and isinstance(node, list):
                line = node.lc.item(key)[0] + 1
                node = node[key]
            elif isinstance(key, str) and hasattr(node, "lc") and isinstance(node, dict) and key in node:
                line = node.lc.key(key)[0] + 1
                node = node[key]
            elif isinstance(key, str) and isinstance(node, dict) and key.startswith(("files", "pattern")):
                continue  # the discriminator's tag in pydantic's location
            else:
                break
        except (KeyError, IndexError, AttributeError, TypeError):
            break
    return line


_ALIASES = {"from_": "from"}


def _key_path(loc: tuple) -> str:
    out = ""
    for key in loc:
        if isinstance(key, int):
            out += f"[{key}]"
        elif key in ("files", "pattern") or key.startswith(("function-", "list[", "union[", "int", "str", "float")):
            continue
        else:
            out += ("." if out else "") + _ALIASES.get(key, key)
    return out or "(top level)"


_TEST_KINDS: dict[str, Any] = {"files": FilesTest, "pattern": PatternTest, "sustained": SustainedTest}


def _allowed_keys(loc: tuple) -> list[str]:
    """Valid keys at the place of an unknown key, for a suggestion."""
    model: Any = Plan
    for key in loc[:-1]:
        if isinstance(key, int) or key in _TEST_KINDS:
            if key in _TEST_KINDS:
                model = _TEST_KINDS[key]
            continue
        info = getattr(model, "model_fields", {}).get(key)
        if info is None:
            break
        if key == "defaults":
            model = Defaults
        elif key == "tests":
            model = TestSpec
        elif key == "sizes" or key == "granularities":
            model = SizeRange
    if model is TestSpec:
        fields = {f for kind in _TEST_KINDS.values() for f in kind.model_fields}
    else:
        fields = set(getattr(model, "model_fields", {}))
    return sorted(_ALIASES.get(f, f) for f in fields)


def _message(err: dict[str, Any]) -> str:
    kind = err["type"]
    loc = err["loc"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc)
        near = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        return f"unknown key '{loc[-1]}'; {hint}allowed: {', '.join(allowed)}"
    if kind == "missing":
        return "is required"
    if kind == "literal_error":
        return f"{err['msg'].lower()}, not {err['input']!r}"
    if kind == "union_tag_invalid":
        return f"kind must be 'files', 'pattern' or 'sustained', not {err['input'].get('kind')!r}" if isinstance(err["input"], dict) else err["msg"]
    if kind == "union_tag_not_found":
        return "needs a kind: files, pattern or sustained"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{msg} (got {err['input']!r})" if kind not in ("value_error",) and not isinstance(err["input"], dict) else msg


def _read_plan_text(path: Path) -> str:
    """The plan file's text, refused before parsing when it is larger than a plan can sensibly be or is not
    UTF-8 text."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PLAN_BYTES + 1)
    except OSError as e:
        raise PlanError(f"{path}: cannot read the plan: {e.strerror or e}") from None
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: larger than {MAX_PLAN_BYTES // 1024} KiB; a plan is a few KB of YAML (the "
                        f"built-in ones are under 3 KB): is this the right file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PlanError(f"{path}: not UTF-8 text (byte {e.start} is 0x{data[e.start]:02x}); save the plan as UTF-8") from None


def nesting_depth(text: str) -> int:
    """An upper bound of the YAML nesting depth, by a scan of indentation, leading dashes and brackets
    (outside quotes and comments), cheap enough to run before the parser."""
    deepest, flow, indents = 0, 0, []
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(line) - len(body)
        if flow == 0:
            while indents and indents[-1] >= indent:
                indents.pop()
            indents.append(indent)
        dashes = 0
        while body.startswith("- ") or body == "-":
            dashes += 1
            body = body[2:].lstrip(" ")
        quote = None
        for i, ch in enumerate(body):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "\"'":
                quote = ch
            elif ch == "#" and (i == 0 or body[i - 1] in " \t"):
                break
            elif ch in "[{":
                flow += 1
                deepest = max(deepest, len(indents) + dashes + flow)
            elif ch in "]}":
                flow = max(0, flow - 1)
        deepest = max(deepest, len(indents) + dashes + flow)
    return deepest


def load_plan(source: str | Path, text: str | None = None) -> tuple[Plan, str]:
    """Read and validate a plan; returns it and its text. Raises PlanError. Bounded in time and memory
    whatever the file holds: its size and nesting are checked before parsing, and anchors and aliases are
    refused before anything is expanded."""
    path = Path(source)
    if text is None:
        text = _read_plan_text(path)
    elif len(text.encode("utf-8", errors="replace")) > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: larger than {MAX_PLAN_BYTES // 1024} KiB; a plan is a few KB of YAML")
    depth = nesting_depth(text)
    if depth > MAX_PLAN_DEPTH:
        raise PlanError(f"{path}: nested {depth} levels deep; a plan needs about 5 and at most {MAX_PLAN_DEPTH} "
                        f"are read")
    yaml = YAML(typ="rt")
    try:
        data = yaml.load(text)
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise PlanError(f"{path}{line}: not valid YAML: {problem}") from None
    except Exception as e:  # ruamel raises a few non-YAMLError types on odd input
        raise PlanError(f"{path}: not valid YAML: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{path}: a plan is a mapping with name, tests and other keys; see `stibium plan show quick`")
    plain = _Plain(path)(data)
    try:
        plan = Plan.model_validate(plain)
    except ValidationError as e:
        rank = {"extra_forbidden": 0, "missing": 2}
        # unknown keys first, then the most specific place (a union's right branch is the deeper one)
        first = sorted(e.errors(), key=lambda err: (rank.get(err["type"], 1), -len(err["loc"])))[0]
        line = _line_of(data, first["loc"])
        where = f"{path}:{line}" if line else str(path)
        raise PlanError(f"{where}: {_key_path(first['loc'])}: {_message(first)}") from None
    return plan, text


class _Plain:
    """ruamel's round-trip types as plain dicts, lists and scalars; refuses anchors and aliases (a small
    file whose aliases nest expands exponentially), and counts the values it makes."""

    def __init__(self, path: Path):
        self.path = path
        self.nodes = 0

    def __call__(self, node: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_PLAN_NODES:
            raise PlanError(f"{self.path}: more than {MAX_PLAN_NODES:,} values; a plan has a few hundred")
        if depth > MAX_PLAN_DEPTH:
            raise PlanError(f"{self.path}: nested more than {MAX_PLAN_DEPTH} levels deep")
        anchor = getattr(getattr(node, "anchor", None), "value", None)
        if anchor:
            line = _node_line(node)
            raise PlanError(f"{self.path}{':' + str(line) if line else ''}: anchors and aliases (&{anchor}, "
                            f"*{anchor}) are not allowed in plans: write each value out")
        if isinstance(node, dict):
            return {str(k): self(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [self(v, depth + 1) for v in node]
        if isinstance(node, bool) or node is None:
            return node
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            return float(node)
        return str(node)


def _node_line(node: Any) -> int | None:
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else None


def free_bytes_at(target: str | Path) -> int | None:
    """The free space of the file system a target is (or will be created) on; None where it cannot be read."""
    try:
        return shutil.disk_usage(existing_part(Path(target), "target", "choose another")).free
    except (PathError, OSError):
        return None


def load_and_expand(source: str | Path, seed: int | None = None,
                    target: str | Path | None = None) -> tuple[Plan, str, Expanded]:
    """Load, validate and expand, with the plan's location in every error. A sustained test's
    fraction_of_free is taken of the free space of `target` (default: the plan's)."""
    plan, text = load_plan(source)
    free = None
    if any(isinstance(t, SustainedTest) and t.fraction_of_free is not None for t in plan.tests):
        free = free_bytes_at(target if target is not None else plan.target)
    try:
        return plan, text, expand(plan, seed, free)
    except PlanError as e:
        line = _line_of(YAML(typ="rt").load(text), e.loc) if e.loc else None
        raise PlanError(f"{source}{':' + str(line) if line else ''}: {e}") from None
