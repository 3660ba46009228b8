"""Facts about the machine and the target's file system and device, for run.json.

Everything is best effort: a fact that cannot be read is None, never an error.
Linux reads /proc and /sys; macOS asks sysctl and diskutil.
"""

from __future__ import annotations

import os
import platform
import plistlib
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import stack


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


def parse_meminfo_available(text: str) -> int | None:
    """MemAvailable of /proc/meminfo, in bytes."""
    m = re.search(r"^MemAvailable:\s+(\d+)\s+kB", text, re.M)
    return int(m.group(1)) * 1024 if m else None


def parse_vm_stat_available(text: str) -> int | None:
    """The memory macOS counts as available, from `vm_stat` (whose first line names the page size): active,
    inactive, free and speculative pages, xnu's AVAILABLE_NON_COMPRESSED_MEMORY, which the memory-pressure
    level of macOS is computed from (osfmk/vm/vm_page.h 1270 and 1291). Purgeable pages are not added: they
    sit on the active and inactive queues already (vm_resident.c 2782-2787 counts them apart as well)."""
    m = re.search(r"page size of (\d+) bytes", text)
    if not m:
        return None
    pages = 0
    for name in ("free", "active", "inactive", "speculative"):
        n = re.search(rf"^Pages {name}:\s+(\d+)", text, re.M)
        pages += int(n.group(1)) if n else 0
    return pages * int(m.group(1))


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


def parse_smartctl_temperature(text: str) -> float | None:
    """The current temperature in `smartctl -j` output (`temperature.current`, in degrees Celsius)."""
    import json
    try:
        value = json.loads(text).get("temperature", {}).get("current")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# An NVMe drive reports its temperature in kelvins (the SMART / Health log's composite temperature); a value
# above this is taken as kelvins, below as degrees Celsius (no drive works at 200 °C, none reports 200 K).
KELVIN_ABOVE = 200


def _plist(data: bytes) -> dict[str, Any]:
    """A plist answer as a dict; {} for a damaged or empty one (a damaged answer is no fact, never an error)."""
    try:
        info = plistlib.loads(data)
    except Exception:  # noqa: BLE001
        return {}
    return info if isinstance(info, dict) else {}


def _diskutil_plist(device: str) -> bytes:
    """`diskutil info -plist DEVICE` (macOS); empty where it cannot run."""
    try:
        return subprocess.run(["diskutil", "info", "-plist", device], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return b""


def parse_diskutil_whole_disk(data: bytes) -> str | None:
    """The physical whole disk behind a volume, from `diskutil info -plist VOLUME`: an APFS volume's first
    physical store (APFSPhysicalStores[0].APFSPhysicalStore, such as disk0s2: its disk, disk0; the volume's
    ParentWholeDisk is the synthesized container), else ParentWholeDisk (HFS+, exFAT on an external drive)."""
    info = _plist(data)
    stores = info.get("APFSPhysicalStores")
    name = None
    if isinstance(stores, list) and stores and isinstance(stores[0], dict):
        name = stores[0].get("APFSPhysicalStore")
    name = name or info.get("ParentWholeDisk")
    m = re.match(r"^(?:/dev/)?(disk\d+)", name) if isinstance(name, str) else None
    return f"/dev/{m.group(1)}" if m else None


def parse_diskutil_temperature(data: bytes) -> float | None:
    """The temperature in degrees Celsius from `diskutil info -plist DISK` of a whole NVMe disk (its SMART
    keys, SMARTDeviceSpecificKeysMayVaryNotGuaranteed.TEMPERATURE, as the drive reports it: kelvins)."""
    smart = _plist(data).get("SMARTDeviceSpecificKeysMayVaryNotGuaranteed")
    value = smart.get("TEMPERATURE") if isinstance(smart, dict) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        return None
    return float(value) - 273.15 if value > KELVIN_ABOVE else float(value)


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


def parse_system_profiler_drive(data: str | bytes, bsd_name: str) -> dict[str, Any]:
    """Serial and firmware of the whole disk `bsd_name` (disk0) from `system_profiler -json SPNVMeDataType
    SPSerialATADataType SPUSBDataType`: the item, at any depth, whose bsd_name is the disk's; NVMe and SATA
    items name them device_serial and device_revision, USB items serial_num."""
    import json
    try:
        tree = json.loads(data)
    except ValueError:
        return {}
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("bsd_name") == bsd_name:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(tree)
    if not found:
        return {}
    item = found[0]
    facts = {"serial": item.get("device_serial") or item.get("serial_num"), "firmware": item.get("device_revision")}
    return {k: str(v).strip() for k, v in facts.items() if isinstance(v, (str, int)) and str(v).strip()}


def parse_diskutil_drive(data: bytes) -> dict[str, Any]:
    """Model and capacity of a whole disk from `diskutil info -plist DISK`: MediaName, and TotalSize (Size in
    older releases)."""
    info = _plist(data)
    facts: dict[str, Any] = {}
    if isinstance(info.get("MediaName"), str) and info["MediaName"].strip():
        facts["model"] = info["MediaName"].strip()
    size = info.get("TotalSize", info.get("Size"))
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        facts["capacity_bytes"] = size
    return facts


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


def parse_df_mount(text: str) -> dict[str, str]:
    """Device and mount point from `df -P PATH`: the last line is DEVICE BLOCKS USED AVAIL CAPACITY MOUNT,
    where the device and the mount point may hold spaces; the four numeric columns anchor the split."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        return {}
    m = re.match(r"^(.*?)\s+\d+\s+\d+\s+\d+\s+\d+%\s+(/.*)$", lines[-1])
    return {"device": m.group(1), "mount_point": m.group(2)} if m else {}


def parse_mount_options(text: str, mount_point: str) -> dict[str, str]:
    """File-system type and options of mount_point from macOS `mount`: lines such as
    `/dev/disk3s5 on /System/Volumes/Data (apfs, local, journaled, nobrowse)`."""
    for line in text.splitlines():
        m = re.match(r"^(.*) on (.*) \(([^,)]+)(?:, )?(.*)\)$", line)
        if m and m.group(2) == mount_point:
            return {"fs_type": m.group(3), "mount_options": m.group(4).replace(", ", ",")}
    return {}


def parse_diskutil_plist(data: bytes) -> dict[str, Any]:
    """Device facts from `diskutil info -plist DEVICE`: model, solid state or not, protocol (Apple
    Fabric, PCI-Express, USB, Thunderbolt), internal or not, block size."""
    info = _plist(data)
    keys = {"device_model": "MediaName", "solid_state": "SolidState", "protocol": "BusProtocol",
            "internal": "Internal", "device_block_bytes": "DeviceBlockSize", "volume_name": "VolumeName",
            "fs_personality": "FilesystemName", "volume_uuid": "VolumeUUID"}
    return {ours: info[theirs] for ours, theirs in keys.items() if theirs in info}


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
        volume = _plist(answer)
        facts.update(parse_diskutil_plist(answer))
        disk = parse_diskutil_whole_disk(answer)
        whole = _plist(_diskutil_plist(disk)) if disk and disk != facts["device"] else {}
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
