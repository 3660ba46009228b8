/* sb_platform_linux.c: Linux: O_DIRECT, fsync, eviction by fsync +
 * posix_fadvise(POSIX_FADV_DONTNEED), statx(STATX_DIOALIGN) and statfs for
 * whether direct I/O is honoured (tmpfs and FUSE accept O_DIRECT and still cache). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sb_platform.h"
#include "sb_job.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif
#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

const char *sb_platform_name(void) { return "linux"; }
enum sb_os sb_platform_os(void) { return SB_OS_LINUX; }

int sb_set_uncached(int fd, sb_err *err)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_DIRECT) != 0)
        return sb_fail(err, errno, "cannot turn on O_DIRECT: %s; the file system may not support direct I/O, "
                       "use --engine buffered", strerror(errno));
    return 0;
}

int sb_sync_fd(int fd, int how, const char **used, sb_err *err)
{
    if (how == SB_SYNC_DSYNC) {             /* every write was synchronous (O_DSYNC): nothing left to sync */
        *used = "O_DSYNC";
        return 0;
    }
    if (how == SB_SYNC_DATA) {
        *used = "fdatasync";
        if (fdatasync(fd) != 0)
            return sb_fail(err, errno, "fdatasync: %s", strerror(errno));
        return 0;
    }
    /* F_FULLFSYNC and F_BARRIERFSYNC are Apple's; fsync on Linux already asks the device to flush its cache */
    *used = "fsync";
    if (fsync(fd) != 0)
        return sb_fail(err, errno, "fsync: %s", strerror(errno));
    return 0;
}

int sb_dsync_open_flag(void) { return O_DSYNC; }

int sb_evict_fd(int fd, uint64_t offset, uint64_t len, sb_err *err)
{
    if (fsync(fd) != 0 && errno != EINVAL && errno != EBADF)
        return sb_fail(err, errno, "fsync before eviction: %s", strerror(errno));
    int rc = posix_fadvise(fd, (off_t)offset, (off_t)len, POSIX_FADV_DONTNEED);
    if (rc != 0)
        return sb_fail(err, rc, "posix_fadvise(DONTNEED): %s", strerror(rc));
    return 0;
}

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct sb_cachestat_range { uint64_t off, len; };
struct sb_cachestat { uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted; };

int sb_cachestat_fd(int fd, uint64_t *cached_pages, uint64_t *dirty_pages)
{
    struct sb_cachestat_range range = {0, 0};   /* len 0: to the end of the file */
    struct sb_cachestat cs;
    memset(&cs, 0, sizeof cs);
    if (syscall(__NR_cachestat, fd, &range, &cs, 0) != 0)
        return -1;
    *cached_pages = cs.nr_cache;
    *dirty_pages = cs.nr_dirty;
    return 0;
}

static const char *sb_fs_name(long magic)
{
    switch ((unsigned long)magic) {
    case EXT4_SUPER_MAGIC: return "ext4";
    case 0x58465342: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case TMPFS_MAGIC: return "tmpfs";
    case RAMFS_MAGIC: return "ramfs";
    case FUSE_SUPER_MAGIC: return "fuse";
    case OVERLAYFS_SUPER_MAGIC: return "overlay";
    case NFS_SUPER_MAGIC: return "nfs";
    case 0x2fc12fc1: return "zfs";
    case 0xf2f52010: return "f2fs";
    case MSDOS_SUPER_MAGIC: return "vfat";
    case 0x5346544e: return "ntfs";
    default: return NULL;
    }
}

int sb_platform_translated(void) { return 0; }

uint64_t sb_platform_kernel_page_bytes(void) { return (uint64_t)sysconf(_SC_PAGESIZE); }

void sb_uncached_params_fd(int fd, uint64_t device_block_bytes, sb_uncached_params *p)
{
    sb_fsinfo info;
    sb_fsinfo_fd(fd, device_block_bytes, &info);
    uint64_t page = sb_platform_kernel_page_bytes();
    *p = (sb_uncached_params){.os = SB_OS_LINUX, .kernel_page_bytes = page, .process_page_bytes = page,
                              .dev_block_bytes = info.offset_align_bytes, .dio_align_bytes = info.offset_align_bytes,
                              .translated = 0, .fs_honours = info.direct_honoured};
}

void sb_fsinfo_fd(int fd, uint64_t device_block_bytes, sb_fsinfo *info)
{
    (void)device_block_bytes;   /* statx answers the alignment here */
    memset(info, 0, sizeof *info);
    info->direct_how = "O_DIRECT";
    info->direct_honoured = -1;
    info->mem_align_bytes = info->offset_align_bytes = 4096;
    long magic = 0;
    struct statfs sfs;
    if (fstatfs(fd, &sfs) == 0) {
        magic = (long)sfs.f_type;
        const char *name = sb_fs_name(magic);
        if (name)
            snprintf(info->fs_type, sizeof info->fs_type, "%s", name);
        else
            snprintf(info->fs_type, sizeof info->fs_type, "0x%lx", (unsigned long)magic);
    }
    struct statx stx;
    memset(&stx, 0, sizeof stx);
    long rc = syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx);
    int dio_known = rc == 0 && (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align != 0;
    if (dio_known) {
        info->mem_align_bytes = stx.stx_dio_mem_align;
        info->offset_align_bytes = stx.stx_dio_offset_align;
    }
    /* tmpfs and ramfs keep every file in memory. A FUSE client sends an O_DIRECT request to its server, past
     * its own page cache (the address space's direct_IO, fuse_direct_IO in fs/fuse/file.c; measured: sshfs
     * without its direct_io option read 8 MiB O_DIRECT over a 20 MB/s link at 19.2 MB/s, tests/hosts.py), so
     * whether a read meets memory is the server's affair, which this machine cannot see: unknown, as a
     * network file system's. */
    if ((unsigned long)magic == TMPFS_MAGIC || (unsigned long)magic == RAMFS_MAGIC)
        info->direct_honoured = 0;
    else if ((unsigned long)magic == FUSE_SUPER_MAGIC)
        info->direct_honoured = -1;
    else if (dio_known)
        info->direct_honoured = 1;
}

/* The bytes of in to out by read and write (where copy_file_range cannot: another file system, an old kernel). */
static int sb_copy_bytes(int in, int out, const char *src, unsigned char *buf, size_t buf_len, uint64_t *calls,
                         sb_err *err)
{
    for (;;) {
        ssize_t k = read(in, buf, buf_len);
        (*calls)++;
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return sb_fail(err, errno, "cannot read %s: %s", src, strerror(errno));
        if (k == 0)
            return 0;
        for (ssize_t done = 0; done < k;) {
            ssize_t w = write(out, buf + done, (size_t)(k - done));
            (*calls)++;
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return sb_fail(err, w < 0 ? errno : EIO, "cannot write the copy of %s: %s", src,
                               strerror(w < 0 ? errno : EIO));
            done += w;
        }
    }
}

int sb_copy_file(const char *src, const char *dst, unsigned char *buf, size_t buf_len, int *cloned,
                 const char **method, uint64_t *calls, sb_err *err)
{
    *cloned = 0;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    *calls += 3;                            /* the two opens and the clone's ioctl (or the failed open) */
    if (in < 0)
        return sb_fail(err, errno, "cannot open %s: %s", src, strerror(errno));
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        int errnum = errno;
        close(in);
        if (errnum == ENOENT)
            return 1;                       /* dst's folder is missing: the caller makes it */
        return sb_fail(err, errnum, "cannot create the copy %s: %s", dst, strerror(errnum));
    }
    int rc = 0;
    *calls += 2;                            /* the two closes */
    if (ioctl(out, FICLONE, in) == 0) {     /* a reflink: the copy shares the source's blocks */
        *cloned = 1;
        *method = "FICLONE";
    } else {
        *method = "copy_file_range";
        for (int first = 1;; first = 0) {
            ssize_t k = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
            (*calls)++;
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0 && first && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
                *method = "read/write";
                rc = sb_copy_bytes(in, out, src, buf, buf_len, calls, err);
                break;
            }
            if (k < 0) {
                rc = sb_fail(err, errno, "cannot copy %s: %s", src, strerror(errno));
                break;
            }
            if (k == 0)
                break;
        }
    }
    close(in);
    if (close(out) != 0 && rc == 0)
        rc = sb_fail(err, errno, "cannot close the copy of %s: %s", src, strerror(errno));
    return rc;
}

int sb_sync_range_fd(int fd, uint64_t offset, uint64_t len)
{
    return sync_file_range(fd, (off_t)offset, (off_t)len, SYNC_FILE_RANGE_WRITE);
}

int sb_syncfs_fd(int fd) { return syncfs(fd); }

int sb_allocate_fd(int fd, uint64_t offset, uint64_t len)
{
    return fallocate(fd, 0, (off_t)offset, (off_t)len);
}

void sb_thread_precise_timers(void)
{
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

int sb_advise_fd(int fd, uint64_t offset, uint64_t len, int advice)
{
    static const int advices[] = {POSIX_FADV_NORMAL,   POSIX_FADV_RANDOM,   POSIX_FADV_SEQUENTIAL,
                                  POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE};
    if (advice < 0 || advice > 5) {
        errno = EINVAL;
        return -1;
    }
    int rc = posix_fadvise(fd, (off_t)offset, (off_t)len, advices[advice]);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

long long sb_list_fd(int fd, void *buf, size_t len)
{
    return (long long)syscall(SYS_getdents64, fd, buf, len);
}

long long sb_copy_range_fd(int in, int out, uint64_t len, unsigned char *buf, size_t buf_len)
{
    uint64_t done = 0;
    while (done < len) {
        ssize_t k = copy_file_range(in, NULL, out, NULL, (size_t)(len - done), 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && done == 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
            return sb_copy_through(in, out, len, buf, buf_len);     /* across file systems, or a kernel without it */
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        done += (uint64_t)k;
    }
    return (long long)done;
}
