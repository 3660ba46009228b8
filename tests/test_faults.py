"""Faults during a run: the disk filling up (a small loop-mounted ext4 filled for
real), the helper dying. The run stops with one line naming the operation, the
measurements so far are kept, and a report can still be built from them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import is_root, measured_rows


@pytest.fixture
def small_ext4(disk_dir):
    """A 160 MB ext4 file system on a loop device, mounted inside the temporary folder."""
    if not is_root:
        pytest.skip("needs root for a loop mount")
    image = disk_dir / "fs.img"
    mnt = disk_dir / "mnt"
    mnt.mkdir()
    with open(image, "wb") as f:
        f.truncate(160 * 10**6)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


PLAN = """\
name: fill
tests:
  - name: files
    kind: files
    sizes: [1MB]
    repeats: 40
    write_order: as-listed
"""


def test_disk_full_mid_run_stops_with_one_line_and_keeps_the_measurements(disk_dir, small_ext4):
    plan = disk_dir / "fill.yaml"
    plan.write_text(PLAN)
    out_dir = disk_dir / "reports"
    proc = subprocess.Popen([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", str(small_ext4 / "t"),
                             "--out", str(out_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # once the run has measured a few files, something else fills the disk
    deadline = time.time() + 60
    while time.time() < deadline:
        runs = list(out_dir.glob("fill-*")) if out_dir.exists() else []
        if runs and (runs[0] / "measurements.csv").exists() and len(measured_rows(runs[0])) >= 3:
            break
        time.sleep(0.01)
    filler = small_ext4 / "filler"
    # at once (extents allocated, nothing written), so that the run's next write meets a full disk: dd alone wrote
    # for longer than the run took to write its remaining 37 files, and the run then ended complete (CI saw it)
    with open(filler, "wb") as f:
        size = shutil.disk_usage(small_ext4).free
        while size > 0:
            try:
                os.posix_fallocate(f.fileno(), 0, size)
                break
            except OSError:
                size -= 1 << 20
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k", "oflag=append", "conv=notrunc", "status=none"],
                   check=False)        # the last blocks the allocation left
    _, err = proc.communicate(timeout=120)
    run_dir = runs[0]
    assert proc.returncode == 1
    line = err.strip().splitlines()[-1]
    assert line.startswith("stibium: operation ")
    assert "(files: write files/f-1000000-r" in line and "No space left on device" in line
    assert line.endswith(f"The measurements so far are kept in {run_dir}; `stibium report {run_dir}` builds a "
                         f"report from them")
    rows = measured_rows(run_dir)
    assert len([r for r in rows if r["error"] == ""]) >= 3
    assert "No space left on device" in rows[-1]["error"]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "failed"
    filler.unlink()
    # the test files are gone; only the run's own (now empty) target folder is left
    assert [p.name for p in (small_ext4 / "t").iterdir()] == []
    report = subprocess.run([sys.executable, "-m", "stibium_py", "report", str(run_dir)], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert (run_dir / "report.html").exists()


def test_a_helper_that_dies_stops_the_run_with_one_line(disk_dir, helper):
    # a helper that answers three commands of the tests (the reads of memory before them aside) and then dies of
    # a segmentation fault
    wrapper = disk_dir / "dying-helper"
    wrapper.write_text(f"""#!{sys.executable}
import os, signal, subprocess, sys
helper = subprocess.Popen([{str(helper)!r}, *sys.argv[1:]], stdin=subprocess.PIPE, text=True, bufsize=1)
i = 0
for line in sys.stdin:
    i += "stibium-memory-probe" not in line
    if i == 4:
        helper.kill()
        os.kill(os.getpid(), signal.SIGSEGV)
    helper.stdin.write(line)
    helper.stdin.flush()
""")
    wrapper.chmod(0o755)
    plan = disk_dir / "fill.yaml"
    plan.write_text(PLAN.replace("repeats: 40", "repeats: 5"))
    env = dict(os.environ, STIBIUM_HELPER=str(wrapper))
    proc = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", str(disk_dir / "t"),
                           "--out", str(disk_dir / "r")], capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    run_dir = next((disk_dir / "r").iterdir())
    assert proc.stderr.strip().splitlines()[-1] == (
        f"stibium: the helper crashed (exit status -11). The measurements so far are kept in {run_dir}; "
        f"`stibium report {run_dir}` builds a report from them")
    assert len(measured_rows(run_dir)) == 3


def test_a_hung_helper_is_stopped_after_its_timeout(disk_dir):
    # a helper that never answers: the per-operation timeout ends the wait and kills it
    from stibium_py.run.helper import Helper, HelperTimeout
    hung = disk_dir / "hung-helper"
    hung.write_text("#!/bin/sh\nexec sleep 60\n")
    hung.chmod(0o755)
    helper = Helper(hung)
    helper.start()
    pid = helper._proc.pid
    started = time.monotonic()
    with pytest.raises(HelperTimeout) as e:
        helper.call(["info"], timeout_s=1)
    assert str(e.value) == "the helper did not answer within 1 s"
    assert time.monotonic() - started < 5
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)          # killed and reaped, not left behind


def test_a_failing_purge_is_one_line_that_says_sudo(tmp_path, monkeypatch):
    # macOS's `purge` without root: exit status 1 and a complaint; stibium says what to do
    from stibium_py.run import preflight

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "purge").write_text("#!/bin/sh\necho 'Unable to purge disk buffers: Operation not permitted' >&2\nexit 1\n")
    (fake / "purge").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    monkeypatch.setattr(preflight.sys, "platform", "darwin")
    with pytest.raises(preflight.RunError) as e:
        preflight.drop_caches()
    assert str(e.value) == ("between: drop-caches: `purge` failed (exit status 1: Unable to purge disk buffers: "
                            "Operation not permitted); it needs sudo: run stibium with sudo, or use between: evict")
    assert e.value.exit_code == 1
