"""Shared fixtures: the built helper, and temporary folders on a real (disk-backed)
file system, never tmpfs, removed after each test."""

from __future__ import annotations

import atexit
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from stibium_py.run.helper import find_helper

MEMORY_FILE_SYSTEMS = {"tmpfs", "ramfs"}

# The tests of the MPI team start Open MPI in the test process itself (mpi4py, a singleton), whose shared memory
# segments (sm_segment.*, 16 MiB each) went into /dev/shm and stayed there after the process: one a test worker a
# session. They go into a folder of the session's own, removed when the process ends (set before mpi4py is first
# imported; the launched jobs of tests/test_mpi.py set their own).
_MPI_SHM = tempfile.mkdtemp(prefix="stibium-mpi-shm-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
os.environ["OMPI_MCA_btl_sm_backing_directory"] = _MPI_SHM
atexit.register(shutil.rmtree, _MPI_SHM, True)


@pytest.fixture(scope="session", autouse=True)
def _no_wait_for_a_quiet_drive():
    """A playback waits for the target's disk to go quiet (run/quiet.py), which this machine's disk never is while
    the tests' other worker writes: the tests ask for no wait (STIBIUM_QUIET_WAIT_S=0, which the commands they
    start inherit); the tests of the wait give their own."""
    previous = os.environ.get("STIBIUM_QUIET_WAIT_S")
    os.environ["STIBIUM_QUIET_WAIT_S"] = "0"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("STIBIUM_QUIET_WAIT_S", None)
        else:
            os.environ["STIBIUM_QUIET_WAIT_S"] = previous


@pytest.fixture(scope="session", autouse=True)
def _history_of_the_tests():
    """Every run a test makes is recorded in a history of the test session's own (STIBIUM_HOME, which the
    commands the tests start inherit), never in the person's; removed at the end."""
    home = tempfile.mkdtemp(prefix="stibium-home-")
    previous = os.environ.get("STIBIUM_HOME")
    os.environ["STIBIUM_HOME"] = home
    try:
        yield Path(home)
    finally:
        if previous is None:
            os.environ.pop("STIBIUM_HOME", None)
        else:
            os.environ["STIBIUM_HOME"] = previous
        shutil.rmtree(home, ignore_errors=True)


def default_sigint() -> None:
    """In a child before it runs: SIGINT and SIGHUP back to their defaults. A command started in the background
    or under nohup inherits SIGINT (and SIGHUP) ignored, and Python then installs no KeyboardInterrupt for it
    (and stibium leaves an ignored SIGHUP ignored): a test that interrupts a run must not depend on how the shell
    that started pytest left them."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def measured_rows(run_dir: Path) -> list[dict]:
    """measurements.csv's rows as text, from one read of the whole file: a run may be writing it, and a reader that
    reads the header and the rows in separate reads can find the file empty, then the header written, and take the
    header for a row without field names (csv.DictReader's TypeError, seen in CI on a loaded machine)."""
    text = (run_dir / "measurements.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def interruptible(args: list[str], **kwargs) -> subprocess.Popen:
    """A child process that a test will interrupt with SIGINT, whatever this process's SIGINT disposition."""
    return subprocess.Popen(args, preexec_fn=default_sigint, **kwargs)


def target_info(path: Path) -> dict:
    """The helper's facts about the file system of a folder (the same on Linux and macOS)."""
    proc = subprocess.run([str(find_helper()), "info", "--path", str(path)], capture_output=True, text=True)
    return json.loads(proc.stdout).get("target", {})


def _fs_type(path: Path) -> str:
    return target_info(path).get("fs_type", "")


@pytest.fixture(scope="session")
def helper() -> Path:
    return find_helper()


@pytest.fixture(scope="session")
def helper_info(helper) -> dict:
    """`stibium-helper info`: platform, page sizes, clock."""
    return json.loads(subprocess.run([str(helper), "info"], capture_output=True, text=True).stdout)


@pytest.fixture(params=["io_uring", "threads"])
def method(request, helper_info) -> str:
    """Each way the helper moves requests in flight (--io-method)."""
    if request.param == "io_uring" and helper_info["platform"] == "darwin":
        pytest.skip("macOS has no io_uring")  # never on the Linux CI: the Darwin path is the threads one
    return request.param


@pytest.fixture
def direct_align(disk_dir) -> int:
    """The direct-I/O offset alignment of the temporary folder's file system."""
    return int(target_info(disk_dir)["direct_offset_align_bytes"])


@pytest.fixture
def disk_dir(tmp_path: Path):
    """A fresh empty folder on a disk-backed file system."""
    if _fs_type(tmp_path.resolve()) not in MEMORY_FILE_SYSTEMS:
        yield tmp_path
        return
    for base in ("/var/tmp", str(Path.cwd())):
        if _fs_type(Path(base).resolve()) not in MEMORY_FILE_SYSTEMS:
            d = Path(tempfile.mkdtemp(prefix="stibium-test-", dir=base))
            try:
                yield d
            finally:
                shutil.rmtree(d, ignore_errors=True)
            return
    pytest.skip("no disk-backed file system for temporary files")


def run_helper(helper: Path, *args: str, **kwargs) -> tuple[int, dict, str]:
    """Run the helper once: exit status, its JSON, its stderr."""
    proc = subprocess.run([str(helper), *args], capture_output=True, text=True, **kwargs)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


is_root = os.geteuid() == 0


@pytest.fixture
def mount_tmpfs(disk_dir):
    """mount_tmpfs("8m"): a small tmpfs mounted inside the temporary folder, unmounted afterwards (root only)."""
    if not is_root:
        pytest.skip("needs root to mount")
    mounted = []

    def mount(size: str) -> Path:
        mnt = disk_dir / f"mnt{len(mounted)}"
        mnt.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], check=True)
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in mounted:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server of this test process's own (tests/pg_server.py), for the team's history."""
    from pg_server import PgServer
    server = PgServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def team_url(pg_server) -> str:
    """A fresh, empty database on the tests' server: its URL."""
    return pg_server.new_database()
