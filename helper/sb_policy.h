/* sb_policy.h: the platform decisions of uncached I/O as pure functions of their
 * inputs (no system calls), so that the Apple rules are unit-tested on Linux with
 * the parameters of Intel Macs (4 KiB pages) and Apple Silicon (16 KiB pages).
 * Sources of each rule: docs/platforms.md. */
#ifndef SB_POLICY_H
#define SB_POLICY_H
#include <stdint.h>

enum sb_os { SB_OS_LINUX, SB_OS_DARWIN };

/* What decides whether a request bypasses the page cache. */
typedef struct {
    enum sb_os os;
    uint64_t kernel_page_bytes;  /* Darwin: vm_kernel_page_size (16 KiB on Apple Silicon, 4 KiB on Intel) */
    uint64_t process_page_bytes; /* the process's page size: 4 KiB under Rosetta on a 16 KiB kernel */
    uint64_t dev_block_bytes;    /* Darwin: the device's block size (sb_policy_darwin_device_block) */
    uint64_t dio_align_bytes;    /* Linux: statx STATX_DIOALIGN offset alignment (or 4096 when unknown) */
    int translated;              /* Darwin: the process runs under Rosetta (sysctl.proc_translated) */
    int fs_honours;              /* 1 the file system honours uncached I/O, 0 it caches anyway, -1 unknown */
} sb_uncached_params;

/* How one request of the direct engine goes. */
enum sb_uncached_how {
    SB_UNCACHED_ALL,          /* every byte bypasses the page cache */
    SB_UNCACHED_BODY,         /* the aligned body does; the final part shorter than `unit` goes through the cache */
    SB_CACHED_SMALL,          /* Darwin: a write under 16 KiB is copied into the page cache */
    SB_CACHED_MISALIGNED,     /* Darwin: an offset off the required alignment sends the request through the cache */
    SB_CACHED_TRANSLATED,     /* Darwin: no direct I/O for a 4 KiB-page process on a 16 KiB kernel */
    SB_CACHED_FS,             /* the file system caches whatever it is asked (tmpfs, FUSE) */
    SB_CACHED_SMALL_READ,     /* Darwin: a read under a kernel page whose length ends off the device block */
    SB_CACHED_SMALL_PARTIAL,  /* Darwin: a write under 16 KiB that covers part of a kernel page: the page is read
                               * first unless cached, and the sync writes it back whole */
};

typedef struct {
    enum sb_uncached_how how;
    uint64_t uncached_bytes;  /* bytes of the request that bypass the cache */
    uint64_t unit_bytes;      /* the alignment unit the decision used */
} sb_uncached_decision;

/* Darwin: the smallest write that may bypass the cache (xnu bsd/vfs/vfs_cluster.c MIN_DIRECT_WRITE_SIZE). */
#define SB_DARWIN_MIN_DIRECT_WRITE_BYTES ((uint64_t)16384)

/* Darwin: what a device block is assumed to be where the disk's own is not known: no disk a Mac
 * mounts has larger blocks, and stibium's offsets are multiples of it. */
#define SB_DARWIN_DEVICE_BLOCK_ASSUMED_BYTES ((uint64_t)4096)

/* Darwin: the device block size that xnu's uncached-read rule uses (mnt_devblocksize, from the disk's
 * DKIOCGETBLOCKSIZE, which an unprivileged process cannot ask): the caller's (diskutil's
 * DeviceBlockSize) when given, else the file system's statfs f_bsize capped at 4096. f_bsize is the
 * allocation unit, never smaller than the device block (4096 on APFS), but the cluster size on FAT and
 * exFAT (32-128 KiB: msdosfs_vfsops.c 983, 1185), where it would call every 4 KiB read cached. */
uint64_t sb_policy_darwin_device_block(uint64_t given_bytes, uint64_t fs_block_bytes);

/* Darwin: whether a file system honours F_NOCACHE, from statfs f_fstypename: 0 for macFUSE (it caches
 * whatever it is asked), -1 unknown for network file systems (nfs, smbfs, webdav, afpfs: the server and
 * the client's own caches are out of xnu's cluster layer; FUSE-T mounts as nfs), 1 for local ones. */
int sb_policy_darwin_fs_honours(const char *fs_type);

/* Whether the request (offset, len) of a read or write bypasses the page cache. */
sb_uncached_decision sb_policy_request(const sb_uncached_params *p, int is_write, uint64_t offset, uint64_t len);

/* A request of a mixed measurement, which reads in some passes and writes in others: how it goes as a read
 * and as a write, the first that does not bypass the cache (the read's first), or the read's where both do.
 * xnu judges the two by different rules (sb_policy_request): on a Mac a 4 KiB read is uncached and a 4 KiB
 * write is not, so such a mix is honoured by neither. */
enum sb_uncached_how sb_policy_mixed_how(const sb_uncached_params *p, uint64_t offset, uint64_t len);

/* A request whose how is ALL or BODY is honoured; anything else is not. */
int sb_policy_honoured(enum sb_uncached_how how);

/* One line for a row: why a request went through the cache ("" when it did not). */
const char *sb_policy_reason(enum sb_uncached_how how);

/* The alignment the platform refuses to break (Linux O_DIRECT answers EINVAL), so that the
 * helper refuses it before the timer; 0 where misaligned requests are accepted and merely
 * cached (Darwin's F_NOCACHE never refuses). */
uint64_t sb_policy_required_align(const sb_uncached_params *p);

/* Whether a direct request's unaligned final part must go through a second, buffered
 * descriptor (Linux O_DIRECT cannot move it); Darwin's kernel copies it through the cache itself. */
int sb_policy_split_tail(const sb_uncached_params *p);

/* The largest transfer one read or write system call makes, rounded down to `align_bytes` so
 * that the next call of a long request stays aligned: Linux MAX_RW_COUNT (0x7ffff000),
 * Darwin INT_MAX (xnu bsd/kern/sys_generic.c refuses a larger nbyte with EINVAL). */
uint64_t sb_policy_max_syscall_bytes(enum sb_os os, uint64_t align_bytes);

/* How many system calls a request of len bytes takes at most max_bytes per call. */
uint64_t sb_policy_syscalls(uint64_t len, uint64_t max_bytes);

/* A file's residency from a count of its cached pages: *pages is the file's size in pages of page_bytes
 * (rounded up: the last page is partly the file's), *resident the count, at most *pages; the fraction
 * returned is 0 for an empty file. page_bytes is the process's page, one byte of mincore's vector each:
 * 16 KiB for a native process on Apple Silicon, 4 KiB on Intel Macs, under Rosetta and on Linux here (xnu
 * bsd/kern/kern_mman.c 1558-1571, mincore: the map's page size where smaller than the kernel's, else PAGE_SIZE). */
double sb_policy_residency(uint64_t size_bytes, uint64_t page_bytes, uint64_t cached_pages, uint64_t *pages,
                           uint64_t *resident);

/* A full sync (F_FULLFSYNC) that failed with errnum falls back to fsync, as SQLite's
 * full_fsync does (some file systems refuse the command): 1 to fall back, 0 to fail. */
int sb_policy_fullsync_fallback(int errnum);

/* Requests in flight: how a measurement with a queue depth and threads moves its requests. */
#define SB_MAX_QUEUE_DEPTH 256
#define SB_MAX_THREADS 64
/* The threads method runs one thread per request in flight; xnu refuses a task's thread beyond
 * task_threadmax (osfmk/kern/thread.c): CONFIG_THREAD_MAX = 2560 in the "medium" configuration Macs are
 * built with (config/MASTER), set by osfmk/kern/startup.c to task_max on machines with 3 GB or more
 * (1024 x 2 below 8 GB, so 2048 at the least). The helper stays at 1024, well under it. */
#define SB_MAX_WORKER_THREADS 1024

enum sb_io_method { SB_IO_SYNC, SB_IO_URING, SB_IO_THREADS };
enum sb_io_asked { SB_IO_ASK_AUTO, SB_IO_ASK_URING, SB_IO_ASK_THREADS };
enum sb_uring_state { SB_URING_NOT_BUILT, SB_URING_AVAILABLE, SB_URING_REFUSED };

/* Why the method is not io_uring (NONE: it is, or the method asked for was used). */
enum sb_io_why {
    SB_IO_WHY_NONE,             /* the method asked for, or io_uring chosen */
    SB_IO_WHY_DARWIN,           /* macOS has no io_uring */
    SB_IO_WHY_NOT_BUILT,        /* built without liburing */
    SB_IO_WHY_KERNEL_REFUSED,   /* the kernel refused to set up a ring (old kernel, seccomp, sysctl) */
    SB_IO_WHY_SPLIT_TAIL,       /* a direct request needs the second, buffered descriptor */
};

enum sb_io_refusal {
    SB_IO_RUNS,                 /* the measurement can run */
    SB_IO_REFUSED_URING,        /* io_uring asked for and not available (why says why) */
    SB_IO_REFUSED_WORKERS,      /* the threads method would need more than SB_MAX_WORKER_THREADS threads */
};

typedef struct {
    enum sb_io_method method;
    enum sb_io_why why;
    enum sb_io_refusal refused;
} sb_io_choice;

/* The method of a measurement with queue_depth requests in flight per thread and `threads`
 * threads: one at a time on the calling thread when both are 1 (and nothing else was asked);
 * io_uring on Linux where it is built and the kernel sets up a ring; one thread per request in
 * flight otherwise (always on macOS). split_tail: a direct request must go through the second,
 * buffered descriptor (Linux, an unaligned final part), which the ring does not handle. */
sb_io_choice sb_policy_io_method(enum sb_os os, enum sb_uring_state uring, unsigned queue_depth, unsigned threads,
                                 enum sb_io_asked asked, int split_tail);

/* The part of a file that an eviction or a DONTNEED advice covers on macOS, where both map it and invalidate the
 * mapping (msync MS_INVALIDATE over an mmap, whose offset must be a multiple of the page): the bytes
 * [offset, offset + len) (len 0: to the end of the file) widened down to the page that holds `offset` and cut at
 * the file's size. Returns 0 where nothing is left to cover (offset at or past the end), else 1 with *start and
 * *end set. Pure: tested with 4 KiB (Intel) and 16 KiB (Apple Silicon) pages. */
int sb_policy_page_window(uint64_t offset, uint64_t len, uint64_t size_bytes, uint64_t page_bytes, uint64_t *start,
                          uint64_t *end);

/* One line for a row: why the method is not io_uring ("" when there is nothing to say). */
const char *sb_policy_io_reason(enum sb_io_why why);
/* The method's name in a row: sync, io_uring, threads. */
const char *sb_policy_io_name(enum sb_io_method method);
#endif
