"""Shared by the benchmarks: a scratch folder on disk, the helper, medians."""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from stibium_py.helper import find_helper


def scratch(base: str | None) -> Path:
    return Path(tempfile.mkdtemp(prefix="stibium-bench-", dir=base or "/var/tmp"))


def helper(*args: str) -> dict:
    proc = subprocess.run([str(find_helper()), *args], capture_output=True, text=True)
    data = json.loads(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit(f"helper failed: {data.get('error')}")
    return data


def median(values: list[float]) -> float:
    return statistics.median(values)
