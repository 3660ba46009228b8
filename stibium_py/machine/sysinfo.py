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

from . import stack
from .parse import (parse_df_mount, parse_diskutil_drive, parse_diskutil_plist, parse_diskutil_temperature,
                    parse_diskutil_whole_disk, parse_meminfo_available, parse_mount_options, parse_smartctl_temperature,
                    parse_system_profiler_drive, parse_vm_stat_available, plist)


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
    """Changes at every boot and only then: tells `resume` whether the machine restarted. On macOS
    kern.bootsessionuuid (xnu bsd/kern/kern_sysctl.c), not kern.boottime, which xnu shifts on every
    clock adjustment (osfmk/kern/clock.c), so an NTP step would look like a reboot."""
    if sys.platform == "darwin":
        return _run(["sysctl", "-n", "kern.bootsessionuuid"])
    return _read("/proc/sys/kernel/random/boot_id")


def available_memory_bytes() -> int | None:
    if sys.platform == "darwin":
        out = _run(["vm_stat"])
        return parse_vm_stat_available(out) if out else None
    text = _read("/proc/meminfo")
    return parse_meminfo_available(text) if text else None


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


def sys_disk(device: str | None, sys_root: Path = Path("/sys")) -> Path | None:
    """The sysfs folder of the whole disk behind a /dev path (a partition's parent), or None (Linux)."""
    if not device or not device.startswith("/dev/"):
        return None
    name = os.path.basename(os.path.realpath(device))
    sys_block = sys_root / "class" / "block" / name
    if not sys_block.exists():
        return None
    disk = sys_block.resolve()
    if (disk / "partition").exists():
        disk = disk.parent
    return disk


def hwmon_temperature_c(device: str | None, sys_root: Path = Path("/sys")) -> float | None:
    """The temperature of the disk behind a /dev path from its hwmon sensor (Linux): an NVMe controller's
    (`device/hwmon*/temp1_input`) or a SATA drive's through drivetemp (`device/hwmon/hwmon*/temp1_input`),
    in millidegrees there; None where the disk has none (virtual disks, USB bridges, no drivetemp)."""
    disk = sys_disk(device, sys_root)
    if disk is None:
        return None
    for pattern in ("device/hwmon*/temp1_input", "device/hwmon/hwmon*/temp1_input"):
        for sensor in sorted(disk.glob(pattern)):
            text = _read(str(sensor))
            if text and text.lstrip("-").isdigit():
                return int(text) / 1000
    return None


def _diskutil_plist(device: str) -> bytes:
    """`diskutil info -plist DEVICE` (macOS); empty where it cannot run."""
    try:
        return subprocess.run(["diskutil", "info", "-plist", device], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return b""


_WHOLE_DISKS: dict[str, str | None] = {}


def _darwin_whole_disk(device: str) -> str | None:
    """The whole disk behind a mounted volume's device (asked of diskutil once per device)."""
    if device not in _WHOLE_DISKS:
        _WHOLE_DISKS[device] = parse_diskutil_whole_disk(_diskutil_plist(device))
    return _WHOLE_DISKS[device]


def device_temperature_c(device: str | None) -> tuple[float | None, str]:
    """The disk's temperature and where it came from: hwmon (Linux); on macOS the SMART keys diskutil gives for
    the whole disk behind the volume (internal NVMe drives); else `smartctl -j -A` where smartctl is installed;
    (None, "") where the machine cannot tell."""
    value = hwmon_temperature_c(device)
    if value is not None:
        return value, "hwmon"
    if device and sys.platform == "darwin":
        device = _darwin_whole_disk(device) or device
        value = parse_diskutil_temperature(_diskutil_plist(device))
        if value is not None:
            return value, "diskutil"
    if device and shutil.which("smartctl"):
        text = _run(["smartctl", "-j", "-A", device])
        value = parse_smartctl_temperature(text) if text else None
        if value is not None:
            return value, "smartctl"
    return None, ""


def _device_model(device: str | None) -> str | None:
    """The model of the block device behind a /dev path, from sysfs (Linux)."""
    disk = sys_disk(device)
    if disk is None:
        return None
    name = os.path.basename(os.path.realpath(device or ""))
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


def _udev_properties(disk: Path, udev_data: Path) -> dict[str, str]:
    """udev's database entry of a block device (`E:KEY=VALUE` lines in /run/udev/data/bMAJOR:MINOR): the
    serial and firmware udev read from the drive (ID_SERIAL_SHORT, ID_REVISION) where sysfs has none (SATA
    behind libata, USB bridges)."""
    number = _read(str(disk / "dev"))
    text = _read(str(udev_data / f"b{number}")) if number else None
    return dict(line[2:].split("=", 1) for line in (text or "").splitlines() if line.startswith("E:") and "=" in line)


def linux_drive(disk: Path | None, udev_data: Path = Path("/run/udev/data")) -> dict[str, Any]:
    """The identity of a whole disk from its sysfs folder: model, serial, firmware, capacity in bytes, and
    its name. sysfs first (NVMe: device/serial, device/firmware_rev; SCSI and SATA: device/rev; MMC:
    device/serial, device/fwrev), then udev's database; a fact neither has is left out."""
    if disk is None:
        return {}
    udev = _udev_properties(disk, udev_data)

    def first(*names: str, udev_key: str = "") -> str | None:
        for name in names:
            value = _read(str(disk / name))
            if value:
                return value
        return (udev.get(udev_key) or "").strip() or None

    facts: dict[str, Any] = {"disk": disk.name, "model": first("device/model", "device/name", udev_key="ID_MODEL"),
                             "serial": first("device/serial", "serial", udev_key="ID_SERIAL_SHORT"),
                             "firmware": first("device/firmware_rev", "device/rev", "device/fwrev",
                                               udev_key="ID_REVISION")}
    sectors = _read(str(disk / "size"))
    if sectors and sectors.isdigit():
        facts["capacity_bytes"] = int(sectors) * 512     # sysfs counts 512-byte sectors whatever the block
    # "write back": the drive says it has a volatile write cache, which the kernel flushes on fsync; "write
    # through": it says it has none (or one its power-loss protection makes durable) and flushes are not sent
    facts["write_cache"] = _read(str(disk / "queue" / "write_cache"))
    return {k: v for k, v in facts.items() if v is not None}


def drive_facts(device: str | None) -> dict[str, Any]:
    """The drive behind a mounted device: what names it across runs (model, serial, firmware, capacity), for
    the history (history/), and how it reports its write cache (Linux's block queue; macOS's I/O Registry,
    iokit.py). Best effort: {} where the machine cannot tell (tmpfs, a network share)."""
    if not device or not device.startswith("/dev/"):
        return {}
    if sys.platform != "darwin":
        return linux_drive(sys_disk(device))
    whole = _darwin_whole_disk(device)
    if whole is None:
        return {}
    facts = {"disk": whole.removeprefix("/dev/"), **parse_diskutil_drive(_diskutil_plist(whole))}
    answer = _run(["system_profiler", "-json", "SPNVMeDataType", "SPSerialATADataType", "SPUSBDataType"])
    facts.update(parse_system_profiler_drive(answer or "", facts["disk"]))
    from .iokit import darwin_write_cache
    cache = darwin_write_cache(facts["disk"])     # as the driver reports it; none said where it does not
    if cache is not None:
        facts["write_cache"] = cache
    return facts


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


def _darwin_target_facts(target: Path) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    out = _run(["df", "-P", str(target)])
    facts.update(parse_df_mount(out) if out else {})
    mount = _run(["mount"])
    if mount and facts.get("mount_point"):
        facts.update(parse_mount_options(mount, facts["mount_point"]))
    volume: dict[str, Any] = {}
    whole: dict[str, Any] = {}
    if facts.get("device", "").startswith("/dev/"):
        answer = _diskutil_plist(facts["device"])
        volume = plist(answer)
        facts.update(parse_diskutil_plist(answer))
        disk = parse_diskutil_whole_disk(answer)
        whole = plist(_diskutil_plist(disk)) if disk and disk != facts["device"] else {}
    facts["stack"] = stack.darwin_stack(facts.get("fs_type"), volume, whole).to_json()
    return facts


def linux_volume_uuid(device: str | None, by_uuid: Path = Path("/dev/disk/by-uuid")) -> str | None:
    """The file system's UUID (udev's /dev/disk/by-uuid link to the device), which names the volume across
    reboots and re-plugs where the device's number may change; None where none links to it."""
    if not device or not device.startswith("/"):        # tmpfs, server:/share: no block device
        return None
    try:
        target = os.path.realpath(device)
        for link in by_uuid.iterdir():
            if os.path.realpath(link) == target:
                return link.name
    except OSError:
        return None
    return None


def volume_uuid(path: Path) -> str | None:
    """The UUID of the volume holding path (its nearest existing folder), as target_facts reads it:
    diskutil's VolumeUUID on macOS, the file system's UUID on Linux; None where it has none (tmpfs, a
    network share) or it cannot be read."""
    here = Path(os.path.abspath(path))
    while not here.exists() and here != here.parent:
        here = here.parent
    return target_facts(here).get("volume_uuid")


def target_facts(target: Path) -> dict[str, Any]:
    usage = shutil.disk_usage(target)
    facts: dict[str, Any] = {"free_bytes": usage.free, "total_bytes": usage.total}
    if sys.platform == "darwin":
        facts.update(_darwin_target_facts(target))
        facts["drive"] = drive_facts(facts.get("device"))
        return facts
    mounts = _read("/proc/self/mounts") or ""
    mount = stack.mount_of(str(target.resolve()), mounts)
    facts.update(mount)
    facts["device_model"] = _device_model(mount.get("device"))
    uuid = linux_volume_uuid(mount.get("device"))
    if uuid:
        facts["volume_uuid"] = uuid
    facts["stack"] = stack.linux_stack(mount.get("fs_type"), mount.get("device"), mounts).to_json()
    facts["drive"] = drive_facts(mount.get("device"))
    return facts
