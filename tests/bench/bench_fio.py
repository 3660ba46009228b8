"""Helper against fio on the same file with the same pattern, alternately:
sequential 1 MiB writes and reads of 1 GiB, random 4 KiB reads at queue depth 1
over 256 MiB (psync, direct=1). Prints the median helper/fio throughput ratio of
each; the target is 0.95-1.05. --device-b runs both on a device of known speed
(Recipe B of docs/truth-devices.md: 50 MiB/s, 1 ms a request; needs root), where the disk's own
noise does not drown the comparison."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

from common import helper, median, require_fio, scratch, truth_device

GiB = 2**30
MiB = 2**20


def fio(path: Path, rw: str, bs: str, size: str, io_size: str | None = None) -> float:
    args = ["fio", "--name=bench", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--size={size}",
            "--direct=1", "--ioengine=psync", "--iodepth=1", "--output-format=json", "--randrepeat=0"]
    if rw == "write":
        args += ["--end_fsync=1", "--fallocate=none"]
    if io_size:
        args.append(f"--io_size={io_size}")
    out = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    job = out["jobs"][0]
    return float(job["write" if rw == "write" else "read"]["bw_bytes"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", help="folder on the disk to test (default /var/tmp)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--device-b", action="store_true", help="run on a Recipe B device (root, nbdkit, nbdfuse)")
    a = ap.parse_args()
    require_fio()
    if a.device_b:
        with truth_device("b", a.dir, size="2G") as device:
            print(f"on Recipe B: {device.read_bytes_per_s / 1e6:.2f} MB/s, {device.delay_s * 1e3:.0f} ms a request")
            compare(device.mount, a.rounds)
        return
    compare(None if a.dir is None else Path(a.dir), a.rounds)


def compare(base: Path | None, rounds: int) -> None:
    a_rounds = rounds
    d = scratch(str(base) if base else None)
    try:
        seq = d / "seq.bin"
        rnd = d / "rnd.bin"
        helper("write", "--path", str(seq), "--bytes", str(GiB), "--granularity", str(8 * MiB), "--fill", "0x00")
        helper("write", "--path", str(rnd), "--bytes", str(256 * MiB), "--granularity", str(8 * MiB))
        cases = {
            "seq 1MiB write 1GiB": (
                lambda: helper("write", "--path", str(seq), "--existing", "--bytes", str(GiB), "--granularity",
                               str(MiB), "--latency", "off"),
                lambda: fio(seq, "write", "1M", "1G")),
            "seq 1MiB read 1GiB": (
                lambda: helper("read", "--path", str(seq), "--bytes", str(GiB), "--granularity", str(MiB),
                               "--latency", "off"),
                lambda: fio(seq, "read", "1M", "1G")),
            "rand 4KiB read QD1 64MiB of 256MiB": (
                lambda: helper("read", "--path", str(rnd), "--bytes", str(64 * MiB), "--granularity", "4096",
                               "--span", str(256 * MiB), "--access", "random"),
                lambda: fio(rnd, "randread", "4k", "256M", "64M")),
        }
        print(f"{'case':40} {'helper MB/s':>12} {'fio MB/s':>10} {'ratio':>7}  (median of {a_rounds} alternations)")
        for name, (run_helper, run_fio) in cases.items():
            ratios, hs, fs = [], [], []
            for i in range(a_rounds):
                order = [("h", run_helper), ("f", run_fio)] if i % 2 == 0 else [("f", run_fio), ("h", run_helper)]
                got = {}
                for who, fn in order:
                    r = fn()
                    got[who] = r["bytes"] / r["seconds"] if isinstance(r, dict) else r
                hs.append(got["h"])
                fs.append(got["f"])
                ratios.append(got["h"] / got["f"])
            print(f"{name:40} {median(hs) / 1e6:12.1f} {median(fs) / 1e6:10.1f} {median(ratios):7.3f}"
                  f"  ratios {' '.join(f'{r:.3f}' for r in ratios)}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
