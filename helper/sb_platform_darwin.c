/* sb_platform_darwin.c: Apple platforms: F_NOCACHE, F_FULLFSYNC, eviction by
 * fsync + mmap + msync(MS_INVALIDATE) (as fio does: F_NOCACHE does not evict pages
 * that are already cached), statfs for the file-system name. */
#include "sb_platform.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sb_platform_name(void) { return "darwin"; }

int sb_open_flags_direct(void) { return 0; }

int sb_set_uncached(int fd, sb_err *err)
{
    if (fcntl(fd, F_NOCACHE, 1) != 0)
        return sb_fail(err, errno, "fcntl(F_NOCACHE): %s", strerror(errno));
    return 0;
}

int sb_sync_fd(int fd, int full, sb_err *err)
{
    if (full) {
        if (fcntl(fd, F_FULLFSYNC) != 0)
            return sb_fail(err, errno, "fcntl(F_FULLFSYNC): %s", strerror(errno));
        return 0;
    }
    if (fsync(fd) != 0)
        return sb_fail(err, errno, "fsync: %s", strerror(errno));
    return 0;
}

int sb_evict_fd(int fd, uint64_t offset, uint64_t len, sb_err *err)
{
    struct stat st;
    if (fsync(fd) != 0)
        return sb_fail(err, errno, "fsync before eviction: %s", strerror(errno));
    if (fstat(fd, &st) != 0)
        return sb_fail(err, errno, "fstat: %s", strerror(errno));
    if (st.st_size == 0 || offset >= (uint64_t)st.st_size)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    uint64_t start = offset / (uint64_t)page * (uint64_t)page;
    uint64_t end = len ? offset + len : (uint64_t)st.st_size;
    if (end > (uint64_t)st.st_size)
        end = (uint64_t)st.st_size;
    void *map = mmap(NULL, (size_t)(end - start), PROT_READ, MAP_SHARED, fd, (off_t)start);
    if (map == MAP_FAILED)
        return sb_fail(err, errno, "mmap for eviction: %s", strerror(errno));
    int rc = msync(map, (size_t)(end - start), MS_INVALIDATE);
    int saved = errno;
    munmap(map, (size_t)(end - start));
    if (rc != 0)
        return sb_fail(err, saved, "msync(MS_INVALIDATE): %s", strerror(saved));
    return 0;
}

int sb_cachestat_fd(int fd, uint64_t *cached_pages, uint64_t *dirty_pages)
{
    (void)fd;
    *cached_pages = *dirty_pages = 0;
    return -1; /* no cachestat on Apple platforms: mincore answers */
}

void sb_fsinfo_fd(int fd, sb_fsinfo *info)
{
    memset(info, 0, sizeof *info);
    info->direct_how = "F_NOCACHE";
    long page = sysconf(_SC_PAGESIZE);
    info->mem_align_bytes = info->offset_align_bytes = (uint64_t)page;
    info->direct_honoured = 1;
    struct statfs sfs;
    if (fstatfs(fd, &sfs) == 0) {
        snprintf(info->fs_type, sizeof info->fs_type, "%s", sfs.f_fstypename);
        if (strcmp(sfs.f_fstypename, "macfuse") == 0 || strncmp(sfs.f_fstypename, "osxfuse", 7) == 0)
            info->direct_honoured = 0;
    }
}
