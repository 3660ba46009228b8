"""What memory can do on this machine for the reads a run makes: the yardstick every uncached read is held
against, so that a read served by a cache below the file system (a loop device's backing file, a virtual
machine's host, a RAM disk) is caught although the page cache above held none of it (docs/methods.md).

Before its first test a run measures, for each read shape its tests use (bytes, request size, access,
requests in flight, threads), ROUNDS reads of that shape from the page cache of a file in the test folder,
through the buffered engine, and keeps the rates in run.json (`memory_reads`). Large reads are measured on
at most CAP_BYTES: a memory copy's rate no longer grows there.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

CAP_BYTES = 64 * 2**20
ROUNDS = 3
PROBE_FILE = "stibium-memory-probe"


@dataclass(frozen=True, order=True)
class Shape:
    bytes: int
    granularity_bytes: int
    access: str                 # sequential | random (memory does not care for strides)
    queue_depth: int = 1
    threads: int = 1


def shape_of(nbytes: int, granularity_bytes: int, access: str, queue_depth: int = 1, threads: int = 1) -> Shape:
    """The memory read that stands for a read of nbytes in requests of granularity_bytes: the same requests,
    on at most CAP_BYTES (whole requests, at least one)."""
    g = max(1, min(int(granularity_bytes), CAP_BYTES))
    n = min(int(nbytes), CAP_BYTES)
    n = max(g, n - n % g) if n >= g else n
    g = min(g, n) if n else g
    return Shape(n, g, "random" if access == "random" else "sequential", int(queue_depth), int(threads))


@dataclass(frozen=True)
class MemoryRead:
    shape: Shape
    rates_bytes_per_s: tuple[float, ...]

    @property
    def rate_bytes_per_s(self) -> float:
        return statistics.median(self.rates_bytes_per_s)

    def to_json(self) -> dict[str, Any]:
        return {**self.shape.__dict__, "rates_bytes_per_s": list(self.rates_bytes_per_s)}

    @classmethod
    def from_json(cls, data: Any) -> "MemoryRead | None":
        """A record read back; None where it is damaged (a run without it is held against nothing)."""
        try:
            shape = Shape(int(data["bytes"]), int(data["granularity_bytes"]), str(data["access"]),
                          int(data.get("queue_depth", 1)), int(data.get("threads", 1)))
            rates = tuple(float(r) for r in data["rates_bytes_per_s"])
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return cls(shape, rates) if rates and all(r > 0 for r in rates) else None


def shapes_of(ops: Iterable[Any]) -> set[Shape]:
    """The read shapes of a run's operations that are held against memory speed: reads of a file's data by the
    helper (not a tree's phases, which time many files' operations whole, nor fio's jobs, which stibium does not
    time itself)."""
    return {shape_of(o.bytes, o.granularity_bytes, o.access, o.queue_depth, o.threads)
            for o in ops if o.op == "read" and not o.phase and not o.bench_job}


def read_args(path: Path, shape: Shape) -> list[str]:
    return ["read", "--path", str(path), "--bytes", str(shape.bytes), "--granularity", str(shape.granularity_bytes),
            "--access", shape.access, "--engine", "buffered", "--existing", "--latency", "off",
            *(["--queue-depth", str(shape.queue_depth)] if shape.queue_depth > 1 else []),
            *(["--threads", str(shape.threads)] if shape.threads > 1 else [])]


def probe_sync(platform: str, size_bytes: int, background_bytes: int | None) -> str:
    """How the probe's file is written: "fsync" (its data on the device before the tests begin, so that no
    write of it is still going on beside them) or "none" (not written back at all: the caller removes the
    file as soon as the probe is done).

    Linux writes a dirty page back when it is older than dirty_expire_centisecs (30 s by default) or when
    the dirty pages pass the background threshold (vm.dirty_background_bytes, or dirty_background_ratio of
    the memory that can hold them): below it, a file removed within seconds is never written, and its
    removal frees no blocks (ext4 allocates them at write-back). macOS pushes a sequential writer's pages
    to the device while it writes (xnu bsd/vfs/vfs_cluster.c, cluster_write_copy: once its MAX_CLUSTERS
    clusters are full, cluster_try_push writes the oldest behind it), so there the file is synced, as it is
    wherever the threshold is not known or the file would pass it. Elsewhere the sync is left out: it is disk
    work at every run's start (docs/performance.md)."""
    if platform != "linux" or background_bytes is None or size_bytes >= background_bytes:
        return "fsync"
    return "none"


def linux_background_bytes(vm: Path = Path("/proc/sys/vm"), meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """Linux's background write-back threshold in bytes: dirty_background_bytes where set, else
    dirty_background_ratio percent of the available memory (the kernel counts free and page-cache memory,
    which MemAvailable approximates from below); None where it cannot be read."""
    try:
        fixed = int((vm / "dirty_background_bytes").read_text())
        if fixed:
            return fixed
        ratio = int((vm / "dirty_background_ratio").read_text())
        available_kib = next(int(line.split()[1]) for line in meminfo.read_text().splitlines()
                             if line.startswith("MemAvailable:"))
    except (OSError, ValueError, StopIteration, IndexError):
        return None
    return available_kib * 1024 * ratio // 100


def probe(call: Callable[[list[str]], dict[str, Any]], path: Path, shapes: Iterable[Shape],
          sync: Callable[[int], str], rounds: int = ROUNDS) -> list[MemoryRead]:
    """Each shape read `rounds` times from the page cache of one file at path, written (synced or not as
    `sync` of its size says: probe_sync), then read once to be sure it is cached. The caller removes the
    file as soon as the probe is done. `call` runs one helper command and returns its answer (raising where
    it fails)."""
    shapes = sorted(set(shapes))
    if not shapes:
        return []
    size = max(s.bytes for s in shapes)
    whole = shape_of(size, min(size, 2**20), "sequential")
    call(["write", "--path", str(path), "--bytes", str(size), "--granularity", str(whole.granularity_bytes),
          "--engine", "buffered", "--sync", sync(size), "--latency", "off"])
    call(read_args(path, whole))
    out = []
    for shape in shapes:
        rates = []
        for _ in range(rounds):
            answer = call(read_args(path, shape))
            rates.append(answer["bytes"] / answer["seconds"])
        out.append(MemoryRead(shape, tuple(rates)))
    return out
