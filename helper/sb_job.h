/* sb_job.h: one measurement: what to do (parsed from the command line), the
 * engine that does it, and what was measured. Shared by every engine. */
#ifndef SB_JOB_H
#define SB_JOB_H
#include <stddef.h>
#include <stdint.h>
#include "sb_hist.h"

enum sb_op { SB_READ, SB_WRITE };
enum sb_access { SB_SEQUENTIAL, SB_STRIDED, SB_RANDOM };
enum sb_sync { SB_SYNC_FSYNC, SB_SYNC_FULL, SB_SYNC_NONE };

/* A failure: what went wrong (one line) and the errno behind it (0 if none). */
typedef struct {
    char message[512];
    int errnum;
} sb_err;

int sb_fail(sb_err *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef struct sb_job sb_job;

/* An I/O engine: one table per engine, as fio's ioengines. io() moves one request
 * (looping over system calls and short transfers); every function returns 0 or -1
 * with err filled. */
typedef struct {
    const char *name;
    int (*open)(sb_job *job, sb_err *err);
    int (*io)(sb_job *job, uint64_t offset, uint64_t len, sb_err *err);
    int (*sync)(sb_job *job, sb_err *err);
    int (*close)(sb_job *job, sb_err *err);
} sb_engine;

struct sb_job {
    /* what to do */
    enum sb_op op;
    const char *path;
    uint64_t bytes, granularity, stride, span;
    enum sb_access access;
    uint64_t seed, data_seed;
    int fill_byte;              /* -1: random data from data_seed */
    enum sb_sync sync;
    int existing;               /* write into an existing file instead of creating one */
    int latency;                /* collect per-request latencies */
    const sb_engine *engine;
    const char *engine_name;    /* as asked: direct, buffered, foundation, app */

    /* prepared before the timer */
    uint64_t *offsets;
    uint64_t nrequests;
    unsigned char *buf;
    size_t buf_bytes;
    size_t buf_cursor;          /* where the next transfer starts in buf: written data does not repeat within buf */
    uint64_t align_bytes;       /* direct I/O alignment of offsets and lengths */
    uint64_t direct_body_end;   /* direct engine: requests end here at most; the rest is the buffered tail */

    /* engine state */
    int fd, tail_fd;
    void *handle;               /* foundation: the NSFileHandle */
    int created;                /* this run created path (so may remove it on failure) */
    int removed_partial;        /* a failed write removed the file it had created */
    int direct_honoured;        /* -1 unknown */
    uint64_t tail_bytes_buffered;
    uint64_t file_size_bytes;

    /* measured */
    uint64_t open_ns, io_ns, sync_ns, close_ns, start_ns, end_ns;
    uint64_t bytes_moved;
    double resident_before;     /* reads; -1 unknown */
    sb_hist hist;
};

/* Engines (sb_posix.c, sb_foundation.m). */
extern const sb_engine sb_engine_direct;
extern const sb_engine sb_engine_buffered;
extern const sb_engine sb_engine_foundation;
const char *sb_foundation_implementation(void);

/* Request offsets for the access pattern (sb_pattern.c): fills job->offsets. */
int sb_pattern_plan(sb_job *job, sb_err *err);
/* Length of request i (the last sequential request may be short). */
uint64_t sb_request_len(const sb_job *job, uint64_t i);

/* Run the measurement (sb_run.c): validate, prepare, time, report in job. */
int sb_run(sb_job *job, sb_err *err);

/* The next transfer of at most len bytes: where it starts in the buffer, and how long it is
 * (never past the buffer's end); sb_buffer_advance moves on by what was moved (sb_run.c). */
unsigned char *sb_buffer_chunk(const sb_job *job, uint64_t len, uint64_t *chunk);
void sb_buffer_advance(sb_job *job, uint64_t moved);

/* Buffers reused across a batch (sb_run.c). */
unsigned char *sb_buffer(size_t bytes, int fill_byte, uint64_t data_seed, sb_err *err);
#endif
