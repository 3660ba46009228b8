"""How fast an uncached read is against a read of the same shape from memory, per target: the measurement
behind the threshold of "served by a cache below the file system" (docs/methods.md).

For each target folder (LABEL=DIR) and each read shape (whole files of several sizes, random 4 KiB and
sequential 1 MiB one at a time and with requests in flight), ROUNDS rounds of: evict, a direct read (the
uncached rate), a buffered read of the same shape (warms the cache), a buffered read (the memory rate).
Prints each round's ratio uncached / memory and the medians per target and shape, side by side in one run.

    python3 tests/bench/bench_below_cache.py disk=/var/tmp zram=/mnt/zram loop=/mnt/loop [--rounds 5] [--device-b]

--device-b adds Recipe B (tests/truth/devices.py, 52.43 MB/s; root, nbdkit, fuse3) as the target "recipe-b".
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import helper, truth_device  # noqa: E402

# (name, file bytes, read bytes, granularity, access, queue depth)
SHAPES = [
    ("file 256 KiB", 256 * 2**10, 256 * 2**10, 256 * 2**10, "sequential", 1),
    ("file 4 MiB", 4 * 2**20, 4 * 2**20, 2**20, "sequential", 1),
    ("file 64 MiB", 64 * 2**20, 64 * 2**20, 2**20, "sequential", 1),
    ("rand 4K Q1", 64 * 2**20, 8 * 2**20, 4096, "random", 1),
    ("rand 4K Q32", 64 * 2**20, 32 * 2**20, 4096, "random", 32),
    ("seq 1M Q1", 64 * 2**20, 64 * 2**20, 2**20, "sequential", 1),
    ("seq 1M Q8", 64 * 2**20, 64 * 2**20, 2**20, "sequential", 8),
]


def read(path: Path, engine: str, nbytes: int, granularity: int, access: str, depth: int) -> float:
    d = helper("read", "--path", str(path), "--bytes", str(nbytes), "--granularity", str(granularity),
               "--access", access, "--engine", engine, "--queue-depth", str(depth), "--existing",
               "--latency", "off")
    return d["bytes"] / d["seconds"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="*", help="LABEL=DIR")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--device-b", action="store_true", help="also Recipe B, a device of known speed")
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        targets = list(args.targets)
        if args.device_b:
            targets.append(f"recipe-b={stack.enter_context(truth_device('b', None)).mount}")
        measure(targets, args.rounds)


def measure(targets: list[str], rounds: int) -> None:
    ratios: dict[tuple[str, str], list[float]] = {}
    rates: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for spec in targets:
        label, folder = spec.split("=", 1)
        work = Path(tempfile.mkdtemp(prefix="stibium-bench-", dir=folder))
        try:
            for name, fbytes, nbytes, gran, access, depth in SHAPES:
                f = work / "f"
                helper("write", "--path", str(f), "--bytes", str(fbytes), "--granularity", str(min(fbytes, 2**20)),
                       "--engine", "direct", "--sync", "fsync")
                direct, memory = [], []
                for _ in range(rounds):
                    helper("evict", "--path", str(f))
                    direct.append(read(f, "direct", nbytes, gran, access, depth))
                    read(f, "buffered", fbytes, min(fbytes, 2**20), "sequential", 1)
                    memory.append(read(f, "buffered", nbytes, gran, access, depth))
                rates[label, name] = (direct, memory)
                ratios[label, name] = [d / m for d, m in zip(direct, memory)]
                f.unlink()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'target':8} {'shape':13} {'uncached MB/s':>13} {'memory MB/s':>12} {'ratio':>6}  rounds")
    for (label, name), rs in ratios.items():
        d, m = rates[label, name]
        print(f"{label:8} {name:13} {statistics.median(d) / 1e6:13.0f} {statistics.median(m) / 1e6:12.0f} "
              f"{statistics.median(rs):6.2f}  " + " ".join(f"{r:.2f}" for r in rs))


if __name__ == "__main__":
    main()
