"""Whether a run that says `running` still runs: run.json is written `running` when a run starts and its end
status when it ends, so a run cut off without a word (its terminal closed before SIGHUP was caught, the process
killed with SIGKILL, the machine stopped) stays `running` for ever. A run is still running only on the machine
that started it, in the same boot (the boot id), while its process (the pid) is alive and is stibium. Every
reader (report, compare, series, resume) reads such a run as interrupted, never as whole."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import Any

from ..machine import sysinfo
from .record import RunRecord

CUT_OFF = "its process ended without marking the run: a closed terminal, a kill, a crash or a power loss"


def still_running(run: RunRecord) -> bool:
    """The run's process is alive on this machine, in the boot that started it."""
    return run.status == "running" and run.boot_id is not None and run.boot_id == sysinfo.boot_id() \
        and process_is_stibium(run.pid)


def as_found(run: RunRecord) -> RunRecord:
    """The run as it stands: `running` whose process is gone reads as `interrupted`, with why."""
    if run.status != "running" or still_running(run):
        return run
    return replace(run, status="interrupted", stopped_by=run.stopped_by or CUT_OFF)


def runs_stibium(cmdline: bytes) -> bool:
    """Whether a command line (/proc/PID/cmdline: the arguments, each ended by a NUL) runs stibium: its command
    `stibium` (the installed script, run by its interpreter or itself) or `python -m stibium_py`. A word that
    merely holds "stibium" (a plan being edited, an interpreter in a folder of that name) is not."""
    args = cmdline.split(b"\0")
    return any(a.rsplit(b"/", 1)[-1] == b"stibium" for a in args) or \
        any(a == b"-m" and b == b"stibium_py" for a, b in zip(args, args[1:]))


def process_is_stibium(pid: Any) -> bool:
    """A process of that id exists and (where /proc tells) runs stibium: an id is reused after its process ends."""
    try:
        pid = int(pid)
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except PermissionError:
        pass                    # alive, another user's
    except (OSError, TypeError, ValueError, OverflowError):
        return False
    if sys.platform.startswith("linux"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                return runs_stibium(f.read(65536))
        except OSError:
            # no /proc to read (a container without it): alive is all that can be told, and a run read as cut
            # off while it runs would be resumed beside itself
            return True
    return True
