"""bench: fio on one target: each point's helper rate against fio's (the run's own ratio and interval), the
device's own counters against the bytes both instruments moved, and what fio's buffer scrambling does to a
compressing device (zram) beside scramble_buffers=0, which the fio twin uses.

    python3 tests/bench/bench_fio_twin.py --dir /mnt/z/t --device zram1 [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PLAN = """name: fio-twin
tests:
  - name: seq
    kind: pattern
    op: [write, read]
    access: sequential
    granularities: [1MiB]
    bytes: 512MiB
    trials: {rounds}
    bench: fio
  - name: rnd
    kind: pattern
    op: read
    access: random
    granularities: [4KiB]
    queue_depth: [1, 8]
    bytes: 128MiB
    span: 512MiB
    trials: {rounds}
    bench: fio
"""


def _stat(device: str) -> tuple[int, int, int, int]:
    """reads, sectors read, writes, sectors written (/sys/block/DEV/stat)."""
    f = (Path("/sys/block") / device / "stat").read_text().split()
    return int(f[0]), int(f[2]), int(f[4]), int(f[6])


def _fio_write_mb_s(path: Path, extra: list[str]) -> float:
    out = subprocess.run(["fio", "--name=w", f"--filename={path}", "--size=256m", "--rw=write", "--bs=1m",
                          "--direct=1", "--ioengine=psync", "--output-format=json", *extra],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["jobs"][0]["write"]["bw_bytes"] / 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--device", required=True, help="the block device under --dir, such as zram1")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "plan.yaml"
        plan.write_text(PLAN.format(rounds=args.rounds))
        before = _stat(args.device)
        subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", str(args.dir / "twin"),
                        "--out", str(Path(tmp) / "out"), "-q"], check=True)
        after = _stat(args.device)
        run_dir = next((Path(tmp) / "out").iterdir())
        summary = json.loads((run_dir / "summary.json").read_text())
        rows = (run_dir / "measurements.csv").read_text().splitlines()
        import csv
        table = list(csv.DictReader(rows))
    print("point                         helper MB/s    fio MB/s   fio/helper [95% interval]")
    for t in summary["tests"]:
        for b in t.get("bench", []):
            r = b["ratio"]
            print(f"{t['name']:4} {t['op']:5} {b['access']:10} Q{b['queue_depth']:<3} "
                  f"{b['road_bytes_per_s']['estimate'] / 1e6:11.0f} {b['bench_bytes_per_s']['estimate'] / 1e6:11.0f}"
                  f"   {r['estimate']:.3f} [{r['low']:.3f}, {r['high']:.3f}]")
    read_bytes = sum(int(r["bytes"]) for r in table if r["op"] == "read")
    written = sum(int(r["bytes"]) for r in table if r["op"] == "write")
    print(f"device {args.device}: {after[0] - before[0]} reads, {(after[1] - before[1]) * 512 / 1e6:.0f} MB read "
          f"(the measured reads: {read_bytes / 1e6:.0f} MB); {(after[3] - before[3]) * 512 / 1e6:.0f} MB written "
          f"(the measured writes: {written / 1e6:.0f} MB, layouts besides)")
    target = args.dir / "scramble.bin"
    args.dir.mkdir(parents=True, exist_ok=True)
    _fio_write_mb_s(target, [])                      # lay the file out
    default, plain = [], []
    for _ in range(args.rounds):
        default.append(_fio_write_mb_s(target, []))
        plain.append(_fio_write_mb_s(target, ["--scramble_buffers=0"]))
    target.unlink()
    print(f"fio sequential 1 MiB direct writes, 256 MiB: default (scrambled buffers) median "
          f"{statistics.median(default):.0f} MB/s, scramble_buffers=0 median {statistics.median(plain):.0f} MB/s, "
          f"ratio {statistics.median(plain) / statistics.median(default):.2f}")


if __name__ == "__main__":
    main()
