"""Flush honesty: the helper's syncs (what it calls, seen by strace), what each makes durable on each platform,
and the verdict of a flush against a write (Darwin's parameters: its fsync and barrier are no flush of the
drive's cache, F_FULLFSYNC is)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from stibium_py.analysis.durability import flushes_drive_cache
from stibium_py.analysis.flushes import FlushVerdict, flush_time


def test_what_each_sync_makes_durable_on_each_platform():
    for used in ("fsync", "fdatasync", "O_DSYNC"):
        assert flushes_drive_cache("linux", used) is True
    assert flushes_drive_cache("darwin", "F_FULLFSYNC") is True
    for used in ("fsync", "fdatasync", "O_SYNC", "F_BARRIERFSYNC", "fsync (F_BARRIERFSYNC refused)",
                 "fsync (F_FULLFSYNC refused)"):
        assert flushes_drive_cache("darwin", used) is False


def test_a_flush_faster_than_a_write_is_named_and_a_slower_one_passes():
    write = [200e-6] * 5
    fast = FlushVerdict(4096, 200e-6, (flush_time("linux", "fsync", "fsync", write, [18e-6] * 5),
                                       flush_time("linux", "data", "fdatasync", write, [3e-3] * 5),
                                       flush_time("linux", "dsync", "O_DSYNC", write, [210e-6] * 5)))
    assert [f.used for f in fast.suspicious] == ["fsync", "O_DSYNC"]     # O_DSYNC: 10 us beyond the write
    assert fast.text == ("fsync and O_DSYNC return in 10 us, faster than this drive writes 4 KiB uncached (200 us): "
                         "the drive does not flush to its medium, or it has power-loss protection (fsync 18 us, "
                         "fdatasync 3 ms, O_DSYNC 10 us)")
    slow = FlushVerdict(4096, 200e-6, (flush_time("linux", "fsync", "fsync", write, [2e-3] * 5),))
    assert not slow.suspicious
    assert slow.text == "flushes wait for the medium: fsync 2 ms, against 200 us for a 4 KiB uncached write"


def test_on_a_mac_only_a_fast_full_fsync_is_named():
    """16 KiB pages (Apple Silicon): fsync and the barrier return fast on every Mac, since neither flushes the
    drive's cache; F_FULLFSYNC does, and returning faster than a write it is named."""
    write = [90e-6] * 5
    verdict = FlushVerdict(16384, 90e-6, (flush_time("darwin", "fsync", "fsync", write, [20e-6] * 5),
                                          flush_time("darwin", "barrier", "F_BARRIERFSYNC", write, [25e-6] * 5),
                                          flush_time("darwin", "full", "F_FULLFSYNC", write, [30e-6] * 5)))
    assert [f.used for f in verdict.suspicious] == ["F_FULLFSYNC"]
    assert verdict.text.startswith("F_FULLFSYNC returns in 30 us, faster than this drive writes 16 KiB uncached "
                                   "(90 us)")
    assert "fsync 20 us (not a flush of the drive's cache here)" in verdict.text


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (install.sh --test installs it)")
@pytest.mark.parametrize("sync,seen", [("data", "fdatasync(3)"), ("dsync", "O_DSYNC"), ("barrier", "fsync(3)"),
                                       ("fsync", "fsync(3)")])
def test_the_helper_makes_the_sync_asked_for(disk_dir, helper, sync, seen):
    path = disk_dir / "f.dat"
    path.write_bytes(b"\0" * 8192)
    proc = subprocess.run(["strace", "-f", "-e", "trace=openat,openat2,fsync,fdatasync", str(helper), "write", "--path",
                           str(path), "--bytes", "4096", "--engine", "direct", "--sync", sync, "--existing"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    calls = [line for line in proc.stderr.splitlines() if "f.dat" in line or "sync(" in line]
    assert any(seen in line for line in calls), calls
    if sync == "dsync":
        assert not any("sync(3)" in line for line in calls)        # every write synchronous: no call after them
    assert f'"sync_used": "{ {"data": "fdatasync", "dsync": "O_DSYNC"}.get(sync, "fsync") }"' in proc.stdout
