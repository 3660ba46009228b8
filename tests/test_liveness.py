"""Whether a run that says running still runs (stibium_py/rundir/liveness.py): only on this machine, in the boot that
started it, while its process is alive and is stibium; else every reader reads it as interrupted."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace

import pytest

from stibium_py.machine import sysinfo
from stibium_py.rundir.liveness import CUT_OFF, as_found, process_is_stibium, still_running
from stibium_py.rundir.record import RunRecord


@pytest.fixture
def stibium_process(tmp_path):
    """A live process whose command line is that of `stibium run` (the installed script run by its interpreter),
    ended after the test."""
    script = tmp_path / "stibium"
    script.write_text("import time\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, str(script), "run", "plan.yaml"])
    _exec_done(proc.pid)
    yield proc.pid
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("cmdline,runs", [
    (b"/usr/bin/python3\0/usr/local/bin/stibium\0run\0quick\0", True),     # the installed script
    (b"/usr/local/bin/stibium\0resume\0r\0", True),
    (b"stibium\0run\0", True),
    (b"/usr/bin/python3\0-m\0stibium_py\0run\0p.yaml\0", True),
    (b"/tmp/stibium-mutation/bin/python\0-c\0import time\0", False),        # an interpreter in a folder so named
    (b"vim\0plans/stibium.yaml\0", False),                                   # a plan being edited
    (b"/usr/bin/python3\0-m\0stibium_pyx\0", False),
    (b"/usr/bin/python3\0stibium_py\0", False),
    (b"/opt/stibiumx\0", False),
    (b"", False),
])
def test_a_command_line_runs_stibium_only_as_its_command(cmdline, runs):
    from stibium_py.rundir.liveness import runs_stibium
    assert runs_stibium(cmdline) is runs


def _exec_done(pid: int) -> None:
    """Until the new program's command line shows: for a moment after Popen returns it reads empty."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read():
                    return
        except OSError:
            return                  # no /proc (macOS): nothing to wait for
        time.sleep(0.01)


def _running(pid: int, boot_id: str | None) -> RunRecord:
    return RunRecord(status="running", pid=pid, machine={"boot_id": boot_id})


def test_a_run_whose_stibium_process_lives_in_this_boot_still_runs(stibium_process):
    run = _running(stibium_process, sysinfo.boot_id())
    assert still_running(run) and as_found(run) is run


@pytest.mark.parametrize("change", ["another boot", "no boot id", "not running", "another program", "gone"])
def test_a_run_is_not_running_where_any_of_its_marks_fails(stibium_process, change):
    run = _running(stibium_process, sysinfo.boot_id())
    if change == "another boot":
        run = replace(run, machine={"boot_id": "another-boot"})
    elif change == "no boot id":
        run = replace(run, machine={})
    elif change == "not running":
        run = replace(run, status="complete")
    elif change == "another program":           # a pid reused by a process that is not stibium
        other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        _exec_done(other.pid)
        run = replace(run, pid=other.pid)
    else:
        done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        run = replace(run, pid=int(done.stdout))
    try:
        assert not still_running(run)
        found = as_found(run)
        if change == "not running":
            assert found is run
        else:
            assert (found.status, found.stopped_by) == ("interrupted", CUT_OFF)
    finally:
        if change == "another program":
            other.kill()
            other.wait()


@pytest.mark.parametrize("pid", [0, -1, None, "x", 2**40])
def test_no_process_is_made_of_a_pid_that_is_none(pid):
    assert not process_is_stibium(pid)


def test_asking_whether_a_process_runs_sends_it_no_signal(stibium_process):
    import os
    assert process_is_stibium(stibium_process)
    time.sleep(0.2)                                   # a signal sent would have ended it by now
    assert os.waitid(os.P_PID, stibium_process, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None     # still running


def test_on_macos_a_live_process_counts_and_pid_0_does_not(stibium_process, monkeypatch):
    """Darwin has no /proc to read a command line from: a live pid counts (the boot id has matched already),
    pid 0 (the process group, not a process) does not."""
    import stibium_py.rundir.liveness as liveness
    monkeypatch.setattr(liveness.sys, "platform", "darwin")
    assert process_is_stibium(stibium_process)
    assert not process_is_stibium(0)


def test_where_proc_cannot_be_read_a_live_process_counts_as_running(stibium_process, monkeypatch):
    """Without /proc (a container that lacks it) a live pid is all that can be told: a run read as cut off while
    it runs would be resumed beside itself, so it counts as running."""
    import stibium_py.rundir.liveness as liveness

    def no_proc(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(liveness, "open", no_proc, raising=False)
    assert process_is_stibium(stibium_process)
