"""Flush honesty on devices of known behaviour (Recipe C's file system with a flush of its own): an honest
device whose flush takes 8 ms, and a lying one whose flush returns at once, each request 1 ms. `stibium
selftest`'s flush check passes the first and names the second."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import devices


def _selftest(tmp_path, device) -> dict:
    out = tmp_path / "selftest.json"
    done = subprocess.run([sys.executable, "-m", "stibium_py", "selftest", "--target", str(device.mount / "t"),
                           "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert out.exists(), done.stderr
    return next(c for c in json.loads(out.read_text())["checks"] if c["name"] == "flushes")


@pytest.mark.parametrize("flush_s", [0.008, 0.0])
def test_the_flush_check_tells_an_honest_drive_from_one_that_does_not_flush(tmp_path, flush_s):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.001, parallel=4, size_bytes=256 << 20, flush_s=flush_s) as device:
        check = _selftest(tmp_path, device)
    numbers = check["numbers"]
    write_s = sorted(numbers["write_s"])[len(numbers["write_s"]) // 2]
    assert 0.001 <= write_s < 0.004, numbers                 # a request: the device's 1 ms and the stack's own
    if flush_s:
        assert check["status"] == "pass", check
        assert check["detail"].startswith("flushes wait for the medium: fsync ")
        median = {k: sorted(v)[len(v) // 2] for k, v in numbers.items() if k.endswith("_s")}
        print(median)
        # fdatasync: one flush; fsync: ext4 commits its journal too (a flush before the commit block and one with
        # it); O_DSYNC: the write and its flush
        assert flush_s <= median["fdatasync_s"] < flush_s + 0.004, median
        assert flush_s <= median["fsync_s"] < 2 * flush_s + 0.006, median
        assert flush_s <= median["O_DSYNC_s"] - median["write_s"] + 0.001, median
    else:
        print(check["detail"])
        assert check["status"] == "cannot tell", check
        assert "faster than this drive writes 4 KiB uncached" in check["detail"]
        assert "the drive does not flush to its medium, or it has power-loss " \
            "protection" in check["detail"]


PLAN = """\
name: flushes
tests:
  - name: small
    kind: pattern
    op: write
    access: random
    granularities: [4KiB]
    bytes: 16KiB
    span: 8MiB
    trials: 5
    sync: data
"""


@pytest.mark.parametrize("flush_s", [0.008, 0.0])
def test_a_write_test_whose_flushes_return_faster_than_its_writes_is_warned_of(tmp_path, flush_s):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    (tmp_path / "plan.yaml").write_text(PLAN)
    with devices.recipe_c(tmp_path / "dev", delay_s=0.001, parallel=4, size_bytes=256 << 20, flush_s=flush_s) as device:
        done = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(tmp_path / "plan.yaml"), "--target",
                               str(device.mount / "t"), "--out", str(tmp_path / "r"), "--no-history"],
                              capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    summary = json.loads(next((tmp_path / "r").glob("*/summary.json")).read_text())
    said = [n["message"] for n in summary["warnings"] if n["message"].startswith("its flushes")]
    if flush_s:
        assert said == []
    else:
        assert len(said) == 1 and said[0].startswith("its flushes (fdatasync) return in ")
        assert "faster than its 4 KiB uncached writes reach the drive" in said[0]
        assert said[0] in " ".join(done.stdout.split())          # the terminal says it too
