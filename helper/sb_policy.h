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
    uint64_t dev_block_bytes;    /* Darwin: statfs f_bsize of the file system (4096 on APFS) */
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
};

typedef struct {
    enum sb_uncached_how how;
    uint64_t uncached_bytes;  /* bytes of the request that bypass the cache */
    uint64_t unit_bytes;      /* the alignment unit the decision used */
} sb_uncached_decision;

/* Darwin: the smallest write that may bypass the cache (xnu bsd/vfs/vfs_cluster.c MIN_DIRECT_WRITE_SIZE). */
#define SB_DARWIN_MIN_DIRECT_WRITE_BYTES ((uint64_t)16384)

/* Whether the request (offset, len) of a read or write bypasses the page cache. */
sb_uncached_decision sb_policy_request(const sb_uncached_params *p, int is_write, uint64_t offset, uint64_t len);

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

/* A full sync (F_FULLFSYNC) that failed with errnum falls back to fsync, as SQLite's
 * full_fsync does (some file systems refuse the command): 1 to fall back, 0 to fail. */
int sb_policy_fullsync_fallback(int errnum);
#endif
