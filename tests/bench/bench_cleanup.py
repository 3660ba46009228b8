"""A tree test's clean-up (WorkDir.remove_files): 20,000 files in 2,800 folders removed by name, with 40,000
more names of files that are gone (made under one name, renamed or copied under another), as a tree test's
clean-up asks. With --against FILE (an older stibium_py/run/workdir.py, e.g. `git show REV:stibium_py/run/workdir.py >
/tmp/old.py`) both are timed in turn, round by round, on the same disk.

    PYTHONPATH=tests/bench:. python3 tests/bench/bench_cleanup.py [--against /tmp/old.py] [--rounds 3] [--base DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil

from common import median, scratch
import time

import stibium_py.run.workdir as current

FILES, FOLDERS, SUB, GONE = 20_000, 400, 7, 40_000


def _module(path: str):
    spec = importlib.util.spec_from_file_location("stibium_py.workdir_against", path)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "stibium_py"
    spec.loader.exec_module(module)
    return module


def _once(module, base) -> float:
    names = {f"d{i % FOLDERS:03d}/e{i % SUB}/f{i}.dat" for i in range(FILES)}
    gone = {f"d{i % FOLDERS:03d}/e{i % SUB}/g{i}.dat" for i in range(GONE)}
    work = module.WorkDir(base / "stibium-bench", "bench")
    work.create()
    for name in names:
        path = work.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    t0 = time.perf_counter()
    work.remove_files(names | gone)
    took = time.perf_counter() - t0
    left = [p.name for p in work.path.iterdir()]
    assert left == [".stibium-run"], left[:5]
    shutil.rmtree(work.path)
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--against")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--base")
    a = ap.parse_args()
    modules = [("this tree", current)] + ([("against", _module(a.against))] if a.against else [])
    base = scratch(a.base)
    times: dict[str, list[float]] = {label: [] for label, _ in modules}
    try:
        for _ in range(a.rounds):
            for label, module in modules:
                times[label].append(_once(module, base))
    finally:
        shutil.rmtree(base)
    for label, values in times.items():
        print(f"  {label:10s} median {median(values):.3f} s  ({', '.join(f'{v:.3f}' for v in values)})")


if __name__ == "__main__":
    main()
