"""Facts about the machine and the target's file system and device, for run.json.

Everything is best effort: a fact that cannot be read is None, never an error.
Linux reads /proc and /sys; macOS asks sysctl and diskutil.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _run(args: list[str]) -> str | None:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def boot_id() -> str | None:
    """Changes at every boot: tells `resume` whether the machine restarted."""
    if sys.platform == "darwin":
        return _run(["sysctl", "-n", "kern.boottime"])
    return _read("/proc/sys/kernel/random/boot_id")


def _cpu_model() -> str | None:
    if sys.platform == "darwin":
        return _run(["sysctl", "-n", "machdep.cpu.brand_string"])
    info = _read("/proc/cpuinfo") or ""
    for line in info.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _mount_of(path: Path) -> dict[str, Any]:
    """Mount point, device, file-system type and options of the mount holding path (Linux)."""
    best: dict[str, Any] = {}
    text = _read("/proc/self/mounts")
    if not text:
        return best
    real = str(path.resolve())
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best.get("mount_point", "")):
            best = {"mount_point": mnt, "device": parts[0], "fs_type": parts[2], "mount_options": parts[3]}
    return best


def _device_model(device: str | None) -> str | None:
    """The model of the block device behind a /dev path, from sysfs (Linux)."""
    if not device or not device.startswith("/dev/"):
        return None
    name = os.path.basename(os.path.realpath(device))
    sys_block = Path("/sys/class/block") / name
    if not sys_block.exists():
        return None
    disk = sys_block.resolve()
    if (disk / "partition").exists():
        disk = disk.parent
    for rel in ("device/model", "device/name"):
        model = _read(str(disk / rel))
        if model:
            return model
    if name.startswith("vd"):
        return "virtio disk"
    if name.startswith("loop"):
        backing = _read(str(disk / "loop/backing_file"))
        return f"loop device ({backing})" if backing else "loop device"
    return None


def machine_facts() -> dict[str, Any]:
    uname = platform.uname()
    facts: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "os": uname.system,
        "os_release": uname.release,
        "os_version": uname.version,
        "machine": uname.machine,
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_bytes": _ram_bytes(),
        "python": platform.python_version(),
        "boot_id": boot_id(),
    }
    if sys.platform == "darwin":
        facts["os_product_version"] = platform.mac_ver()[0]
        facts["model"] = _run(["sysctl", "-n", "hw.model"])
    else:
        facts["virtualization"] = _run(["systemd-detect-virt"])
    return facts


def target_facts(target: Path) -> dict[str, Any]:
    usage = shutil.disk_usage(target)
    facts: dict[str, Any] = {"free_bytes": usage.free, "total_bytes": usage.total}
    if sys.platform == "darwin":
        out = _run(["df", "-P", str(target)])
        if out:
            facts["device"] = out.splitlines()[-1].split()[0]
        facts["mount_point"] = None
        return facts
    mount = _mount_of(target)
    facts.update(mount)
    facts["device_model"] = _device_model(mount.get("device"))
    return facts
