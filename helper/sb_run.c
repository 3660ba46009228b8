/* sb_run.c: one measurement from start to end: validate the request, open the
 * test file safely (O_NOFOLLOW; new files O_CREAT|O_EXCL, mode 0600), prepare
 * offsets and data, read the page-cache residency, then the timed interval (plain
 * C: the engine's requests, and for writes the sync), then close. Open and close
 * are timed apart from the interval. A file this run created and failed to finish
 * is removed, and the output says so.
 * System calls: lstat, open, fstat, unlink, posix_memalign (via the allocator). */
#include "sb_job.h"
#include "sb_parallel.h"
#include "sb_buffer.h"
#include "sb_nolinks.h"
#include "sb_clock.h"
#include "sb_platform.h"
#include "sb_rng.h"
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes draw on a buffer of at least 64 MiB (or the measurement's bytes, if fewer), request
 * after request, so that the data do not repeat within it (storage that deduplicates or
 * compresses gains nothing), and at least as large as the largest request. */
#define SB_WRITE_STREAM_BYTES ((uint64_t)64 << 20)

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
    if (job->op != SB_READ && job->sync == SB_SYNC_DSYNC)
        flags |= sb_dsync_open_flag();       /* every write synchronous: the sync is inside each write */
    if (create)
        flags |= O_WRONLY | O_CREAT | O_EXCL;
    else
        flags |= job->op == SB_MIXED ? O_RDWR : job->op == SB_WRITE ? O_WRONLY : O_RDONLY;
    job->fd = sb_open_no_links(job->path, flags, 0600);
    if (job->fd < 0) {
        int e = errno;
        if (sb_fail_link(err, e, job->path))
            return -1;
        if (e == EACCES || e == EPERM)
            return sb_fail(err, e, "permission denied: cannot %s %s; check the folder's permissions",
                           create ? "create" : "open", job->path);
        if (e == EROFS)
            return sb_fail(err, e, "%s is on a read-only file system; choose a writable target", job->path);
        if (e == ENOENT)
            return sb_fail(err, e, "the folder of %s does not exist", job->path);
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

/* Checks that need the open file: sizes and, for uncached I/O, the platform's alignment rules;
 * then what the policy decides for each request (before the timer). */
static int sb_check_file(sb_job *job, sb_err *err)
{
    uint64_t end = sb_extent_end(job);
    if (job->op != SB_WRITE && end > job->file_size_bytes)
        return sb_fail(err, EINVAL, "read past the end of the file: the requests reach byte %llu but %s has %llu bytes",
                       (unsigned long long)end, job->path, (unsigned long long)job->file_size_bytes);
    if (job->op == SB_WRITE && job->existing && end > job->file_size_bytes)
        return sb_fail(err, EINVAL, "%s has %llu bytes but the requests reach byte %llu; lay the file out first",
                       job->path, (unsigned long long)job->file_size_bytes, (unsigned long long)end);
    sb_uncached_params_fd(job->fd, job->device_block_bytes, &job->uncached);
    uint64_t required = sb_policy_required_align(&job->uncached);
    uint64_t keep_aligned = required ? required : job->uncached.kernel_page_bytes;
    job->max_call_bytes = sb_policy_max_syscall_bytes(job->uncached.os, keep_aligned);
    job->direct.body_end = UINT64_MAX;
    if (!job->engine->uncached)
        return 0;
    if (required) {
        if (job->nrequests > 1 && job->granularity % required != 0)
            return sb_fail(err, EINVAL, "granularity %llu is not a multiple of the direct I/O alignment %llu of this "
                           "file system; use binary sizes (e.g. 4KiB) or --engine buffered",
                           (unsigned long long)job->granularity, (unsigned long long)required);
        if (job->stride % required != 0)
            return sb_fail(err, EINVAL, "stride %llu is not a multiple of the direct I/O alignment %llu; use binary "
                           "sizes or --engine buffered", (unsigned long long)job->stride, (unsigned long long)required);
    }
    if (sb_policy_split_tail(&job->uncached) && job->access == SB_SEQUENTIAL)
        job->direct.body_end = job->offset + job->bytes - job->bytes % required;   /* in file offsets */
    /* a mixed measurement's request may read in one pass and write in another: its bytes count as the first
     * pass has it, and it is honoured only where it would be both ways */
    int honoured = 1;
    for (uint64_t i = 0; i < job->nrequests; i++) {
        uint64_t len = sb_request_len(job, i), offset = job->offsets[i];
        sb_req first = sb_request_at(job, 0, job->nrequests, i);
        sb_uncached_decision d = sb_policy_request(&job->uncached, first.op == SB_WRITE, offset, len);
        job->cached_bytes += len - d.uncached_bytes;
        enum sb_uncached_how how = job->op == SB_MIXED ? sb_policy_mixed_how(&job->uncached, offset, len) : d.how;
        if (honoured && !sb_policy_honoured(how)) {
            honoured = 0;
            job->first_cached_how = how;
        }
    }
    job->direct_honoured = !honoured ? 0 : job->uncached.fs_honours < 0 ? -1 : 1;
    return 0;
}

/* After a timed direct write whose data partly went through the page cache: drop those pages
 * (the file's data are on the device already: the sync was inside the interval), through a
 * descriptor of its own that can be read (Apple's eviction maps the file). */
static int sb_evict_cached_part(sb_job *job, sb_err *err)
{
    int fd = sb_open_no_links(job->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return sb_fail_link(err, errno, job->path) ? -1
             : sb_fail(err, errno, "open %s to evict its cached part: %s", job->path, strerror(errno));
    int rc = sb_evict_fd(fd, 0, 0, err);
    close(fd);
    return rc;
}

static void sb_cleanup_failed(sb_job *job)
{
    sb_err ignored;
    if (job->engine && (job->fd >= 0 || job->handle))
        job->engine->close(job, &ignored);
    if (job->fd >= 0)
        close(job->fd);
    if (job->direct.tail_fd >= 0)
        close(job->direct.tail_fd);
    job->fd = job->direct.tail_fd = -1;
    if (job->created && sb_unlink_no_links(job->path) == 0)
        job->removed_partial = 1;
}

/* Requests in flight at once. */
static uint64_t sb_inflight(const sb_job *job)
{
    return (uint64_t)job->queue_depth * job->threads;
}

/* --fill offset writes each request's own offsets, one slice per request: for checks, not for speed. */
#define SB_FILL_OFFSET_MAX_BYTES ((uint64_t)256 << 20)

/* Where each write request's data start, before the timer: slices of the buffer in request order
 * (sb_buffer_slice), the same whether the requests then move one at a time or many at once. */
static int sb_prepare_slices(sb_job *job, sb_err *err)
{
    job->slices = malloc((job->nrequests ? job->nrequests : 1) * sizeof *job->slices);
    if (!job->slices)
        return sb_fail(err, ENOMEM, "cannot allocate %llu request slices", (unsigned long long)job->nrequests);
    size_t cursor = 0;
    for (uint64_t i = 0; i < job->nrequests; i++)
        job->slices[i] = sb_buffer_slice(job->buf_bytes, &cursor, sb_request_len(job, i), job->page_bytes);
    return 0;
}

/* Each 8-byte word of each request's slice holds its own file offset. */
static void sb_stamp_offsets(sb_job *job)
{
    for (uint64_t i = 0; i < job->nrequests; i++) {
        uint64_t len = sb_request_len(job, i);
        unsigned char *data = job->buf + job->slices[i];
        for (uint64_t k = 0; k < len; k += 8) {
            uint64_t word = job->offsets[i] + k;
            memcpy(data + k, &word, len - k < 8 ? (size_t)(len - k) : sizeof word);
        }
    }
}

/* A mixed measurement's reads and writes: exactly the asked share of the pass's requests write (rounded to
 * whole requests), which ones drawn from the seed (a Fisher-Yates shuffle), before the timer. */
static int sb_prepare_mix(sb_job *job, sb_err *err)
{
    uint64_t n = job->nrequests;
    job->writes = calloc(n ? n : 1, 1);
    job->op_hists = malloc(2 * sizeof *job->op_hists);
    if (!job->writes || !job->op_hists)
        return sb_fail(err, ENOMEM, "cannot allocate the reads and writes of %llu requests", (unsigned long long)n);
    sb_hist_reset(&job->op_hists[0]);
    sb_hist_reset(&job->op_hists[1]);
    job->mix_rotation = (uint64_t)((double)n * SB_MIX_ROTATION);
    uint64_t nwrites = (uint64_t)llround((1.0 - job->read_fraction) * (double)n);
    memset(job->writes, 1, nwrites);
    sb_rng r;
    sb_rng_seed(&r, job->seed ^ 0x6d69786564ULL);   /* "mixed": a stream apart from the offsets' */
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = sb_rng_below(&r, i);
        unsigned char t = job->writes[i - 1];
        job->writes[i - 1] = job->writes[j];
        job->writes[j] = t;
    }
    return 0;
}

/* The buffers of this measurement. Reads: one slot as large as the largest request per request in
 * flight. Writes: at least the data stream and the largest request; with --fill offset, a slice
 * per request. A mixed measurement has both. */
static int sb_prepare_buffer(sb_job *job, sb_err *err)
{
    uint64_t page = job->page_bytes;
    uint64_t slot = (sb_largest_request(job) + page - 1) / page * page;
    uint64_t want = slot, slots = slot * sb_inflight(job);
    int reads = job->op != SB_WRITE, writes = job->op != SB_READ, both = reads && writes;
    if (job->fill_byte == SB_FILL_OFFSET) {
        want = slot * job->nrequests;
        if (writes && want > SB_FILL_OFFSET_MAX_BYTES)
            return sb_fail(err, EINVAL, "--fill offset is for checks of at most 256 MiB; lower --bytes");
    } else {
        uint64_t stream = job->bytes < SB_WRITE_STREAM_BYTES ? job->bytes : SB_WRITE_STREAM_BYTES;
        if (stream > want)
            want = (stream + page - 1) / page * page;
    }
    if ((writes ? want : 0) + (reads ? slots : 0) > (uint64_t)SIZE_MAX)
        return sb_fail(err, ENOMEM, "a %llu-byte buffer does not fit this process",
                       (unsigned long long)((writes ? want : 0) + (reads ? slots : 0)));
    if (reads && !(job->rbuf = sb_buffer_read((size_t)slots, both, err)))
        return -1;
    if (writes && !(job->buf = job->fill_byte == SB_FILL_OFFSET
                                   ? sb_buffer_write_scratch((size_t)want, both, err)
                                   : sb_buffer_write((size_t)want, job->fill_byte, job->compressible_pct,
                                                    job->dedupe_pct, job->data_seed, both, err)))
        return -1;
    job->buf_bytes = writes ? (size_t)want : 0;
    job->slot_bytes = (size_t)slot;
    if (writes) {
        if (sb_prepare_slices(job, err) != 0)
            return -1;
        if (job->fill_byte == SB_FILL_OFFSET)
            sb_stamp_offsets(job);
    }
    if (job->verify) {
        uint64_t nblocks = job->span / job->granularity + 2;
        job->seen = calloc(nblocks / 8 + 1, 1);
        if (!job->seen)
            return sb_fail(err, ENOMEM, "cannot allocate the verify map of %llu blocks", (unsigned long long)nblocks);
    }
    return 0;
}

/* How the requests move (sb_policy_io_method), once the file system is known. */
static int sb_choose_io(sb_job *job, sb_err *err)
{
    int split_tail = job->engine->uncached && job->direct.body_end < job->offset + job->bytes;
    int wants_ring = sb_inflight(job) > 1 || job->io_asked == SB_IO_ASK_URING;
    enum sb_uring_state ring = wants_ring ? sb_uring_probe() : SB_URING_NOT_BUILT;
    job->io = sb_policy_io_method(job->uncached.os, ring, job->queue_depth, job->threads, job->io_asked, split_tail);
    if (job->io.refused == SB_IO_REFUSED_URING)
        return sb_fail(err, EINVAL, "--io-method io_uring: %s; use --io-method auto or threads",
                       sb_policy_io_reason(job->io.why));
    if (job->io.refused == SB_IO_REFUSED_WORKERS)
        return sb_fail(err, EINVAL, "%llu requests in flight (queue depth %u x %u threads) need one thread each with "
                       "the threads method, and the helper starts at most %u; lower --queue-depth or --threads",
                       (unsigned long long)sb_inflight(job), job->queue_depth, job->threads, SB_MAX_WORKER_THREADS);
    return 0;
}

/* Requests *next, *next + 1, ... of the pass's n, one at a time, while sb_request_more allows: *last is the
 * previous completion (the next request's latency starts there), *clock the clock where it was last read; all
 * three are where the requests stopped on return. */
static int sb_sequential_requests(sb_job *job, uint64_t *next, uint64_t n, uint64_t *last, uint64_t *clock,
                                  sb_chunk *chunk, int timed, sb_err *err)
{
    uint64_t a = *next, prev = *last, now = *clock;     /* in locals while the requests run */
    int rc = 0;
    for (; sb_request_more(job, a, n, now); a++) {
        sb_req r = sb_request_at(job, 0, n, a);
        uint64_t len = sb_request_len(job, r.index);
        unsigned char *data = sb_request_data(job, r, 0);
        if ((rc = job->engine->io(job, r.op, job->offsets[r.index], len, data, err)) != 0)
            break;
        now = timed ? sb_now_ns() : 0;
        uint64_t latency_ns = now - prev;
        sb_request_account(job, r, len, latency_ns, now);
        prev = now;
        if (job->verify && (rc = sb_verify_request(job, r, data, err)) != 0)
            break;
        if (job->chunk_bytes && sb_chunk_add(job, chunk, len, latency_ns))
            prev = now = sb_close_chunk(job, chunk, sb_now_ns());
    }
    *next = a;
    *last = prev;
    *clock = now;
    return rc;
}

/* One request at a time on this thread: the interval from before the first to after the last (with a
 * warm-up, from its end). With --wearout, the requests stop at the stonewall, the count to reach is asked
 * for, and they go on to it: the time the asking took is in the interval (as IOR's), not in a latency. */
static int sb_sequential_io(sb_job *job, sb_phase *phase, uint64_t *t0, uint64_t *t1, sb_err *err)
{
    uint64_t prev = *t0 = sb_now_ns(), now = prev, a = 0;
    int timed = job->latency || job->duration_ns || job->stonewall_ns;
    *phase = sb_phase_from(job, *t0);
    sb_chunk chunk = {.start_ns = *t0, .hist = job->chunk_hist};
    job->pace_t0_ns = *t0;
    if (sb_sequential_requests(job, &a, job->nrequests, &prev, &now, &chunk, timed, err) != 0)
        return -1;
    if (job->stonewall_ns) {
        job->stonewall_requests = a;
        job->stonewall_io_ns = prev - *t0;
    }
    if (job->wearout) {
        uint64_t first = 0, extra;
        if (sb_wearout_plan(job, 1, &first, &job->nrequests, &a, &extra, err) != 0)
            return -1;
        phase->deadline_ns = 0;
        prev = now = sb_now_ns();
        if (sb_sequential_requests(job, &a, a + extra, &prev, &now, &chunk, timed, err) != 0)
            return -1;
    }
    *t1 = sb_now_ns();
    if (job->warmup_ns)
        *t0 = phase->warm_end_ns;
    return 0;
}

static void sb_reset_measured(sb_job *job)
{
    job->removed_partial = 0;
    job->fd = job->direct.tail_fd = -1;
    job->resident_before = -1;
    job->direct_honoured = -1;
    job->first_cached_how = SB_UNCACHED_ALL;
    job->cached_bytes = job->tail_bytes_buffered = 0;
    job->calls = job->largest_call_bytes = 0;
    job->bytes_moved = job->requests_done = job->warm_bytes = job->warm_requests = 0;
    memset(job->op_bytes, 0, sizeof job->op_bytes);
    memset(job->op_requests, 0, sizeof job->op_requests);
    job->writes = NULL;
    job->op_hists = NULL;
    job->rate_hists = NULL;
    job->arrival_ns = NULL;
    job->arrival_count = NULL;
    job->late_issues = job->unscheduled = 0;
    job->buf = job->rbuf = NULL;
    job->phase = NULL;
    job->sync_used = "none";
    job->page_bytes = (size_t)sysconf(_SC_PAGESIZE);
    job->verified = 0;
    job->chunks = job->chunk_gaps_ns = 0;
    job->stonewall_requests = job->stonewall_io_ns = job->wearout_requests = 0;
    job->slices = NULL;
    job->seen = NULL;
    job->io = (sb_io_choice){SB_IO_SYNC, SB_IO_WHY_NONE, SB_IO_RUNS};
    sb_hist_reset(&job->hist);
}

static int sb_measure(sb_job *job, sb_err *err)
{
    sb_reset_measured(job);
    if (job->bytes == 0 || job->granularity == 0)
        return sb_fail(err, EINVAL, "--bytes and --granularity must be positive");
    if (job->span == 0)
        job->span = job->bytes;
    if (job->access != SB_STRIDED && job->stride != 0)
        return sb_fail(err, EINVAL, "--stride applies to strided access only");
    if (sb_pattern_plan(job, err) != 0 || (job->op == SB_MIXED && sb_prepare_mix(job, err) != 0) ||
        sb_prepare_buffer(job, err) != 0)
        return -1;
    if (job->rate_per_s > 0) {          /* --rate: the response times and the lateness, merged from the workers */
        if (!(job->rate_hists = malloc(2 * sizeof *job->rate_hists)))
            return sb_fail(err, ENOMEM, "%s", "cannot allocate the response times' histograms");
        sb_hist_reset(&job->rate_hists[0]);
        sb_hist_reset(&job->rate_hists[1]);
    }
    if (job->chunk_bytes && !(job->chunk_hist = malloc(sizeof *job->chunk_hist)))
        return sb_fail(err, ENOMEM, "cannot allocate the chunk histogram");
    if (job->chunk_hist)
        sb_hist_reset(job->chunk_hist);

    uint64_t t_open = sb_now_ns();
    if (sb_open_file(job, err) != 0 || sb_check_file(job, err) != 0 || sb_choose_io(job, err) != 0)
        goto failed;
    if (job->op != SB_WRITE) {
        sb_residency r;
        sb_err ignored;
        job->resident_before = sb_residency_fd(job->fd, &r, &ignored);
    }
    if (job->engine->open(job, err) != 0)
        goto failed;
    job->open_ns = sb_now_ns() - t_open;

    /* The timed interval: nothing but the requests (and, for writes, the sync). */
    uint64_t t0, t1;
    sb_phase phase = {0, 0, 0};
    job->phase = &phase;
    if (job->io.method == SB_IO_SYNC ? sb_sequential_io(job, &phase, &t0, &t1, err)
                                     : sb_parallel_io(job, &t0, &t1, err))
        goto failed;
    int syncs = job->op != SB_READ && job->sync != SB_SYNC_NONE;
    if (syncs && job->engine->sync(job, err) != 0)
        goto failed;
    uint64_t t2 = syncs ? sb_now_ns() : t1;
    job->start_ns = t0;
    job->end_ns = t2;
    job->io_ns = t1 - t0;
    job->sync_ns = t2 - t1;

    if (job->duration_ns && job->bytes)     /* the cached part of a pass, as often as the passes ran */
        job->cached_bytes = (uint64_t)((double)job->cached_bytes * (double)(job->bytes_moved) / (double)job->bytes);
    if (job->engine->uncached && job->cached_bytes && job->op != SB_READ && job->sync != SB_SYNC_NONE &&
        sb_evict_cached_part(job, err) != 0)
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

int sb_run(sb_job *job, sb_err *err)
{
    int rc = sb_measure(job, err);
    free(job->slices);
    free(job->seen);
    free(job->chunk_hist);
    free(job->writes);
    job->slices = NULL;
    job->seen = NULL;
    job->chunk_hist = NULL;
    job->writes = NULL;
    return rc;
}
