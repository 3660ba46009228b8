"""Synthetic run directories with a known truth, for analysis, compare and
corrupt-input tests: the same files the runner writes, with measurements drawn
from a model (seconds = latency + size / rate, log-normal noise)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.record import RUN_FORMAT
from stibium_py.rundir.store import MeasurementLog, write_json_atomic

SIZES = np.geomspace(1e6, 64e6, 7).round()


def make_run(path: Path, *, rate_bytes_per_s: float, latency_s: float = 2e-4, repeats: int = 10, noise: float = 0.03,
             seed: int = 0, plan: str = "synthetic", host: str = "host", pattern_rate_factor: float = 1.0,
             trials: int = 10, sizes: np.ndarray = SIZES, granularities: tuple[int, ...] = (4096, 65536, 1 << 20, 16 << 20),
             ram_bytes: int | None = None, platform: str | None = None, sync_used: str | None = None) -> Path:
    """A complete run with a files test (write and read) and a pattern test (random reads at 4 granularities).
    platform: the helper's (run.json); sync_used: what the writes' sync was (measurements)."""
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True)
    log = MeasurementLog(path)
    seq = 0
    for op in ("write", "read"):
        for size in np.repeat(sizes, repeats):
            t = (latency_s + size / rate_bytes_per_s) * float(np.exp(rng.normal(0, noise)))
            log.append(Measurement(**{"seq": seq, "test": "files", "op": op, "kind": "files", "access": "sequential",
                        "size_bytes": int(size), "granularity_bytes": int(size), "stride_bytes": 0, "trial": 0,
                        "file": f"files/f{seq}.bin", "bytes": int(size), "seconds": t, "started_s": seq * 0.1,
                        "resident_before": 0.0 if op == "read" else None, "engine": "direct", "requests": 1,
                        "sync_used": (sync_used if op == "write" else "none") if sync_used else None}))
            seq += 1
    for g in granularities:
        for trial in range(trials):
            moved = 64 << 20
            t = moved / (rate_bytes_per_s * pattern_rate_factor) * float(np.exp(rng.normal(0, noise)))
            log.append(Measurement(**{"seq": seq, "test": "pat", "op": "read", "kind": "pattern", "access": "random",
                        "size_bytes": 256 << 20, "granularity_bytes": g, "stride_bytes": 0, "trial": trial,
                        "file": "pat/data.bin", "bytes": moved, "seconds": t, "started_s": seq * 0.1,
                        "resident_before": 0.0, "engine": "direct", "requests": moved // g}))
            seq += 1
    log.close()
    write_json_atomic(path / "run.json", {"format": RUN_FORMAT, "plan": {"name": plan, "description": ""},
                                          "machine": {"hostname": host, "ram_bytes": ram_bytes}, "target_facts": {},
                                          "helper": {"platform": platform} if platform else {},
                                          "status": "complete",
                                          "started_utc": "2026-01-01T00:00:00Z"})
    return path
