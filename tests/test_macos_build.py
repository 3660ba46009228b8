"""The helper's C code built for macOS here: compiled for arm64 and x86_64 against Apple's SDK headers
and linked against Apple's libSystem (both shipped by the `ziglang` package) into Mach-O executables,
then joined into a universal binary with llvm-lipo. Unlike stand-in headers, the real SDK refuses what a
Mac cannot build: glibc-only calls planted in the Apple-compiled files must fail the build."""

from __future__ import annotations

import glob
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

HELPER_SRC = Path(__file__).resolve().parent.parent / "helper"
BUILD = HELPER_SRC / "darwin-check" / "build-macos.sh"
# <mach/machine.h>: CPU_TYPE_ARM64 = CPU_TYPE_ARM | CPU_ARCH_ABI64, CPU_TYPE_X86_64 = CPU_TYPE_X86 | CPU_ARCH_ABI64
CPU_TYPES = {"aarch64-macos": 0x0100000C, "x86_64-macos": 0x01000007}
MH_MAGIC_64, MH_EXECUTE, FAT_MAGIC = 0xFEEDFACF, 2, 0xCAFEBABE


@pytest.fixture(scope="module")
def zig_cache(tmp_path_factory) -> Path:
    """One compiler cache for the module: each planted build recompiles only its planted file."""
    return tmp_path_factory.mktemp("zig-cache")


def _build(out: Path, src: Path, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BUILD), str(out), str(src)], capture_output=True, text=True,
                          env={**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(cache), "PYTHON": sys.executable})


def _mach_header(data: bytes) -> tuple[int, int, int]:
    """magic, cputype and filetype of a 64-bit Mach-O header (little-endian on both architectures)."""
    magic, cputype, _subtype, filetype = struct.unpack_from("<IiiI", data)
    return magic, cputype, filetype


@pytest.fixture(scope="module")
def built(tmp_path_factory, zig_cache) -> Path:
    out = tmp_path_factory.mktemp("macos")
    proc = _build(out, HELPER_SRC, zig_cache)
    assert proc.returncode == 0, proc.stderr
    assert "Mach-O executables for aarch64-macos and x86_64-macos linked" in proc.stdout
    return out


@pytest.mark.parametrize("target", sorted(CPU_TYPES))
def test_the_c_code_links_into_a_mach_o_executable(built, target):
    assert _mach_header((built / f"stibium-core-{target}").read_bytes()) == (MH_MAGIC_64, CPU_TYPES[target],
                                                                           MH_EXECUTE)


def _lipo() -> str:
    """LLVM's lipo (Debian names it llvm-lipo-VERSION), or Apple's own on a Mac: the same options."""
    found = (shutil.which("llvm-lipo") or next(iter(sorted(glob.glob("/usr/bin/llvm-lipo-*"))), None)
             or shutil.which("lipo"))
    assert found, "llvm-lipo not found: install.sh --test installs llvm"
    return found


def test_both_slices_join_into_a_universal_binary(built):
    universal = built / "stibium-core-universal"
    subprocess.run([_lipo(), "-create", *(str(built / f"stibium-core-{t}") for t in sorted(CPU_TYPES)),
                    "-output", str(universal)], check=True)
    data = universal.read_bytes()
    magic, count = struct.unpack_from(">II", data)          # the fat header is big-endian
    assert (magic, count) == (FAT_MAGIC, 2)
    slices = {}
    for i in range(count):
        cputype, _subtype, offset, size, _align = struct.unpack_from(">iiIII", data, 8 + 20 * i)
        slices[cputype] = _mach_header(data[offset:offset + size])
    assert slices == {cpu: (MH_MAGIC_64, cpu, MH_EXECUTE) for cpu in CPU_TYPES.values()}


@pytest.mark.parametrize("file,good,typo", [
    ("sb_platform_darwin.c", "vm_kernel_page_size", "vm_kernel_pagesize"),
    ("sb_platform_darwin.c", "fcntl(fd, F_NOCACHE, 1)", "fcntl(fd, F_NOCAHCE, 1)"),
    ("sb_clock.c", "mach_timebase_info(&sb_timebase)", "mach_timebase_info(sb_timebase)"),
])
def test_a_planted_typo_in_apple_only_code_fails_the_macos_build(tmp_path, zig_cache, built, file, good, typo):
    src = tmp_path / "helper"
    shutil.copytree(HELPER_SRC, src, ignore=shutil.ignore_patterns("darwin-check"))
    text = (src / file).read_text()
    assert good in text
    (src / file).write_text(text.replace(good, typo))
    proc = _build(tmp_path / "out", src, zig_cache)
    assert proc.returncode != 0 and file in proc.stderr


# glibc-only calls and headers a Linux-minded change could bring into Apple-compiled code; each built here
# before by the stand-in headers' check. The last one is declared by hand, so only the link can refuse it.
# fdatasync is not among them: xnu has it (bsd/vfs/vfs_syscalls.c) and libSystem exports it, though the SDK's
# unistd.h does not declare it; sb_platform_darwin.c declares it, and the `built` fixture links it for both
# architectures.
PLANTS = {
    "posix_fadvise": "posix_fadvise(fd, 0, 0, 4);",
    "posix_fallocate": "posix_fallocate(fd, 0, 4096);",
    "getrandom": "{ char b[4]; getrandom(b, sizeof b, 0); }",
    "sys/vfs.h": "#include <sys/vfs.h>",
    "declared by hand": "{ extern int sync_file_range(int, long long, long long, unsigned); "
                        "sync_file_range(fd, 0, 0, 2); }",
}


@pytest.mark.parametrize("file", ["sb_platform_darwin.c", "sb_posix.c"])   # Apple's own file; one both build
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_glibc_only_call_fails_the_macos_build(tmp_path, zig_cache, built, file, plant):
    src = tmp_path / "helper"
    shutil.copytree(HELPER_SRC, src, ignore=shutil.ignore_patterns("darwin-check"))
    text = (src / file).read_text()
    code = PLANTS[plant]
    if code.startswith("#include"):
        text = code + "\n" + text
    else:
        text += "\nint sb_planted(int fd);\nint sb_planted(int fd)\n{\n    " + code + "\n    return 0;\n}\n"
    (src / file).write_text(text)
    proc = _build(tmp_path / "out", src, zig_cache)
    assert proc.returncode != 0
    expected = "linking failed" if plant == "declared by hand" else f"{file}"
    assert expected in proc.stderr
