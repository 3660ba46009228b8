"""One helper measurement of a run, as the plan's expansion makes it (plan/expand.py) and the helper,
the measurement record and the runner read it: a plain record, so that none of them imports the plan's
model, pydantic or YAML to get it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import registry
from ..registry import Kind


@dataclass(frozen=True)
class Phase:
    """A tree test's own part of an operation: a phase (its op: create, stat, list, read, rename or delete) over
    the tree's files, its file the tree's folder."""

    files: int                          # the files of the tree


@dataclass(frozen=True)
class Frames:
    """A stream test's own part of an operation: its frames (each chunk a frame) issued no earlier than their
    times, one of several streams at once."""

    fps: float                          # frames a second
    streams: int                        # the streams that run at once (this operation is one of them)
    stream: int                         # which of them, from 0
    buffer_frames: int                  # the frames a player or recorder holds (a frame later is dropped)
    sequence: str = ""                  # an image sequence: its frame files' extension (its file a folder)


@dataclass(frozen=True)
class Op:
    """One helper measurement, in run order (`seq`)."""

    seq: int
    test: str
    kind: Kind
    op: str                 # read | write | mixed
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
    offset_bytes: int = 0   # many clients, a shared file: where this client's segment begins (sharing.py)
    read_fraction: float | None = None  # mixed: the share of requests that read
    duration_s: float = 0.0             # a measurement by time: how long after the warm-up (0: its bytes once)
    warmup_s: float = 0.0               # the warm-up before it, counted apart
    steady_window: int = 0              # rounds until steady: the window judged (0: trials, no judgement)
    steady_max_rounds: int = 0          # and the most rounds
    stonewall_s: float = 0.0            # a measurement of its bytes stops this long after its start (0: never)
    instrument: str = "helper"          # what measures it: the helper, or fio (the bench beside the road test)
    bench_job: str = ""                 # fio runs the plan's own job file (its path as the plan gives it), not a twin
    rate_per_s: float = 0.0            # an open loop: requests a second issued at their due times (0: closed loop)
    arrivals: str = ""                  # ... spaced evenly (constant) or drawn (poisson)
    slo: str = ""                       # ... a step of a search for the highest rate meeting this target
    phase: Phase | None = None          # tree: its own part (a phase over the tree's files)
    frames: Frames | None = None        # stream: its own part (frames at their times)

    @property
    def sequence(self) -> str:
        """A stream's image sequence: its frame files' extension; "" for a movie, or an operation of no stream."""
        return self.frames.sequence if self.frames is not None else ""

    def frame_file(self, k: int) -> str:
        """An image sequence's frame k (its file a folder): the frame's file in it, numbered as the formats' tools
        number them (0000000.dpx)."""
        return f"{self.file}/{k:07d}.{self.sequence}"

    def made_files(self) -> list[str]:
        """Every file the operation makes: its file, or each frame's file of an image sequence (a stream's)."""
        return [self.frame_file(k) for k in range(self.bytes // self.chunk_bytes)] if self.sequence else [self.file]

    @property
    def reads(self) -> bool:
        """Some of its requests read (a read, or a mixed measurement)."""
        return self.op != "write"

    @property
    def writes(self) -> bool:
        """Some of its requests write (a write, or a mixed measurement)."""
        return self.op != "read"

    @property
    def span_bytes(self) -> int | None:
        """The span its requests fall in, for kinds whose requests fall in a laid-out file (the helper is told
        the span, and its answer must echo it)."""
        return self.size_bytes if registry.spec(self.kind).spanned else None

    def as_dict(self) -> dict[str, Any]:
        """Its fields; queue depth, threads and chunk only where they are set, so that the digest of a plan
        made before they existed stays what it was (a run of then still resumes)."""
        # what dataclasses.asdict gives (every value here is a number, a text or None, and a kind's own part a record
        # of those), without its deep copy of each value: a verify of a large drive has some 190,000 operations, and
        # asdict took 15 s of them before the first measurement (docs/performance.md)
        out = _fields_of(self)
        # a kind's own part, flat beside the rest as before the parts were apart (the digest of a run stays)
        for part in (out.pop("phase"), out.pop("frames")):
            if part is not None:
                out.update(_fields_of(part))
        for key, unset in (("queue_depth", 1), ("threads", 1), ("chunk_bytes", 0), ("offset_bytes", 0),
                           ("read_fraction", None), ("duration_s", 0.0), ("warmup_s", 0.0), ("steady_window", 0),
                           ("steady_max_rounds", 0), ("stonewall_s", 0.0),
                           ("instrument", "helper"), ("bench_job", ""), ("rate_per_s", 0.0), ("arrivals", ""), ("slo", ""), ("files", 0), ("fps", 0.0), ("streams", 0),
                           ("stream", 0), ("buffer_frames", 0), ("sequence", "")):
            if out.get(key, unset) == unset:
                out.pop(key, None)
        return out


def _fields_of(record: Any) -> dict[str, Any]:
    """A record's fields by name, in their order, the values themselves (not copies): its instance dictionary, which
    for these records (dataclasses without slots, nothing cached on them) holds exactly its fields."""
    return dict(vars(record))
