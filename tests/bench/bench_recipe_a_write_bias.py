"""Recipe A's write bias: one 256 MiB file written on a loop device throttled to 31457280 B/s writes
(tests/truth/devices.py) by the helper as a files test writes it (one O_DIRECT request of the whole file, then
fsync), by the helper in 1 MiB and 8 MiB requests, and by dd (1 MiB, oflag=direct, conv=fsync), alternately,
4 rounds; prints each rate's error against the rate set and each way's median. Needs root.

    python3 tests/bench/bench_recipe_a_write_bias.py
"""
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "truth"))
import devices
from stibium_py.run.helper import find_helper

H = str(find_helper())
R, W = 52428800, 31457280
MiB = 1 << 20
SIZE = 256 * MiB


def seconds(way: str, request_bytes: int, path: Path) -> float:
    path.unlink(missing_ok=True)
    subprocess.run(["sync"], check=True)
    if way == "dd":
        p = subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={SIZE // MiB}", "oflag=direct",
                            "conv=fsync"], capture_output=True, text=True, check=True)
        return float(re.search(r"copied, ([0-9.]+) s", p.stderr).group(1))
    out = subprocess.run([H, "write", "--path", str(path), "--bytes", str(SIZE), "--granularity", str(request_bytes),
                          "--engine", "direct", "--sync", "fsync"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["seconds"]


WAYS = (("helper, whole file", SIZE), ("helper, 1 MiB", MiB), ("helper, 8 MiB", 8 * MiB), ("dd", MiB))
work = Path(tempfile.mkdtemp(dir="/var/tmp"))
with devices.recipe_a(work, R, W) as dev:
    errors = {way: [] for way, _ in WAYS}
    for rnd in range(4):
        for way, request_bytes in WAYS:
            error = SIZE / seconds(way, request_bytes, dev.mount / "f.bin") / W - 1
            errors[way].append(error)
            print(rnd, way, f"{error:+.2%}", flush=True)
    for way, v in errors.items():
        v.sort()
        print(f"{way}: median {(v[1] + v[2]) / 2:+.2%}", " ".join(f"{x:+.2%}" for x in v))
shutil.rmtree(work)
