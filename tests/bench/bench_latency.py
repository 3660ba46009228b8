"""4 KiB random reads at queue depth 1 with per-request latency collection on and
off, alternately; prints the median throughput ratio (target: on/off >= 0.98)."""

from __future__ import annotations

import argparse
import shutil

from common import helper, median, scratch

MiB = 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir")
    ap.add_argument("--rounds", type=int, default=11)
    a = ap.parse_args()
    d = scratch(a.dir)
    try:
        f = d / "r.bin"
        helper("write", "--path", str(f), "--bytes", str(256 * MiB), "--granularity", str(8 * MiB))
        on, off, ratios = [], [], []
        for i in range(a.rounds):
            got = {}
            for mode in (("on", "off") if i % 2 == 0 else ("off", "on")):
                r = helper("read", "--path", str(f), "--bytes", str(32 * MiB), "--granularity", "4096",
                           "--span", str(256 * MiB), "--access", "random", "--seed", str(i), "--latency", mode)
                got[mode] = r["bytes"] / r["seconds"]
            on.append(got["on"])
            off.append(got["off"])
            ratios.append(got["on"] / got["off"])
        print(f"4 KiB random read, QD1, 32 MiB of 256 MiB, {a.rounds} alternations")
        print(f"latency on : median {median(on) / 1e6:.2f} MB/s")
        print(f"latency off: median {median(off) / 1e6:.2f} MB/s")
        print(f"on/off ratio: median {median(ratios):.4f}  ({' '.join(f'{r:.3f}' for r in ratios)})")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
