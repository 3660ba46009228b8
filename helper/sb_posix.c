/* sb_posix.c: the POSIX engines. `direct`: pread/pwrite from a page-aligned
 * buffer on an uncached descriptor (O_DIRECT on Linux, F_NOCACHE on Apple); on Linux a
 * final part that is not a multiple of the direct-I/O alignment goes through a second,
 * buffered descriptor (sb_run evicts it after the sync); Apple's kernel moves such a part
 * through the cache by itself. `buffered`: plain pread/pwrite through the page cache, as
 * most applications do. Each request is one system call up to the platform's largest
 * transfer (sb_policy_max_syscall_bytes); a short transfer is continued.
 * System calls: pread, pwrite, fcntl, fsync (F_FULLFSYNC on Apple), open, close. */
#include "sb_job.h"
#include "sb_platform.h"
#include "sb_nolinks.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Move len bytes at offset through fd from or into data, continuing short transfers. */
static int sb_rw_loop(sb_job *job, enum sb_op op, int fd, uint64_t offset, uint64_t len, unsigned char *data,
                      sb_err *err)
{
    while (len > 0) {
        uint64_t chunk = len < job->max_call_bytes ? len : job->max_call_bytes;
        ssize_t n = op == SB_WRITE ? pwrite(fd, data, (size_t)chunk, (off_t)offset)
                                        : pread(fd, data, (size_t)chunk, (off_t)offset);
        sb_count_call(job, chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            if (e == EINVAL && fd == job->fd && job->engine->uncached)
                return sb_fail(err, e, "%s at offset %llu (%llu bytes) refused with EINVAL: direct I/O needs "
                               "offsets and lengths aligned to %llu bytes; use binary sizes (KiB) or --engine buffered",
                               op == SB_WRITE ? "pwrite" : "pread", (unsigned long long)offset,
                               (unsigned long long)chunk, (unsigned long long)sb_policy_required_align(&job->uncached));
            return sb_fail(err, e, "%s at offset %llu: %s", op == SB_WRITE ? "pwrite" : "pread",
                           (unsigned long long)offset, strerror(e));
        }
        if (n == 0) {
            if (op == SB_READ)
                return sb_fail(err, 0, "read past the end of the file at offset %llu", (unsigned long long)offset);
            return sb_fail(err, ENOSPC, "pwrite at offset %llu wrote nothing", (unsigned long long)offset);
        }
        job->bytes_moved += (uint64_t)n;
        data += n;
        offset += (uint64_t)n;
        len -= (uint64_t)n;
    }
    return 0;
}

static int sb_direct_open(sb_job *job, sb_err *err)
{
    if (sb_set_uncached(job->fd, err) != 0)
        return -1;
    if (job->direct.body_end < job->offset + job->bytes) {
        int mode = job->op == SB_MIXED ? O_RDWR : job->op == SB_WRITE ? O_WRONLY : O_RDONLY;
        int dsync = job->op != SB_READ && job->sync == SB_SYNC_DSYNC ? sb_dsync_open_flag() : 0;
        job->direct.tail_fd = sb_open_no_links(job->path, mode | dsync | O_CLOEXEC, 0);
        if (job->direct.tail_fd < 0)
            return sb_fail_link(err, errno, job->path) ? -1
                 : sb_fail(err, errno, "open %s for the buffered tail: %s", job->path, strerror(errno));
    }
    return 0;
}

static int sb_direct_io(sb_job *job, enum sb_op op, uint64_t offset, uint64_t len, unsigned char *data, sb_err *err)
{
    uint64_t end = offset + len;
    if (end <= job->direct.body_end)
        return sb_rw_loop(job, op, job->fd, offset, len, data, err);
    uint64_t body = offset < job->direct.body_end ? job->direct.body_end - offset : 0;
    if (body && sb_rw_loop(job, op, job->fd, offset, body, data, err) != 0)
        return -1;
    job->tail_bytes_buffered += len - body;
    return sb_rw_loop(job, op, job->direct.tail_fd, offset + body, len - body, data + body, err);
}

static int sb_posix_io(sb_job *job, enum sb_op op, uint64_t offset, uint64_t len, unsigned char *data, sb_err *err)
{
    return sb_rw_loop(job, op, job->fd, offset, len, data, err);
}

static int sb_posix_open(sb_job *job, sb_err *err)
{
    (void)job;
    (void)err;
    return 0;
}

static int sb_posix_sync(sb_job *job, sb_err *err)
{
    return sb_sync_fd(job->fd, (int)job->sync, &job->sync_used, err);
}

static int sb_posix_close(sb_job *job, sb_err *err)
{
    int rc = 0;
    if (job->direct.tail_fd >= 0 && close(job->direct.tail_fd) != 0)
        rc = sb_fail(err, errno, "close (tail): %s", strerror(errno));
    job->direct.tail_fd = -1;
    if (job->fd >= 0 && close(job->fd) != 0 && rc == 0)
        rc = sb_fail(err, errno, "close: %s", strerror(errno));
    job->fd = -1;
    return rc;
}

const sb_engine sb_engine_direct = {.name = "direct", .uncached = 1, .counts_syscalls = 1, .open = sb_direct_open,
                                    .io = sb_direct_io, .sync = sb_posix_sync, .close = sb_posix_close};
const sb_engine sb_engine_buffered = {.name = "buffered", .uncached = 0, .counts_syscalls = 1, .open = sb_posix_open,
                                      .io = sb_posix_io, .sync = sb_posix_sync, .close = sb_posix_close};
