"""The memory probe's cost at a run's start, synced and not (memory.probe_sync): the seconds of the probe and
its file's removal, and what the device's own counters (/sys/block/DEV/stat: writes, sectors written) saw
during them and in the seconds after (where a late write-back would show). Linux only.

    python3 tests/bench/bench_memory_probe.py --dir DIR --device vda [--rounds 3] [--after 6]"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from stibium_py.machine import memory
from stibium_py.run.helper import CompiledHelper, find_helper

SHAPES = [memory.shape_of(64_000_000, 64_000_000, "sequential"), memory.shape_of(16 << 20, 4096, "random")]


def written(device: str) -> tuple[int, int]:
    fields = Path(f"/sys/block/{device}/stat").read_text().split()
    return int(fields[4]), int(fields[6])        # writes completed, sectors written


def one(d: Path, device: str, sync: str, after_s: float) -> tuple[float, int, float, float]:
    os.sync()
    time.sleep(after_s)
    before = written(device)
    with CompiledHelper(find_helper()).session() as h:
        t0 = time.perf_counter()
        memory.probe(lambda a: h.call(a, timeout_s=600).data, d / memory.PROBE_FILE, SHAPES, lambda size: sync)
        os.unlink(d / memory.PROBE_FILE)
        seconds = time.perf_counter() - t0
    during = written(device)
    time.sleep(after_s)
    later = written(device)
    return seconds, during[0] - before[0], (during[1] - before[1]) * 512 / 1e6, (later[1] - during[1]) * 512 / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="a folder on the device")
    ap.add_argument("--device", required=True, help="the device's name under /sys/block, e.g. vda")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--after", type=float, default=6.0, help="seconds to wait before and after each probe")
    a = ap.parse_args()
    results: dict[str, list[tuple[float, int, float, float]]] = {"fsync": [], "none": []}
    for _ in range(a.rounds):
        for sync in results:                 # in turns
            results[sync].append(one(Path(a.dir), a.device, sync, a.after))
    for sync, rows in results.items():
        print(f"sync {sync:5}: probe and removal {statistics.median(r[0] for r in rows):.3f} s, "
              f"writes {statistics.median(r[1] for r in rows):.0f}, MB written during "
              f"{statistics.median(r[2] for r in rows):.1f}, in the {a.after:g} s after "
              f"{statistics.median(r[3] for r in rows):.2f} (medians of {a.rounds})")


if __name__ == "__main__":
    main()
