"""A plan's expansion into what the runner executes: tests with their operations (`Op`), every random
choice (orders, offsets) drawn from the plan's seed, so that the same plan and seed give the same run."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..fio.job import JobFile
from ..kinds import Kind, by_kind
from ..op import Op
from ..tree import TreeShape
from ..units import SizeError, parse_bytes, parse_seconds
from .model import (ENGINES, MAX_DURATION_S, MAX_GRANULARITY_BYTES, MAX_IN_FLIGHT, MAX_OPS, MAX_QUEUE_DEPTH, MAX_SIZES,
                    MAX_THREADS, MIN_GRANULARITY_BYTES, FilesTest, PatternTest, Plan, PlanError, Seconds, Size,
                    SizeRange, Sizes, SustainedTest, TreeTest, LogUniform, Where)


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


def estimated_s(o: Op) -> float:
    """One operation on the assumed device: its bytes at the assumed rate, or its requests at the assumed
    latency overlapped up to the assumed parallelism, whichever takes longer, plus the overhead; one by time
    takes its warm-up and duration, and one with a stonewall at most that long (with many clients the wear-out
    may take longer)."""
    overhead = ASSUMED_OP_OVERHEAD_S + (ASSUMED_BENCH_START_S if o.instrument != "helper" else 0.0)
    if o.kind == "tree":           # a phase: each file's operation at the assumed latency, its bytes at the rate
        one_s = ASSUMED_FILE_OPS_S[o.op] + (ASSUMED_SYNC_S if o.sync == "each" else 0.0)
        per_file_s = one_s * o.files / min(o.threads, ASSUMED_PARALLEL_REQUESTS)
        return max(per_file_s, o.bytes / ASSUMED_RATE_BYTES_PER_S) + overhead
    if o.duration_s:
        return o.warmup_s + o.duration_s + overhead
    if o.bench_job:                 # a job file of the plan's own: fio's start-up; the job's time is its own
        return overhead
    requests = -(-o.bytes // o.granularity_bytes)
    overlap = min(o.queue_depth * o.threads, ASSUMED_PARALLEL_REQUESTS)
    moving_s = max(o.bytes / ASSUMED_RATE_BYTES_PER_S, requests * ASSUMED_REQUEST_S / overlap)
    return (min(moving_s, o.stonewall_s) if o.stonewall_s else moving_s) + overhead


def estimated_bytes(o: Op) -> tuple[float, float]:
    """The bytes an operation reads and writes: its bytes, split by its read share where it is mixed; one by
    time, what the assumed device moves in its warm-up and duration."""
    moved = o.bytes if not o.duration_s else ASSUMED_RATE_BYTES_PER_S * (o.warmup_s + o.duration_s)
    read_share = {"read": 1.0, "write": 0.0}.get(o.op, o.read_fraction or 0.0)
    return moved * read_share, moved * (1 - read_share)


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
    tree: TreeShape | None = None              # tree tests: the tree each trial makes
    bench_job: JobFile | None = None           # pattern tests with bench_job: the job file, as read before the run


@dataclass(frozen=True)
class Expanded:
    plan: Plan
    tests: list[ExpandedTest]
    ops: list[Op] = field(default_factory=list)

    @property
    def bytes_written(self) -> int:
        """Every byte the run writes: measured writes (those by time on the assumed device) and layouts."""
        return round(sum(estimated_bytes(o)[1] for o in self.ops)) + sum(t.layout_bytes + t.precondition_bytes
                                                                         for t in self.tests)

    def space_needed_bytes(self, keep_files: bool = False) -> int:
        """Free space the run needs at its peak (test files are removed after each test; kept, every test's, and
        every tree of a tree test, each of which is otherwise removed when its phases are done)."""
        if not keep_files:
            return max((t.files_bytes for t in self.tests), default=0)
        return sum(t.files_bytes * (len({o.file for o in t.ops}) if t.tree is not None else 1) for t in self.tests)

    @property
    def estimated_s(self) -> float:
        """The run's duration on the assumed device: layouts and preconditioning at the assumed rate, then every
        operation (rounds until steady: all of them, the longest it can take)."""
        layouts = sum(t.layout_bytes + t.precondition_bytes for t in self.tests)
        return layouts / ASSUMED_RATE_BYTES_PER_S + sum(estimated_s(o) for o in self.ops)

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


def _files_ops(test: FilesTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
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
    if ENGINES[engine].one_at_a_time and (max(depths) > 1 or max(threads) > 1):
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


def _seconds(value: Seconds, where: Where) -> float:
    try:
        seconds = parse_seconds(value)
    except SizeError as e:
        raise where.error(str(e)) from None
    if seconds > MAX_DURATION_S:
        raise where.error(f"{value!r} is longer than a week; split the test")
    return seconds


def _read_fractions(spec: float | list[float] | None, where: Where) -> list[float]:
    """A test's read shares, each from 0 to 1, in the order given, without repeats."""
    if spec is None:
        return []
    values = [spec] if not isinstance(spec, list) else list(spec)
    if not values:
        raise where.error("the list is empty; give a share such as 0.7, or leave read_fraction out")
    for i, v in enumerate(values):
        if not 0 <= v <= 1:
            raise (where if not isinstance(spec, list) else where / i).error(
                f"a share of the requests is from 0 to 1 (0.7: 70 % reads), not {v:g}")
    return list(dict.fromkeys(float(v) for v in values))


def _pattern_ops(test: PatternTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    units = s["units"]
    grans = [_granularity(g, where / "granularities" / i)
             for i, g in enumerate(_sizes(test.granularities, units, where / "granularities"))]
    strides = [_size(v, units, where / "strides" / i) if v != 0 else 0 for i, v in enumerate(test.strides)]
    if not strides:
        raise (where / "strides").error("the list is empty; use [0] for no stride")
    duration_s = _seconds(test.duration, where / "duration") if test.duration is not None else 0.0
    warmup_s = _seconds(test.warmup, where / "warmup") if test.warmup is not None else 0.0
    stonewall_s = _seconds(test.stonewall, where / "stonewall") if test.stonewall is not None else 0.0
    if test.bytes is not None:
        moved = _size(test.bytes, units, where / "bytes")
    elif test.span is not None:
        moved = _size(test.span, units, where / "span")      # by time: a pass goes over the whole span
    else:
        raise where.error("a test by duration needs span (the file its requests go round in) or bytes (a pass)")
    ops_list: list[tuple[str, float | None]] = [
        (op, None) for op in ([] if test.op is None else [test.op] if isinstance(test.op, str) else
                              list(dict.fromkeys(test.op)))]
    ops_list += [("mixed", f) for f in _read_fractions(test.read_fraction, where / "read_fraction")]
    accesses = [test.access] if isinstance(test.access, str) else list(dict.fromkeys(test.access))
    if not ops_list or not accesses:
        raise where.error("op and access need at least one value")
    if any(st for st in strides) and "strided" not in accesses:
        raise (where / "strides").error("a stride needs strided access; add 'strided' to access or use strides: [0]")
    depths, threads = _in_flight_counts(test, s["engine"], where)
    combos = []
    for op, fraction in ops_list:
        for access in accesses:
            for g in grans:
                for st in strides if access == "strided" else [0]:
                    for qd in depths:
                        for t in threads:
                            combos.append((op, fraction, access, g, st, qd, t, "helper"))
    road_points = len(combos)
    if test.bench_job is not None:    # the plan's own job file, once a trial, after the points
        combos.append((*combos[0][:-1], test.bench))
    elif test.bench is not None:      # the bench's twin of every point, after them (plans without one draw as before)
        for i, fraction in enumerate(_read_fractions(test.read_fraction, where / "read_fraction")):
            if abs(fraction * 100 - round(fraction * 100)) > 1e-9:
                raise (where / "read_fraction" / i).error(
                    f"fio takes the read share in whole percent (rwmixread); {fraction:g} is not, as bench: fio needs")
        combos += [(*c[:-1], test.bench) for c in combos]
    job = test.bench_job or ""
    trials = test.steady.max_rounds if test.steady is not None else test.trials
    window, max_rounds = (test.steady.window, test.steady.max_rounds) if test.steady is not None else (0, 0)
    _check_count(len(combos) * trials, where / ("steady" if test.steady is not None else "trials"))
    needed = 0
    for op, _f, access, g, st, _qd, t, instrument in combos[:road_points] if job else combos:
        if instrument != "helper" and moved % (g * t):
            raise (where / "bytes").error(f"bench: {instrument} gives each of the {t} threads the same whole requests; "
                                          f"{moved} bytes is not a multiple of {g} x {t} bytes: change bytes or "
                                          f"granularities")
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
    for trial in range(trials):
        for ci in rng.permutation(len(combos)):
            op, fraction, access, g, st, qd, t, instrument = combos[ci]
            fresh = op == "write" and test.layout == "fresh"
            mix = () if fraction is None else (fraction,)        # plans without a mix draw the seeds they drew
            bench = () if instrument == "helper" else (instrument,)
            by_job = bool(job) and ci >= road_points      # the job file's run: its bytes are the job's, known when fio ends
            ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="pattern", op=op, access=access,
                          size_bytes=span, granularity_bytes=g, stride_bytes=st, trial=trial,
                          file=f"{test.name}/fresh-{seq0 + len(ops)}.bin" if fresh else layout,
                          bytes=0 if by_job else moved, engine=s["engine"], fill=s["fill"], sync=s["sync"] if op != "read" else "none",
                          seed=_derive_seed(s["seed"], test.name, trial, op, *mix, access, g, st,
                                            *_in_flight(qd, t), *bench),
                          data_seed=s["seed"], existing=not fresh, queue_depth=qd, threads=t, read_fraction=fraction,
                          duration_s=duration_s, warmup_s=warmup_s, steady_window=window,
                          steady_max_rounds=max_rounds, stonewall_s=stonewall_s, instrument=instrument,
                          bench_job=job if by_job else ""))
    needs_layout = any(o.existing for o in ops)
    return ExpandedTest(name=test.name, kind="pattern", ops=ops, layout_file=layout if needs_layout else "",
                        layout_bytes=span if needs_layout else 0,
                        files_bytes=(span if needs_layout else 0) + (span if test.layout == "fresh" else 0),
                        precondition_bytes=2 * span if test.precondition else 0)


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


def _tree_shape(test: TreeTest, where: Where, s: dict[str, Any]) -> TreeShape:
    """The tree a tree test makes: its sizes parsed and drawn from the seed, its names long enough."""
    units = s["units"]
    at = where / "file_size"
    spec = test.file_size
    low = high = 0
    if isinstance(spec, LogUniform):
        choices: tuple[int, ...] = ()
        low, high = _size(spec.from_, units, at / "from"), _size(spec.to, units, at / "to")
        if high < low:
            raise at.error(f"'to' ({spec.to}) is smaller than 'from' ({spec.from_})")
    elif isinstance(spec, list):
        if not spec:
            raise at.error("the list is empty; give at least one size")
        choices = tuple(_size(v, units, at / i) for i, v in enumerate(spec))
    else:
        choices = (_size(spec, units, at),)
    if max(choices or (high,)) > MAX_GRANULARITY_BYTES:
        raise at.error("a file of a tree is at most 2 GiB")
    shape = TreeShape(files=test.files, dirs=test.dirs, depth=test.depth, name_bytes=test.name_bytes, choices=choices,
                      low_bytes=low, high_bytes=high, seed=_derive_seed(s["seed"], test.name, "sizes"))
    if test.name_bytes < shape.shortest_name:
        raise (where / "name_bytes").error(f"{test.files} files need names of at least {shape.shortest_name} bytes "
                                           f"(f, the file's number, {len('.dat')} for .dat); raise name_bytes")
    return shape


def _tree_ops(test: TreeTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    """Each trial a tree of its own per thread count (in an order drawn from the seed), its phases in order, each
    phase one measurement."""
    shape = _tree_shape(test, where, s)
    threads = _counts(test.threads, MAX_THREADS, where / "threads")
    if max(threads) > test.files:
        raise (where / "threads").error(f"{max(threads)} threads for {test.files} files: every thread needs a file; "
                                        f"lower threads or raise files")
    _check_count(test.trials * len(threads) * len(test.phases), where / "trials")
    total = shape.total_bytes
    rng = np.random.default_rng(_derive_seed(s["seed"], test.name, "order"))
    sync = test.sync or "end"
    ops: list[Op] = []
    for trial in range(test.trials):
        for t in (threads[i] for i in rng.permutation(len(threads))):
            for phase in test.phases:
                moves = phase in ("create", "read", "copy")
                ops.append(Op(seq=seq0 + len(ops), test=test.name, kind="tree", op=phase, access="",
                              size_bytes=total, granularity_bytes=0, stride_bytes=0, trial=trial,
                              file=f"{test.name}/tree-{trial}-t{t}", bytes=total if moves else 0,
                              engine=test.engine or "posix",
                              fill="random", sync=sync if phase == "create" else "none", seed=s["seed"],
                              data_seed=s["seed"], existing=phase != "create", threads=t, files=test.files))
    blocks = int(np.sum(-(-shape.sizes // ALLOCATION_BYTES))) + test.dirs
    copies = 2 if "copy" in test.phases else 1          # the copy is the tree again (where it does not clone)
    return ExpandedTest(name=test.name, kind="tree", ops=ops, between=test.between, tree=shape,
                        files_bytes=copies * blocks * ALLOCATION_BYTES)


# how each kind of test becomes operations: (test, where, settings, first seq, free bytes) -> ExpandedTest
EXPANDERS: dict[Kind, Any] = by_kind("plan: the expansion into operations", {
    "files": _files_ops, "pattern": _pattern_ops, "sustained": _sustained_ops, "tree": _tree_ops})


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
        expanded = replace(EXPANDERS[test.kind](test, where, settings, seq, free_bytes),
                           sharing=test.clients.layout, read_from=test.clients.read_from)
        seq += len(expanded.ops)
        tests.append(expanded)
    return Expanded(plan=plan, tests=tests, ops=[o for t in tests for o in t.ops])
