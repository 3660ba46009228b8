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
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SB_WORKER_STACK_BYTES ((size_t)256 << 10)

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned ready;
    int go;
} sb_gate;

typedef struct {
    sb_worker *worker;
    sb_gate *gate;
} sb_start;

/* The threads method: take the part's next request until none is left. */
static int sb_thread_worker(sb_worker *w)
{
    sb_job *j = &w->job;
    for (;;) {
        if (__atomic_load_n(w->stop, __ATOMIC_RELAXED))
            return 0;
        uint64_t i = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);
        if (i >= w->end)
            return 0;
        unsigned char *data = sb_request_data(j, i, w->slot);
        uint64_t t = sb_now_ns();
        sb_worker_submitted(w, t);
        if (j->engine->io(j, j->offsets[i], sb_request_len(j, i), data, &w->err) != 0)
            return -1;
        if (sb_worker_done(w, i, data, t, sb_now_ns()) != 0)
            return -1;
    }
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
    int rc = w->job.io.method == SB_IO_URING ? sb_uring_worker(w) : sb_thread_worker(w);
    if (rc != 0) {
        w->failed = 1;
        __atomic_store_n(w->stop, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* Add a worker's counters and latencies into the measurement. */
static void sb_merge(sb_job *job, const sb_worker *w)
{
    job->calls += w->job.calls;
    if (w->job.largest_call_bytes > job->largest_call_bytes)
        job->largest_call_bytes = w->job.largest_call_bytes;
    job->bytes_moved += w->job.bytes_moved;
    job->tail_bytes_buffered += w->job.tail_bytes_buffered;
    job->verified += w->job.verified;
    sb_hist_merge(&job->hist, &w->job.hist);
}

int sb_parallel_io(sb_job *job, uint64_t *start_ns, uint64_t *end_ns, sb_err *err)
{
    unsigned threads = job->threads, depth = job->queue_depth;
    int uring = job->io.method == SB_IO_URING;
    unsigned nworkers = uring ? threads : threads * depth;
    sb_worker *workers = calloc(nworkers, sizeof *workers);
    sb_start *starts = calloc(nworkers, sizeof *starts);
    pthread_t *tids = calloc(nworkers, sizeof *tids);
    uint64_t *next = calloc(threads, sizeof *next);
    int stop = 0, rc = 0;
    if (!workers || !starts || !tids || !next) {
        rc = sb_fail(err, ENOMEM, "cannot allocate %u workers", nworkers);
        goto done;
    }
    sb_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    sb_stream stream = {PTHREAD_MUTEX_INITIALIZER, job, {.hist = job->chunk_hist}};
    for (unsigned t = 0; t < threads; t++)
        next[t] = job->nrequests * t / threads;
    for (unsigned i = 0; i < nworkers; i++) {
        sb_worker *w = &workers[i];
        unsigned part = uring ? i : i / depth;
        w->job = *job;
        w->job.calls = w->job.largest_call_bytes = w->job.bytes_moved = w->job.tail_bytes_buffered = 0;
        w->job.verified = 0;
        sb_hist_reset(&w->job.hist);
        w->first = job->nrequests * part / threads;
        w->end = job->nrequests * (part + 1) / threads;
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
    gate.go = 1;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    if (rc != 0)
        goto done;
    uint64_t first = UINT64_MAX, last = 0;
    for (unsigned i = 0; i < nworkers; i++) {
        sb_worker *w = &workers[i];
        if (w->failed && rc == 0)
            rc = (*err = w->err, -1);
        sb_merge(job, w);
        if (w->first_submit_ns && w->first_submit_ns < first)
            first = w->first_submit_ns;
        if (w->last_complete_ns > last)
            last = w->last_complete_ns;
    }
    *start_ns = first == UINT64_MAX ? sb_now_ns() : first;
    *end_ns = last > *start_ns ? last : *start_ns;
done:
    free(workers);
    free(starts);
    free(tids);
    free(next);
    return rc;
}
