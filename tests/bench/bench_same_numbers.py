"""Whether a change of method left the numbers alone: every run directory given is reported by each source
tree (--tree, e.g. a worktree of an older commit beside this checkout), and the summary.json files are
compared value by value: numbers within --rel of each other (NaN equal to NaN), everything else equal. The
values that differ are printed with their path in the JSON, and the largest relative difference.

    PYTHONPATH=tests/bench python3 tests/bench/bench_same_numbers.py --tree /tmp/before --tree . RUN_DIR...
        [--rel 1e-9]"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator


def differences(a: Any, b: Any, rel: float, path: str = "") -> Iterator[tuple[str, Any, Any, float]]:
    """(path, a, b, relative difference) of every value where a and b differ beyond rel."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from differences(a.get(k), b.get(k), rel, f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, rel, f"{path}[{i}]")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if math.isnan(a) and math.isnan(b) or a == b:
            return
        d = abs(a - b) / max(abs(a), abs(b))
        if not d <= rel:
            yield path, a, b, d
    elif a != b:
        yield path, a, b, math.inf


def summary(tree: Path, run: Path, scratch: Path) -> Any:
    copy = scratch / f"{tree.name}-{run.name}"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("summary.json", "report.html"))
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-m", "stibium_py", "report", str(copy), "--quiet"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads((copy / "summary.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True)
    ap.add_argument("--rel", type=float, default=1e-9)
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    first, second = (Path(t).resolve() for t in a.tree)
    worst = 0.0
    with tempfile.TemporaryDirectory() as scratch:
        for run in map(Path, a.runs):
            found = list(differences(summary(first, run, Path(scratch)), summary(second, run, Path(scratch)),
                                     a.rel))
            print(f"{run}: {'the same' if not found else f'{len(found)} values differ'}")
            for path, x, y, d in found[:20]:
                print(f"  {path}: {x!r} against {y!r} ({d:.2g})")
            worst = max([worst, *(d for *_, d in found)])
    print(f"largest relative difference beyond {a.rel:g}: {worst:.3g}" if worst else f"all within {a.rel:g}")


if __name__ == "__main__":
    main()
