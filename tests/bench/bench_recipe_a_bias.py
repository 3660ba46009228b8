"""Recipe A's read bias: the helper, fio and dd read the same 256 MB file on a loop device throttled to
52428800 B/s by the blkio cgroup (tests/truth/devices.py), evicted before each read, alternately, 3 rounds;
prints each rate and its error against the throttle. Needs root.

    python3 tests/bench/bench_recipe_a_bias.py
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "truth"))
import devices
from stibium_py.run.helper import find_helper
H = str(find_helper())
R, W = 52428800, 31457280
work = Path(tempfile.mkdtemp(dir="/var/tmp"))
with devices.recipe_a(work, R, W) as dev:
    f = dev.mount / "f.bin"
    subprocess.run([H, "write", "--path", str(f), "--bytes", "256MiB", "--granularity", "8MiB"], check=True, capture_output=True)
    res = {"helper": [], "fio": [], "dd": []}
    for rnd in range(3):
        for tool in ("helper", "fio", "dd"):
            subprocess.run([H, "evict", "--path", str(f)], check=True, capture_output=True)
            if tool == "helper":
                out = json.loads(subprocess.run([H, "read", "--path", str(f), "--bytes", "256MiB", "--granularity", "1MiB"], capture_output=True, text=True).stdout)
                rate = out["bytes"] / out["seconds"]
            elif tool == "fio":
                out = json.loads(subprocess.run(["fio", "--name=r", f"--filename={f}", "--rw=read", "--bs=1M", "--direct=1", "--size=256M", "--ioengine=psync", "--output-format=json"], capture_output=True, text=True).stdout)
                j = out["jobs"][0]["read"]; rate = j["io_bytes"] / (j["runtime"] / 1000)
                rate_ns = j["io_bytes"] / (j["clat_ns"]["mean"] * j["total_ios"] / 1e9)
            else:
                p = subprocess.run(["dd", f"if={f}", "of=/dev/null", "bs=1M", "iflag=direct"], capture_output=True, text=True)
                m = re.search(r"copied, ([0-9.]+) s", p.stderr); rate = (256 << 20) / float(m.group(1))
            res[tool].append(rate)
            print(rnd, tool, f"{rate/1e6:.3f} MB/s, {rate/R-1:+.2%}", flush=True)
    for t, v in res.items():
        v = sorted(v); print(t, "median", f"{v[1]/1e6:.3f} MB/s", f"{v[1]/R-1:+.2%}")
