"""The helper's uncached-I/O policy (helper/sb_policy.c), pure C functions compiled here with a small
driver and run with the parameters of Linux, Intel Macs (4 KiB pages) and Apple Silicon (16 KiB
kernel pages), including the cases of the four macOS defects: a decimal-size direct write needs no
buffered tail descriptor on Darwin (1), a 4 KiB granularity is not refused there (2), small or
misaligned writes go through the page cache (3), and nothing is uncached under Rosetta (4)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HELPER_SRC = Path(__file__).resolve().parent.parent / "helper"

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "sb_policy.h"
#include "sb_buffer.h"
static const char *names[] = {"all", "body", "small", "misaligned", "translated", "fs", "small-read", "small-page"};
int main(int argc, char **argv) {
    const char *what = argv[1];
    if (argv[1][0] == 'r' || argv[1][0] == 'x') {  /* request|xmixed OS KPAGE PPAGE BLOCK DIO TRANSLATED FS WRITE
                                                       OFFSET LEN (xmixed: WRITE unused) */
        sb_uncached_params p = {.os = argv[2][0] == 'd' ? SB_OS_DARWIN : SB_OS_LINUX,
            .kernel_page_bytes = strtoull(argv[3], 0, 10), .process_page_bytes = strtoull(argv[4], 0, 10),
            .dev_block_bytes = strtoull(argv[5], 0, 10), .dio_align_bytes = strtoull(argv[6], 0, 10),
            .translated = atoi(argv[7]), .fs_honours = atoi(argv[8])};
        if (argv[1][0] == 'x') {
            printf("%s\n", names[sb_policy_mixed_how(&p, strtoull(argv[10], 0, 10), strtoull(argv[11], 0, 10))]);
            return 0;
        }
        sb_uncached_decision d = sb_policy_request(&p, atoi(argv[9]), strtoull(argv[10], 0, 10),
                                                   strtoull(argv[11], 0, 10));
        printf("%s %llu %d %d %llu %s\n", names[d.how], (unsigned long long)d.uncached_bytes,
               sb_policy_honoured(d.how), sb_policy_split_tail(&p),
               (unsigned long long)sb_policy_required_align(&p), sb_policy_reason(d.how)[0] ? "reason" : "-");
    } else if (what[0] == 'm') {       /* max OS ALIGN LEN */
        unsigned long long max = sb_policy_max_syscall_bytes(argv[2][0] == 'd' ? SB_OS_DARWIN : SB_OS_LINUX,
                                                             strtoull(argv[3], 0, 10));
        printf("%llu %llu\n", max, (unsigned long long)sb_policy_syscalls(strtoull(argv[4], 0, 10), max));
    } else if (what[0] == 's') {       /* slices BUF_BYTES PAGE LEN COUNT: where each write request's data start */
        size_t cursor = 0;
        for (long i = 0; i < atol(argv[5]); i++)
            printf("%zu\n", sb_buffer_slice(strtoull(argv[2], 0, 10), &cursor, strtoull(argv[4], 0, 10),
                                            strtoull(argv[3], 0, 10)));
    } else if (what[0] == 'b') {       /* block GIVEN FS_BSIZE: Darwin's device block */
        printf("%llu\n", (unsigned long long)sb_policy_darwin_device_block(strtoull(argv[2], 0, 10),
                                                                          strtoull(argv[3], 0, 10)));
    } else if (what[0] == 'h') {       /* honours FSTYPENAME: Darwin */
        printf("%d\n", sb_policy_darwin_fs_honours(argv[2]));
    } else if (what[0] == 'i') {       /* io OS URING QD THREADS ASKED SPLIT */
        static const char *refusals[] = {"runs", "refused-uring", "refused-workers"};
        sb_io_choice c = sb_policy_io_method(argv[2][0] == 'd' ? SB_OS_DARWIN : SB_OS_LINUX,
            (enum sb_uring_state)atoi(argv[3]), (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]),
            (enum sb_io_asked)atoi(argv[6]), atoi(argv[7]));
        printf("%s|%s|%s\n", sb_policy_io_name(c.method), refusals[c.refused], sb_policy_io_reason(c.why));
    } else if (what[0] == 'p') {       /* pages SIZE PAGE CACHED: a file's residency */
        uint64_t pages, resident;
        double f = sb_policy_residency(strtoull(argv[2], 0, 10), strtoull(argv[3], 0, 10), strtoull(argv[4], 0, 10),
                                       &pages, &resident);
        printf("%llu %llu %.17g\n", (unsigned long long)pages, (unsigned long long)resident, f);
    } else if (what[0] == 'w') {       /* window OFFSET LEN SIZE PAGE: what macOS maps and invalidates */
        uint64_t start = 0, end = 0;
        int some = sb_policy_page_window(strtoull(argv[2], 0, 10), strtoull(argv[3], 0, 10), strtoull(argv[4], 0, 10),
                                         strtoull(argv[5], 0, 10), &start, &end);
        printf("%d %llu %llu\n", some, (unsigned long long)start, (unsigned long long)end);
    } else {                           /* fullsync ERRNO */
        printf("%d\n", sb_policy_fullsync_fallback(atoi(argv[2])));
    }
    return 0;
}
"""

KiB, MiB, GiB = 1024, 2**20, 2**30
APPLE_SILICON = ("darwin", 16 * KiB, 16 * KiB, 4096, 0, 0, 1)
INTEL_MAC = ("darwin", 4 * KiB, 4 * KiB, 4096, 0, 0, 1)
ROSETTA = ("darwin", 16 * KiB, 4 * KiB, 4096, 0, 1, 1)
LINUX_EXT4 = ("linux", 4 * KiB, 4 * KiB, 512, 512, 0, 1)
LINUX_TMPFS = ("linux", 4 * KiB, 4 * KiB, 4096, 4096, 0, 0)

WRITE, READ = 1, 0


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert cc, "no C compiler: install.sh --test installs gcc"
    d = tmp_path_factory.mktemp("policy")
    (d / "driver.c").write_text(DRIVER)
    exe = d / "driver"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", f"-I{HELPER_SRC}", str(d / "driver.c"),
                    *(str(HELPER_SRC / f) for f in ("sb_policy.c", "sb_buffer.c", "sb_rng.c", "sb_err.c")),
                    "-o", str(exe)], check=True)
    return exe


def decide(driver: Path, machine: tuple, is_write: int, offset: int, length: int) -> tuple:
    out = subprocess.run([str(driver), "request", *map(str, machine), str(is_write), str(offset), str(length)],
                         capture_output=True, text=True, check=True).stdout.split()
    how, uncached, honoured, split, required, reason = out
    return how, int(uncached), bool(int(honoured)), bool(int(split)), int(required), reason == "reason"


@pytest.mark.parametrize("machine", [APPLE_SILICON, INTEL_MAC], ids=["apple-silicon", "intel-mac"])
def test_darwin_needs_no_buffered_tail_and_refuses_no_alignment(driver, machine):
    # defect 1: a 10 MB (decimal) direct write: the kernel copies the unaligned rest itself, so no
    # second (write-only) descriptor is opened and later mapped for eviction
    how, uncached, honoured, split, required, _ = decide(driver, machine, WRITE, 0, 10_000_000)
    page = machine[1]
    assert (how, uncached, honoured, split, required) == ("body", 10_000_000 - 10_000_000 % page, True, False, 0)


def test_linux_splits_the_tail_and_requires_its_alignment(driver):
    assert decide(driver, LINUX_EXT4, WRITE, 0, 10_000) == ("body", 9728, True, True, 512, False)
    assert decide(driver, LINUX_EXT4, READ, 4096, 4096) == ("all", 4096, True, True, 512, False)


@pytest.mark.parametrize("machine", [APPLE_SILICON, INTEL_MAC], ids=["apple-silicon", "intel-mac"])
def test_darwin_reads_of_4_kib_are_uncached(driver, machine):
    # defect 2: uncached reads need device-block alignment (4096 on APFS), not the 16 KiB page
    for offset in (0, 4096, 12288, 1_000_000 * 4096):
        assert decide(driver, machine, READ, offset, 4096)[:3] == ("all", 4096, True)
    # an offset off the device block sends the read through the cache
    assert decide(driver, machine, READ, 512, 4096)[:3] == ("misaligned", 0, False)


@pytest.mark.parametrize("machine", [APPLE_SILICON, INTEL_MAC], ids=["apple-silicon", "intel-mac"])
def test_darwin_writes_under_16_kib_go_through_the_cache(driver, machine):
    # defect 3: MIN_DIRECT_WRITE_SIZE is 16 KiB on both kinds of Mac; a write that covers part of a kernel
    # page (every one of these on Apple Silicon; only 16 KiB - 1 on Intel) reads that page first
    for length in (4096, 8192, 16 * KiB - 1):
        how, uncached, honoured, _, _, reason = decide(driver, machine, WRITE, 0, length)
        partial = length % machine[1] != 0
        assert (how, uncached, honoured, reason) == ("small-page" if partial else "small", 0, False, True)
    assert decide(driver, machine, WRITE, 0, 16 * KiB)[:3] == ("all", 16 * KiB, True)
    assert decide(driver, machine, WRITE, 64 * KiB, 1 * MiB)[:3] == ("all", MiB, True)


def test_darwin_4_kib_random_writes_read_their_16_kib_page_first_on_apple_silicon_only(driver):
    # cluster_write_copy (vfs_cluster.c 4171-4215): a write into part of an uncached page reads the page first
    for offset in (0, 4096, 12288, 4096 * 999):
        assert decide(driver, APPLE_SILICON, WRITE, offset, 4096)[0] == "small-page"
        assert decide(driver, INTEL_MAC, WRITE, offset, 4096)[0] == "small"
    assert decide(driver, INTEL_MAC, WRITE, 512, 4096)[0] == "small-page"


def mixed_how(driver: Path, machine: tuple, offset: int, length: int) -> str:
    return subprocess.run([str(driver), "xmixed", *map(str, machine), "0", str(offset), str(length)],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("machine", [APPLE_SILICON, INTEL_MAC], ids=["apple-silicon", "intel-mac"])
def test_a_mixed_request_is_honoured_only_where_its_read_and_its_write_both_are(driver, machine):
    # a 4 KiB request that reads in one pass and writes in another: xnu lets the read bypass the cache, not
    # the write (under 16 KiB, and on Apple Silicon part of a 16 KiB page), so the mix is not uncached
    assert decide(driver, machine, READ, 4096, 4096)[0] == "all"
    assert mixed_how(driver, machine, 4096, 4096) == decide(driver, machine, WRITE, 4096, 4096)[0] != "all"
    # a read off the device block is the first reason given
    assert mixed_how(driver, machine, 512, 16 * KiB) == "misaligned"
    # 64 KiB at a page boundary: uncached both ways
    assert mixed_how(driver, machine, 64 * KiB, 64 * KiB) == "all"


def test_a_mixed_request_on_linux_is_uncached_where_aligned(driver):
    assert mixed_how(driver, LINUX_EXT4, 4096, 4096) == "all"
    assert mixed_how(driver, LINUX_TMPFS, 4096, 4096) == decide(driver, LINUX_TMPFS, READ, 4096, 4096)[0] != "all"


def test_darwin_write_alignment_is_the_kernel_page(driver):
    # 64 KiB at a 4 KiB offset: uncached on an Intel Mac, through the cache on Apple Silicon (16 KiB pages)
    assert decide(driver, INTEL_MAC, WRITE, 4096, 64 * KiB)[:3] == ("all", 64 * KiB, True)
    assert decide(driver, APPLE_SILICON, WRITE, 4096, 64 * KiB)[:3] == ("misaligned", 0, False)
    assert decide(driver, APPLE_SILICON, WRITE, 48 * KiB, 64 * KiB)[:3] == ("all", 64 * KiB, True)
    # 20 KiB at 0: the 16 KiB page goes direct on Apple Silicon, the last 4 KiB through the cache
    assert decide(driver, APPLE_SILICON, WRITE, 0, 20 * KiB)[:3] == ("body", 16 * KiB, True)
    assert decide(driver, INTEL_MAC, WRITE, 0, 20 * KiB)[:3] == ("all", 20 * KiB, True)


@pytest.mark.parametrize("is_write,length", [(WRITE, MiB), (READ, 4096), (READ, GiB)])
def test_nothing_is_uncached_under_rosetta(driver, is_write, length):
    # defect 4: a 4 KiB-page process on a 16 KiB kernel gets no direct I/O
    how, uncached, honoured, _, _, reason = decide(driver, ROSETTA, is_write, 0, length)
    assert (how, uncached, honoured, reason) == ("translated", 0, False, True)


def _darwin_device_block(driver: Path, given: int, fs_bsize: int) -> int:
    return int(subprocess.run([str(driver), "block", str(given), str(fs_bsize)], capture_output=True, text=True,
                              check=True).stdout)


@pytest.mark.parametrize("machine", [APPLE_SILICON, INTEL_MAC], ids=["apple-silicon", "intel-mac"])
@pytest.mark.parametrize("fs_bsize,given,block", [
    (32 * KiB, 512, 512),     # FAT32: f_bsize is the cluster; diskutil's DeviceBlockSize of a USB SSD
    (128 * KiB, 0, 4096),     # exFAT, the disk's block unknown: at most 4096
    (4096, 0, 4096),          # APFS
    (4096, 512, 512),         # APFS on an external 512-byte disk: the disk's, less strict
    (512, 0, 512),            # HFS+ with 512-byte allocation blocks
])
def test_darwin_reads_are_judged_against_the_device_block_not_the_cluster(driver, machine, fs_bsize, given, block):
    # xnu's uncached-read rule uses mnt_devblocksize (the disk's DKIOCGETBLOCKSIZE), not statfs f_bsize,
    # which msdosfs sets to the cluster size: a 4 KiB read at a 4 KiB offset on FAT is uncached
    assert _darwin_device_block(driver, given, fs_bsize) == block
    on_this_disk = machine[:3] + (block,) + machine[4:]
    assert decide(driver, on_this_disk, READ, 12 * KiB, 4096)[:3] == ("all", 4096, True)
    if 12 * KiB % fs_bsize:   # the old rule: the cluster size as the unit called this read cached
        assert decide(driver, machine[:3] + (fs_bsize,) + machine[4:], READ, 12 * KiB, 4096)[:2] == ("misaligned", 0)


def test_darwin_read_ending_off_the_device_block_is_clipped_to_the_kernel_page(driver):
    # vfs_cluster.c 5421-5438: io_size &= ~PAGE_MASK where the length is not a whole number of device blocks
    assert decide(driver, APPLE_SILICON, READ, 0, 100_000)[:3] == ("body", 6 * 16 * KiB, True)   # 98304 direct
    assert decide(driver, INTEL_MAC, READ, 0, 100_000)[:3] == ("body", 24 * 4 * KiB, True)       # 98304 direct
    assert decide(driver, APPLE_SILICON, READ, 0, 40_000)[:3] == ("body", 32 * KiB, True)       # not 36864
    assert decide(driver, INTEL_MAC, READ, 0, 40_000)[:3] == ("body", 36 * KiB, True)
    # the articles' 10 KB file: under one 16 KiB page, so all of it through the cache on Apple Silicon
    how, uncached, honoured, _, _, reason = decide(driver, APPLE_SILICON, READ, 0, 10_000)
    assert (how, uncached, honoured, reason) == ("small-read", 0, False, True)
    assert decide(driver, INTEL_MAC, READ, 0, 10_000)[:3] == ("body", 8 * KiB, True)
    assert decide(driver, APPLE_SILICON, READ, 0, 8 * KiB)[:3] == ("all", 8 * KiB, True)     # whole blocks


@pytest.mark.parametrize("fs_type,honours", [("apfs", 1), ("hfs", 1), ("msdos", 1), ("exfat", 1), ("macfuse", 0),
                                             ("osxfuse_1", 0), ("nfs", -1), ("smbfs", -1), ("webdav", -1),
                                             ("afpfs", -1)])
def test_darwin_network_file_systems_are_unknown_not_honoured(driver, fs_type, honours):
    out = subprocess.run([str(driver), "honours", fs_type], capture_output=True, text=True, check=True).stdout
    assert int(out) == honours


def test_a_file_system_that_caches_anyway_is_never_honoured(driver):
    assert decide(driver, LINUX_TMPFS, READ, 0, MiB)[:3] == ("fs", 0, False)


@pytest.mark.parametrize("os_name,align,length,expected_max,calls", [
    ("linux", 4096, 256 * MiB, 0x7FFFF000, 1),
    ("linux", 4096, 2 * GiB, 0x7FFFF000, 2),            # MAX_RW_COUNT: one page short of 2 GiB
    ("linux", 512, 0x7FFFF000, 0x7FFFF000, 1),
    ("darwin", 16 * KiB, 2 * GiB, 0x7FFFC000, 2),       # INT_MAX rounded down to the 16 KiB page
    ("darwin", 4 * KiB, 2 * GiB - 4096, 0x7FFFF000, 1),
])
def test_largest_transfer_per_call(driver, os_name, align, length, expected_max, calls):
    out = subprocess.run([str(driver), "max", os_name, str(align), str(length)], capture_output=True, text=True,
                         check=True).stdout.split()
    assert (int(out[0]), int(out[1])) == (expected_max, calls)


def test_full_sync_falls_back_only_where_it_is_not_supported(driver):
    import errno
    fallback = {e: subprocess.run([str(driver), "fullsync", str(e)], capture_output=True, text=True,
                                  check=True).stdout.strip() for e in (errno.ENOTSUP, errno.ENOTTY, errno.EINVAL,
                                                                       errno.EIO, errno.ENOSPC)}
    assert fallback == {errno.ENOTSUP: "1", errno.ENOTTY: "1", errno.EINVAL: "1", errno.EIO: "0", errno.ENOSPC: "0"}


NOT_BUILT, AVAILABLE, REFUSED = 0, 1, 2
AUTO, ASK_URING, ASK_THREADS = 0, 1, 2


def io_method(driver: Path, os_name: str, uring: int, depth: int, threads: int, asked: int = AUTO,
              split_tail: int = 0) -> tuple:
    out = subprocess.run([str(driver), "io", os_name, str(uring), str(depth), str(threads), str(asked),
                          str(split_tail)], capture_output=True, text=True, check=True).stdout.strip()
    return tuple(out.split("|"))


@pytest.mark.parametrize("os_name", ["darwin", "linux"])
def test_one_request_in_flight_is_the_plain_loop(driver, os_name):
    assert io_method(driver, os_name, AVAILABLE, 1, 1) == ("sync", "runs", "")


def test_macos_uses_one_thread_per_request_in_flight_and_says_why(driver):
    # whatever the (Linux-only) ring state, macOS has no io_uring
    for uring in (NOT_BUILT, AVAILABLE):
        assert io_method(driver, "darwin", uring, 32, 1) == ("threads", "runs", "macOS has no io_uring")
        assert io_method(driver, "darwin", uring, 64, 16) == ("threads", "runs", "macOS has no io_uring")
    # CrystalDiskMark's Q32T16 (512 threads) runs; beyond 1024 threads the helper refuses
    assert io_method(driver, "darwin", NOT_BUILT, 32, 32)[:2] == ("threads", "runs")
    assert io_method(driver, "darwin", NOT_BUILT, 256, 8)[:2] == ("threads", "refused-workers")
    assert io_method(driver, "darwin", NOT_BUILT, 8, 1, ASK_URING) == ("io_uring", "refused-uring",
                                                                       "macOS has no io_uring")


def test_linux_uses_io_uring_and_falls_back_to_threads_with_the_reason(driver):
    assert io_method(driver, "linux", AVAILABLE, 32, 1) == ("io_uring", "runs", "")
    assert io_method(driver, "linux", AVAILABLE, 256, 64) == ("io_uring", "runs", "")
    assert io_method(driver, "linux", NOT_BUILT, 8, 1) == ("threads", "runs", "the helper was built without liburing")
    assert io_method(driver, "linux", REFUSED, 8, 1)[:2] == ("threads", "runs")
    assert "kernel refused" in io_method(driver, "linux", REFUSED, 8, 1)[2]
    assert "second, buffered descriptor" in io_method(driver, "linux", AVAILABLE, 8, 1, AUTO, 1)[2]
    # asked for: used as asked (also at one request in flight), or refused with the reason
    assert io_method(driver, "linux", AVAILABLE, 1, 1, ASK_THREADS) == ("threads", "runs", "")
    assert io_method(driver, "linux", AVAILABLE, 1, 1, ASK_URING) == ("io_uring", "runs", "")
    assert io_method(driver, "linux", REFUSED, 8, 1, ASK_URING)[:2] == ("io_uring", "refused-uring")


@pytest.mark.parametrize("page", [4 * KiB, 16 * KiB], ids=["4k-pages", "16k-pages"])
@pytest.mark.parametrize("length", [4 * KiB, 16 * KiB, 1 * MiB, 1_000_000])
def test_write_slices_are_page_aligned_and_apart_until_the_buffer_wraps(driver, page, length):
    """Writes (one at a time or many in flight) take their data from slices laid out before the timer: each
    starts on a page of the process (Apple Silicon's 16 KiB, Intel's and Linux's 4 KiB), lies inside the
    buffer, and no two overlap before the buffer starts over."""
    buf = 64 * MiB
    count = 200
    out = subprocess.run([str(driver), "slices", str(buf), str(page), str(length), str(count)],
                         capture_output=True, text=True, check=True).stdout.split()
    starts = [int(v) for v in out]
    step = -(-length // page) * page
    assert all(s % page == 0 and s + length <= buf for s in starts)
    per_pass = (buf - length) // step + 1          # slices that fit before the buffer starts over
    assert starts == [(i % per_pass) * step for i in range(count)]


def residency(driver: Path, size: int, page: int, cached: int) -> tuple[int, int, float]:
    out = subprocess.run([str(driver), "pages", str(size), str(page), str(cached)], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1]), float(out[2])


@pytest.mark.parametrize("page", [16 * KiB, 4 * KiB], ids=["apple-silicon", "intel-mac-rosetta-linux"])
def test_residency_counts_whole_pages_of_the_process(driver, page):
    # mincore's vector has a byte a page of the process (16 KiB natively on Apple Silicon, 4 KiB on Intel Macs,
    # under Rosetta and on Linux): a file's last, partial page is a page; cachestat's count is held to the same
    assert residency(driver, 64 * MiB, page, 64 * MiB // page) == (64 * MiB // page, 64 * MiB // page, 1.0)
    assert residency(driver, 16 * KiB + 1, page, 1) == (16 * KiB // page + 1, 1, 1 / (16 * KiB // page + 1))
    assert residency(driver, 1, page, 0) == (1, 0, 0.0)
    assert residency(driver, 0, page, 0) == (0, 0, 0.0)
    assert residency(driver, 10 * page, page, 12) == (10, 10, 1.0)     # a count past the end: the file's pages


@pytest.mark.parametrize("machine", [APPLE_SILICON, INTEL_MAC], ids=["apple-silicon", "intel-mac"])
def test_every_stream_frame_is_uncached_on_a_mac(driver, machine):
    """A stream test's frames (every format of the table, and a frame_bytes of one byte) are one request of whole
    16 KiB at an offset of whole frames: each frame, the first and the thousandth, captured and played back
    uncached on either Mac."""
    from stibium_py.kinds.stream import formats
    from stibium_py.kinds.stream.expand import FRAME_ALIGN_BYTES
    frames = {-(-f.frame_bytes // FRAME_ALIGN_BYTES) * FRAME_ALIGN_BYTES for f in formats.FORMATS.values()}
    for frame in sorted(frames | {FRAME_ALIGN_BYTES}):
        for k in (0, 1, 999):
            for op in (WRITE, READ):
                assert decide(driver, machine, op, k * frame, frame)[:3] == ("all", frame, True), (frame, k, op)


@pytest.mark.parametrize("machine", [APPLE_SILICON, INTEL_MAC], ids=["apple-silicon", "intel-mac"])
def test_every_chunk_of_a_verify_is_uncached_on_a_mac(driver, machine):
    """`stibium verify`'s files: every chunk of every file (the last one shorter) written and read back uncached
    on either Mac, for a fill of any size (rounded down to whole 64 KiB, which a block of 4 or 16 KiB divides)."""
    from stibium_py.kinds.verify.command import verify_plan
    from stibium_py.plan.expand import expand
    chunk_bytes, file_bytes = 4 * MiB, 1 << 30
    for total in (4 * MiB + 20 * KiB, 3 * file_bytes // 2 + 123_457, 64 * MiB, 10_000_000):
        for o in expand(verify_plan(total, file_bytes).plan, None, None).ops:
            assert o.chunk_bytes == chunk_bytes and o.bytes % (64 * KiB) == 0
            chunks = [(offset, min(chunk_bytes, o.bytes - offset)) for offset in range(0, o.bytes, chunk_bytes)]
            for offset, length in (chunks[0], chunks[-1]):
                op = WRITE if o.op == "write" else READ
                assert decide(driver, machine, op, offset, length)[:3] == ("all", length, True), (
                    total, o.file, offset, length, op)

@pytest.mark.parametrize("page", [4 * KiB, 16 * KiB])
def test_what_macos_invalidates_starts_at_the_page_of_the_offset_and_stops_at_the_files_end(driver, page):
    """Eviction and DONTNEED on macOS map the file and msync(MS_INVALIDATE) the mapping: mmap takes only an offset
    that is a multiple of the page (4 KiB on Intel, 16 KiB on Apple Silicon), so the window starts at the page that
    holds the offset; it ends at the asked end, or the file's, whichever is first (len 0: the file's end)."""
    def window(offset: int, length: int, size: int) -> tuple[int, int, int]:
        out = subprocess.run([str(driver), "w", str(offset), str(length), str(size), str(page)],
                             capture_output=True, text=True, check=True).stdout.split()
        some, start, end = (int(v) for v in out)
        return some, start, end
    assert window(0, 0, 10 * MiB) == (1, 0, 10 * MiB)
    assert window(page + 100, 4096, 10 * MiB) == (1, page, page + 100 + 4096)
    assert window(3 * page - 1, 0, 10 * MiB) == (1, 2 * page, 10 * MiB)
    assert window(5 * MiB, 8 * MiB, 10 * MiB) == (1, 5 * MiB, 10 * MiB)        # cut at the file's end
    assert window(10 * MiB, 4096, 10 * MiB)[0] == 0 and window(11 * MiB, 0, 10 * MiB)[0] == 0
    assert window(0, 0, 0)[0] == 0                                             # an empty file: nothing
    assert window(2**63, 2**63, 2**64 - 1) == (1, 2**63 // page * page, 2**64 - 1)   # no overflow of offset + len
