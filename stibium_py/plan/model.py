"""The plan as a person writes it: pydantic models (unknown keys are errors, every field described), the
limits a plan is held to, and `PlanError`, one line naming the file, the line, the key and what is
allowed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, field_validator, model_validator

from ..errors import PlanError  # noqa: F401 (raised here, declared apart)
from ..kinds import Kind, by_kind
from ..tree import TREE_PHASES

MIN_GRANULARITY_BYTES = 4000            # 4 KB
MAX_GRANULARITY_BYTES = 2 * 1024**3     # 2 GiB
MAX_SIZES = 10000
MAX_QUEUE_DEPTH = 256
MAX_THREADS = 64
# Requests in flight at once (queue depth x threads): macOS runs one thread per request in flight, and xnu
# refuses a task's thread beyond task_threadmax (osfmk/kern/thread.c), at least 2048 on a Mac of 3 GB or
# more (osfmk/kern/startup.c; docs/platforms.md); a plan stays at 1024, well under it, so that it runs on
# every machine it is carried to.
MAX_IN_FLIGHT = 1024
MAX_OPS = 1_000_000

@dataclass(frozen=True)
class EngineFacts:
    """What a plan needs to know of an engine before any helper runs; the helper's own table (helper/main.m,
    `info`'s engine_capabilities) holds the same facts, and tests/test_helper.py holds the two together."""

    ops: tuple[str, ...]
    one_at_a_time: bool          # moves one request at a time, as simple app code does


ENGINES: dict[str, EngineFacts] = {
    "direct": EngineFacts(("read", "write"), False),
    "buffered": EngineFacts(("read", "write"), False),
    "foundation": EngineFacts(("read", "write"), True),
    "app": EngineFacts(("read", "write"), True),
}
Engine = Literal[tuple(ENGINES)]  # type: ignore[valid-type]
Sync = Literal["fsync", "full", "none"]
Units = Literal["decimal", "binary"]
Access = Literal["sequential", "strided", "random"]
IoOp = Literal["read", "write"]
Size = Union[StrictInt, str]
Seconds = Union[StrictInt, StrictFloat, str]      # a bool (stonewall: true) is no time
MAX_DURATION_S = 7 * 24 * 3600            # the helper's limit of --duration and --warmup


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


class Clients(_Strict):
    """How the clients of a run with many (mpiexec -n N stibium run ...) share the store; one client ignores it."""

    layout: Literal["per-client", "shared"] = Field(
        "per-client", description="per-client: each client its own files (IOR's N-N) | shared: one file in "
        "segments, a client's segment as large as the test's span (IOR's N-1; pattern tests with layout: laid-out)")
    read_from: Literal["own", "other"] = Field(
        "own", description="own: a client reads what it wrote | other: what another client wrote, on another "
        "machine where the hosts allow (IOR's -C: no client's own cache can serve it)")


class _TestBase(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=64,
                      description="names the test in the run; letters, digits, . _ -")
    engine: Engine | None = Field(None, description="overrides defaults.engine")
    fill: str | None = Field(None, description="overrides defaults.fill")
    units: Units | None = Field(None, description="overrides defaults.units")
    sync: Sync | None = Field(None, description="overrides defaults.sync")
    seed: StrictInt | None = Field(None, ge=0, description="overrides defaults.seed")
    clients: Clients = Field(Clients(), description="with many clients (mpiexec): how they share the store")

    _fill = field_validator("fill")(lambda cls, v: v if v is None else Defaults._fill(v))


def _not_shared(test: Any, kind: str) -> Any:
    if test.clients.layout == "shared":
        raise ValueError(f"clients.layout: shared is one file in segments, for pattern tests; a {kind} test gives "
                         f"each client its own files (clients.layout: per-client)")
    return test


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

    _own_files = model_validator(mode="after")(lambda self: _not_shared(self, "files"))


MAX_ROUNDS = 1000


class Steady(_Strict):
    """Rounds until steady (SNIA PTS): the test's points are measured round after round, and the rounds stop
    at the first window in which every point is steady (docs/methods.md, "Steady state")."""

    window: int = Field(10, ge=3, le=100, description="rounds judged together, 3 to 100 (PTS uses 5; ten tell a "
                        "drift of 2 % a round from a flat figure)")
    max_rounds: int = Field(25, ge=3, le=MAX_ROUNDS, description="at most this many rounds; not steady by then is "
                            "a warning")

    @model_validator(mode="after")
    def _room_for_a_window(self) -> "Steady":
        if self.max_rounds < self.window:
            raise ValueError(f"max_rounds ({self.max_rounds}) is smaller than window ({self.window}): raise "
                             f"max_rounds to at least the window")
        return self


class PatternTest(_TestBase):
    """Requests of one granularity inside one file, over several trials."""

    kind: Literal["pattern"] = Field(description="pattern: requests of a granularity inside one file")
    op: IoOp | list[IoOp] | None = Field(None, description="read | write, or both as a list (give op, read_fraction "
                                         "or both)")
    read_fraction: float | list[float] | None = Field(
        None, description="mixed reads and writes: the share of each measurement's requests that read, 0 to 1 (0.7: "
        "CrystalDiskMark's 70/30 mix), or a list; each request a read or a write by a draw from the seed")
    access: Access | list[Access] = Field("sequential", description="sequential | strided | random, or a list")
    granularities: Sizes = Field(description="request sizes, 4 KB to 2 GB: a list or {from, to, count|factor}")
    strides: list[Size] = Field([0], description="bytes skipped after each request (strided access)")
    bytes: Size | None = Field(None, description="bytes moved per trial; with duration, per pass over the requests "
                               "(default: the span)")
    span: Size | None = Field(None, description="size of the file the requests fall in (>= bytes; default = bytes)")
    duration: Seconds | None = Field(
        None, description="run each trial for this long instead of for its bytes, such as 30s or 5min: the "
        "requests go round their pattern until the time is spent (fio's runtime with time_based)")
    warmup: Seconds | None = Field(
        None, description="with duration: first run this long, such as 5s; the warm-up's requests are counted in "
        "their own columns and kept out of the rate (fio's ramp_time)")
    queue_depth: Union[StrictInt, list[StrictInt]] = Field(
        1, description="requests in flight per thread, 1 to 256, or a list such as [1, 8, 32]")
    threads: Union[StrictInt, list[StrictInt]] = Field(
        1, description="threads, each with its own part of the requests, 1 to 64, or a list such as [1, 4]")
    trials: int = Field(5, ge=1, le=10000,
                        description="repeats of each (op, access, granularity, stride, queue depth, threads)")
    layout: Literal["laid-out", "fresh"] = Field(
        "laid-out", description="writes go into a file laid out beforehand, or a fresh file per trial")
    steady: Steady | None = Field(
        None, description="rounds until steady instead of trials: {window: 10, max_rounds: 25}; each round "
        "measures every point once, and the rounds stop when every point is steady over the last window")
    precondition: bool = Field(
        False, description="before the first measurement, write the whole span twice sequentially in 128 KiB "
        "requests (PTS's workload-independent preconditioning), so that random writes meet a written device")
    stonewall: Seconds | None = Field(
        None, description="stop each measurement of its bytes this long after it starts, such as 30s; with many "
        "clients every client then goes on until it has done as many requests as the furthest one (wear-out), as "
        "IOR's -D with stoneWallingWearOut")
    bench: Literal["fio"] | None = Field(
        None, description="fio: every point is measured by fio too, as the equivalent fio job on the same file, its "
        "trials interleaved with the helper's; the report sets the bench's rate beside the road test's (docs/fio.md)")
    bench_job: str | None = Field(
        None, description="with bench: fio, a fio job file of your own (its path relative to the plan's folder), run "
        "as it is once a trial instead of each point's equivalent job: each of its jobs a row, its point read from "
        "fio's output and set beside the road test's point of the same shape (docs/fio.md)")

    @model_validator(mode="after")
    def _what_and_how_long(self) -> "PatternTest":
        if self.op is None and self.read_fraction is None:
            raise ValueError("give op (read, write or both), read_fraction (mixed reads and writes), or both")
        if self.bytes is None and self.duration is None:
            raise ValueError("give bytes (moved per trial) or duration (how long each trial runs)")
        if self.warmup is not None and self.duration is None:
            raise ValueError("warmup needs duration: the warm-up is the first part of a trial that runs for a time")
        if self.steady is not None and "trials" in self.model_fields_set:
            raise ValueError("give trials or steady, not both: with steady, the rounds are the trials "
                             "(steady.max_rounds at most)")
        if self.precondition and self.layout == "fresh":
            raise ValueError("precondition writes the laid-out file; it needs layout: laid-out")
        if self.stonewall is not None and self.duration is not None:
            raise ValueError("stonewall caps a measurement of its bytes; with duration each trial is bounded by "
                             "time already: give one or the other")
        if self.bench_job is not None and (not self.bench_job.strip() or "\x00" in self.bench_job
                                           or len(self.bench_job) > 1024):
            raise ValueError("bench_job is the job file's path relative to the plan's folder, such as jobs/reads.fio "
                             "(not empty, no NUL byte, at most 1024 characters)")
        if self.bench_job is not None and self.bench is None:
            raise ValueError("bench_job is the job file fio runs as the bench; it needs bench: fio")
        if self.bench is not None and self.stonewall is not None:
            raise ValueError("bench: fio cannot take a stonewall: fio's runtime stops a job, but it cannot go on to "
                             "the count another client reached; leave out stonewall or bench")
        return self

    @model_validator(mode="after")
    def _shared_is_laid_out(self) -> "PatternTest":
        if self.clients.layout == "shared" and self.layout == "fresh":
            raise ValueError("clients.layout: shared needs layout: laid-out (the clients write into one file laid "
                             "out beforehand, each in its own segment)")
        return self


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

    _own_files = model_validator(mode="after")(lambda self: _not_shared(self, "sustained"))

    @model_validator(mode="after")
    def _how_much(self) -> "SustainedTest":
        if (self.bytes is None) == (self.fraction_of_free is None):
            raise ValueError("give exactly one of bytes or fraction_of_free")
        if self.max_bytes is not None and self.fraction_of_free is None:
            raise ValueError("max_bytes caps fraction_of_free; with bytes, lower bytes instead")
        return self


MAX_TREE_FILES = 1_000_000
TreePhase = Literal[TREE_PHASES]  # type: ignore[valid-type]


class LogUniform(_Strict):
    """File sizes drawn log-uniformly between two ends (as many small files as large ones per factor of size)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    from_: Size = Field(alias="from", description="smallest file, such as 1KB")
    to: Size = Field(description="largest file, such as 64KB")


class TreeTest(_TestBase):
    """A tree of files, phase by phase: created and written, stat-ed, listed, read, copied, renamed, deleted; each
    phase of each trial one measurement (a whole phase in one helper invocation), files per second its rate."""

    kind: Literal["tree"] = Field(description="tree: a folder tree of many files, phase by phase")
    files: int = Field(ge=1, le=MAX_TREE_FILES, description="files in the tree, such as 10000")
    file_size: Union[Size, list[Size], LogUniform] = Field(
        description="each file's size: one size (16KB), a list each file draws from ([4KB, 16KB]), or {from, to}: "
        "drawn log-uniformly between the two")
    dirs: int = Field(1, ge=1, le=MAX_TREE_FILES, description="folders the files are spread over, in turn")
    depth: int = Field(1, ge=1, le=16, description="levels of folders above each file (the fan-out follows from "
                       "dirs: 256 folders at depth 2 are 16 folders of 16)")
    name_bytes: int = Field(12, ge=8, le=1024, description="the length of every file's name in bytes, such as 12 "
                            "(IMG_0001.JPG) or 60 (a mail store's); longer than the target allows is refused")
    threads: Union[StrictInt, list[StrictInt]] = Field(
        1, description="threads, each with its own run of the files (a run of folders), 1 to 64, or a list")
    trials: int = Field(6, ge=1, le=1000, description="repeats of every phase at every thread count, each on a "
                        "tree of its own (6, the fewest whose range is a 95 % interval of the median)")
    phases: list[TreePhase] = Field(
        list(TREE_PHASES), description="create | stat | list | read | copy | rename | delete, run in this order on "
        "each trial's tree; create is needed (the others work on its files). copy: the tree copied file by file as "
        "the platform copies (a clone where the file system can: the report says how many)")
    sync: Literal["each", "end", "none"] | None = Field(  # type: ignore[assignment]
        None, description="create: each (every file synced before its close, as an app that saves safely) | end "
        "(every file synced after the last one is written, inside the timed phase; the default) | none")
    engine: Literal["posix", "foundation"] | None = Field(  # type: ignore[assignment]
        None, description="posix (the default): open, write, close, stat, readdir, rename, unlink, as C code calls "
        "them | foundation: what a Mac app calls, NSData writeToFile:atomically: (a temporary file renamed over the "
        "name) and NSFileManager, on one thread (on Linux: GNUstep Base)")
    between: Literal["none", "drop-caches"] = Field(
        "none", description="before each phase after create: none (the phase meets the folders and inodes the one "
        "before left in memory) | drop-caches (the kernel's caches emptied; root)")

    _own_files = model_validator(mode="after")(lambda self: _not_shared(self, "tree"))

    @model_validator(mode="after")
    def _tree(self) -> "TreeTest":
        if self.fill not in (None, "random"):
            raise ValueError("a tree's files hold random data (fill: random); leave fill out")
        if self.clients.read_from != "own":
            raise ValueError("clients.read_from: other is for pattern and files tests; a tree's phases work on "
                             "the client's own tree")
        if len(set(self.phases)) != len(self.phases):
            raise ValueError("each phase once: phases lists one twice")
        if "create" not in self.phases:
            raise ValueError("phases needs create: the other phases work on the files it makes")
        if list(self.phases) != sorted(self.phases, key=TREE_PHASES.index):
            raise ValueError(f"phases run in the order {', '.join(TREE_PHASES)}; list them in it")
        threads = [self.threads] if isinstance(self.threads, int) else self.threads
        if self.engine == "foundation" and max(threads, default=1) > 1:
            raise ValueError("the foundation engine saves on one thread, as an app's own code does; use threads: 1 "
                             "(or engine: posix for more)")
        if self.dirs > self.files:
            raise ValueError(f"dirs ({self.dirs}) is more than files ({self.files}): every folder holds a file")
        return self


# the model of each kind of test (kinds.py): the plan's union of tests and the error mapper's suggestions read it
TEST_MODELS: dict[Kind, type[_TestBase]] = by_kind("plan: the model of a test", {
    "files": FilesTest, "pattern": PatternTest, "sustained": SustainedTest, "tree": TreeTest})
TestSpec = Annotated[Union[tuple(TEST_MODELS.values())], Field(discriminator="kind")]  # type: ignore[valid-type]


class Plan(_Strict):
    """A benchmark plan, as written in plan.yaml."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=64, description="names the run directory")
    description: str = Field("", description="what the plan is for")
    target: str = Field("./stibium-test", description="folder for the test files, relative to where stibium runs "
                        "(created; a disk elsewhere is given with --target, which overrides it)")
    ceiling_bytes_per_s: float | None = Field(
        None, gt=0, description="a rate no read can physically exceed on this device (cache detection)")
    runs: int = Field(1, ge=1, le=100, description="complete runs of the plan, one after another, each with fresh "
                      "test files (--runs overrides); two or more let compare see the variance between runs")
    defaults: Defaults = Field(Defaults(), description="settings every test inherits")
    tests: list[TestSpec] = Field(min_length=1, description="the tests, run in this order")

    @field_validator("target")
    @classmethod
    def _target_stays_here(cls, target: str) -> str:
        """A plan names where its files go only below the folder stibium runs in: a plan comes from strangers, and
        a person, not a plan, points stibium at another disk (--target)."""
        parts = target.replace("\\", "/").split("/")
        if (not target.strip() or "\x00" in target or len(target) > 1024 or target.startswith(("/", "~"))
                or ".." in parts or (len(target) > 1 and target[1] == ":")):
            raise ValueError("a plan's target is a folder below the one stibium runs in, such as ./stibium-test (not "
                             "absolute, no ~ or ..); give a disk elsewhere with --target")
        return target

    @field_validator("tests")
    @classmethod
    def _unique_names(cls, tests: list[Any]) -> list[Any]:
        seen: set[str] = set()
        for test in tests:
            if test.name in seen:
                raise ValueError(f"two tests are named {test.name!r}; names must be unique")
            seen.add(test.name)
        return tests
