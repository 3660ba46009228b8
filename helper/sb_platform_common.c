/* sb_platform_common.c: page-cache residency. The kernel's own count by cachestat(2) where it
 * answers (Linux 6.5+): one call that walks only the cached pages. Else (macOS, older Linux) mincore()
 * on a read-only mmap of the file (the vector type differs between the two), which looks up every
 * page of the file: 2.7 ms for 64 MiB on this project's machines, cached or not, paid before every
 * read and twice in every eviction. */
#include "sb_platform.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file's size in bytes and the process's page size; -1 with err where fstat fails. */
static int sb_file_size(int fd, size_t *size, size_t *page, sb_err *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return sb_fail(err, errno, "fstat: %s", strerror(errno));
    *size = (size_t)st.st_size;
    *page = (size_t)sysconf(_SC_PAGESIZE);
    return 0;
}

double sb_mincore_fd(int fd, uint64_t *pages, uint64_t *resident, sb_err *err)
{
    size_t size, page;
    *pages = *resident = 0;
    if (sb_file_size(fd, &size, &page, err) != 0)
        return -1.0;
    if (size == 0)
        return 0.0;
    size_t n = (size + page - 1) / page;        /* mincore's vector: a byte a page */
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return sb_fail(err, errno, "mmap for residency: %s", strerror(errno)), -1.0;
#ifdef __APPLE__
    char *vec = malloc(n);
#else
    unsigned char *vec = malloc(n);
#endif
    if (!vec) {
        munmap(map, size);
        return sb_fail(err, ENOMEM, "cannot allocate the residency vector"), -1.0;
    }
    int rc = mincore(map, size, vec);
    int saved = errno;
    munmap(map, size);
    if (rc != 0) {
        free(vec);
        return sb_fail(err, saved, "mincore: %s", strerror(saved)), -1.0;
    }
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += vec[i] & 1;
    free(vec);
    return sb_policy_residency(size, page, count, pages, resident);
}

double sb_residency_fd(int fd, sb_residency *r, sb_err *err)
{
    uint64_t cached, dirty;
    size_t size, page;
    memset(r, 0, sizeof *r);
    if (sb_cachestat_fd(fd, &cached, &dirty) != 0)
        return sb_mincore_fd(fd, &r->pages, &r->resident, err);
    r->by_cachestat = 1;
    r->cached = cached;
    r->dirty = dirty;
    if (sb_file_size(fd, &size, &page, err) != 0)
        return -1.0;
    return sb_policy_residency(size, page, cached, &r->pages, &r->resident);
}

long long sb_copy_through(int in, int out, uint64_t len, unsigned char *buf, size_t buf_len)
{
    uint64_t done = 0;
    while (done < len) {
        size_t want = len - done < buf_len ? (size_t)(len - done) : buf_len;
        ssize_t k = read(in, buf, want);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        for (ssize_t put = 0; put < k;) {
            ssize_t w = write(out, buf + put, (size_t)(k - put));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            put += w;
        }
        done += (uint64_t)k;
    }
    return (long long)done;
}
