"""4 KiB random reads at queue depth 1 with per-request latency collection on and
off, alternately; prints the median throughput ratio (target: on/off >= 0.98).
Two cases: direct reads from the disk (what users measure; the disk here is noisy),
and buffered reads from the page cache, where a request takes about a microsecond
and the cost of one clock reading and one histogram update per request is the
most visible it can be."""

from __future__ import annotations

import argparse
import shutil

from common import helper, median, scratch

MiB = 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir")
    ap.add_argument("--rounds", type=int, default=21)
    a = ap.parse_args()
    d = scratch(a.dir)
    try:
        f = d / "r.bin"
        helper("write", "--path", str(f), "--bytes", str(256 * MiB), "--granularity", str(8 * MiB))
        for engine, label in (("direct", "disk, direct"), ("buffered", "page cache, buffered")):
            if engine == "buffered":
                helper("read", "--path", str(f), "--bytes", str(256 * MiB), "--engine", "buffered")  # warm it
            on, off, ratios = [], [], []
            for i in range(a.rounds):
                got = {}
                for mode in (("on", "off") if i % 2 == 0 else ("off", "on")):
                    r = helper("read", "--path", str(f), "--bytes", str(32 * MiB), "--granularity", "4096",
                               "--span", str(256 * MiB), "--access", "random", "--seed", str(i), "--latency", mode,
                               "--engine", engine)
                    got[mode] = r["bytes"] / r["seconds"]
                on.append(got["on"])
                off.append(got["off"])
                ratios.append(got["on"] / got["off"])
            print(f"4 KiB random read ({label}), QD1, 32 MiB of 256 MiB, {a.rounds} alternations: "
                  f"on {median(on) / 1e6:.1f} MB/s, off {median(off) / 1e6:.1f} MB/s, "
                  f"ratio of medians {median(on) / median(off):.4f}, median ratio {median(ratios):.4f}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
