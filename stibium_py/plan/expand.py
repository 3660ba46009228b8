"""A plan's expansion into what the runner executes: tests with their operations (`Op`), every random
choice (orders, offsets) drawn from the plan's seed, so that the same plan and seed give the same run."""

from __future__ import annotations

import math

import hashlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Protocol

import numpy as np

from .. import registry
from ..beside import Named
from ..registry import Kind
from ..rundir.op import Op

if TYPE_CHECKING:       # a plan's job file is read by the run (run/jobs.py); expanding a plan needs only its type
    from ..fio.job import JobFile
from ..units import SizeError, parse_bytes, parse_seconds
from .model import ENGINES, MAX_DURATION_S, MAX_GRANULARITY_BYTES, MAX_IN_FLIGHT, MAX_OPS, MAX_QUEUE_DEPTH, MAX_SIZES, MAX_THREADS, MIN_GRANULARITY_BYTES, Plan, Seconds, Size, SizeRange, Sizes, Where


# The duration model of `plan show` and `run --dry-run`: an assumed device, so that a plan's time is known
# before it runs (the real one depends on the disk).
ASSUMED_RATE_BYTES_PER_S = 200e6
ASSUMED_OP_OVERHEAD_S = 0.002
ASSUMED_REQUEST_S = 100e-6          # one request at a time
ASSUMED_PARALLEL_REQUESTS = 32      # requests in flight the assumed device overlaps
ASSUMED_BENCH_START_S = 0.3         # a fio process around its job (0.28 s around one request, on a 2-core VM)
SUSTAINED_RATES_BYTES_PER_S = (200e6, 2e9)     # a sustained test on a slow external drive, a fast internal SSD
# a tree test's phases, one file's operation on the assumed device (an SSD's file system with a journal)
ASSUMED_FILE_OPS_S = {"create": 100e-6, "stat": 5e-6, "list": 2e-6, "read": 100e-6, "copy": 150e-6, "rename": 30e-6,
                      "delete": 30e-6}
ASSUMED_SYNC_S = 1e-3              # a file synced as it is written (sync: each): an SSD's flush of its cache
ALLOCATION_BYTES = 4096             # a file's space is whole blocks of the file system (4 KiB on ext4, xfs, APFS)
# what a run leaves free beside the most its files take at once: a file system needs room to work (preflight)
SPACE_MARGIN_FRACTION = 0.05
SPACE_MARGIN_BYTES = 64 * 10**6


def space_wanted(needed_bytes: int) -> int:
    """The free space a run of `needed_bytes` of files at once asks for: its files and the margin."""
    return int(needed_bytes * (1 + SPACE_MARGIN_FRACTION)) + SPACE_MARGIN_BYTES


def room_in(free_bytes: int) -> int:
    """The most bytes of files whose margin still fits in `free_bytes` (space_wanted's inverse, rounded down)."""
    return max(0, int((free_bytes - SPACE_MARGIN_BYTES) / (1 + SPACE_MARGIN_FRACTION)))


def share_of_free(test: Any, units: str, where: Where, free_bytes: int | None) -> int:
    """The bytes of a test that fills by fraction_of_free (a sustained test's, a verify's): that share of the
    target's free space when the run starts, at most what leaves the run's margin free (space_wanted, which
    preflight holds the run to), and at most max_bytes where the plan gives it."""
    fraction = test.fraction_of_free
    if free_bytes is None or fraction is None:
        raise (where / "fraction_of_free").error("needs the target's free space, which is not known here")
    total = min(int(free_bytes * fraction), room_in(free_bytes))
    if test.max_bytes is not None:
        total = min(total, size_of(test.max_bytes, units, where / "max_bytes"))
    return total


def estimated_s(o: Op) -> float:
    """One operation on the assumed device: its bytes at the assumed rate, or its requests at the assumed
    latency overlapped up to the assumed parallelism, whichever takes longer, plus the overhead; one by time
    takes its warm-up and duration, and one with a stonewall at most that long (with many clients the wear-out
    may take longer)."""
    overhead = ASSUMED_OP_OVERHEAD_S + (ASSUMED_BENCH_START_S if o.instrument != "helper" else 0.0)
    if o.phase:                    # a phase of files: each one's operation at the assumed latency, its bytes at the rate
        one_s = ASSUMED_FILE_OPS_S[o.op] + (ASSUMED_SYNC_S if o.sync == "each" else 0.0)
        per_file_s = one_s * o.phase.files / min(o.threads, ASSUMED_PARALLEL_REQUESTS)
        return max(per_file_s, o.bytes / ASSUMED_RATE_BYTES_PER_S) + overhead
    if o.duration_s:
        return o.warmup_s + o.duration_s + overhead
    if o.frames:                    # a stream: its frames at their times, its group's streams at once
        return (o.bytes / o.chunk_bytes / o.frames.fps + overhead) / o.frames.streams
    if o.bench_job:                 # a job file of the plan's own: fio's start-up; the job's time is its own
        return overhead
    requests = -(-o.bytes // o.granularity_bytes)
    overlap = min(o.queue_depth * o.threads, ASSUMED_PARALLEL_REQUESTS)
    moving_s = max(o.bytes / ASSUMED_RATE_BYTES_PER_S, requests * ASSUMED_REQUEST_S / overlap,
                   requests / o.rate_per_s if o.rate_per_s else 0.0)
    return (min(moving_s, o.stonewall_s) if o.stonewall_s else moving_s) + overhead


def estimated_bytes(o: Op) -> tuple[float, float]:
    """The bytes an operation reads and writes: its bytes, split by its read share where it is mixed; one by
    time, what the assumed device moves in its warm-up and duration."""
    by_time = ASSUMED_RATE_BYTES_PER_S if not o.rate_per_s else min(ASSUMED_RATE_BYTES_PER_S,
                                                                     o.rate_per_s * o.granularity_bytes)
    moved = o.bytes if not o.duration_s else by_time * (o.warmup_s + o.duration_s)
    read_share = {"read": 1.0, "write": 0.0}.get(o.op, o.read_fraction or 0.0)
    return moved * read_share, moved * (1 - read_share)


class Folders(Protocol):
    """What a test whose operations' files are folders makes in each (a tree test's tree, kinds/tree/shape.py):
    every path its files can have, relative to the folder, as made, as renamed, as copied."""

    def paths(self, renamed: bool = False) -> list[str]: ...
    def copies(self) -> list[str]: ...


@dataclass(frozen=True)
class ExpandedTest:
    name: str
    kind: Kind
    ops: list[Op]
    between: str = "none"                      # files tests
    layout_file: str = ""                      # pattern tests: the laid-out file
    layout_bytes: int = 0
    files_bytes: int = 0                       # bytes of test files that exist at once
    free_bytes: int | None = None              # sustained with fraction_of_free: the free space it was taken of
    sharing: str = "per-client"                # with many clients: per-client files, or one shared file
    read_from: str = "own"                     # with many clients: own, or another client's writes
    precondition_bytes: int = 0                # pattern tests: written sequentially before the first measurement
    tree: Folders | None = None                # tree tests: the tree each trial makes (its op's file a folder)
    bench_job: JobFile | None = None           # pattern tests with bench_job: the job file, as read before the run
    search_most: bool = False                  # stream tests with streams: most: the counts a search asks for run
    replay: Any = None                         # replay tests: the trace as a script for the helper (kinds/replay)
    kept_bytes: bytes | None = None            # replay tests: the trace's bytes as read, kept in the run directory

    @property
    def planned_ops(self) -> list[Op]:
        """The operations the run carries out where nothing drops: a search for the most streams doubles its count
        from 1 while each runs clean (1, 2, 4, ... the most), so only those counts' operations; a count that drops
        adds those between it and the last clean one (halving the gap), which no plan can know beforehand. A search
        for a target's rate likewise: each octave up from its lowest rate, and its grid's top, while the target is
        met."""
        if self.ops and self.ops[0].slo:     # a pattern test's search for a target's rate: each octave up
            # a granularity's first and last rate (a rate of bytes differs by granularity): each octave up from
            # the first, and the last where the grid ends inside an octave
            lowest: dict[int, float] = {}
            top: dict[int, float] = {}
            for o in self.ops:
                lowest[o.granularity_bytes] = min(lowest.get(o.granularity_bytes, o.rate_per_s), o.rate_per_s)
                top[o.granularity_bytes] = max(top.get(o.granularity_bytes, o.rate_per_s), o.rate_per_s)
            return [o for o in self.ops if math.log2(o.rate_per_s / lowest[o.granularity_bytes]).is_integer()
                    or o.rate_per_s == top[o.granularity_bytes]]
        if not self.search_most:
            return self.ops
        return [o for o in self.ops if o.frames is None or o.frames.streams & (o.frames.streams - 1) == 0]


@dataclass(frozen=True)
class Expanded:
    plan: Plan
    tests: list[ExpandedTest]
    ops: list[Op] = field(default_factory=list)

    @property
    def bytes_written(self) -> int:
        """Every byte the run writes: measured writes (those by time on the assumed device) and layouts; a search
        for the most streams, its counts where none drops (ExpandedTest.planned_ops)."""
        return round(sum(estimated_bytes(o)[1] for t in self.tests for o in t.planned_ops)) + \
            sum(t.layout_bytes + t.precondition_bytes for t in self.tests)

    def space_needed_bytes(self, keep_files: bool = False) -> int:
        """Free space the run needs at its peak (test files are removed after each test; kept, every test's, and
        every tree of a tree test, each of which is otherwise removed when its phases are done)."""
        if not keep_files:
            return max((t.files_bytes for t in self.tests), default=0)
        return sum(t.files_bytes * (len({o.file for o in t.ops}) if t.tree is not None else 1) for t in self.tests)

    @property
    def estimated_s(self) -> float:
        """The run's duration on the assumed device: layouts and preconditioning at the assumed rate, then every
        operation (rounds until steady: all of them, the longest it can take; a search for the most streams: its
        counts where none drops)."""
        layouts = sum(t.layout_bytes + t.precondition_bytes for t in self.tests)
        return layouts / ASSUMED_RATE_BYTES_PER_S + sum(estimated_s(o) for t in self.tests for o in t.planned_ops)

    def ops_as_dicts(self) -> list[dict[str, Any]]:
        return [o.as_dict() for o in self.ops]


def derive_seed(*parts: int | str) -> int:
    """A 63-bit seed from the plan seed and where it is used, stable across platforms."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def size_of(value: Size, units: str, where: Where) -> int:
    try:
        n = parse_bytes(value, units)
    except SizeError as e:
        raise where.error(str(e)) from None
    if n <= 0:
        raise where.error(f"a size must be positive, not {value!r}")
    return n


def sizes_of(spec: Sizes, units: str, where: Where) -> list[int]:
    if isinstance(spec, SizeRange):
        lo = size_of(spec.from_, units, where / "from")
        hi = size_of(spec.to, units, where / "to")
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
    return [size_of(v, units, where / i) for i, v in enumerate(spec)]


def checked_granularity(g: int, where: Where) -> int:
    """A request size, refused outside MIN_GRANULARITY_BYTES .. MAX_GRANULARITY_BYTES."""
    if not MIN_GRANULARITY_BYTES <= g <= MAX_GRANULARITY_BYTES:
        raise where.error(f"{g} bytes is outside 4 KB .. 2 GiB")
    return g


def check_count(n_ops: int, where: Where) -> None:
    if n_ops > MAX_OPS:
        raise where.error(f"the test expands to {n_ops:,} measurements; at most {MAX_OPS:,} in one test")


def counts_of(spec: int | list[int], most: int, where: Where) -> list[int]:
    """A count or a list of counts, each from 1 to `most`, in the order given, without repeats."""
    values = [spec] if isinstance(spec, int) else list(spec)
    if not values:
        raise where.error("the list is empty; give at least one value, such as 1")
    for i, v in enumerate(values):
        if not 1 <= v <= most:
            at = where if isinstance(spec, int) else where / i
            raise at.error(f"must be a whole number from 1 to {most}, not {v}")
    return list(dict.fromkeys(values))


def in_flight_counts(test: Any, engine: str, where: Where) -> tuple[list[int], list[int]]:
    """A test's queue depths and thread counts, each in range, refused together beyond what one request at a
    time engines and macOS allow."""
    depths = counts_of(test.queue_depth, MAX_QUEUE_DEPTH, where / "queue_depth")
    threads = counts_of(test.threads, MAX_THREADS, where / "threads")
    if ENGINES[engine].one_at_a_time and (max(depths) > 1 or max(threads) > 1):
        raise where.error(f"the {engine} engine moves one request at a time, as simple app code does; use "
                          f"engine: direct or buffered for queue_depth or threads above 1")
    if max(depths) * max(threads) > MAX_IN_FLIGHT:
        raise where.error(f"queue_depth {max(depths)} x threads {max(threads)} is {max(depths) * max(threads)} "
                          f"requests in flight; at most {MAX_IN_FLIGHT} (macOS needs a thread for each)")
    return depths, threads


def in_flight_pairs(queue_depth: int, threads: int) -> tuple[int, ...]:
    """What a seed derives from besides the point: nothing at one request in flight, so that plans written
    before queue depth existed draw the same offsets."""
    return () if queue_depth == threads == 1 else (queue_depth, threads)


def seconds_of(value: Seconds, where: Where) -> float:
    try:
        seconds = parse_seconds(value)
    except SizeError as e:
        raise where.error(str(e)) from None
    if seconds > MAX_DURATION_S:
        raise where.error(f"{value!r} is longer than a week; split the test")
    return seconds


def granular(value: Size, granularity: int, units: str, where: Where) -> int:
    """A size rounded down to whole requests; refused below one request."""
    n = size_of(value, units, where)
    if n < granularity:
        raise where.error(f"{value} is less than one request of the granularity ({granularity} bytes)")
    return n - n % granularity


# A file a plan names beside itself (a replay's trace): (test, the path as the plan gives it, the words of a refusal's
# start, the most bytes it may hold, what it should be) -> its bytes, read as data (beside.read_beside)
PlanFiles = Callable[[str, str, str, int, Named], bytes]


def read_from(kept: dict[str, bytes]) -> PlanFiles:
    """The files a plan named as another client read them (its tests' kept bytes: a replay's trace, which the first
    client read beside the plan and sent to the others)."""
    def read(test: str, given: str, what: str, cap_bytes: int, named: Named) -> bytes:
        if test not in kept:
            raise named.error(f"{what}: the first client sent no copy of it; run the same plan on every client")
        return kept[test]
    return read


def kept_files_of(expanded: "Expanded") -> dict[str, bytes]:
    """Each test's file as read beside the plan (a replay's trace), by test: what the first client sends the others."""
    return {t.name: t.kept_bytes for t in expanded.tests if t.kept_bytes is not None}


def expand(plan: Plan, seed: int | None = None, free_bytes: int | None = None,
           files: PlanFiles | None = None) -> Expanded:
    """The operations of a plan, in run order; `seed` overrides defaults.seed; `free_bytes` is the target's
    free space, which a sustained test's fraction_of_free is taken of; `files` reads the files the plan names beside
    itself (None: where none can be read, a client other than the first, a test that names one is refused)."""
    tests = []
    seq = 0
    for i, test in enumerate(plan.tests):
        settings = {k: getattr(test, k) if getattr(test, k) is not None else getattr(plan.defaults, k)
                    for k in ("engine", "fill", "units", "sync", "seed")}
        if seed is not None:
            settings["seed"] = seed
        settings["files"] = files
        where = Where(("tests", i), f"tests[{i}] ({test.name})")
        expanded = replace(registry.spec(test.kind).expand(test, where, settings, seq, free_bytes),
                           sharing=test.clients.layout, read_from=test.clients.read_from)
        seq += len(expanded.ops)
        tests.append(expanded)
    return Expanded(plan=plan, tests=tests, ops=[o for t in tests for o in t.ops])
