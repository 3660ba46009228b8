/* sb_policy.c: pure decisions of uncached I/O per platform (see sb_policy.h).
 * Darwin rules read from xnu (bsd/vfs/vfs_cluster.c, xnu-11417 and xnu-8019):
 *  - writes: cluster_write_copy reads a kernel page the write covers only in part, unless it is cached
 *    (vfs_cluster.c 4171-4215); cluster_write_ext asks cluster_io_type for IO_DIRECT only for a vector of at least
 *    MIN_DIRECT_WRITE_SIZE (16384) bytes; cluster_write_direct then sends the whole vector through
 *    the cache when the file offset is not aligned to the kernel page (PAGE_MASK), and moves
 *    io_req_size & ~PAGE_MASK directly, the rest through the cache;
 *  - reads: cluster_read_direct needs the file offset aligned to the device block size
 *    (mnt_devblocksize, which vfs_init_io_attributes takes from the disk's DKIOCGETBLOCKSIZE,
 *    vfs_subr.c 4485-4490) and takes any length; a length that is not a whole number of device
 *    blocks has its direct part clipped to the kernel page, the rest read through the cache;
 *  - both: no direct I/O when the process's page size is smaller than the kernel's (Rosetta on
 *    Apple Silicon: cluster_io_type turns IO_DIRECT into IO_COPY; cluster_read_direct forces
 *    "misaligned").
 * Linux: O_DIRECT needs offsets and lengths aligned to STATX_DIOALIGN, and refuses the rest with
 * EINVAL; the helper moves an unaligned final part through a buffered descriptor. */
#include "sb_policy.h"
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

static sb_uncached_decision sb_decision(enum sb_uncached_how how, uint64_t uncached, uint64_t unit)
{
    sb_uncached_decision d = {.how = how, .uncached_bytes = uncached, .unit_bytes = unit};
    return d;
}

/* The aligned body of a request whose offset is aligned: all of it, or all but a short final part. */
static sb_uncached_decision sb_body(uint64_t len, uint64_t unit)
{
    uint64_t body = len - len % unit;
    return sb_decision(body == len ? SB_UNCACHED_ALL : SB_UNCACHED_BODY, body, unit);
}

sb_uncached_decision sb_policy_request(const sb_uncached_params *p, int is_write, uint64_t offset, uint64_t len)
{
    if (p->fs_honours == 0)
        return sb_decision(SB_CACHED_FS, 0, 0);
    if (p->os == SB_OS_LINUX) {
        uint64_t unit = p->dio_align_bytes ? p->dio_align_bytes : 4096;
        if (offset % unit != 0)
            return sb_decision(SB_CACHED_MISALIGNED, 0, unit);
        return sb_body(len, unit);
    }
    if (p->translated || p->process_page_bytes < p->kernel_page_bytes)
        return sb_decision(SB_CACHED_TRANSLATED, 0, p->kernel_page_bytes);
    if (is_write) {
        uint64_t unit = p->kernel_page_bytes;
        if (len < SB_DARWIN_MIN_DIRECT_WRITE_BYTES)   /* part of a page: cluster_write_copy reads it first */
            return sb_decision(offset % unit || len % unit ? SB_CACHED_SMALL_PARTIAL : SB_CACHED_SMALL, 0, unit);
        if (offset % unit != 0)
            return sb_decision(SB_CACHED_MISALIGNED, 0, unit);
        return sb_body(len, unit);
    }
    uint64_t unit = p->dev_block_bytes ? p->dev_block_bytes : p->kernel_page_bytes;
    if (offset % unit != 0)
        return sb_decision(SB_CACHED_MISALIGNED, 0, unit);
    if (len % unit == 0)
        return sb_decision(SB_UNCACHED_ALL, len, unit);
    /* a length that ends off the device block: the direct part is clipped to the kernel page, the rest
     * read through the cache (cluster_read_direct, vfs_cluster.c 5421-5438: io_size &= ~PAGE_MASK) */
    uint64_t body = len - len % p->kernel_page_bytes;
    return sb_decision(body ? SB_UNCACHED_BODY : SB_CACHED_SMALL_READ, body, unit);
}

uint64_t sb_policy_darwin_device_block(uint64_t given_bytes, uint64_t fs_block_bytes)
{
    if (given_bytes > 0)
        return given_bytes;
    if (fs_block_bytes == 0)
        return SB_DARWIN_DEVICE_BLOCK_ASSUMED_BYTES;
    return fs_block_bytes < SB_DARWIN_DEVICE_BLOCK_ASSUMED_BYTES ? fs_block_bytes : SB_DARWIN_DEVICE_BLOCK_ASSUMED_BYTES;
}

int sb_policy_darwin_fs_honours(const char *fs_type)
{
    static const char *const network[] = {"nfs", "smbfs", "webdav", "afpfs", "ftp"};
    if (strcmp(fs_type, "macfuse") == 0 || strncmp(fs_type, "osxfuse", 7) == 0)
        return 0;
    for (size_t i = 0; i < sizeof network / sizeof network[0]; i++)
        if (strcmp(fs_type, network[i]) == 0)
            return -1;
    return 1;
}

int sb_policy_honoured(enum sb_uncached_how how)
{
    return how == SB_UNCACHED_ALL || how == SB_UNCACHED_BODY;
}

enum sb_uncached_how sb_policy_mixed_how(const sb_uncached_params *p, uint64_t offset, uint64_t len)
{
    enum sb_uncached_how read = sb_policy_request(p, 0, offset, len).how;
    return sb_policy_honoured(read) ? sb_policy_request(p, 1, offset, len).how : read;
}

const char *sb_policy_reason(enum sb_uncached_how how)
{
    switch (how) {
    case SB_CACHED_SMALL: return "writes under 16 KiB go through the page cache on macOS";
    case SB_CACHED_SMALL_PARTIAL: return "writes under 16 KiB go through the page cache on macOS; one that covers part "
                                         "of a kernel page (16 KiB on Apple Silicon) first reads that page unless it "
                                         "is cached, and the sync writes whole pages back";
    case SB_CACHED_SMALL_READ: return "a read shorter than the kernel page that ends off the device block goes "
                                      "through the page cache on macOS";
    case SB_CACHED_MISALIGNED: return "offsets off the kernel's alignment go through the page cache";
    case SB_CACHED_TRANSLATED: return "no uncached I/O under Rosetta: build the helper natively (arm64)";
    case SB_CACHED_FS: return "this file system caches uncached I/O anyway";
    default: return "";
    }
}

uint64_t sb_policy_required_align(const sb_uncached_params *p)
{
    if (p->os == SB_OS_DARWIN)
        return 0;
    return p->dio_align_bytes ? p->dio_align_bytes : 4096;
}

int sb_policy_split_tail(const sb_uncached_params *p)
{
    return p->os == SB_OS_LINUX;
}

uint64_t sb_policy_max_syscall_bytes(enum sb_os os, uint64_t align_bytes)
{
    uint64_t max = os == SB_OS_LINUX ? (uint64_t)0x7ffff000 : (uint64_t)INT_MAX;
    if (align_bytes > 1)
        max -= max % align_bytes;
    return max;
}

uint64_t sb_policy_syscalls(uint64_t len, uint64_t max_bytes)
{
    return len == 0 ? 0 : (len + max_bytes - 1) / max_bytes;
}

double sb_policy_residency(uint64_t size_bytes, uint64_t page_bytes, uint64_t cached_pages, uint64_t *pages,
                           uint64_t *resident)
{
    *pages = (size_bytes + page_bytes - 1) / page_bytes;
    *resident = cached_pages < *pages ? cached_pages : *pages;
    return *pages ? (double)*resident / (double)*pages : 0.0;
}

int sb_policy_fullsync_fallback(int errnum)
{
    /* "not supported here" answers: fall back. An I/O error (EIO) or a full disk is a real failure. */
    return errnum == ENOTSUP || errnum == EOPNOTSUPP || errnum == ENOTTY || errnum == EINVAL || errnum == ENODEV;
}

sb_io_choice sb_policy_io_method(enum sb_os os, enum sb_uring_state uring, unsigned queue_depth, unsigned threads,
                                 enum sb_io_asked asked, int split_tail)
{
    sb_io_choice c = {SB_IO_THREADS, SB_IO_WHY_NONE, SB_IO_RUNS};
    if (asked == SB_IO_ASK_AUTO && queue_depth == 1 && threads == 1) {
        c.method = SB_IO_SYNC;
        return c;
    }
    enum sb_io_why no_ring = os == SB_OS_DARWIN ? SB_IO_WHY_DARWIN
                             : uring == SB_URING_NOT_BUILT ? SB_IO_WHY_NOT_BUILT
                             : uring == SB_URING_REFUSED ? SB_IO_WHY_KERNEL_REFUSED
                             : split_tail ? SB_IO_WHY_SPLIT_TAIL : SB_IO_WHY_NONE;
    if (asked == SB_IO_ASK_URING) {
        c.method = SB_IO_URING;
        c.why = no_ring;
        if (no_ring != SB_IO_WHY_NONE)
            c.refused = SB_IO_REFUSED_URING;
        return c;
    }
    if (asked == SB_IO_ASK_AUTO && no_ring == SB_IO_WHY_NONE) {
        c.method = SB_IO_URING;
        return c;
    }
    if (asked == SB_IO_ASK_AUTO)
        c.why = no_ring;
    if ((uint64_t)queue_depth * threads > SB_MAX_WORKER_THREADS)
        c.refused = SB_IO_REFUSED_WORKERS;
    return c;
}

const char *sb_policy_io_reason(enum sb_io_why why)
{
    switch (why) {
    case SB_IO_WHY_NONE:
        return "";
    case SB_IO_WHY_DARWIN:
        return "macOS has no io_uring";
    case SB_IO_WHY_NOT_BUILT:
        return "the helper was built without liburing";
    case SB_IO_WHY_KERNEL_REFUSED:
        return "the kernel refused to set up an io_uring (too old, seccomp or kernel.io_uring_disabled)";
    case SB_IO_WHY_SPLIT_TAIL:
        return "the last request's unaligned part goes through a second, buffered descriptor, which the ring "
               "does not serve";
    }
    return "";
}

const char *sb_policy_io_name(enum sb_io_method method)
{
    return method == SB_IO_SYNC ? "sync" : method == SB_IO_URING ? "io_uring" : "threads";
}

int sb_policy_page_window(uint64_t offset, uint64_t len, uint64_t size_bytes, uint64_t page_bytes, uint64_t *start,
                          uint64_t *end)
{
    if (!page_bytes || offset >= size_bytes)
        return 0;
    uint64_t stop = len && len < size_bytes - offset ? offset + len : size_bytes;
    *start = offset / page_bytes * page_bytes;
    *end = stop;
    return 1;
}
