"""The machine's own tools' output read into facts: /proc/meminfo and vm_stat (memory available), smartctl and
diskutil (a drive's temperature), system_profiler and diskutil (a drive's model and kind), df and mount (a target's
file system and options). Pure functions of the text, each tested against the forms the tools print
(tests/test_sysinfo.py); sysinfo.py runs the tools."""

from __future__ import annotations

import plistlib
import re
from typing import Any


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


def plist(data: bytes) -> dict[str, Any]:
    """A plist answer as a dict; {} for a damaged or empty one (a damaged answer is no fact, never an error)."""
    try:
        info = plistlib.loads(data)
    except Exception:  # noqa: BLE001
        return {}
    return info if isinstance(info, dict) else {}


def parse_diskutil_whole_disk(data: bytes) -> str | None:
    """The physical whole disk behind a volume, from `diskutil info -plist VOLUME`: an APFS volume's first
    physical store (APFSPhysicalStores[0].APFSPhysicalStore, such as disk0s2: its disk, disk0; the volume's
    ParentWholeDisk is the synthesized container), else ParentWholeDisk (HFS+, exFAT on an external drive)."""
    info = plist(data)
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
    smart = plist(data).get("SMARTDeviceSpecificKeysMayVaryNotGuaranteed")
    value = smart.get("TEMPERATURE") if isinstance(smart, dict) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        return None
    return float(value) - 273.15 if value > KELVIN_ABOVE else float(value)


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
    info = plist(data)
    facts: dict[str, Any] = {}
    if isinstance(info.get("MediaName"), str) and info["MediaName"].strip():
        facts["model"] = info["MediaName"].strip()
    size = info.get("TotalSize", info.get("Size"))
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        facts["capacity_bytes"] = size
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
    info = plist(data)
    keys = {"device_model": "MediaName", "solid_state": "SolidState", "protocol": "BusProtocol",
            "internal": "Internal", "device_block_bytes": "DeviceBlockSize", "volume_name": "VolumeName",
            "fs_personality": "FilesystemName", "volume_uuid": "VolumeUUID"}
    return {ours: info[theirs] for ours, theirs in keys.items() if theirs in info}
