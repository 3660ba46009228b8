"""What lies below the target's file system, and what it means for uncached reads.

A read that stibium made uncached at the file system can still come from memory one layer down: a loop
device that reads its backing file through the page cache (`/sys/block/loopN/loop/dio` is 0), a RAM disk
(zram, brd), a backing file on tmpfs, a Mac's disk image, a virtual machine's disk cached by its host, a
network file system's server. The residency check cannot see any of these. This module resolves the
block-device stack on Linux (partition, device-mapper and md members, loop with its backing file, and the
transport of each whole disk: virtio, xen, nvme, scsi/sata, usb, mmc, nbd) from sysfs, and names each layer
that can serve reads from memory, with what to do. Pure where it can be: the sysfs root, the mount table and
diskutil's answer are arguments, so the decisions are tested on layouts written as the kernel writes them.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

# what a layer means for an uncached read
MEMORY = "memory"          # reads come from memory below the file system: a warning
MAY_CACHE = "may cache"    # something below can cache and the machine cannot tell: information, and selftest
NONE = "none"              # nothing below caches reads (a device's own cache aside)

NETWORK_FS = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "virtiofs", "ceph", "glusterfs", "lustre", "afpfs",
              "webdav", "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "beegfs", "gpfs", "orangefs"}
MEMORY_FS = {"tmpfs", "ramfs"}
MAX_DEPTH = 8               # layers followed at most (a loop over a file on a loop over ...)


@dataclass(frozen=True)
class Layer:
    name: str                  # the kernel's name (sda1, dm-0, loop0, vda) or the file system's type
    kind: str                  # partition | dm | md | loop | virtio | xen | nvme | scsi | usb | mmc | nbd | zram |
                               # ram | disk | file system | disk image
    detail: str = ""           # what the layer is, in words (its backing file, its members, its model)
    reads: str = NONE          # MEMORY | MAY_CACHE | NONE
    why: str = ""              # for MEMORY and MAY_CACHE: what it means for a read, and what to do

    @property
    def label(self) -> str:
        """loop0 (loop, dio 0, backing /x.img)"""
        return f"{self.name} ({self.kind}{', ' + self.detail if self.detail else ''})"

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Stack:
    layers: tuple[Layer, ...] = field(default_factory=tuple)

    @property
    def memory(self) -> list[Layer]:
        return [x for x in self.layers if x.reads == MEMORY]

    @property
    def may_cache(self) -> list[Layer]:
        return [x for x in self.layers if x.reads == MAY_CACHE]

    def text(self) -> str:
        """The stack in one line, top down: ext4 on loop0 (dio 0, backing /x.img) on vda (virtio)."""
        return " on ".join(x.label for x in self.layers) or "unknown"

    def to_json(self) -> list[dict[str, str]]:
        return [x.to_json() for x in self.layers]

    @classmethod
    def from_json(cls, data: Any) -> "Stack":
        if not isinstance(data, list):
            return cls()
        names = set(Layer.__dataclass_fields__)
        return cls(tuple(Layer(**{k: str(v) for k, v in d.items() if k in names}) for d in data
                         if isinstance(d, dict) and "name" in d and "kind" in d))


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


# ------------------------------------------------------------------ file systems

def fs_layer(fs_type: str | None) -> Layer | None:
    """The file system itself where its type says how reads behave: memory, network, FUSE."""
    if not fs_type:
        return None
    if fs_type in MEMORY_FS:
        return Layer(fs_type, "file system", "in memory", MEMORY,
                     f"{fs_type} keeps files in memory: every read is a memory copy; choose a target on a disk")
    if fs_type in NETWORK_FS or fs_type.startswith("nfs"):
        return Layer(fs_type, "file system", "network", MAY_CACHE,
                     "a network file system: its server (and this client, where it ignores direct I/O) can answer "
                     "reads from memory; run `stibium selftest` on the target to see whether direct reads reach "
                     "the server's disks")
    if fs_type.startswith("fuse") or fs_type in ("macfuse", "osxfuse"):
        return Layer(fs_type, "file system", "FUSE", MAY_CACHE,
                     "a FUSE file system decides itself whether it honours direct I/O; run `stibium selftest` on "
                     "the target")
    return None


# ------------------------------------------------------------------ Linux block devices

def _transport(disk: Path) -> tuple[str, str]:
    """A whole disk's kind and a word on it, from its name and where sysfs places it (its resolved path)."""
    name = disk.name
    resolved = str(disk)
    model = _read(disk / "device" / "model") or ""
    if name.startswith("zram"):
        return "zram", "a compressed RAM disk"
    if name.startswith("ram") or name.startswith("pmem"):
        return "ram", "a RAM disk" if name.startswith("ram") else "persistent memory"
    if name.startswith("nbd"):
        return "nbd", "a network block device"
    if name.startswith("nvme"):
        return "nvme", model
    if name.startswith("mmcblk"):
        return "mmc", model
    if name.startswith("xvd") or "/xen" in resolved or "vbd-" in resolved:
        return "xen", "a Xen virtual disk"
    if "/usb" in resolved:
        return "usb", model
    if "/virtio" in resolved:
        return "virtio", "a virtual machine's disk" + (f" ({model})" if model else "")
    if name.startswith("sd") or "/host" in resolved or "/target" in resolved:
        vendor = _read(disk / "device" / "vendor") or ""
        return "scsi", " ".join(v for v in (vendor, model) if v)
    return "disk", model


_WHOLE_DISK_READS = {
    "zram": (MEMORY, "zram keeps its blocks compressed in memory: reads are memory speed by design, not a "
                     "drive's; choose a target on a disk"),
    "ram": (MEMORY, "a RAM disk keeps its blocks in memory: reads are memory speed, not a drive's; choose a target "
                    "on a disk"),
    "virtio": (MAY_CACHE, "a virtual machine's disk: its host may cache it in the host's memory (the hypervisor's "
                          "cache mode decides, and this machine cannot see it); reads that run at memory speed are "
                          "flagged"),
    "xen": (MAY_CACHE, "a Xen virtual disk: its host may cache it; reads that run at memory speed are flagged"),
    "nbd": (MAY_CACHE, "a network block device: its server may answer from memory; reads that run at memory speed "
                       "are flagged"),
}


def resolve_block(device: str | None, sys_root: Path = Path("/sys"),
                  backing: Callable[[str], "Stack"] | None = None, depth: int = 0) -> list[Layer]:
    """The layers below a /dev path, top down: a partition, then its disk; device-mapper and md with their
    members; a loop device with its backing file, `dio` and (through `backing`) the backing file's own stack.
    An empty list where the device is not a block device sysfs knows."""
    if not device or not device.startswith("/dev/") or depth > MAX_DEPTH:
        return []
    name = os.path.basename(os.path.realpath(device))      # /dev/mapper/NAME is a link to /dev/dm-N
    block = sys_root / "class" / "block" / name
    if not block.exists():
        return []
    node = block.resolve()
    layers: list[Layer] = []
    if (node / "partition").exists():
        layers.append(Layer(name, "partition"))
        node = node.parent
        name = node.name
    members = sorted(p.name for p in (node / "slaves").iterdir()) if (node / "slaves").is_dir() else []
    below: list[Layer] = []
    for member in members:
        below += resolve_block(f"/dev/{member}", sys_root, backing, depth + 1)
    if (node / "dm").is_dir():
        layers.append(Layer(name, "dm", f"{_read(node / 'dm' / 'name') or ''} over {', '.join(members)}".strip()))
        return layers + below
    if (node / "md").is_dir():
        layers.append(Layer(name, "md", f"{_read(node / 'md' / 'level') or ''} over {', '.join(members)}".strip()))
        return layers + below
    if (node / "loop").is_dir():
        return layers + _loop_layers(node, backing)
    kind, detail = _transport(node)
    reads, why = _WHOLE_DISK_READS.get(kind, (NONE, ""))
    return layers + [Layer(name, kind, detail, reads, why)]


def _loop_layers(node: Path, backing: Callable[[str], "Stack"] | None) -> list[Layer]:
    file = _read(node / "loop" / "backing_file") or ""
    dio = _read(node / "loop" / "dio")
    if dio == "0":
        layer = Layer(node.name, "loop", f"dio 0, backing {file}", MEMORY,
                      f"the loop device reads its backing file {file} through the page cache (dio 0), so reads this "
                      f"run made uncached come from memory one layer down; attach it with `losetup --direct-io=on`, "
                      f"or choose a target on a disk")
    else:
        layer = Layer(node.name, "loop", f"dio {dio or 'unknown'}, backing {file}")
    under = backing(file).layers if backing and file else ()
    if dio != "0" and any(x.reads == MEMORY for x in under):
        layer = Layer(layer.name, layer.kind, layer.detail, MEMORY,
                      f"the loop device's backing file {file} is held in memory below it; choose a target on a disk")
    return [layer, *under]


def mount_of(path: str, mounts_text: str) -> dict[str, str]:
    """Mount point, device and type of the mount holding path, from /proc/self/mounts' text."""
    best: dict[str, str] = {}
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best.get("mount_point", "")):
            best = {"mount_point": mnt, "device": parts[0], "fs_type": parts[2], "mount_options": parts[3]}
    return best


def linux_stack(fs_type: str | None, device: str | None, mounts_text: str,
                sys_root: Path = Path("/sys"), depth: int = 0) -> Stack:
    """The target's file system and the block devices below it (Linux); a loop device's backing file is
    followed to its own file system and devices."""

    def backing(file: str) -> Stack:
        mount = mount_of(file, mounts_text)
        if not mount or depth >= MAX_DEPTH:
            return Stack()
        return linux_stack(mount.get("fs_type"), mount.get("device"), mounts_text, sys_root, depth + 1)

    top = fs_layer(fs_type)
    layers = [top] if top is not None else [Layer(fs_type or "unknown", "file system")]
    return Stack(tuple(layers + resolve_block(device, sys_root, backing)))


# ------------------------------------------------------------------ macOS

def darwin_stack(fs_type: str | None, volume: dict[str, Any], whole_disk: dict[str, Any]) -> Stack:
    """The target's file system and the disk behind it, from `diskutil info -plist` of the volume and of its
    physical whole disk: `BusProtocol` "Disk Image" (a sparse bundle, an encrypted image, a .dmg) is a disk whose
    blocks come from a file on another volume. Apple does not publish the image driver, so whether that file's
    pages are cached cannot be read in source: the layer is named, and the memory yardstick measures the reads
    (docs/platforms.md). (`VirtualOrPhysical` is "Virtual" for every APFS volume too, so it is not asked.)"""
    top = fs_layer(fs_type)
    layers = [top] if top is not None else [Layer(fs_type or "unknown", "file system")]
    for info in (volume, whole_disk):
        if str(info.get("BusProtocol") or "") == "Disk Image":
            layers.append(Layer(str(info.get("DeviceIdentifier") or "disk"), "disk image",
                                str(info.get("MediaName") or ""), MEMORY,
                                "a disk image (sparse bundle, encrypted image, .dmg) is read through a file on another "
                                "volume, whose pages macOS can keep in memory: reads can come from memory one layer "
                                "down; run the test on the volume the image lives on"))
            return Stack(tuple(layers))
    disk = whole_disk or volume
    if disk:
        protocol = str(disk.get("BusProtocol") or "disk")
        layers.append(Layer(str(disk.get("DeviceIdentifier") or "disk"), protocol, str(disk.get("MediaName") or "")))
    return Stack(tuple(layers))
