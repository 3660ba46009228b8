"""macOS: whether a disk's driver reports a volatile write cache, asked of the I/O Registry.

Apple's storage stack has one place where a driver says whether the drive's write cache is on: the
`WriteCacheState` property of the disk's IOBlockStorageDevice (IOStorageFamily, IOBlockStorageDevice.h,
`kIOBlockStorageDeviceWriteCacheStateKey`). It is not a stored property: IOBlockStorageDevice::getProperty answers
that one key by calling the driver's getWriteCacheState(), and gives nothing where the driver does not implement it
(the base class answers kIOReturnUnsupported; IOStorageFamily/IOBlockStorageDevice.cpp). So `ioreg`'s listing,
which prints the stored property table (IOKitTools ioreg.c), does not show it; only a request for that one key
answers: IORegistryEntryCreateCFProperty -> io_registry_entry_get_property ->
IOCopyPropertyCompatible -> copyProperty(const char *) -> getProperty(const OSSymbol *), which is virtual (xnu
iokit/Kernel/IOUserClient.cpp IOCopyPropertyCompatible and is_io_registry_entry_get_property;
iokit/Kernel/IORegistryEntry.cpp, the copyProperty wrappers and getProperty(const char *)).

The walk (`write_cache_state`) is a pure function of a `Registry`, tested with Darwin's own chain of classes; the
`IOKitRegistry` below is the thin ctypes binding of IOKit.framework and CoreFoundation that gives it the real
registry on a Mac (IOKitLib.h; CFString.h for the encoding constant). It reads only: no property is set."""

from __future__ import annotations

import ctypes
import re
import sys
from typing import Protocol

# IOBlockStorageDevice.h: kIOBlockStorageDeviceClass, kIOBlockStorageDeviceWriteCacheStateKey
BLOCK_STORAGE_DEVICE = "IOBlockStorageDevice"
WRITE_CACHE_STATE = "WriteCacheState"
# the words Linux's block queue uses (/sys/block/DEV/queue/write_cache), so that a run's `drive.write_cache` reads
# the same on both: the cache is on (volatile, flushed by F_FULLFSYNC) or off
WORDS = {True: "write back", False: "write through"}
# IOMedia -> IOBlockStorageDriver -> the device is two steps on every Mac; a registry that loops is cut here
MAX_STEPS = 16


class Registry(Protocol):
    """What the walk needs of the I/O Registry: entries are opaque numbers the registry hands out and takes back."""

    def for_bsd_name(self, name: str) -> int | None: ...
    def conforms_to(self, entry: int, class_name: str) -> bool: ...
    def parent(self, entry: int) -> int | None: ...
    def boolean(self, entry: int, key: str) -> bool | None: ...
    def release(self, entry: int) -> None: ...


def write_cache_state(registry: Registry, bsd_name: str) -> str | None:
    """"write back" or "write through" as the driver of the whole disk `bsd_name` (disk0, disk4) reports its
    write cache, or None where the disk is not found or its driver does not say. From the disk's IOMedia up the
    IOService plane to the first IOBlockStorageDevice, and its WriteCacheState asked for."""
    if not re.fullmatch(r"disk\d+", bsd_name):
        return None
    entry = registry.for_bsd_name(bsd_name)
    for _ in range(MAX_STEPS):
        if entry is None:
            return None
        if registry.conforms_to(entry, BLOCK_STORAGE_DEVICE):
            value = registry.boolean(entry, WRITE_CACHE_STATE)
            registry.release(entry)
            return None if value is None else WORDS[value]
        above = registry.parent(entry)
        registry.release(entry)
        entry = above
    if entry is not None:
        registry.release(entry)
    return None


class IOKitRegistry:
    """The I/O Registry of this Mac through IOKit.framework (ctypes); `load()` gives None off macOS."""

    KERN_SUCCESS = 0
    MAIN_PORT_DEFAULT = 0                   # kIOMainPortDefault (MACH_PORT_NULL): the default main port
    UTF8 = 0x08000100                       # kCFStringEncodingUTF8

    def __init__(self, iokit: ctypes.CDLL, cf: ctypes.CDLL):
        u32, vp = ctypes.c_uint32, ctypes.c_void_p
        self._io, self._cf = iokit, cf
        iokit.IOBSDNameMatching.argtypes, iokit.IOBSDNameMatching.restype = [u32, u32, ctypes.c_char_p], vp
        iokit.IOServiceGetMatchingService.argtypes, iokit.IOServiceGetMatchingService.restype = [u32, vp], u32
        iokit.IOObjectConformsTo.argtypes, iokit.IOObjectConformsTo.restype = [u32, ctypes.c_char_p], ctypes.c_int
        iokit.IORegistryEntryGetParentEntry.argtypes = [u32, ctypes.c_char_p, ctypes.POINTER(u32)]
        iokit.IORegistryEntryGetParentEntry.restype = ctypes.c_int
        iokit.IORegistryEntryCreateCFProperty.argtypes = [u32, vp, vp, u32]
        iokit.IORegistryEntryCreateCFProperty.restype = vp
        iokit.IOObjectRelease.argtypes, iokit.IOObjectRelease.restype = [u32], ctypes.c_int
        cf.CFStringCreateWithCString.argtypes, cf.CFStringCreateWithCString.restype = [vp, ctypes.c_char_p, u32], vp
        cf.CFGetTypeID.argtypes, cf.CFGetTypeID.restype = [vp], ctypes.c_ulong
        cf.CFBooleanGetTypeID.argtypes, cf.CFBooleanGetTypeID.restype = [], ctypes.c_ulong
        cf.CFBooleanGetValue.argtypes, cf.CFBooleanGetValue.restype = [vp], ctypes.c_ubyte
        cf.CFRelease.argtypes, cf.CFRelease.restype = [vp], None

    @classmethod
    def load(cls) -> IOKitRegistry | None:
        if sys.platform != "darwin":
            return None
        try:
            return cls(ctypes.CDLL("/System/Library/Frameworks/IOKit.framework/IOKit"),
                       ctypes.CDLL("/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"))
        except (OSError, AttributeError):
            return None

    def for_bsd_name(self, name: str) -> int | None:
        matching = self._io.IOBSDNameMatching(self.MAIN_PORT_DEFAULT, 0, name.encode())
        if not matching:
            return None
        entry = self._io.IOServiceGetMatchingService(self.MAIN_PORT_DEFAULT, matching)   # takes the dictionary
        return entry or None

    def conforms_to(self, entry: int, class_name: str) -> bool:
        return bool(self._io.IOObjectConformsTo(entry, class_name.encode()))

    def parent(self, entry: int) -> int | None:
        above = ctypes.c_uint32(0)
        status = self._io.IORegistryEntryGetParentEntry(entry, b"IOService", ctypes.byref(above))
        return above.value if status == self.KERN_SUCCESS and above.value else None

    def boolean(self, entry: int, key: str) -> bool | None:
        name = self._cf.CFStringCreateWithCString(None, key.encode(), self.UTF8)
        if not name:
            return None
        try:
            value = self._io.IORegistryEntryCreateCFProperty(entry, name, None, 0)
        finally:
            self._cf.CFRelease(name)
        if not value:
            return None
        try:
            if self._cf.CFGetTypeID(value) != self._cf.CFBooleanGetTypeID():
                return None
            return bool(self._cf.CFBooleanGetValue(value))
        finally:
            self._cf.CFRelease(value)

    def release(self, entry: int) -> None:
        self._io.IOObjectRelease(entry)


def darwin_write_cache(bsd_name: str) -> str | None:
    """The write cache of a Mac's whole disk as its driver reports it; None off macOS or where it does not say."""
    registry = IOKitRegistry.load()
    return None if registry is None else write_cache_state(registry, bsd_name)
