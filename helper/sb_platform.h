/* sb_platform.h: what differs between Linux and Apple platforms: uncached
 * descriptors, full syncs, eviction of a file's pages, page-cache residency,
 * file-system facts and the inputs of the uncached-I/O policy (sb_policy.h).
 * Implemented in sb_platform_linux.c and sb_platform_darwin.c. */
#ifndef SB_PLATFORM_H
#define SB_PLATFORM_H
#include <stddef.h>
#include <stdint.h>
#include "sb_err.h"
#include "sb_policy.h"

typedef struct {
    char fs_type[32];           /* ext4, xfs, tmpfs, fuse, apfs, ... */
    uint64_t mem_align_bytes;   /* buffer alignment for direct I/O */
    uint64_t offset_align_bytes;/* offset alignment for uncached reads (Linux: and writes, and lengths) */
    int direct_honoured;        /* 1 uncached, 0 the file system caches anyway, -1 unknown */
    const char *direct_how;     /* O_DIRECT, F_NOCACHE */
} sb_fsinfo;

const char *sb_platform_name(void);
/* The same as the policy's enum (sb_policy.h). */
enum sb_os sb_platform_os(void);
/* Turn an open descriptor uncached: O_DIRECT by fcntl on Linux, F_NOCACHE on Apple. */
int sb_set_uncached(int fd, sb_err *err);
/* The sync `how` asks (an enum sb_sync of sb_job.h): fsync; fdatasync; F_FULLFSYNC or F_BARRIERFSYNC where the
 * platform has them (falling back to fsync where the file system refuses them, sb_policy_fullsync_fallback,
 * and on Linux, which has neither); nothing for dsync, whose writes were synchronous. *used names the sync
 * that was made. */
int sb_sync_fd(int fd, int how, const char **used, sb_err *err);
/* The open flag of a file whose every write is synchronous (sync dsync): O_DSYNC on Linux; O_SYNC on Apple,
 * whose SDK does not declare O_DSYNC and whose kernel treats the two alike. */
int sb_dsync_open_flag(void);
/* Drop a file's cached pages in [offset, offset+len) (len 0: to the end), after syncing it.
 * fd must be open for reading (Apple maps the file; xnu refuses PROT_READ on a write-only fd). */
int sb_evict_fd(int fd, uint64_t offset, uint64_t len, sb_err *err);
/* A file's pages in the page cache: how many the file has and how many are resident; by_cachestat says
 * whether the kernel's count (cachestat, with its dirty pages) or mincore's answered. */
typedef struct {
    uint64_t pages, resident;
    int by_cachestat;
    uint64_t cached, dirty;         /* cachestat's counts of cached and dirty pages (0 where mincore answered) */
} sb_residency;
/* Fraction of the file's pages resident in the page cache, or -1 with err: cachestat's count where the
 * kernel has it (one call), else mincore's (sb_mincore_fd). */
double sb_residency_fd(int fd, sb_residency *r, sb_err *err);
/* The same by mincore on a read-only mapping, on every platform (the residency command's second witness). */
double sb_mincore_fd(int fd, uint64_t *pages, uint64_t *resident, sb_err *err);
/* Page-cache counts of the whole file from cachestat(2) (Linux 6.5+): 0, or -1 where the kernel
 * lacks it (then mincore alone answers). */
int sb_cachestat_fd(int fd, uint64_t *cached_pages, uint64_t *dirty_pages);
/* Facts about the file system holding fd. device_block_bytes: the disk's block size where the caller
 * knows it (diskutil's DeviceBlockSize), else 0; Darwin's uncached-read rule uses it, Linux asks statx. */
void sb_fsinfo_fd(int fd, uint64_t device_block_bytes, sb_fsinfo *info);
/* The inputs of the uncached-I/O policy for the file behind fd (device_block_bytes as above). */
void sb_uncached_params_fd(int fd, uint64_t device_block_bytes, sb_uncached_params *p);
/* 1 the process runs translated (Rosetta), 0 natively, -1 unknown. */
int sb_platform_translated(void);
/* A new file dst (it must not exist) made a copy of src as the platform's own copy makes it: a clone where the
 * file system can (Linux: the FICLONE ioctl, as cp --reflink=auto; Darwin: clonefile(2)), else the bytes (Linux: copy_file_range(2), read and write where the kernel cannot;
 * Darwin: copyfile(3) with COPYFILE_DATA). *cloned is 1 where it cloned; *method names what copied it; buf
 * (buf_len bytes) carries the bytes where nothing else can; *calls counts the calls made. 0, or 1 where dst's folder is missing, or -1 with err. */
int sb_copy_file(const char *src, const char *dst, unsigned char *buf, size_t buf_len, int *cloned,
                 const char **method, uint64_t *calls, sb_err *err);
/* The kernel's page size (Darwin: vm_kernel_page_size; Linux: the page size). */
uint64_t sb_platform_kernel_page_bytes(void);
/* A replay's calls that differ between the platforms (sb_replay.c); each 0 or more, or -1 with errno set. */
/* sync_file_range(2) asking the range's writeback to start (SYNC_FILE_RANGE_WRITE, as a program that syncs as it
 * goes asks); Apple has no such call: fdatasync. */
int sb_sync_range_fd(int fd, uint64_t offset, uint64_t len);
/* syncfs(2) of the file system holding fd; Apple has no such call: the file's own fsync. */
int sb_syncfs_fd(int fd);
/* fallocate(2) of mode 0 (blocks for [offset, offset+len), the size grown to its end); Apple: F_PREALLOCATE of the
 * part past the end, then ftruncate to it. */
int sb_allocate_fd(int fd, uint64_t offset, uint64_t len);
/* The calling thread's timers as precise as the platform allows, for a thread that sleeps until due times
 * (--rate): Linux lets a sleep end up to the thread's timer slack late (50 us by default), which prctl
 * PR_SET_TIMERSLACK sets to 1 ns; Apple's timers have no per-thread slack to set (a no-op). */
void sb_thread_precise_timers(void);
/* posix_fadvise(2)'s advice on [offset, offset+len) (len 0: to the end), advice by Linux's numbers: 0 normal,
 * 1 random, 2 sequential, 3 will need, 4 don't need, 5 no reuse. Apple has no posix_fadvise: random is
 * fcntl(F_RDAHEAD, 0) and normal or sequential F_RDAHEAD 1 (read-ahead off or on for the descriptor), will need
 * fcntl(F_RDADVISE) (a read started, no copy), don't need the range's pages invalidated through a mapping
 * (msync MS_INVALIDATE, as eviction does), no reuse nothing. 0, or -1 with errno set. */
int sb_advise_fd(int fd, uint64_t offset, uint64_t len, int advice);
/* One read of a folder's entries into buf (Linux: getdents64, the bytes it filled; Apple: the folder's names read
 * to its end through a copy of the descriptor, their count). */
long long sb_list_fd(int fd, void *buf, size_t len);
/* Up to len bytes copied from in's position to out's (Linux: copy_file_range, read and write where it cannot;
 * Apple: read and write through buf); the bytes copied. */
long long sb_copy_range_fd(int in, int out, uint64_t len, unsigned char *buf, size_t buf_len);
/* The same by read and write through buf (sb_platform_common.c): Apple's copy, and Linux's where the kernel cannot. */
long long sb_copy_through(int in, int out, uint64_t len, unsigned char *buf, size_t buf_len);
#endif
