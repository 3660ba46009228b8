"""The truth devices themselves: what a killed test session leaves behind is undone by the next one."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import devices
import machine


def test_a_killed_sessions_devices_are_undone_and_mkfs_btrfs_runs_again(tmp_path):
    """A session killed mid-test (its FUSE server gone with it) leaves a loop device over a file that answers
    ENOTCONN, and mkfs.btrfs of btrfs-progs 6.2 (Debian 12; not 6.14, Debian 13) refuses to run anywhere while it
    is there; the sweep at the next session's start undoes it. The killed session is made here under a folder of the test's own."""
    why = devices.missing_for_recipe_b() or devices.missing_for_btrfs()
    if why:
        pytest.skip(why)
    sessions = tmp_path / "sessions"
    work = sessions / "pytest-1" / "dev"
    fuse_dir = work / "nbd"
    fuse_dir.mkdir(parents=True)
    image = tmp_path / "btrfs.img"
    with open(image, "wb") as f:
        f.truncate(256 << 20)
    nbdfuse = subprocess.Popen(["nbdfuse", "-P", str(work / "nbdfuse.pid"), str(fuse_dir / "disk"), "[", "nbdkit",
                                "--exit-with-parent", "memory", "64M", "]"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        devices._wait_for(work / "nbdfuse.pid")
        devices._wait_for(fuse_dir / "disk")
        loop = devices._run("losetup", "-f", "--show", str(fuse_dir / "disk"))
        with contextlib.suppress(OSError):      # if the sweep below fails, the finally still frees the loop
            devices._ext4_on(loop, work / "mnt", contextlib.ExitStack())
        nbdfuse.send_signal(signal.SIGKILL)
        nbdfuse.wait()
        refused = subprocess.run(["mkfs.btrfs", "-q", "-f", str(image)], capture_output=True, text=True)
        # btrfs-progs 6.2 (Debian 12) stats every mounted loop device's backing file and refuses; 6.14 (Debian 13)
        # no longer does, and makes the file system: the dead mount and loop are swept either way (below)
        assert refused.returncode == 0 or "Transport endpoint is not connected" in refused.stderr, refused.stderr

        undone = devices.sweep_left_behind(sessions)

        assert undone == [str(work / "mnt"), loop, str(fuse_dir)]
        ran = subprocess.run(["mkfs.btrfs", "-q", "-f", str(image)], capture_output=True, text=True)
        assert ran.returncode == 0, ran.stderr
        assert not any(str(sessions) in line for line in open("/proc/mounts"))
    finally:
        if nbdfuse.poll() is None:
            nbdfuse.kill()
            nbdfuse.wait()
        devices.sweep_left_behind(sessions)
        subprocess.run(["umount", "-l", str(work / "mnt")], capture_output=True)
        subprocess.run(["fusermount3", "-u", "-z", str(fuse_dir)], capture_output=True)
        shutil.rmtree(sessions, ignore_errors=True)
        os.unlink(image)


# /proc/stat's first line from this machine (2026-11-30), and 10 s later: 2,007 ticks of 2 CPUs, 8 of them stolen.
STAT_BEFORE = "cpu  769261 2888 157851 966705 248366 0 10282 206451 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"
STAT_AFTER = "cpu  769262 2888 157855 968698 248366 0 10283 206459 0 0\n"


def test_the_share_of_the_cpus_stolen_is_read_from_proc_stat():
    before, after = machine.parse_cpu_line(STAT_BEFORE), machine.parse_cpu_line(STAT_AFTER)
    assert (before.total, before.steal) == (2361804, 206451)
    assert machine.stolen_share(before, after) == 8 / 2007
    assert machine.stolen_words(before, after) == "the hypervisor took 0.4% of the CPUs"
    assert machine.stolen_share(None, after) is None and machine.stolen_share(after, after) is None
    assert machine.stolen_words(after, after) == "the hypervisor's share of the CPUs not read"
    with pytest.raises(ValueError):
        machine.parse_cpu_line("intr 1 2 3\n")


INNER_CONFTEST = '''
import importlib.util, itertools, sys
sys.path.insert(0, {truth!r})
import machine
ticks = itertools.count()
def cpu_ticks():                  # each reading 1,000 ticks on, 50 of them stolen
    n = next(ticks)
    return machine.CpuTicks(total=1000 * n, steal=50 * n)
machine.cpu_ticks = cpu_ticks
spec = importlib.util.spec_from_file_location("truth_conftest", {conftest!r})
truth_conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(truth_conftest)
pytest_runtest_protocol = truth_conftest.pytest_runtest_protocol
'''

INNER_TESTS = '''
import time
from pathlib import Path
COUNTS = Path({counts!r})

def _attempt(name):
    n = int((COUNTS / name).read_text()) + 1 if (COUNTS / name).exists() else 1
    (COUNTS / name).write_text(str(n))
    print(f"TRUTH {{name}} attempt {{n}}")
    return n

def test_misses_twice_then_meets(tmp_path):
    assert _attempt("twice") >= 3, "missed"

def test_always_misses():
    assert _attempt("always") < 0, "always missed"

def test_meets():
    _attempt("meets")

def test_hangs():
    _attempt("hangs")
    time.sleep(30)
'''


def test_a_truth_test_that_fails_is_run_again_up_to_three_attempts_and_each_miss_is_printed(tmp_path):
    """The truth session's own rule (conftest.py), run on four tests of its own in a pytest of their own: a test
    that misses twice and then meets passes, one that always misses fails after three attempts, one that meets runs
    once, and one that hangs past pytest-timeout is not given another."""
    truth = Path(__file__).parent
    inner = tmp_path / "inner"
    inner.mkdir()
    counts = tmp_path / "counts"
    counts.mkdir()
    (inner / "conftest.py").write_text(INNER_CONFTEST.format(truth=str(truth), conftest=str(truth / "conftest.py")))
    (inner / "test_inner.py").write_text(INNER_TESTS.format(counts=str(counts)))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(inner),
                           "--timeout", "2", str(inner)], capture_output=True, text=True, timeout=120, cwd=inner)
    lines = proc.stdout.splitlines()
    assert lines[-1].startswith("2 failed, 2 passed in "), proc.stdout
    assert {f.name: int(f.read_text()) for f in counts.iterdir()} == {"twice": 3, "always": 3, "meets": 1,
                                                                       "hangs": 1}
    again = [line for line in lines if line.startswith("RUN AGAIN ")]
    assert again == [f"RUN AGAIN test_inner.py::test_{name}: attempt {n} of 3 failed (call); meanwhile the "
                     f"hypervisor took 5.0% of the CPUs" for name in ("misses_twice_then_meets", "always_misses")
                     for n in (1, 2)]
    for n in (1, 2):
        assert lines[lines.index(again[n - 1]) + 1:][:2] == [f"  TRUTH twice attempt {n}", "  AssertionError: missed"]
