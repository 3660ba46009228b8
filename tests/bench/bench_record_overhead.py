"""What recording costs the program recorded: its wall time run plainly and under `stibium record` (strace), taking
turns round by round, with the calls the trace kept and the time each adds. The workload is a Python program of
small writes, syncs, reads back and stats in a folder of --dir (tmpfs or zram: the cost is the tracer's, not the
disk's). Prints medians, the ratio and the microseconds added per call kept.

    python3 tests/bench/bench_record_overhead.py [--dir DIR] [--rounds 5] [--files 200] [--writes 20]"""

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
import os, sys
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
"""


def _once(work: Path, script: Path, files: int, writes: int, record: bool, out: Path) -> float:
    for p in work.iterdir():
        p.unlink()
    command = [sys.executable, str(script), str(files), str(writes)]
    if record:
        out.unlink(missing_ok=True)
        command = [sys.executable, "-m", "stibium_py", "record", "--folder", str(work), "--out", str(out), "--",
                   *command]
    started = time.perf_counter()
    subprocess.run(command, cwd=work, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/dev/shm"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--writes", type=int, default=20)
    args = parser.parse_args()
    if shutil.which("strace") is None:
        sys.exit("strace is not installed")
    base = Path(tempfile.mkdtemp(prefix="bench-record-", dir=args.dir))
    try:
        work, script, out = base / "work", base / "workload.py", base / "w.trace"
        work.mkdir()
        script.write_text(WORKLOAD)
        plain, recorded = [], []
        for r in range(args.rounds):
            for record in ((False, True) if r % 2 == 0 else (True, False)):
                (recorded if record else plain).append(_once(work, script, args.files, args.writes, record, out))
        trace = json.loads(out.read_text())
        calls = len(trace["calls"])
        p, q = statistics.median(plain), statistics.median(recorded)
        print(f"workload: {args.files} files x {args.writes} writes of 4 KiB, fsync, read back, stat, unlink "
              f"({calls:,} calls kept; {trace['recorded']['outside_calls']:,} outside the folder)")
        print(f"plain     median {p:.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in plain)})")
        print(f"recorded  median {q:.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in recorded)})")
        print(f"ratio {q / p:.2f}; added {(q - p) / calls * 1e6:.1f} us a call kept "
              f"(including stibium's own start and the trace's writing)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
