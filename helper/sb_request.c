/* sb_request.c: what happens to one request, whatever moves it: the calls it makes are counted, its
 * data are a slice of the write buffer or a read slot, and at its completion its latency is recorded,
 * with --verify its block is checked, and with --chunk it counts into the chunk, whose row is written
 * when it is full. Shared by the plain loop (sb_run.c), the threads method (sb_parallel.c) and the
 * io_uring method (sb_uring.c). No system calls but the chunk row's writing (the job's on_chunk) and
 * the stream's lock. */
#include "sb_parallel.h"
#include "sb_clock.h"
#include <errno.h>
#include <math.h>
#include <string.h>

sb_req sb_request_at(const sb_job *job, uint64_t first, uint64_t len, uint64_t a)
{
    uint64_t pass = a < len ? 0 : a / len;     /* a measurement of its bytes stays in its first pass */
    sb_req r = {first + a - pass * len, job->op};
    if (job->op == SB_MIXED) {
        uint64_t n = job->nrequests;
        r.op = job->writes[(r.index + (pass % n) * job->mix_rotation) % n] ? SB_WRITE : SB_READ;
    }
    return r;
}

sb_phase sb_phase_from(const sb_job *job, uint64_t origin_ns)
{
    sb_phase p = {0, 0, origin_ns};
    if (job->warmup_ns)
        p.warm_end_ns = origin_ns + job->warmup_ns;
    if (job->duration_ns)
        p.deadline_ns = origin_ns + job->warmup_ns + job->duration_ns;
    else if (job->stonewall_ns)
        p.deadline_ns = origin_ns + job->stonewall_ns;
    return p;
}

int sb_request_in_time(const sb_job *job, uint64_t now)
{
    return !job->phase->deadline_ns || now < job->phase->deadline_ns;
}

int sb_request_in_pass(const sb_job *job, uint64_t a, uint64_t len)
{
    return job->duration_ns || a < len;
}

int sb_request_more(const sb_job *job, uint64_t a, uint64_t len, uint64_t now)
{
    return sb_request_in_time(job, now) && sb_request_in_pass(job, a, len);
}

int sb_wearout_plan(sb_job *job, unsigned nparts, const uint64_t *firsts, const uint64_t *ends, const uint64_t *done,
                    uint64_t *extra, sb_err *err)
{
    uint64_t total = 0, left = 0, target;
    for (unsigned i = 0; i < nparts; i++) {
        total += done[i];
        left += ends[i] - firsts[i] - done[i];
        extra[i] = 0;
    }
    if (job->on_stonewall(job, &target, err) != 0)
        return -1;
    if (target < total || target > total + left)
        return sb_fail(err, EINVAL, "the wear-out asked for %llu requests, but %llu were done and %llu are left",
                       (unsigned long long)target, (unsigned long long)total, (unsigned long long)left);
    uint64_t want = target - total, given = 0;
    for (unsigned i = 0; i < nparts && left; i++) {     /* in proportion to what each part has left */
        uint64_t has = ends[i] - firsts[i] - done[i];
        extra[i] = (uint64_t)((long double)want * has / left);
        given += extra[i];
    }
    for (unsigned i = 0; given < want; i = (i + 1) % nparts) {  /* the rounding's remainder, a request each */
        if (extra[i] < ends[i] - firsts[i] - done[i]) {
            extra[i]++;
            given++;
        }
    }
    job->wearout_requests = want;
    return 0;
}

int sb_request_account(sb_job *job, sb_req r, uint64_t len, uint64_t latency_ns, uint64_t now)
{
    if (now < job->phase->warm_end_ns) {
        job->warm_bytes += len;
        job->warm_requests++;
        return 0;
    }
    job->requests_done++;
    if (job->latency)
        sb_hist_record(&job->hist, latency_ns);
    if (job->op == SB_MIXED) {
        int w = r.op == SB_WRITE;
        job->op_bytes[w] += len;
        job->op_requests[w]++;
        if (job->latency)
            sb_hist_record(&job->op_hists[w], latency_ns);
    }
    return 1;
}

int sb_chunk_add(sb_job *job, sb_chunk *c, uint64_t len, uint64_t latency_ns)
{
    if (job->latency)
        sb_hist_record(job->chunk_hist, latency_ns);
    c->bytes += len;
    c->bytes_done += len;
    c->requests++;
    c->requests_done++;
    return c->bytes >= job->chunk_bytes || c->requests_done == job->nrequests;
}

/* Streaming (--chunk): a chunk is closed: its row is written (on_chunk), and the next chunk starts when
 * that returns (the time returned); with --fps, not before the next frame's time. The row's writing (and the
 * wait for the frame's time) is the only time between two chunks: it is measured and carried in the next row
 * (gap_ns), and left out of the next request's latency. */
uint64_t sb_close_chunk(sb_job *job, sb_chunk *c, uint64_t end_ns)
{
    c->end_ns = end_ns;
    job->on_chunk(job, c);
    if (job->frame_ns > 0 && c->requests_done < job->nrequests)   /* --fps: the next frame not before its time
                                                                   * (a late one starts at once) */
        sb_sleep_until_ns(job->pace_t0_ns + (uint64_t)llround((double)(c->index + 1) * job->frame_ns));
    uint64_t next = sb_now_ns();
    job->chunks++;
    c->index++;
    c->gap_ns = next - c->end_ns;
    job->chunk_gaps_ns += c->gap_ns;
    c->start_ns = next;
    c->bytes = c->requests = 0;
    sb_hist_reset(job->chunk_hist);
    return next;
}

/* A completion with requests in flight counts into the one chunk every worker shares: under its lock,
 * so that the chunk's bytes, latencies and row are whole. A worker that completes while the row is
 * written waits; its request's latency was taken before, and its bytes count into the next chunk. The
 * chunks tile the interval: each ends at the completion that filled it and the next begins there. */
static void sb_stream_done(sb_stream *s, uint64_t len, uint64_t latency_ns, uint64_t now)
{
    pthread_mutex_lock(&s->lock);
    if (sb_chunk_add(s->job, &s->chunk, len, latency_ns)) {
        /* the chunk ends at the completion that filled it (no earlier than it began: completions take the
         * lock in their own order); the other requests stay in flight while the row is written, so the
         * next chunk begins right there, with no time between the two (the writing's time is still
         * summed in the answer's chunk_gaps_seconds) */
        uint64_t end = now > s->chunk.start_ns ? now : s->chunk.start_ns;
        sb_close_chunk(s->job, &s->chunk, end);
        s->chunk.start_ns = end;
        s->chunk.gap_ns = 0;
    }
    pthread_mutex_unlock(&s->lock);
}

void sb_count_call(sb_job *job, uint64_t bytes)
{
    job->calls++;
    if (bytes > job->largest_call_bytes)
        job->largest_call_bytes = bytes;
}

unsigned char *sb_request_data(const sb_job *job, sb_req r, unsigned slot)
{
    if (r.op == SB_WRITE)
        return job->buf + job->slices[r.index];
    return job->rbuf + (size_t)slot * job->slot_bytes;
}

int sb_verify_request(sb_job *job, sb_req r, const unsigned char *data, sb_err *err)
{
    uint64_t offset = job->offsets[r.index], len = sb_request_len(job, r.index);
    uint64_t block = (offset - job->offset) / job->granularity;   /* the block within the span */
    unsigned char bit = (unsigned char)(1u << (block & 7));
    if (__atomic_fetch_or(&job->seen[block >> 3], bit, __ATOMIC_RELAXED) & bit)
        return sb_fail(err, EINVAL, "verify: the block at offset %llu was moved twice", (unsigned long long)offset);
    if (r.op == SB_READ) {
        for (uint64_t k = 0; k + 8 <= len; k += 8) {
            uint64_t word;
            memcpy(&word, data + k, sizeof word);
            if (word != offset + k)
                return sb_fail(err, EINVAL, "verify: the word at offset %llu holds %llu; the file was not written "
                               "with --fill offset, or a request read the wrong place",
                               (unsigned long long)(offset + k), (unsigned long long)word);
        }
    }
    __atomic_fetch_add(&job->verified, 1, __ATOMIC_RELAXED);
    return 0;
}

void sb_worker_submitted(sb_worker *w, uint64_t t)
{
    if (w->first_submit_ns)
        return;
    w->first_submit_ns = t;
    uint64_t unset = 0;         /* the first submission of any worker starts the first chunk; every worker
                                 * sees it (its own exchange) before its first completion reads it */
    if (w->stream)
        __atomic_compare_exchange_n(&w->stream->chunk.start_ns, &unset, t, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int sb_worker_done(sb_worker *w, sb_req r, const unsigned char *data, uint64_t submit_ns, uint64_t now)
{
    sb_job *j = &w->job;
    uint64_t len = sb_request_len(j, r.index);
    sb_request_account(j, r, len, now - submit_ns, now);
    w->last_complete_ns = now;
    if (w->stream)
        sb_stream_done(w->stream, len, now - submit_ns, now);
    return j->verify ? sb_verify_request(j, r, data, &w->err) : 0;
}
