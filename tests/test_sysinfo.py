"""Machine facts read from the text that macOS and Linux commands print, parsed by pure functions and
checked here on that text: df with spaces in names, mount lines, diskutil's plist, vm_stat and
/proc/meminfo."""

from __future__ import annotations

import plistlib

from stibium_py.machine.parse import (parse_df_mount, parse_diskutil_plist, parse_meminfo_available,
    parse_mount_options, parse_vm_stat_available)

DF_WITH_SPACES = """Filesystem 512-blocks Used Available Capacity Mounted on
/dev/disk4s1 1953456128 1049152 1952406976 1% /Volumes/Samsung T7 Shield
"""

MOUNT = """/dev/disk3s1s1 on / (apfs, sealed, local, read-only, journaled)
/dev/disk3s5 on /System/Volumes/Data (apfs, local, journaled, nobrowse, protect, root data)
/dev/disk4s1 on /Volumes/Samsung T7 Shield (exfat, local, nodev, nosuid, noowners, noatime, fskit)
"""

VM_STAT = """Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                               12000.
Pages active:                            300000.
Pages inactive:                          100000.
Pages speculative:                         8000.
Pages throttled:                              0.
Pages wired down:                        150000.
Pages purgeable:                           5000.
"""


def test_df_line_with_spaces_in_the_mount_point():
    assert parse_df_mount(DF_WITH_SPACES) == {"device": "/dev/disk4s1", "mount_point": "/Volumes/Samsung T7 Shield"}


def test_df_that_says_nothing_gives_no_facts():
    assert parse_df_mount("") == {} and parse_df_mount("Filesystem\n") == {}


def test_mount_options_of_an_external_volume():
    assert parse_mount_options(MOUNT, "/Volumes/Samsung T7 Shield") == {
        "fs_type": "exfat", "mount_options": "local,nodev,nosuid,noowners,noatime,fskit"}
    assert parse_mount_options(MOUNT, "/System/Volumes/Data")["fs_type"] == "apfs"
    assert parse_mount_options(MOUNT, "/nowhere") == {}


def test_diskutil_plist_facts():
    data = plistlib.dumps({"MediaName": "APPLE SSD AP1024Z", "SolidState": True, "BusProtocol": "Apple Fabric",
                           "Internal": True, "DeviceBlockSize": 4096, "VolumeName": "Macintosh HD - Data",
                           "FilesystemName": "APFS", "Other": 1})
    assert parse_diskutil_plist(data) == {"device_model": "APPLE SSD AP1024Z", "solid_state": True,
                                          "protocol": "Apple Fabric", "internal": True, "device_block_bytes": 4096,
                                          "volume_name": "Macintosh HD - Data", "fs_personality": "APFS"}
    assert parse_diskutil_plist(b"not a plist") == {}
    # an exFAT external SSD: the disk's 512-byte blocks, and the volume's UUID that resume checks
    exfat = plistlib.dumps({"DeviceBlockSize": 512, "FilesystemName": "ExFAT",
                            "VolumeUUID": "5E1F0A3C-7D2B-4C1E-9A8F-0123456789AB"})
    assert parse_diskutil_plist(exfat) == {"device_block_bytes": 512, "fs_personality": "ExFAT",
                                           "volume_uuid": "5E1F0A3C-7D2B-4C1E-9A8F-0123456789AB"}


def test_a_linux_volume_uuid_is_the_by_uuid_link_to_its_device(tmp_path):
    from stibium_py.machine.sysinfo import linux_volume_uuid
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/sdb1").touch()
    (tmp_path / "by-uuid").mkdir()
    (tmp_path / "by-uuid/2f6c1d0e-8b7a-4e43-9d36-5f3b2a1c0e9d").symlink_to(tmp_path / "dev/sdb1")
    (tmp_path / "by-uuid/ABCD-1234").symlink_to(tmp_path / "dev/sda1")
    (tmp_path / "dev/mapper").mkdir()
    (tmp_path / "dev/mapper/crypt").symlink_to(tmp_path / "dev/sdb1")       # another name of the same device
    assert linux_volume_uuid(str(tmp_path / "dev/sdb1"), tmp_path / "by-uuid") == "2f6c1d0e-8b7a-4e43-9d36-5f3b2a1c0e9d"
    assert linux_volume_uuid(str(tmp_path / "dev/mapper/crypt"), tmp_path / "by-uuid") == (
        "2f6c1d0e-8b7a-4e43-9d36-5f3b2a1c0e9d")
    assert linux_volume_uuid(str(tmp_path / "dev/sdc1"), tmp_path / "by-uuid") is None
    assert linux_volume_uuid("tmpfs", tmp_path / "by-uuid") is None
    assert linux_volume_uuid(str(tmp_path / "dev/sdb1"), tmp_path / "missing") is None


def test_the_volume_uuid_decides_before_the_device_number():
    from stibium_py.paths import volume_change
    uuid = "5E1F0A3C-7D2B-4C1E-9A8F-0123456789AB"
    assert volume_change(16777232, uuid, 16777236, uuid) is None         # disk4 came back as disk6: same volume
    assert volume_change(16777232, uuid, 16777232, "0F00BA44-0000-4000-8000-000000000000") == (
        f"volume {uuid} then, 0F00BA44-0000-4000-8000-000000000000 now")
    assert volume_change(2049, None, 2050, None) == "device 2049 then, 2050 now"   # no UUID: the number decides
    assert volume_change(2049, uuid, 2050, None) == "device 2049 then, 2050 now"
    assert volume_change(None, None, 2050, None) is None


def test_available_memory_from_vm_stat_and_meminfo():
    # xnu's AVAILABLE_NON_COMPRESSED_MEMORY: active + inactive + free + speculative; the 5000 purgeable pages
    # are on those queues already and were counted twice before
    assert parse_vm_stat_available(VM_STAT) == (300000 + 100000 + 12000 + 8000) * 16384
    assert parse_vm_stat_available("nonsense") is None
    assert parse_meminfo_available("MemTotal: 24000000 kB\nMemAvailable:   1500000 kB\n") == 1_536_000_000
    assert parse_meminfo_available("MemTotal: 1 kB\n") is None


def _fake_sysfs(root):
    """A sysfs with an NVMe disk (a partition, the controller's hwmon sensor), a SATA disk under drivetemp
    and a virtio disk without a sensor, linked as the kernel links them."""
    nvme_ctrl = root / "devices/pci0/nvme/nvme0"
    (nvme_ctrl / "hwmon3").mkdir(parents=True)
    (nvme_ctrl / "hwmon3/temp1_input").write_text("38850\n")
    nvme_disk = nvme_ctrl / "nvme0n1"
    (nvme_disk / "nvme0n1p2").mkdir(parents=True)
    (nvme_disk / "nvme0n1p2/partition").write_text("2\n")
    (nvme_disk / "device").symlink_to(nvme_ctrl)
    sata_dev = root / "devices/pci0/ata1/host0/target0:0:0/0:0:0:0"
    (sata_dev / "hwmon/hwmon1").mkdir(parents=True)
    (sata_dev / "hwmon/hwmon1/temp1_input").write_text("41000\n")
    sata_disk = sata_dev / "block/sda"
    sata_disk.mkdir(parents=True)
    (sata_disk / "device").symlink_to(sata_dev)
    virtio = root / "devices/pci0/virtio1/block/vda"
    (virtio / "device").mkdir(parents=True)
    block = root / "class/block"
    block.mkdir(parents=True)
    for name, target in (("nvme0n1", nvme_disk), ("nvme0n1p2", nvme_disk / "nvme0n1p2"), ("sda", sata_disk),
                         ("vda", virtio)):
        (block / name).symlink_to(target)


def test_a_disk_temperature_from_its_hwmon_sensor(tmp_path):
    from stibium_py.machine.sysinfo import hwmon_temperature_c
    _fake_sysfs(tmp_path)
    assert hwmon_temperature_c("/dev/nvme0n1p2", tmp_path) == 38.85      # a partition: its disk's controller
    assert hwmon_temperature_c("/dev/nvme0n1", tmp_path) == 38.85
    assert hwmon_temperature_c("/dev/sda", tmp_path) == 41.0             # SATA through drivetemp
    assert hwmon_temperature_c("/dev/vda", tmp_path) is None             # a virtual disk has no sensor
    assert hwmon_temperature_c("/dev/nope", tmp_path) is None
    assert hwmon_temperature_c("tmpfs", tmp_path) is None


def test_a_disk_temperature_from_smartctl_json():
    from stibium_py.machine.parse import parse_smartctl_temperature
    assert parse_smartctl_temperature('{"temperature": {"current": 37, "drive_trip": 84}}') == 37.0
    assert parse_smartctl_temperature('{"smartctl": {"exit_status": 2}}') is None     # no temperature reported
    assert parse_smartctl_temperature('{"temperature": {"current": true}}') is None
    assert parse_smartctl_temperature("not json") is None


def test_the_whole_disk_behind_a_mac_volume_and_its_temperature_from_diskutil():
    """The keys of `diskutil info -plist` (as published for it): an APFS volume's physical store, an exFAT
    volume's parent disk; an internal NVMe disk's SMART temperature in kelvins, or degrees where small."""
    import plistlib

    from stibium_py.machine.parse import parse_diskutil_temperature, parse_diskutil_whole_disk
    apfs = {"DeviceIdentifier": "disk3s1s1", "ParentWholeDisk": "disk3", "APFSContainerReference": "disk3",
            "APFSPhysicalStores": [{"APFSPhysicalStore": "disk0s2"}]}
    assert parse_diskutil_whole_disk(plistlib.dumps(apfs)) == "/dev/disk0"
    assert parse_diskutil_whole_disk(plistlib.dumps({"DeviceIdentifier": "disk4s1", "ParentWholeDisk": "disk4"})) \
        == "/dev/disk4"
    assert parse_diskutil_whole_disk(b"not a plist") is None
    internal = {"DeviceIdentifier": "disk0", "SMARTStatus": "Verified",
                "SMARTDeviceSpecificKeysMayVaryNotGuaranteed": {"TEMPERATURE": 310, "PERCENTAGE_USED": 1}}
    assert abs(parse_diskutil_temperature(plistlib.dumps(internal)) - 36.85) < 1e-9
    internal["SMARTDeviceSpecificKeysMayVaryNotGuaranteed"]["TEMPERATURE"] = 41
    assert parse_diskutil_temperature(plistlib.dumps(internal)) == 41.0
    assert parse_diskutil_temperature(plistlib.dumps({"DeviceIdentifier": "disk4", "SMARTStatus": "Not Supported"})) \
        is None
    assert parse_diskutil_temperature(b"") is None


def test_the_helper_s_clock_is_read_from_python_where_it_is_the_same_clock():
    """Linux: CLOCK_MONOTONIC_RAW; macOS: time.monotonic where CPython takes it from mach_absolute_time (the
    helper's clock there); elsewhere, or a macOS Python with another source, no reading (the run's-clock
    columns stay empty)."""
    from stibium_py.run.helper import raw_clock_ns, raw_clock_source
    assert raw_clock_source("linux", "clock_gettime(CLOCK_MONOTONIC)", True) == "monotonic_raw"
    assert raw_clock_source("linux", "clock_gettime(CLOCK_MONOTONIC)", False) is None
    assert raw_clock_source("darwin", "mach_absolute_time()", False) == "monotonic"
    assert raw_clock_source("darwin", "clock_gettime(CLOCK_UPTIME_RAW)", False) is None
    assert raw_clock_source("win32", "GetTickCount64()", False) is None
    import sys
    import time
    if sys.platform.startswith("linux"):       # on a Mac the chunk rows' run-clock test checks it end to end
        before = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
        assert before <= raw_clock_ns() <= time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
