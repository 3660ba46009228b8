"""The plan as a person writes it: pydantic models (unknown keys are errors, every field described), the
limits a plan is held to, and `PlanError`, one line naming the file, the line, the key and what is
allowed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, create_model, field_validator, model_validator

from ..errors import PlanError  # noqa: F401 (raised here, declared apart)
from .. import fills, registry

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
FILL_DESCRIPTION = ("what writes put on the disk: random (incompressible), a byte such as 0x41, or data of stated ratios "
                    "such as {compressible: 50%, dedupe: 25%} (fio's buffer_compress_percentage and "
                    "dedupe_percentage: the share of each 4 KiB block a compressor removes, and the share of blocks "
                    "that repeat another)")

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
Sync = Literal["fsync", "full", "none", "data", "barrier", "dsync"]
Units = Literal["decimal", "binary"]
Access = Literal["sequential", "strided", "random"]
IoOp = Literal["read", "write"]
Size = Union[StrictInt, str]
# what a write puts on the disk, as a plan says it: random, a byte (0x41) or {compressible: 50%, dedupe: 25%}; kept
# as one text (fills.canonical, each model's validator)
Fill = Union[str, dict[str, Union[StrictInt, str]]]
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
    fill: Fill = Field("random", description=FILL_DESCRIPTION)
    units: Units = Field("decimal", description="KB/MB/GB as 1000^n (decimal) or 1024^n (binary)")
    sync: Sync = Field("fsync", description="fsync | full (F_FULLFSYNC on macOS) | none | data (fdatasync) | barrier "
                                            "(F_BARRIERFSYNC on macOS, fsync elsewhere) | dsync (every write synchronous: "
                                            "O_DSYNC; O_SYNC on macOS)")
    seed: StrictInt = Field(1, ge=0, description="every random choice (orders, offsets, data) follows from it")

    @field_validator("fill", mode="before")
    @classmethod
    def _fill(cls, value: Any) -> str:
        return fills.canonical(value)


class Clients(_Strict):
    """How the clients of a run with many (mpiexec -n N stibium run ...) share the store; one client ignores it."""

    layout: Literal["per-client", "shared"] = Field(
        "per-client", description="per-client: each client its own files (IOR's N-N) | shared: one file in "
        "segments, a client's segment as large as the test's span (IOR's N-1; pattern tests with layout: laid-out)")
    read_from: Literal["own", "other"] = Field(
        "own", description="own: a client reads what it wrote | other: what another client wrote, on another "
        "machine where the hosts allow (IOR's -C: no client's own cache can serve it)")


class TestBase(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=64,
                      description="names the test in the run; letters, digits, . _ -")
    engine: Engine | None = Field(None, description="overrides defaults.engine")
    fill: Fill | None = Field(None, description="overrides defaults.fill")
    units: Units | None = Field(None, description="overrides defaults.units")
    sync: Sync | None = Field(None, description="overrides defaults.sync")
    seed: StrictInt | None = Field(None, ge=0, description="overrides defaults.seed")
    clients: Clients = Field(Clients(), description="with many clients (mpiexec): how they share the store")

    _fill = field_validator("fill", mode="before")(lambda cls, v: v if v is None else fills.canonical(v))


def not_shared(test: Any, kind: str) -> Any:
    if test.clients.layout == "shared":
        raise ValueError(f"clients.layout: shared is one file in segments, for pattern tests; a {kind} test gives "
                         f"each client its own files (clients.layout: per-client)")
    return test


def bytes_or_share(test: Any) -> Any:
    """A test that fills by `bytes` or by `fraction_of_free` (capped by `max_bytes`): exactly one of the two."""
    if (test.bytes is None) == (test.fraction_of_free is None):
        raise ValueError("give exactly one of bytes or fraction_of_free")
    if test.max_bytes is not None and test.fraction_of_free is None:
        raise ValueError("max_bytes caps fraction_of_free; with bytes, lower bytes instead")
    return test


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


class LogUniform(_Strict):
    """File sizes drawn log-uniformly between two ends (as many small files as large ones per factor of size)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    from_: Size = Field(alias="from", description="smallest file, such as 1KB")
    to: Size = Field(description="largest file, such as 64KB")


def kind_models() -> dict[str, type[TestBase]]:
    """The model of each kind of test, from its folder (registry.py): the plan's union of tests and the error
    mapper's suggestions read it."""
    return {spec.name: spec.model for spec in registry.specs()}


def any_test() -> Any:
    """A test of any kind there is, told apart by its `kind`."""
    return Annotated[Union[tuple(kind_models().values())], Field(discriminator="kind")]  # type: ignore[valid-type]


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
    # every kind's test (any_test); a Plan is made by plan_model(), whose tests are the kinds registered
    tests: list[TestBase] = Field(min_length=1, description="the tests, run in this order")

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


_PLAN_MODELS: dict[int, type[Plan]] = {}


def plan_model() -> type[Plan]:
    """The Plan whose tests are of the kinds registered now (built once, and again when a test registers a kind
    of its own)."""
    key = registry.version[0]
    model = _PLAN_MODELS.get(key)
    if model is None:
        tests = (list[any_test()], Field(min_length=1, description=Plan.model_fields["tests"].description))
        model = create_model("Plan", __base__=Plan, __doc__=Plan.__doc__, tests=tests)  # type: ignore[call-overload]
        _PLAN_MODELS.clear()
        _PLAN_MODELS[key] = model
    return model

