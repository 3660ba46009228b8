"""What recording costs the program recorded: its time run plainly and under `stibium record` with each recorder
(strace; eBPF, as root with bpftrace), taking turns round by round, with the calls the trace kept and the time each
adds. The workload is a Python program of small writes, syncs, reads back and stats in a folder of --dir (tmpfs or
zram: the cost is the tracer's, not the disk's); it times itself from its first line to its last, so what is
compared is the program's own time (a recorder's start and the trace's writing are outside it), and the command's
whole wall time is printed beside it. Prints medians, the ratios and the microseconds added per call kept.

    python3 tests/bench/bench_record_overhead.py [--dir DIR] [--rounds 5] [--files 200] [--writes 20]
        [--tracers strace,ebpf]"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOAD = r"""
import os, sys, time
began = time.perf_counter()
files, writes = int(sys.argv[1]), int(sys.argv[2])
block = b"x" * 4096
for f in range(files):
    name = f"f{f}.bin"
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    for w in range(writes):
        os.write(fd, block)
    os.fsync(fd)
    os.lseek(fd, 0, 0)
    while os.read(fd, 65536):
        pass
    os.close(fd)
    os.stat(name)
for f in range(files):
    os.unlink(f"f{f}.bin")
sys.stderr.write(f"program_s {time.perf_counter() - began:.6f}\n")
"""


def _once(work: Path, script: Path, files: int, writes: int, tracer: str | None, out: Path) -> tuple[float, float]:
    """(the program's own seconds, the command's wall seconds)"""
    for p in work.iterdir():
        p.unlink()
    command = [sys.executable, str(script), str(files), str(writes)]
    if tracer:
        out.unlink(missing_ok=True)
        command = [sys.executable, "-m", "stibium_py", "record", "--tracer", tracer, "--folder", str(work), "--out",
                   str(out), "--", *command]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - started
    own = next(float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("program_s "))
    return own, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/dev/shm"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--tracers", default="strace,ebpf")
    args = parser.parse_args()
    tracers = [t for t in args.tracers.split(",") if t]
    base = Path(tempfile.mkdtemp(prefix="bench-record-", dir=args.dir))
    try:
        work, script = base / "work", base / "workload.py"
        work.mkdir()
        script.write_text(WORKLOAD)
        ways: list[str | None] = [None, *tracers]
        times: dict[str | None, list[tuple[float, float]]] = {w: [] for w in ways}
        calls: dict[str, int] = {}
        for r in range(args.rounds):
            for way in (ways if r % 2 == 0 else ways[::-1]):
                times[way].append(_once(work, script, args.files, args.writes, way, base / f"{way}.trace"))
                if way:
                    calls[way] = len(json.loads((base / f"{way}.trace").read_text())["calls"])
        print(f"workload: {args.files} files x {args.writes} writes of 4 KiB, fsync, read back, stat, unlink "
              f"(calls kept: {', '.join(f'{w} {n:,}' for w, n in calls.items())})")
        plain = statistics.median(own for own, _ in times[None])
        for way in ways:
            own = statistics.median(o for o, _ in times[way])
            wall = statistics.median(w for _, w in times[way])
            added = f"; ratio {own / plain:.2f}, added {(own - plain) / calls[way] * 1e6:.1f} us a call kept" \
                if way else ""
            print(f"{way or 'plain':7s} program's own median {own:.3f} s (rounds: "
                  f"{', '.join(f'{o:.3f}' for o, _ in times[way])}); command's wall median {wall:.3f} s{added}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
