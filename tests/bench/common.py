"""Shared by the benchmarks: a scratch folder on disk, the helper, medians, a command's time and peak memory."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

from stibium_py.run.helper import find_helper


def scratch(base: str | None) -> Path:
    return Path(tempfile.mkdtemp(prefix="stibium-bench-", dir=base or "/var/tmp"))


def helper(*args: str) -> dict:
    proc = subprocess.run([str(find_helper()), *args], capture_output=True, text=True)
    data = json.loads(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit(f"helper failed: {data.get('error')}")
    return data


def require_fio() -> None:
    """The fio benchmarks compare with fio: say how to get it where it is missing."""
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed (Debian: apt-get install fio)")


def timed(fn, rounds: int) -> float:
    """The median seconds of fn() over rounds calls, one after another."""
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def median(values: list[float]) -> float:
    return statistics.median(values)


@contextlib.contextmanager
def truth_device(recipe: str, base: str | None, **options: Any) -> Iterator[Any]:
    """A device of known speed (tests/truth/devices.py: recipe "b" or "c") in a scratch folder, torn down
    and removed afterwards; exits with the reason where this machine cannot build it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "truth"))
    import devices
    why = getattr(devices, f"missing_for_recipe_{recipe}")()
    if why:
        raise SystemExit(f"Recipe {recipe.upper()} {why}")
    work = scratch(base)
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        yield stack.enter_context(getattr(devices, f"recipe_{recipe}")(work / "dev", **options))


def run_measured(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
                 expect: int = 0) -> tuple[float, int]:
    """Wall seconds and the peak resident memory (bytes) of one command: its own high-water mark (VmHWM),
    read every 2 ms until it ends; the kernel's ru_maxrss would count this benchmark's memory, which the
    child shares until its exec. cwd: a folder of no code (`python -m` puts it first on the path). `expect`: the
    exit status the command must end with (2: a refusal timed)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    status_file, peak = Path(f"/proc/{proc.pid}/status"), 0
    while True:
        pid, status = os.waitpid(proc.pid, os.WNOHANG)
        if pid:
            break
        try:
            line = next(ln for ln in status_file.read_text().splitlines() if ln.startswith("VmHWM:"))
            peak = max(peak, int(line.split()[1]) * 1024)
        except (OSError, StopIteration):
            pass
        time.sleep(0.002)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != expect:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return seconds, peak
