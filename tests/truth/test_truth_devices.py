"""The truth devices themselves: what a killed test session leaves behind is undone by the next one."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess

import pytest

import devices


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
