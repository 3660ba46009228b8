/* sb_parallel.c: requests with several in flight. The requests are cut into `threads` parts
 * in order (thread t moves requests [t*n/T, (t+1)*n/T)), so a sequential measurement stays
 * sequential within each thread, as fio's jobs are, and no two requests touch the same block.
 * Each part keeps queue_depth requests in flight: with io_uring one ring per thread
 * (sb_uring.c); otherwise queue_depth threads per part, each taking the part's next request
 * in order and moving it with the engine's synchronous call (one thread per request in flight).
 * Every worker starts at one gate once all exist, so thread start-up stays outside the
 * interval, which runs from the first submission to the last completion. Per-request latency
 * is completion minus submission, in the worker's own histogram, merged at the end. With --chunk
 * the completions also count into one shared chunk (sb_request.c), whose row the worker that
 * fills it writes.
 * System calls: pthread_create, pthread_join, and the engine's or the ring's. */
#include "sb_parallel.h"
#include "sb_clock.h"
#include "sb_platform.h"
#include "sb_rng.h"
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SB_WORKER_STACK_BYTES ((size_t)256 << 10)

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned ready;
    int go;
    sb_phase phase;             /* a measurement by time: set from the clock as the gate opens */
} sb_gate;

typedef struct {
    sb_worker *worker;
    sb_gate *gate;
} sb_start;

/* The threads method: take the part's next request until none is left (or the deadline has come). */
static int sb_thread_worker(sb_worker *w)
{
    sb_job *j = &w->job;
    uint64_t len = w->end - w->first;
    while (len) {
        if (__atomic_load_n(w->stop, __ATOMIC_RELAXED))
            return 0;
        /* the clock is read before the request is taken: no request is taken and then left at a deadline, so
         * the requests a stonewall leaves done are each part's first ones (the wear-out goes on from there) */
        uint64_t t = sb_now_ns();
        if (!sb_request_in_time(j, t))
            return 0;
        uint64_t a = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);
        if (!sb_request_in_pass(j, a, len))
            return 0;
        sb_req r = sb_request_at(j, w->first, len, a);
        unsigned char *data = sb_request_data(j, r, w->slot);
        sb_worker_submitted(w, t);
        if (j->engine->io(j, r.op, j->offsets[r.index], sb_request_len(j, r.index), data, &w->err) != 0)
            return -1;
        if (sb_worker_done(w, r, data, t, sb_now_ns()) != 0)
            return -1;
    }
    return 0;
}

/* --rate: a worker sleeps to within this of its due time, then reads the clock (yielding) until it passes */
#ifndef SB_PACE_MARGIN_NS
#define SB_PACE_MARGIN_NS 100000u
#endif

/* --rate: the due time of request a of part `part`, after the origin: evenly spaced at the part's rate, or the
 * prepared Poisson arrivals; -1 where the schedule holds no more. */
static int sb_due_after_origin(const sb_job *j, unsigned part, uint64_t a, uint64_t *after_ns)
{
    if (j->arrivals == 0) {
        double part_rate = j->rate_per_s / j->threads;
        double t = (double)a * 1e9 / part_rate;
        if (t > 9.0e18)
            return -1;
        *after_ns = (uint64_t)llround(t);
        return 0;
    }
    if (a >= j->arrival_count[part])
        return -1;
    *after_ns = j->arrival_ns[part][a];
    return 0;
}

/* --rate, the threads method: each worker takes the part's next request, waits for its due time and issues it
 * (late where every worker of the part was busy at that time: the request waited for a slot, and its response
 * time, from the due time, says so). Its service time (issue to completion) is the measurement's latency. */
static int sb_paced_worker(sb_worker *w)
{
    sb_job *j = &w->job;
    uint64_t len = w->end - w->first;
    sb_thread_precise_timers();
    while (len) {
        if (__atomic_load_n(w->stop, __ATOMIC_RELAXED))
            return 0;
        uint64_t a = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);
        if (!sb_request_in_pass(j, a, len))
            return 0;
        uint64_t after;
        if (sb_due_after_origin(j, w->part, a, &after) != 0) {
            j->unscheduled++;
            return 0;
        }
        uint64_t due = j->phase->origin_ns + after;
        if (j->phase->deadline_ns && due >= j->phase->deadline_ns)
            return 0;
        sb_sleep_until_yielding_ns(due, SB_PACE_MARGIN_NS);
        uint64_t t = sb_now_ns();
        sb_req r = sb_request_at(j, w->first, len, a);
        unsigned char *data = sb_request_data(j, r, w->slot);
        sb_worker_submitted(w, t);
        if (j->engine->io(j, r.op, j->offsets[r.index], sb_request_len(j, r.index), data, &w->err) != 0)
            return -1;
        uint64_t now = sb_now_ns();
        if (sb_worker_done(w, r, data, t, now) != 0)
            return -1;
        if (!j->phase->warm_end_ns || now >= j->phase->warm_end_ns) {
            uint64_t late = t > due ? t - due : 0;
            sb_hist_record(&j->rate_hists[0], now - due);
            sb_hist_record(&j->rate_hists[1], late);
            if (late > SB_LATE_NS)
                j->late_issues++;
        }
    }
    return 0;
}

static void *sb_worker_main(void *arg)
{
    sb_start *s = arg;
    sb_worker *w = s->worker;
    pthread_mutex_lock(&s->gate->lock);
    s->gate->ready++;
    pthread_cond_broadcast(&s->gate->cond);
    while (!s->gate->go)
        pthread_cond_wait(&s->gate->cond, &s->gate->lock);
    pthread_mutex_unlock(&s->gate->lock);
    if (__atomic_load_n(w->stop, __ATOMIC_RELAXED))
        return NULL;
    int rc = w->job.io.method == SB_IO_URING ? sb_uring_worker(w)
             : w->job.rate_per_s > 0 ? sb_paced_worker(w) : sb_thread_worker(w);
    if (rc != 0) {
        w->failed = 1;
        __atomic_store_n(w->stop, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Add a worker's counters and latencies into the measurement. */
static void sb_merge(sb_job *job, const sb_worker *w)
{
    const sb_job *from = &w->job;
    job->calls += from->calls;
    if (from->largest_call_bytes > job->largest_call_bytes)
        job->largest_call_bytes = from->largest_call_bytes;
    job->bytes_moved += from->bytes_moved;
    job->tail_bytes_buffered += from->tail_bytes_buffered;
    job->verified += from->verified;
    job->requests_done += from->requests_done;
    job->warm_bytes += from->warm_bytes;
    job->warm_requests += from->warm_requests;
    sb_hist_merge(&job->hist, &from->hist);
    if (job->rate_hists) {
        sb_hist_merge(&job->rate_hists[0], &from->rate_hists[0]);
        sb_hist_merge(&job->rate_hists[1], &from->rate_hists[1]);
        job->late_issues += from->late_issues;
        job->unscheduled += from->unscheduled;
    }
    if (job->op == SB_MIXED) {
        for (int k = 0; k < 2; k++) {
            job->op_bytes[k] += from->op_bytes[k];
            job->op_requests[k] += from->op_requests[k];
            sb_hist_merge(&job->op_hists[k], &from->op_hists[k]);
        }
    }
}

/* A worker's own copy of the measurement: its counters and histograms start empty (a mixed one's two by-op
 * histograms in `hists`). */
static void sb_worker_job(sb_worker *w, const sb_job *job, sb_hist *hists, sb_hist *rate_hists,
                          const sb_phase *phase)
{
    sb_job *j = &w->job;
    *j = *job;
    j->rate_hists = rate_hists;
    if (rate_hists) {
        sb_hist_reset(&rate_hists[0]);
        sb_hist_reset(&rate_hists[1]);
    }
    j->late_issues = j->unscheduled = 0;
    j->calls = j->largest_call_bytes = j->bytes_moved = j->tail_bytes_buffered = j->verified = 0;
    j->requests_done = j->warm_bytes = j->warm_requests = 0;
    memset(j->op_bytes, 0, sizeof j->op_bytes);
    memset(j->op_requests, 0, sizeof j->op_requests);
    sb_hist_reset(&j->hist);
    j->op_hists = hists;
    if (hists) {
        sb_hist_reset(&hists[0]);
        sb_hist_reset(&hists[1]);
    }
    j->phase = phase;
}

/* The parts' ranges of one round: [firsts[p], ends[p]) of the pass for each of the threads. */
typedef struct {
    uint64_t firsts[SB_MAX_THREADS], ends[SB_MAX_THREADS];
    uint64_t done[SB_MAX_THREADS];  /* requests each part completed in the round */
    int bounded;                    /* the round's clock is the measurement's (its warm-up, deadline) */
} sb_round;

/* One round of workers over the parts' ranges, from the gate's opening to the last join: every worker's
 * counters and latencies merged into job, its first submission and last completion into first/last, the round's
 * clock into phase (where given). */
static int sb_parallel_round(sb_job *job, sb_round *round, sb_phase *phase, uint64_t *first, uint64_t *last,
                             sb_err *err)
{
    unsigned threads = job->threads, depth = job->queue_depth;
    int uring = job->io.method == SB_IO_URING;
    unsigned nworkers = uring ? threads : threads * depth;
    sb_worker *workers = calloc(nworkers, sizeof *workers);
    sb_start *starts = calloc(nworkers, sizeof *starts);
    pthread_t *tids = calloc(nworkers, sizeof *tids);
    uint64_t *next = calloc(threads, sizeof *next);
    sb_hist *hists = job->op == SB_MIXED ? calloc(2 * (size_t)nworkers, sizeof *hists) : NULL;
    sb_hist *rate_hists = job->rate_hists ? calloc(2 * (size_t)nworkers, sizeof *rate_hists) : NULL;
    int stop = 0, rc = 0;
    if (!workers || !starts || !tids || !next || (job->op == SB_MIXED && !hists) || (job->rate_hists && !rate_hists)) {
        rc = sb_fail(err, ENOMEM, "cannot allocate %u workers", nworkers);
        goto done;
    }
    sb_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, {0, 0, 0}};
    sb_stream stream = {PTHREAD_MUTEX_INITIALIZER, job, {.hist = job->chunk_hist}};
    for (unsigned i = 0; i < nworkers; i++) {
        sb_worker *w = &workers[i];
        unsigned part = uring ? i : i / depth;
        sb_worker_job(w, job, hists ? &hists[2 * (size_t)i] : NULL, rate_hists ? &rate_hists[2 * (size_t)i] : NULL,
                      &gate.phase);
        w->part = part;
        w->first = round->firsts[part];
        w->end = round->ends[part];
        w->next = &next[part];
        w->slot = uring ? i * depth : i;
        w->stop = &stop;
        w->stream = job->chunk_bytes ? &stream : NULL;
        starts[i].worker = w;
        starts[i].gate = &gate;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, SB_WORKER_STACK_BYTES);
    unsigned started = 0;
    for (; started < nworkers; started++) {
        int e = pthread_create(&tids[started], &attr, sb_worker_main, &starts[started]);
        if (e != 0) {
            rc = sb_fail(err, e, "cannot start thread %u of %u: %s; lower --queue-depth or --threads", started + 1,
                         nworkers, strerror(e));
            stop = 1;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    pthread_mutex_lock(&gate.lock);
    while (gate.ready < started)
        pthread_cond_wait(&gate.cond, &gate.lock);
    uint64_t opened = sb_now_ns();
    gate.phase = round->bounded ? sb_phase_from(job, opened) : (sb_phase){0, 0, opened};
    gate.go = 1;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    if (phase)
        *phase = gate.phase;
    if (rc != 0)
        goto done;
    for (unsigned i = 0; i < nworkers; i++) {
        sb_worker *w = &workers[i];
        if (w->failed && rc == 0)
            rc = (*err = w->err, -1);
        round->done[uring ? i : i / depth] += w->job.requests_done;
        sb_merge(job, w);
        if (w->first_submit_ns && w->first_submit_ns < *first)
            *first = w->first_submit_ns;
        if (w->last_complete_ns > *last)
            *last = w->last_complete_ns;
    }
done:
    free(hists);
    free(rate_hists);
    free(workers);
    free(starts);
    free(tids);
    free(next);
    return rc;
}

/* The most due times a part's Poisson schedule holds. */
#define SB_MAX_ARRIVALS ((uint64_t)50000000)

/* --rate with Poisson arrivals: each part's due times after the origin, drawn from the seed before the timer (the
 * gaps exponential at the part's rate): as many as its requests of one pass, or for a measurement by time as many
 * as its time can hold with ten standard deviations to spare. */
static int sb_prepare_arrivals(sb_job *job, const sb_round *round, sb_err *err)
{
    unsigned threads = job->threads;
    double part_rate = job->rate_per_s / threads;
    job->arrival_ns = calloc(threads, sizeof *job->arrival_ns);
    job->arrival_count = calloc(threads, sizeof *job->arrival_count);
    if (!job->arrival_ns || !job->arrival_count)
        return sb_fail(err, ENOMEM, "%s", "cannot allocate the arrivals");
    for (unsigned p = 0; p < threads; p++) {
        double want = (double)(round->ends[p] - round->firsts[p]);
        if (job->duration_ns) {
            double expected = part_rate * (double)(job->warmup_ns + job->duration_ns) / 1e9;
            want = expected + 10.0 * sqrt(expected) + 64.0;
        }
        if (want > (double)SB_MAX_ARRIVALS)
            return sb_fail(err, EINVAL, "--rate with --arrivals poisson schedules at most %llu requests a thread; "
                           "lower --rate or --duration, or use more --threads", (unsigned long long)SB_MAX_ARRIVALS);
        uint64_t n = (uint64_t)want;
        job->arrival_ns[p] = malloc((n ? n : 1) * sizeof **job->arrival_ns);
        if (!job->arrival_ns[p])
            return sb_fail(err, ENOMEM, "cannot allocate %llu arrivals", (unsigned long long)n);
        sb_rng r;
        sb_rng_seed(&r, job->seed * 0x9E3779B97F4A7C15ull + p + 1);
        double t = 0;
        for (uint64_t a = 0; a < n; a++) {
            job->arrival_ns[p][a] = (uint64_t)llround(t);
            /* a uniform in (0, 1] from the top 53 bits: its log is finite */
            double u = ((double)(sb_rng_next(&r) >> 11) + 1.0) / 9007199254740992.0;
            t += -log(u) * 1e9 / part_rate;
        }
        job->arrival_count[p] = n;
    }
    return 0;
}

static void sb_free_arrivals(sb_job *job)
{
    if (job->arrival_ns)
        for (unsigned p = 0; p < job->threads; p++)
            free(job->arrival_ns[p]);
    free(job->arrival_ns);
    free(job->arrival_count);
    job->arrival_ns = NULL;
    job->arrival_count = NULL;
}

int sb_parallel_io(sb_job *job, uint64_t *start_ns, uint64_t *end_ns, sb_err *err)
{
    unsigned threads = job->threads;
    sb_round round = {.bounded = 1};
    for (unsigned p = 0; p < threads; p++) {
        round.firsts[p] = job->nrequests * p / threads;
        round.ends[p] = job->nrequests * (p + 1) / threads;
    }
    sb_phase phase;
    uint64_t first = UINT64_MAX, last = 0;
    if (job->rate_per_s > 0 && job->arrivals == 1 && sb_prepare_arrivals(job, &round, err) != 0) {
        sb_free_arrivals(job);
        return -1;
    }
    int rc = sb_parallel_round(job, &round, &phase, &first, &last, err);
    sb_free_arrivals(job);
    if (rc != 0)
        return -1;
    *start_ns = first == UINT64_MAX ? sb_now_ns() : first;
    if (job->stonewall_ns) {
        uint64_t done = 0;
        for (unsigned p = 0; p < threads; p++)
            done += round.done[p];
        job->stonewall_requests = done;
        job->stonewall_io_ns = last > *start_ns ? last - *start_ns : 0;
    }
    if (job->wearout) {
        /* each part goes on from where it stopped, by its share of the requests the wear-out adds */
        uint64_t extra[SB_MAX_THREADS];
        if (sb_wearout_plan(job, threads, round.firsts, round.ends, round.done, extra, err) != 0)
            return -1;
        sb_round more = {.bounded = 0};
        for (unsigned p = 0; p < threads; p++) {
            more.firsts[p] = round.firsts[p] + round.done[p];
            more.ends[p] = more.firsts[p] + extra[p];
        }
        if (job->wearout_requests && sb_parallel_round(job, &more, NULL, &first, &last, err) != 0)
            return -1;
    }
    if (job->warmup_ns)
        *start_ns = phase.warm_end_ns;
    *end_ns = last > *start_ns ? last : *start_ns;
    return 0;
}
