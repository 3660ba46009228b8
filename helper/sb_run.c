/* sb_run.c: one measurement from start to end: validate the request, open the
 * test file safely (O_NOFOLLOW; new files O_CREAT|O_EXCL, mode 0600), prepare
 * offsets and data, read the page-cache residency, then the timed interval (plain
 * C: the engine's requests, and for writes the sync), then close. Open and close
 * are timed apart from the interval. A file this run created and failed to finish
 * is removed, and the output says so.
 * System calls: lstat, open, fstat, unlink, posix_memalign (via the allocator). */
#include "sb_job.h"
#include "sb_clock.h"
#include "sb_platform.h"
#include "sb_rng.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SB_BUFFER_CAP_BYTES ((size_t)64 << 20)
/* Reads land in a buffer of at most 16 MiB (a larger request is read in 16 MiB system calls):
 * its pages are faulted in before the timer, once per process, at ~2 GB/s on these machines. */
#define SB_READ_BUFFER_CAP_BYTES ((size_t)16 << 20)

int sb_fail(sb_err *err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->errnum = errnum;
    return -1;
}

/* Two buffers kept for the life of the process, so a batch of measurements
 * generates its data and faults its pages in once: slot 0 for writes (content
 * keyed by fill and seed), slot 1 for reads (pre-touched). */
typedef struct {
    unsigned char *data;
    size_t capacity, valid;
    int fill_byte;
    uint64_t data_seed;
} sb_slot;

static sb_slot sb_slots[2];

unsigned char *sb_buffer(size_t bytes, int fill_byte, uint64_t data_seed, sb_err *err)
{
    sb_slot *s = &sb_slots[fill_byte == -2 ? 1 : 0];
    int same = s->fill_byte == fill_byte && (fill_byte != -1 || s->data_seed == data_seed);
    if (s->data && same && s->valid >= bytes)
        return s->data;
    if (s->capacity < bytes) {
        free(s->data);
        s->data = NULL;
        s->capacity = s->valid = 0;
        long page = sysconf(_SC_PAGESIZE);
        if (posix_memalign((void **)&s->data, (size_t)page, bytes) != 0) {
            sb_fail(err, ENOMEM, "cannot allocate a %zu-byte I/O buffer", bytes);
            return NULL;
        }
        s->capacity = bytes;
    }
    if (fill_byte == -1)
        sb_rng_fill(data_seed, s->data, bytes);
    else
        memset(s->data, fill_byte < 0 ? 0 : fill_byte, bytes);
    s->valid = bytes;
    s->fill_byte = fill_byte;
    s->data_seed = data_seed;
    return s->data;
}

unsigned char *sb_buffer_chunk(const sb_job *job, uint64_t len, uint64_t *chunk)
{
    uint64_t room = job->buf_bytes - job->buf_cursor;
    *chunk = len < room ? len : room;
    return job->buf + job->buf_cursor;
}

void sb_buffer_advance(sb_job *job, uint64_t moved)
{
    job->buf_cursor += moved;
    if (job->buf_cursor >= job->buf_bytes)
        job->buf_cursor = 0;
}

static int sb_open_file(sb_job *job, sb_err *err)
{
    struct stat st;
    int create = job->op == SB_WRITE && !job->existing;
    if (lstat(job->path, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return sb_fail(err, ELOOP, "%s is a symbolic link; stibium never follows links for test files", job->path);
        if (create)
            return sb_fail(err, EEXIST, "%s already exists; stibium writes only new files (remove it or choose another path)",
                           job->path);
        if (!S_ISREG(st.st_mode))
            return sb_fail(err, EINVAL, "%s is not a regular file", job->path);
    } else if (errno == EACCES) {
        return sb_fail(err, errno, "permission denied: cannot %s %s; check the folder's permissions",
                       create ? "create" : "open", job->path);
    } else if (errno != ENOENT) {
        return sb_fail(err, errno, "cannot examine %s: %s", job->path, strerror(errno));
    } else if (!create) {
        return sb_fail(err, ENOENT, "%s does not exist", job->path);
    }
    int flags = O_NOFOLLOW | O_CLOEXEC;
    if (create)
        flags |= O_WRONLY | O_CREAT | O_EXCL;
    else
        flags |= job->op == SB_WRITE ? O_WRONLY : O_RDONLY;
    job->fd = open(job->path, flags, 0600);
    if (job->fd < 0) {
        int e = errno;
        if (e == EACCES || e == EPERM)
            return sb_fail(err, e, "permission denied: cannot %s %s; check the folder's permissions",
                           create ? "create" : "open", job->path);
        if (e == EROFS)
            return sb_fail(err, e, "%s is on a read-only file system; choose a writable target", job->path);
        if (e == ENOENT)
            return sb_fail(err, e, "the folder of %s does not exist", job->path);
        if (e == ELOOP)
            return sb_fail(err, e, "%s is a symbolic link; stibium never follows links for test files", job->path);
        if (e == EEXIST)
            return sb_fail(err, e, "%s already exists; stibium writes only new files", job->path);
        return sb_fail(err, e, "open %s: %s", job->path, strerror(e));
    }
    job->created = create;
    if (fstat(job->fd, &st) != 0)
        return sb_fail(err, errno, "fstat %s: %s", job->path, strerror(errno));
    job->file_size_bytes = (uint64_t)st.st_size;
    return 0;
}

/* The furthest byte any request reaches. */
static uint64_t sb_extent_end(const sb_job *job)
{
    uint64_t end = 0;
    for (uint64_t i = 0; i < job->nrequests; i++) {
        uint64_t e = job->offsets[i] + sb_request_len(job, i);
        if (e > end)
            end = e;
    }
    return end;
}

/* Checks that need the open file: sizes and, for direct I/O, alignment. */
static int sb_check_file(sb_job *job, sb_err *err)
{
    uint64_t end = sb_extent_end(job);
    if (job->op == SB_READ && end > job->file_size_bytes)
        return sb_fail(err, EINVAL, "read past the end of the file: the requests reach byte %llu but %s has %llu bytes",
                       (unsigned long long)end, job->path, (unsigned long long)job->file_size_bytes);
    if (job->op == SB_WRITE && job->existing && end > job->file_size_bytes)
        return sb_fail(err, EINVAL, "%s has %llu bytes but the requests reach byte %llu; lay the file out first",
                       job->path, (unsigned long long)job->file_size_bytes, (unsigned long long)end);
    sb_fsinfo info;
    sb_fsinfo_fd(job->fd, &info);
    job->direct_honoured = info.direct_honoured;
    job->align_bytes = info.offset_align_bytes;
    job->direct_body_end = UINT64_MAX;
    if (job->engine != &sb_engine_direct)
        return 0;
    uint64_t a = job->align_bytes;
    if (job->nrequests > 1 && job->granularity % a != 0)
        return sb_fail(err, EINVAL, "granularity %llu is not a multiple of the direct I/O alignment %llu of this file "
                       "system; use binary sizes (e.g. 4KiB) or --engine buffered",
                       (unsigned long long)job->granularity, (unsigned long long)a);
    if (job->stride % a != 0)
        return sb_fail(err, EINVAL, "stride %llu is not a multiple of the direct I/O alignment %llu; use binary sizes "
                       "or --engine buffered", (unsigned long long)job->stride, (unsigned long long)a);
    if (job->access == SB_SEQUENTIAL)
        job->direct_body_end = job->bytes - job->bytes % a;
    return 0;
}

static void sb_cleanup_failed(sb_job *job)
{
    sb_err ignored;
    if (job->engine && (job->fd >= 0 || job->handle))
        job->engine->close(job, &ignored);
    if (job->fd >= 0)
        close(job->fd);
    if (job->tail_fd >= 0)
        close(job->tail_fd);
    job->fd = job->tail_fd = -1;
    if (job->created && unlink(job->path) == 0)
        job->removed_partial = 1;
}

int sb_run(sb_job *job, sb_err *err)
{
    job->removed_partial = 0;
    job->fd = job->tail_fd = -1;
    job->resident_before = -1;
    job->direct_honoured = -1;
    sb_hist_reset(&job->hist);
    if (job->bytes == 0 || job->granularity == 0)
        return sb_fail(err, EINVAL, "--bytes and --granularity must be positive");
    if (job->span == 0)
        job->span = job->bytes;
    if (job->access != SB_STRIDED && job->stride != 0)
        return sb_fail(err, EINVAL, "--stride applies to strided access only");
    if (sb_pattern_plan(job, err) != 0)
        return -1;
    /* Writes draw on a buffer of up to 64 MiB, request after request, so that the data do not repeat
     * within it (storage that deduplicates or compresses gains nothing). */
    uint64_t largest = job->op == SB_WRITE ? job->bytes : (job->granularity < job->bytes ? job->granularity : job->bytes);
    size_t cap = job->op == SB_WRITE ? SB_BUFFER_CAP_BYTES : SB_READ_BUFFER_CAP_BYTES;
    size_t buf_bytes = largest < cap ? (size_t)largest : cap;
    long page = sysconf(_SC_PAGESIZE);
    buf_bytes = (buf_bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    job->buf = sb_buffer(buf_bytes, job->op == SB_WRITE ? job->fill_byte : -2, job->data_seed, err);
    if (!job->buf)
        return -1;
    job->buf_bytes = buf_bytes;
    job->buf_cursor = 0;

    uint64_t t_open = sb_now_ns();
    if (sb_open_file(job, err) != 0 || sb_check_file(job, err) != 0)
        goto failed;
    if (job->op == SB_READ) {
        uint64_t pages, resident;
        sb_err ignored;
        job->resident_before = sb_residency_fd(job->fd, &pages, &resident, &ignored);
    }
    if (job->engine->open(job, err) != 0)
        goto failed;
    job->open_ns = sb_now_ns() - t_open;

    /* The timed interval: nothing but the requests (and, for writes, the sync). */
    uint64_t t0 = sb_now_ns(), prev = t0;
    for (uint64_t i = 0; i < job->nrequests; i++) {
        if (job->engine->io(job, job->offsets[i], sb_request_len(job, i), err) != 0)
            goto failed;
        if (job->latency) {
            uint64_t now = sb_now_ns();
            sb_hist_record(&job->hist, now - prev);
            prev = now;
        }
    }
    uint64_t t1 = sb_now_ns();
    if (job->op == SB_WRITE && job->sync != SB_SYNC_NONE && job->engine->sync(job, err) != 0)
        goto failed;
    uint64_t t2 = sb_now_ns();
    job->start_ns = t0;
    job->end_ns = t2;
    job->io_ns = t1 - t0;
    job->sync_ns = t2 - t1;

    if (job->tail_bytes_buffered && job->op == SB_WRITE && job->sync != SB_SYNC_NONE &&
        sb_evict_fd(job->tail_fd, job->direct_body_end / (uint64_t)page * (uint64_t)page, 0, err) != 0)
        goto failed;
    uint64_t t_close = sb_now_ns();
    if (job->engine->close(job, err) != 0)
        goto failed;
    job->close_ns = sb_now_ns() - t_close;
    return 0;

failed:
    sb_cleanup_failed(job);
    return -1;
}
