/* sb_parallel.h: the workers of a measurement with several requests in flight, shared by
 * the threads method (sb_parallel.c) and the io_uring method (sb_uring.c); what they do for one
 * request is in sb_request.c. */
#ifndef SB_PARALLEL_H
#define SB_PARALLEL_H
#include "sb_job.h"
#include <pthread.h>

/* --chunk with requests in flight: the chunk every worker's completions count into, in order of
 * completion; the measurement's job holds the row writer, the chunk counters and histogram. */
typedef struct {
    pthread_mutex_t lock;
    sb_job *job;
    sb_chunk chunk;
} sb_stream;

typedef struct {
    sb_job job;                 /* a copy of the measurement: its own counters and histogram */
    uint64_t first, end;        /* this thread's part of the requests: [first, end), in order */
    uint64_t *next;             /* threads method: the part's next request of the stream, shared by its workers */
    unsigned part;              /* which of the threads' parts it works on */
    unsigned slot;              /* reads: this worker's first buffer slot (io_uring: queue_depth of them) */
    int *stop;                  /* set by the first worker that fails */
    sb_stream *stream;          /* --chunk: the shared chunk; NULL without */
    uint64_t first_submit_ns, last_complete_ns;
    int failed;
    sb_err err;
} sb_worker;

/* The data of request r: a write's slice of the write buffer, or a read's slot of the read buffer. */
unsigned char *sb_request_data(const sb_job *job, sb_req r, unsigned slot);
/* A worker submitted requests at t: its first submission, and with --chunk the first chunk's start. */
void sb_worker_submitted(sb_worker *w, uint64_t t);
/* Request r, submitted at submit_ns, completed at now. Returns 0, or -1 (verify failed). */
int sb_worker_done(sb_worker *w, sb_req r, const unsigned char *data, uint64_t submit_ns, uint64_t now);

/* io_uring (Linux, built with liburing): one ring of queue_depth entries moves the worker's part. */
int sb_uring_worker(sb_worker *w);
#endif
