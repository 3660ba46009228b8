"""The history on a device of known speed (Recipe B): runs at one rate, then at a rate 20 % lower; `history
check` passes the same rate and names the run where it changed.

Three runs at the first rate, not two: the level a run is checked against carries the spread between the runs
before it, with Student's t for their count (12.7 for two, 4.3 for three). Against two, the write point's
interval was about -20 % [-29 %, -11 %] here, and under CI's load once reached past -5 %, so the check rightly did
not call it; against three, [-23 %, -17 %] (three runs)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PLAN = """\
name: truth-history
tests:
  - name: files
    kind: files
    sizes: {from: 1MB, to: 16MB, count: 5}
    repeats: 3
    write_order: random
    read_order: random
    between: evict
"""


def _stibium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stibium_py", *args], capture_output=True, text=True, timeout=900)


def test_history_check_finds_a_rate_20_percent_lower_and_passes_the_same_rate(tmp_path, device_b):
    plan, out, db = tmp_path / "plan.yaml", tmp_path / "reports", tmp_path / "home" / "history.sqlite"
    plan.write_text(PLAN)

    def run() -> Path:
        before = set(out.iterdir()) if out.exists() else set()
        done = _stibium("run", str(plan), "--target", str(device_b.mount / "t"), "--out", str(out), "--history", str(db))
        assert done.returncode == 0, done.stderr
        assert f"history: recorded in {db}" in done.stdout
        [run_dir] = set(out.iterdir()) - before
        return run_dir

    run()
    run()
    run()
    same = _stibium("history", "--history", str(db), "check", "--threshold", "5")
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.startswith("history check: no step down beyond 5 % in the latest run of 1 drive (2 points")

    device_b.set_rate_bits_per_s(round(device_b.read_bytes_per_s * 8 * 0.8))
    slower = run()
    found = _stibium("history", "--history", str(db), "check", "--threshold", "5")
    assert found.returncode == 1, found.stdout + found.stderr
    line = found.stdout.strip()
    print(line)
    # the largest step named at the slower run; the other point's interval clears the threshold too on a quiet
    # machine (the line then ends "; 1 more point too"), but not always under CI's load (once in four runs of
    # 2026-11-28 its interval reached past -5 %): the claim held is the step found, and its size below
    assert f" at {slower.name} (" in line, line
    assert line.endswith("slower beyond 5 %") or line.endswith("slower beyond 5 %; 1 more point too"), line
    change = float(re.search(r": (-\d+\.\d) % \[", line).group(1))
    assert -23.0 <= change <= -17.0, line
