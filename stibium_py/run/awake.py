"""macOS: the power assertion that keeps an idle Mac awake while a run measures."""

from __future__ import annotations

import shutil
import subprocess


def keep_awake_command(platform: str, pid: int, caffeinate: str | None) -> list[str] | None:
    """macOS: the power assertion that keeps an idle Mac from sleeping while pid runs (a sleep stops the raw
    clock and the drive mid-measurement): `caffeinate -i -w PID`, which ends with that process. A closed lid
    still sleeps a laptop on battery; the README says so. None elsewhere, or without caffeinate."""
    if platform != "darwin" or caffeinate is None:
        return None
    return [caffeinate, "-i", "-w", str(pid)]


def keep_awake(platform: str, pid: int) -> subprocess.Popen | None:
    """Start keep_awake_command's process, or None where there is none (or it cannot start)."""
    command = keep_awake_command(platform, pid, shutil.which("caffeinate"))
    if command is None:
        return None
    try:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None
