"""The helper with requests in flight against fio, on the same file, alternately: random 4 KiB reads at
queue depth 1, 8 and 32 (64 MiB of a 256 MiB file) and sequential 1 MiB reads at queue depth 8 (1 GiB),
all direct. fio runs with ioengine io_uring and with libaio at the same depth; the helper with its own
choice (io_uring on Linux) and with --io-method threads. Prints per case the median IOPS of each and the
median of the helper/fio ratios of each alternation; the target is 0.95-1.05.

--device-c runs on Recipe C (docs/truth-devices.md) with a 5 ms delay, 64 requests at once: a device whose
time is its own, not the CPU's, with little noise (needs root). On a zram disk (--dir on it) every tool
measures its own CPU cost per request instead: zram completes each request inside its submission, so a
queue adds nothing there and the tool with less work per request wins.

    PYTHONPATH=tests/bench python3 tests/bench/bench_fio_queue_depth.py --device-c --rounds 5"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

from common import helper, median, require_fio, scratch, truth_device

GiB = 2**30
MiB = 2**20


def fio_iops(path: Path, engine: str, rw: str, bs: str, size: str, io_size: str, depth: int) -> float:
    args = ["fio", "--name=bench", f"--filename={path}", f"--rw={rw}", f"--bs={bs}", f"--size={size}",
            f"--io_size={io_size}", "--direct=1", f"--ioengine={engine}", f"--iodepth={depth}",
            "--output-format=json", "--randrepeat=0"]
    job = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)["jobs"][0]
    return float(job["read"]["iops"])


def helper_iops(path: Path, method: str, access: str, gran: int, nbytes: int, span: int, depth: int) -> tuple[float, str]:
    r = helper("read", "--path", str(path), "--bytes", str(nbytes), "--granularity", str(gran), "--span", str(span),
               "--access", access, "--queue-depth", str(depth), "--io-method", method)
    return r["requests"] / r["seconds"], r["io_method"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="folder on the device to test (default /var/tmp)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--device-c", action="store_true", help="run on Recipe C, 5 ms a request (root, libfuse3-dev)")
    a = ap.parse_args()
    require_fio()
    if not a.device_c:
        compare(scratch(a.dir), a.rounds, small=False)
        return
    with truth_device("c", a.dir, delay_s=0.005, size_bytes=1 << 30) as device:
        print(f"on Recipe C: {device.delay_s * 1e3:.0f} ms a request, up to {device.parallel} at once")
        compare(device.mount / "bench", a.rounds, small=True)


def compare(d: Path, rounds: int, small: bool) -> None:
    """small: on a slow device, about a second per measurement (256 requests per request in flight)."""
    d.mkdir(exist_ok=True)
    try:
        rnd, seq = d / "rnd.bin", d / "seq.bin"
        helper("write", "--path", str(rnd), "--bytes", str(256 * MiB), "--granularity", str(8 * MiB))
        seq_bytes = 512 * MiB if small else GiB
        helper("write", "--path", str(seq), "--bytes", str(seq_bytes), "--granularity", str(8 * MiB))

        def rnd_bytes(q: int) -> int:
            return 256 * q * 4096 if small else 64 * MiB
        cases = [(f"RND4K read QD{q}", rnd, "random", "randread", 4096, "4k", rnd_bytes(q), f"{rnd_bytes(q) // 1024}k",
                  256 * MiB, "256M", q) for q in (1, 8, 32)]
        cases.append(("SEQ1M read QD8", seq, "sequential", "read", MiB, "1M", seq_bytes, f"{seq_bytes // MiB}M",
                      seq_bytes, f"{seq_bytes // MiB}M", 8))
        tools = [("helper auto", lambda c: helper_iops(c[1], "auto", c[2], c[4], c[6], c[8], c[10])[0]),
                 ("helper threads", lambda c: helper_iops(c[1], "threads", c[2], c[4], c[6], c[8], c[10])[0]),
                 ("fio io_uring", lambda c: fio_iops(c[1], "io_uring", c[3], c[5], c[9], c[7], c[10])),
                 ("fio libaio", lambda c: fio_iops(c[1], "libaio", c[3], c[5], c[9], c[7], c[10]))]
        method = helper_iops(rnd, "auto", "random", 4096, 4 * MiB, 256 * MiB, 8)[1]
        print(f"helper's own method at QD8: {method}; median of {rounds} alternations (order rotated each round)")
        print(f"{'case':18} " + " ".join(f"{name:>15}" for name, _ in tools) +
              "   auto/fio-uring  auto/libaio  threads/fio-uring")
        for case in cases:
            runs: dict[str, list[float]] = {name: [] for name, _ in tools}
            for i in range(rounds):
                order = tools[i % len(tools):] + tools[:i % len(tools)]
                for name, fn in order:
                    runs[name].append(fn(case))

            def ratio(x: str, y: str) -> float:
                return median([p / q for p, q in zip(runs[x], runs[y])])
            print(f"{case[0]:18} " + " ".join(f"{median(runs[name]):15,.0f}" for name, _ in tools) +
                  f"   {ratio('helper auto', 'fio io_uring'):14.3f}  {ratio('helper auto', 'fio libaio'):11.3f}"
                  f"  {ratio('helper threads', 'fio io_uring'):17.3f}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
