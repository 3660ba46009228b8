/* sb_platform_darwin.c: Apple platforms: F_NOCACHE, F_FULLFSYNC (with fsync where the
 * file system refuses it), eviction by fsync + mmap + msync(MS_INVALIDATE) (as fio does:
 * F_NOCACHE does not evict pages that are already cached), statfs for the file system (and, where the
 * caller does not know the disk's block size, its allocation block: sb_policy_darwin_device_block),
 * vm_kernel_page_size and sysctl.proc_translated for the uncached-I/O policy.
 * Sources (xnu): F_NOCACHE, F_FULLFSYNC and F_BARRIERFSYNC bsd/kern/kern_descrip.c (fcntl); fdatasync
 * bsd/vfs/vfs_syscalls.c; O_DSYNC as O_SYNC bsd/vfs/vfs_vnops.c (vn_write); mmap PROT_READ
 * needs a descriptor open for reading bsd/kern/kern_mman.c; proc_translated
 * bsd/kern/kern_sysctl.c. docs/platforms.md says what each means for a measurement.
 * No machine of the project runs this file; CI compiles it against declarations written from
 * Apple's open-source headers (helper/darwin-check). */
#include "sb_platform.h"
#include "sb_policy.h"
#include "sb_job.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mach/vm_page_size.h>
#include <stdio.h>
#include <string.h>
#include <copyfile.h>
#include <dirent.h>
#include <sys/clonefile.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysctl.h>
#include <unistd.h>

const char *sb_platform_name(void) { return "darwin"; }
enum sb_os sb_platform_os(void) { return SB_OS_DARWIN; }

int sb_set_uncached(int fd, sb_err *err)
{
    if (fcntl(fd, F_NOCACHE, 1) != 0)
        return sb_fail(err, errno, "fcntl(F_NOCACHE): %s", strerror(errno));
    return 0;
}

/* fdatasync is a system call of xnu (bsd/vfs/vfs_syscalls.c: fsync_common with MNT_DWAIT, data integrity,
 * where fsync asks MNT_WAIT, file integrity) that libSystem exports (_fdatasync) but the SDK's unistd.h does
 * not declare. */
int fdatasync(int fd);

int sb_sync_fd(int fd, int how, const char **used, sb_err *err)
{
    if (how == SB_SYNC_DSYNC) {             /* every write was synchronous (O_SYNC): nothing left to sync */
        *used = "O_SYNC";
        return 0;
    }
    if (how == SB_SYNC_DATA) {
        *used = "fdatasync";
        if (fdatasync(fd) != 0)
            return sb_fail(err, errno, "fdatasync: %s", strerror(errno));
        return 0;
    }
    if (how == SB_SYNC_FULL || how == SB_SYNC_BARRIER) {
        /* both go to the file system's VNOP_IOCTL (bsd/kern/kern_descrip.c, fcntl); one that lacks them refuses */
        int cmd = how == SB_SYNC_FULL ? F_FULLFSYNC : F_BARRIERFSYNC;
        const char *name = how == SB_SYNC_FULL ? "F_FULLFSYNC" : "F_BARRIERFSYNC";
        if (fcntl(fd, cmd) == 0) {
            *used = name;
            return 0;
        }
        int e = errno;
        if (!sb_policy_fullsync_fallback(e))
            return sb_fail(err, e, "fcntl(%s): %s", name, strerror(e));
        *used = how == SB_SYNC_FULL ? "fsync (F_FULLFSYNC refused)" : "fsync (F_BARRIERFSYNC refused)";
    } else {
        *used = "fsync";
    }
    if (fsync(fd) != 0)
        return sb_fail(err, errno, "fsync: %s", strerror(errno));
    return 0;
}

/* xnu's vn_write treats O_DSYNC as O_FSYNC (O_SYNC): both make every write IO_SYNC (bsd/vfs/vfs_vnops.c, the
 * comment "We treat O_DSYNC as O_FSYNC for now"); the SDK's sys/fcntl.h does not declare O_DSYNC. */
int sb_dsync_open_flag(void) { return O_SYNC; }

/* Map [start, end) of the file and invalidate the mapping: msync turns MS_INVALIDATE into VM_SYNC_INVALIDATE and
 * hands the range to mach_vm_msync, which drops the file's resident pages there (xnu-11417.101.15,
 * bsd/kern/kern_mman.c, msync_nocancel; mmap there checks the file offset against the map's page mask,
 * vm_map_page_mask, hence sb_policy_page_window). Returns 0, or -1 with errno set; *what names the call that
 * failed. */
static int sb_invalidate(int fd, uint64_t start, uint64_t end, const char **what)
{
    void *map = mmap(NULL, (size_t)(end - start), PROT_READ, MAP_SHARED, fd, (off_t)start);
    if (map == MAP_FAILED) {
        *what = "mmap for eviction";
        return -1;
    }
    int rc = msync(map, (size_t)(end - start), MS_INVALIDATE);
    int saved = errno;
    munmap(map, (size_t)(end - start));
    errno = saved;
    *what = "msync(MS_INVALIDATE)";
    return rc;
}

int sb_evict_fd(int fd, uint64_t offset, uint64_t len, sb_err *err)
{
    struct stat st;
    if (fsync(fd) != 0)
        return sb_fail(err, errno, "fsync before eviction: %s", strerror(errno));
    if (fstat(fd, &st) != 0)
        return sb_fail(err, errno, "fstat: %s", strerror(errno));
    uint64_t start, end;
    if (!sb_policy_page_window(offset, len, (uint64_t)st.st_size, (uint64_t)sysconf(_SC_PAGESIZE), &start, &end))
        return 0;
    const char *what = "";
    if (sb_invalidate(fd, start, end, &what) != 0)
        return sb_fail(err, errno, "%s: %s", what, strerror(errno));
    return 0;
}

int sb_cachestat_fd(int fd, uint64_t *cached_pages, uint64_t *dirty_pages)
{
    (void)fd;
    *cached_pages = *dirty_pages = 0;
    return -1; /* no cachestat on Apple platforms: mincore answers */
}

int sb_platform_translated(void)
{
    int translated = 0;
    size_t size = sizeof translated;
    if (sysctlbyname("sysctl.proc_translated", &translated, &size, NULL, 0) != 0)
        return errno == ENOENT ? 0 : -1;   /* ENOENT: a system without Rosetta, so native */
    return translated ? 1 : 0;
}

uint64_t sb_platform_kernel_page_bytes(void) { return (uint64_t)vm_kernel_page_size; }

void sb_fsinfo_fd(int fd, uint64_t device_block_bytes, sb_fsinfo *info)
{
    memset(info, 0, sizeof *info);
    info->direct_how = "F_NOCACHE";
    long page = sysconf(_SC_PAGESIZE);
    info->mem_align_bytes = (uint64_t)page;
    info->offset_align_bytes = sb_policy_darwin_device_block(device_block_bytes, 0);
    info->direct_honoured = -1;
    struct statfs sfs;
    if (fstatfs(fd, &sfs) == 0) {
        snprintf(info->fs_type, sizeof info->fs_type, "%s", sfs.f_fstypename);
        info->offset_align_bytes = sb_policy_darwin_device_block(device_block_bytes, (uint64_t)sfs.f_bsize);
        info->direct_honoured = sb_policy_darwin_fs_honours(sfs.f_fstypename);
    }
}

void sb_uncached_params_fd(int fd, uint64_t device_block_bytes, sb_uncached_params *p)
{
    sb_fsinfo info;
    sb_fsinfo_fd(fd, device_block_bytes, &info);
    int translated = sb_platform_translated();
    *p = (sb_uncached_params){.os = SB_OS_DARWIN, .kernel_page_bytes = sb_platform_kernel_page_bytes(),
                              .process_page_bytes = (uint64_t)sysconf(_SC_PAGESIZE),
                              .dev_block_bytes = info.offset_align_bytes, .dio_align_bytes = 0,
                              .translated = translated == 1, .fs_honours = info.direct_honoured};
}

int sb_copy_file(const char *src, const char *dst, unsigned char *buf, size_t buf_len, int *cloned,
                 const char **method, uint64_t *calls, sb_err *err)
{
    (void)buf;
    (void)buf_len;
    *cloned = 0;
    (*calls)++;                             /* clonefile */
    /* clonefile(2) makes dst share src's blocks where the file system can clone (APFS). It fails with ENOTSUP
     * where the file system does not support it and EXDEV where src and dst are on different volumes (xnu
     * bsd/man/man2/clonefile.2, ERRORS; clonefile_internal in bsd/vfs/vfs_syscalls.c returns EXDEV when the
     * two vnodes' mounts differ, EEXIST when dst is there), and then the bytes are copied */
    if (clonefile(src, dst, CLONE_NOFOLLOW) == 0) {
        *cloned = 1;
        *method = "clonefile";
        return 0;
    }
    if (errno == ENOENT)
        return 1;                           /* dst's folder is missing (or src is): the caller makes it */
    if (errno != ENOTSUP && errno != EXDEV)
        return sb_fail(err, errno, "cannot clone %s to %s: %s", src, dst, strerror(errno));
    *method = "copyfile";
    (*calls)++;
    if (copyfile(src, dst, NULL, COPYFILE_DATA | COPYFILE_EXCL) != 0)
        return sb_fail(err, errno, "cannot copy %s: %s", src, strerror(errno));
    return 0;
}

/* macOS has neither sync_file_range nor syncfs: xnu's table of system calls (bsd/kern/syscalls.master, xnu-11417.101.15)
 * has sync, fsync and fdatasync (187) and neither of them. The nearest call each. */
int sb_sync_range_fd(int fd, uint64_t offset, uint64_t len)
{
    (void)offset;
    (void)len;
    return fdatasync(fd);
}

int sb_syncfs_fd(int fd) { return fsync(fd); }

int sb_allocate_fd(int fd, uint64_t offset, uint64_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    off_t end = (off_t)(offset + len);
    if (end <= st.st_size)
        return 0;
    fstore_t store = {.fst_flags = F_ALLOCATEALL, .fst_posmode = F_PEOFPOSMODE, .fst_offset = 0,
                      .fst_length = end - st.st_size};
    if (fcntl(fd, F_PREALLOCATE, &store) != 0)
        return -1;
    return ftruncate(fd, end);
}

void sb_thread_precise_timers(void) {}

/* xnu-11417.101.15 bsd/kern/kern_descrip.c: F_RDAHEAD sets or clears FNORDAHEAD on the descriptor; F_RDADVISE
 * hands a struct radvisory (bsd/sys/fcntl.h: off_t ra_offset, int ra_count) to the file system's VNOP_IOCTL. */
int sb_advise_fd(int fd, uint64_t offset, uint64_t len, int advice)
{
    struct stat st;
    switch (advice) {
    case 0:
    case 2:
        return fcntl(fd, F_RDAHEAD, 1) < 0 ? -1 : 0;
    case 1:
        return fcntl(fd, F_RDAHEAD, 0) < 0 ? -1 : 0;
    case 3: {
        if (fstat(fd, &st) != 0)
            return -1;
        uint64_t end = len ? offset + len : (uint64_t)st.st_size;
        if (end > (uint64_t)st.st_size)
            end = (uint64_t)st.st_size;
        if (end <= offset)
            return 0;
        struct radvisory ra = {.ra_offset = (off_t)offset,
                               .ra_count = end - offset > INT_MAX ? INT_MAX : (int)(end - offset)};
        return fcntl(fd, F_RDADVISE, &ra) < 0 ? -1 : 0;
    }
    case 4: {
        if (fstat(fd, &st) != 0)
            return -1;
        uint64_t start, end;
        const char *what = "";
        if (!sb_policy_page_window(offset, len, (uint64_t)st.st_size, (uint64_t)sysconf(_SC_PAGESIZE), &start, &end))
            return 0;
        return sb_invalidate(fd, start, end, &what);
    }
    case 5:
        return 0;
    }
    errno = EINVAL;
    return -1;
}

long long sb_list_fd(int fd, void *buf, size_t len)
{
    (void)buf;
    (void)len;
    int copy = dup(fd);
    if (copy < 0)
        return -1;
    DIR *d = fdopendir(copy);
    if (!d) {
        close(copy);
        return -1;
    }
    long long names = 0;
    while (readdir(d) != NULL)
        names++;
    closedir(d);
    return names;
}

long long sb_copy_range_fd(int in, int out, uint64_t len, unsigned char *buf, size_t buf_len)
{
    return sb_copy_through(in, out, len, buf, buf_len);
}
