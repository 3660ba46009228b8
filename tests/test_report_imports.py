"""A run's report imports its libraries (scipy, statsmodels, pandas, plotly) only after the run's last measurement
ends, never before its first nor while one is timed: a plan's expansion carries estimates (analysis/estimate.py)
without importing the quantiles' scipy.special (analysis/stats/quantiles.py)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_terminal_kinds import PLAN as EVERY_KIND

HEAVY = ("scipy", "statsmodels", "pandas", "plotly")

# Every Python process started with this folder first on its path logs the first import of each library named, at
# its start, on the clock the helper times with: an audit hook's "import" event is raised as an import begins.
SITECUSTOMIZE = """\
import os, sys, time
_LOG, _SEEN = os.environ["STIBIUM_TEST_IMPORT_LOG"], set()
def _hook(event, args):
    if event == "import":
        top = str(args[0]).split(".")[0]
        if top in {heavy} and top not in _SEEN:
            _SEEN.add(top)
            with open(_LOG, "a") as f:
                f.write(f"{{os.getpid()}} {{time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)}} {{top}} "
                        f"{{os.path.basename(sys.argv[0])}}\\n")
sys.addaudithook(_hook)
"""

# every kind a plan may run without a file beside it, each small: the terminal test's run of every kind, a stream
# and a pattern at a stated load
PLAN = {**EVERY_KIND, "tests": [*EVERY_KIND["tests"],
        {"name": "clips", "kind": "stream", "frame_bytes": "64KiB", "fps": 25, "streams": [1], "seconds": 1,
         "trials": 1, "buffer_frames": 2},
        {"name": "paced", "kind": "pattern", "op": "read", "access": "random", "granularities": ["4KiB"],
         "bytes": "256KiB", "span": "1MiB", "rate": ["500 IOPS"], "trials": 2}]}


@pytest.mark.skipif(sys.platform != "linux", reason="the helper's clock is CLOCK_MONOTONIC_RAW on Linux")
def test_a_run_of_every_kind_imports_its_reports_libraries_after_its_last_measurement(tmp_path, disk_dir):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE.format(heavy=set(HEAVY)))
    log = tmp_path / "imports.log"
    plan = tmp_path / "plan.yaml"
    plan.write_text(json.dumps(PLAN))
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "STIBIUM_TEST_IMPORT_LOG": str(log),
           "PYTHONPATH": os.pathsep.join([str(hook), root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", str(disk_dir / "t"),
                           "--out", str(disk_dir / "r"), "--no-history"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    run = next((disk_dir / "r").iterdir())
    with open(run / "measurements.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    last_end_ns = max(int(r["end_ns"]) for r in rows)
    imports = [line.split() for line in log.read_text().splitlines()]
    assert "scipy" in {top for _, _, top, _ in imports}
    for pid, ns, top, program in imports:
        assert int(ns) > last_end_ns, f"{top} imported by {program} {(last_end_ns - int(ns)) / 1e6:.1f} ms " \
                                      f"before the last measurement's end"
    assert (run / "report.html").is_file() and (run / "summary.json").is_file()
