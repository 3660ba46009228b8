"""What streaming chunk rows (--chunk, sustained tests) costs: the same sequential 1 MiB write with and
without --chunk, one request at a time and with requests in flight, alternating, and the ratio of the
medians (target: at least 0.98, the rows' writing out being the only added work). Run it on a low-noise
device (a zram block device with ext4, docs/truth-devices.md Recipe Z): a disk's own swings hide 2 %."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess

from common import median, scratch
from stibium_py.run.helper import find_helper


def _write(path, size: str, chunk: str | None, flight: list[str]) -> float:
    args = [str(find_helper()), "write", "--path", str(path), "--bytes", size, "--granularity", "1MiB",
            "--engine", "direct", *flight, *(["--chunk", chunk] if chunk else [])]
    proc = subprocess.run(args, capture_output=True, text=True)
    answer = json.loads(proc.stdout.splitlines()[-1])
    if proc.returncode != 0:
        raise SystemExit(f"helper failed: {answer.get('error')}")
    path.unlink()
    return answer["bytes"] / answer["io_seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--bytes", default="512MiB")
    ap.add_argument("--chunk", default="16MiB")
    a = ap.parse_args()
    d = scratch(a.dir)
    try:
        for label, flight in (("one at a time", []), ("Q8T1 io_uring", ["--queue-depth", "8"]),
                              ("Q4T2 threads", ["--queue-depth", "4", "--threads", "2", "--io-method", "threads"])):
            plain, chunked = [], []
            for _ in range(a.rounds):
                plain.append(_write(d / "f", a.bytes, None, flight))
                chunked.append(_write(d / "f", a.bytes, a.chunk, flight))
            p, c = median(plain), median(chunked)
            print(f"{label}: without chunks {p / 1e6:.0f} MB/s, with a row every {a.chunk} {c / 1e6:.0f} MB/s "
                  f"(medians of {a.rounds}), ratio {c / p:.3f}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
