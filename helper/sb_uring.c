/* sb_uring.c: the io_uring method (Linux, built with liburing): each thread keeps its part's
 * requests in flight on a ring of queue_depth entries, as fio's io_uring engine does with its
 * defaults (no registered files or buffers, no polling, one submission per batch). A request
 * is one read or write entry of at most the platform's largest transfer; a short completion is
 * continued with a new entry for the rest. Latency: completion seen minus submission.
 * Without liburing the file compiles to a probe that says so.
 * System calls: io_uring_setup, io_uring_enter (through liburing). */
#include "sb_parallel.h"
#include "sb_clock.h"
#include <errno.h>
#include <string.h>

#ifdef SB_HAVE_URING
#include <liburing.h>

enum sb_uring_state sb_uring_probe(void)
{
    /* once per process: a batch of measurements asks before each one */
    static enum sb_uring_state state = SB_URING_NOT_BUILT;
    if (state == SB_URING_NOT_BUILT) {
        struct io_uring ring;
        state = io_uring_queue_init(1, &ring, 0) < 0 ? SB_URING_REFUSED : SB_URING_AVAILABLE;
        if (state == SB_URING_AVAILABLE)
            io_uring_queue_exit(&ring);
    }
    return state;
}

typedef struct {
    sb_req request;
    uint64_t offset, left, submit_ns;
    unsigned char *data, *start;
} sb_uring_slot;

/* Queue the next transfer of slot k (at most the largest call). */
static int sb_uring_queue(struct io_uring *ring, sb_worker *w, sb_uring_slot *s, unsigned k)
{
    sb_job *j = &w->job;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (!sqe)
        return sb_fail(&w->err, EBUSY, "io_uring: no free submission entry");
    uint64_t chunk = s->left < j->max_call_bytes ? s->left : j->max_call_bytes;
    if (s->request.op == SB_WRITE)
        io_uring_prep_write(sqe, j->fd, s->data, (unsigned)chunk, s->offset);
    else
        io_uring_prep_read(sqe, j->fd, s->data, (unsigned)chunk, s->offset);
    sqe->user_data = k;
    sb_count_call(j, chunk);
    return 0;
}

/* One completion of slot k: continue a short transfer, or finish its request. */
static int sb_uring_complete(struct io_uring *ring, sb_worker *w, sb_uring_slot *s, unsigned k, int res,
                             uint64_t now, int *finished)
{
    sb_job *j = &w->job;
    *finished = 0;
    if (res == -EINTR || res == -EAGAIN)
        return sb_uring_queue(ring, w, s, k);
    if (res < 0)
        return sb_fail(&w->err, -res, "io_uring %s at offset %llu: %s",
                       s->request.op == SB_WRITE ? "write" : "read", (unsigned long long)s->offset, strerror(-res));
    if (res == 0)
        return s->request.op == SB_READ
                   ? sb_fail(&w->err, 0, "read past the end of the file at offset %llu", (unsigned long long)s->offset)
                   : sb_fail(&w->err, ENOSPC, "io_uring write at offset %llu wrote nothing", (unsigned long long)s->offset);
    j->bytes_moved += (uint64_t)res;
    s->offset += (uint64_t)res;
    s->data += res;
    s->left -= (uint64_t)res;
    if (s->left)
        return sb_uring_queue(ring, w, s, k);
    *finished = 1;
    return sb_worker_done(w, s->request, s->start, s->submit_ns, now);
}

int sb_uring_worker(sb_worker *w)
{
    sb_job *j = &w->job;
    unsigned depth = j->queue_depth, nfree = 0, inflight = 0, queued = 0;
    struct io_uring ring;
    int rc = io_uring_queue_init(depth, &ring, 0);
    if (rc < 0)
        return sb_fail(&w->err, -rc, "io_uring_queue_init(%u): %s", depth, strerror(-rc));
    sb_uring_slot slots[SB_MAX_QUEUE_DEPTH];
    unsigned free_slots[SB_MAX_QUEUE_DEPTH], fresh[SB_MAX_QUEUE_DEPTH];
    for (unsigned k = depth; k-- > 0;)
        free_slots[nfree++] = k;
    uint64_t next = 0, len = w->end - w->first;
    rc = 0;
    for (;;) {
        unsigned nfresh = 0;
        while (nfree && len && sb_request_more(j, next, len, j->phase->deadline_ns ? sb_now_ns() : 0) &&
               !__atomic_load_n(w->stop, __ATOMIC_RELAXED)) {
            unsigned k = free_slots[--nfree];
            sb_uring_slot *s = &slots[k];
            s->request = sb_request_at(j, w->first, len, next);
            s->offset = j->offsets[s->request.index];
            s->left = sb_request_len(j, s->request.index);
            s->data = s->start = sb_request_data(j, s->request, w->slot + k);
            next++;
            if ((rc = sb_uring_queue(&ring, w, s, k)) != 0)
                goto out;
            fresh[nfresh++] = k;
            inflight++;
            queued++;
        }
        if (queued) {
            uint64_t t = sb_now_ns();
            for (unsigned f = 0; f < nfresh; f++)
                slots[fresh[f]].submit_ns = t;
            sb_worker_submitted(w, t);
            int n = io_uring_submit(&ring);
            if (n < 0) {
                rc = sb_fail(&w->err, -n, "io_uring_submit: %s", strerror(-n));
                goto out;
            }
            queued = 0;
        }
        if (!inflight)
            break;
        struct io_uring_cqe *cqe;
        int e = io_uring_wait_cqe(&ring, &cqe);
        if (e == -EINTR)
            continue;
        if (e < 0) {
            rc = sb_fail(&w->err, -e, "io_uring_wait_cqe: %s", strerror(-e));
            goto out;
        }
        uint64_t now = sb_now_ns();
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            seen++;
            unsigned k = (unsigned)cqe->user_data;
            int finished;
            if ((rc = sb_uring_complete(&ring, w, &slots[k], k, cqe->res, now, &finished)) != 0)
                break;
            if (finished) {
                inflight--;
                free_slots[nfree++] = k;
            } else {
                queued++;
            }
        }
        io_uring_cq_advance(&ring, seen);
        if (rc != 0)
            goto out;
    }
out:
    io_uring_queue_exit(&ring);
    return rc;
}
#else
enum sb_uring_state sb_uring_probe(void)
{
    return SB_URING_NOT_BUILT;
}

int sb_uring_worker(sb_worker *w)
{
    return sb_fail(&w->err, ENOSYS, "the helper was built without liburing");
}
#endif
