"""macOS's write-cache fact (stibium_py/machine/iokit.py): the walk up the I/O Registry, with Darwin's chain of classes, and
the ctypes binding itself, loaded against a stand-in library built here with IOKit's and CoreFoundation's
prototypes (tests/fixtures/iokit_standin.c), so that every argument crosses a real C call as it would on a Mac."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stibium_py.machine.iokit import IOKitRegistry, darwin_write_cache, write_cache_state

STANDIN = Path(__file__).parent / "fixtures" / "iokit_standin.c"


class FakeRegistry:
    """A registry given as {entry: (class names it conforms to, parent, WriteCacheState)}; counts hand-outs."""

    def __init__(self, entries: dict[int, tuple[set[str], int | None, bool | None]], disks: dict[str, int]):
        self.entries, self.disks = entries, disks
        self.out: list[int] = []
        self.back: list[int] = []
        self.asked: list[tuple[int, str]] = []

    def _give(self, entry: int | None) -> int | None:
        if entry is not None:
            self.out.append(entry)
        return entry

    def for_bsd_name(self, name: str) -> int | None:
        return self._give(self.disks.get(name))

    def conforms_to(self, entry: int, class_name: str) -> bool:
        return class_name in self.entries[entry][0]

    def parent(self, entry: int) -> int | None:
        return self._give(self.entries[entry][1])

    def boolean(self, entry: int, key: str) -> bool | None:
        self.asked.append((entry, key))
        return self.entries[entry][2]

    def release(self, entry: int) -> None:
        self.back.append(entry)


def apple_silicon_internal(state: bool | None) -> FakeRegistry:
    """disk0 on an Apple Silicon Mac: IOMedia <- IOBlockStorageDriver <- IONVMeBlockStorageDevice <- the controller."""
    return FakeRegistry({10: ({"IOMedia", "IOStorage", "IOService"}, 11, None),
                         11: ({"IOBlockStorageDriver", "IOStorage", "IOService"}, 12, None),
                         12: ({"IONVMeBlockStorageDevice", "IOBlockStorageDevice", "IOService"}, 13, state),
                         13: ({"AppleANS3NVMeController", "IOService"}, None, None)}, {"disk0": 10})


@pytest.mark.parametrize("state, words", [(True, "write back"), (False, "write through"), (None, None)])
def test_the_write_cache_is_the_block_storage_device_s_answer_in_linux_s_words(state, words):
    registry = apple_silicon_internal(state)
    assert write_cache_state(registry, "disk0") == words
    assert registry.asked == [(12, "WriteCacheState")]          # asked of the device, not the media or the driver
    assert sorted(registry.out) == sorted(registry.back) == [10, 11, 12]   # each entry handed out is given back


def test_a_disk_not_found_a_name_not_a_disk_s_and_a_chain_without_a_device_say_nothing():
    registry = apple_silicon_internal(True)
    assert write_cache_state(registry, "disk7") is None
    assert write_cache_state(registry, "disk0s2") is None         # a whole disk's name only
    assert write_cache_state(registry, "../disk0") is None
    no_device = FakeRegistry({1: ({"IOMedia"}, 2, None), 2: ({"IOService"}, None, None)}, {"disk3": 1})
    assert write_cache_state(no_device, "disk3") is None
    assert sorted(no_device.out) == sorted(no_device.back) == [1, 2]


def test_a_registry_that_loops_is_left_after_a_bounded_walk():
    looping = FakeRegistry({1: ({"IOMedia"}, 2, None), 2: ({"IOService"}, 1, None)}, {"disk5": 1})
    assert write_cache_state(looping, "disk5") is None
    assert len(looping.out) == len(looping.back) <= 17


def test_iokit_is_loaded_on_a_mac_only_and_elsewhere_nothing_is_said():
    assert (IOKitRegistry.load() is None) == (sys.platform != "darwin")
    if sys.platform != "darwin":
        assert darwin_write_cache("disk0") is None
    else:       # a Mac's first disk: what its driver says, in one of the two words, or nothing
        assert darwin_write_cache("disk0") in ("write back", "write through", None)


@pytest.fixture(scope="module")
def standin(tmp_path_factory) -> ctypes.CDLL:
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler (install.sh installs gcc)"
    out = tmp_path_factory.mktemp("iokit") / "libiokit_standin.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", str(out), str(STANDIN)], check=True)
    return ctypes.CDLL(str(out))


@pytest.mark.parametrize("state, words", [(1, "write back"), (0, "write through"), (-1, None)])
def test_the_ctypes_binding_asks_through_real_c_calls_and_gives_back_everything(standin, state, words):
    standin.standin_set_write_cache(state)
    before = [getattr(standin, f"standin_{n}")() for n in ("entries_out", "entries_back", "cf_out", "cf_back")]
    assert write_cache_state(IOKitRegistry(standin, standin), "disk4") == words
    after = [getattr(standin, f"standin_{n}")() for n in ("entries_out", "entries_back", "cf_out", "cf_back")]
    entries_out, entries_back, cf_out, cf_back = (a - b for a, b in zip(after, before))
    assert entries_out == entries_back == 3                        # IOMedia, its driver, the device
    assert cf_out == cf_back == (2 if words else 1)                # the key's string, and the answer where there is one


def test_the_ctypes_binding_finds_no_disk_of_another_name(standin):
    assert write_cache_state(IOKitRegistry(standin, standin), "disk9") is None


def test_a_mac_s_drive_facts_carry_the_write_cache_its_driver_reports(monkeypatch):
    """drive_facts on a Mac (its commands stood in for): the whole disk behind the volume, asked of the registry
    by its name; where the driver says nothing, no write_cache is claimed."""
    import plistlib

    from stibium_py.machine import iokit, sysinfo
    monkeypatch.setattr(sysinfo.sys, "platform", "darwin")
    monkeypatch.setattr(sysinfo, "_darwin_whole_disk", lambda device: "/dev/disk4")
    monkeypatch.setattr(sysinfo, "_diskutil_plist", lambda device: plistlib.dumps({"MediaName": "Samsung PSSD T7"}))
    monkeypatch.setattr(sysinfo, "_run", lambda args: None)
    asked: list[str] = []
    monkeypatch.setattr(iokit, "darwin_write_cache", lambda disk: asked.append(disk) or "write back")
    assert sysinfo.drive_facts("/dev/disk4s1") == {"disk": "disk4", "model": "Samsung PSSD T7",
                                                  "write_cache": "write back"}
    assert asked == ["disk4"]
    monkeypatch.setattr(iokit, "darwin_write_cache", lambda disk: None)
    assert "write_cache" not in sysinfo.drive_facts("/dev/disk4s1")
