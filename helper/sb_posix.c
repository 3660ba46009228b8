/* sb_posix.c: the POSIX engines. `direct`: pread/pwrite from a page-aligned
 * buffer on an uncached descriptor (O_DIRECT on Linux, F_NOCACHE on Apple); a
 * final part that is not a multiple of the direct-I/O alignment goes through a
 * second, buffered descriptor (sb_run evicts it after the sync). `buffered`: plain
 * pread/pwrite through the page cache, as most applications do.
 * System calls: pread, pwrite, fcntl, fsync (F_FULLFSYNC on Apple), open, close. */
#include "sb_job.h"
#include "sb_platform.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define SB_MAX_SYSCALL_BYTES ((uint64_t)1 << 30)

/* Move len bytes at offset through fd, continuing short transfers. */
static int sb_rw_loop(sb_job *job, int fd, uint64_t offset, uint64_t len, sb_err *err)
{
    while (len > 0) {
        uint64_t chunk;
        unsigned char *data = sb_buffer_chunk(job, len < SB_MAX_SYSCALL_BYTES ? len : SB_MAX_SYSCALL_BYTES, &chunk);
        ssize_t n = job->op == SB_WRITE ? pwrite(fd, data, (size_t)chunk, (off_t)offset)
                                        : pread(fd, data, (size_t)chunk, (off_t)offset);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            if (e == EINVAL && fd == job->fd && job->engine == &sb_engine_direct)
                return sb_fail(err, e, "%s at offset %llu (%llu bytes) refused with EINVAL: direct I/O needs "
                               "offsets and lengths aligned to %llu bytes; use binary sizes (KiB) or --engine buffered",
                               job->op == SB_WRITE ? "pwrite" : "pread", (unsigned long long)offset,
                               (unsigned long long)chunk, (unsigned long long)job->align_bytes);
            return sb_fail(err, e, "%s at offset %llu: %s", job->op == SB_WRITE ? "pwrite" : "pread",
                           (unsigned long long)offset, strerror(e));
        }
        if (n == 0) {
            if (job->op == SB_READ)
                return sb_fail(err, 0, "read past the end of the file at offset %llu", (unsigned long long)offset);
            return sb_fail(err, ENOSPC, "pwrite at offset %llu wrote nothing", (unsigned long long)offset);
        }
        sb_buffer_advance(job, (uint64_t)n);
        job->bytes_moved += (uint64_t)n;
        offset += (uint64_t)n;
        len -= (uint64_t)n;
    }
    return 0;
}

static int sb_direct_open(sb_job *job, sb_err *err)
{
#ifdef __linux__
    int flags = fcntl(job->fd, F_GETFL);
    if (flags < 0 || fcntl(job->fd, F_SETFL, flags | O_DIRECT) != 0)
        return sb_fail(err, errno, "cannot turn on O_DIRECT for %s: %s; the file system may not support direct I/O, "
                       "use --engine buffered", job->path, strerror(errno));
#else
    if (sb_set_uncached(job->fd, err) != 0)
        return -1;
#endif
    if (job->direct_body_end < job->bytes) {
        job->tail_fd = open(job->path, (job->op == SB_WRITE ? O_WRONLY : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
        if (job->tail_fd < 0)
            return sb_fail(err, errno, "open %s for the buffered tail: %s", job->path, strerror(errno));
    }
    return 0;
}

static int sb_direct_io(sb_job *job, uint64_t offset, uint64_t len, sb_err *err)
{
    uint64_t end = offset + len;
    if (end <= job->direct_body_end)
        return sb_rw_loop(job, job->fd, offset, len, err);
    uint64_t body = offset < job->direct_body_end ? job->direct_body_end - offset : 0;
    if (body && sb_rw_loop(job, job->fd, offset, body, err) != 0)
        return -1;
    job->tail_bytes_buffered += len - body;
    return sb_rw_loop(job, job->tail_fd, offset + body, len - body, err);
}

static int sb_posix_io(sb_job *job, uint64_t offset, uint64_t len, sb_err *err)
{
    return sb_rw_loop(job, job->fd, offset, len, err);
}

static int sb_posix_open(sb_job *job, sb_err *err)
{
    (void)job;
    (void)err;
    return 0;
}

static int sb_posix_sync(sb_job *job, sb_err *err)
{
    return sb_sync_fd(job->fd, job->sync == SB_SYNC_FULL, err);
}

static int sb_posix_close(sb_job *job, sb_err *err)
{
    int rc = 0;
    if (job->tail_fd >= 0 && close(job->tail_fd) != 0)
        rc = sb_fail(err, errno, "close (tail): %s", strerror(errno));
    job->tail_fd = -1;
    if (job->fd >= 0 && close(job->fd) != 0 && rc == 0)
        rc = sb_fail(err, errno, "close: %s", strerror(errno));
    job->fd = -1;
    return rc;
}

const sb_engine sb_engine_direct = {"direct", sb_direct_open, sb_direct_io, sb_posix_sync, sb_posix_close};
const sb_engine sb_engine_buffered = {"buffered", sb_posix_open, sb_posix_io, sb_posix_sync, sb_posix_close};
