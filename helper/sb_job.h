/* sb_job.h: one measurement: what to do (parsed from the command line), the
 * engine that does it, and what was measured. Shared by every engine. */
#ifndef SB_JOB_H
#define SB_JOB_H
#include <stddef.h>
#include <stdint.h>
#include "sb_err.h"
#include "sb_hist.h"
#include "sb_policy.h"

enum sb_op { SB_READ, SB_WRITE, SB_MIXED };   /* mixed: each request a read or a write (--read-fraction) */
enum sb_access { SB_SEQUENTIAL, SB_STRIDED, SB_RANDOM };
/* The sync of a write: fsync; full (F_FULLFSYNC on Apple: the drive's cache flushed too); none; data
 * (fdatasync); barrier (F_BARRIERFSYNC on Apple: fsync and an ordering barrier, no flush); dsync (the file
 * opened O_DSYNC, every write synchronous: no call after the writes). docs/platforms.md. */
enum sb_sync { SB_SYNC_FSYNC, SB_SYNC_FULL, SB_SYNC_NONE, SB_SYNC_DATA, SB_SYNC_BARRIER, SB_SYNC_DSYNC };
#define SB_SYNC_COUNT 6

typedef struct sb_job sb_job;

/* One chunk of a streamed measurement (--chunk): its requests' bytes, where the measurement stood at its
 * end, its start and end on the raw clock, and the time the previous chunk's row took to write out
 * (the only time between two chunks that belongs to neither). */
typedef struct {
    uint64_t index, bytes, bytes_done, start_ns, end_ns, gap_ns, requests;
    uint64_t requests_done;     /* of the measurement, up to this chunk's end */
    const sb_hist *hist;        /* its requests' latencies */
} sb_chunk;

/* An I/O engine: one table per engine, as fio's ioengines. io() moves one request of len
 * bytes at offset (op: SB_READ or SB_WRITE) from or into data (a contiguous buffer slice of at least len bytes), in as
 * few calls as the platform allows, continuing short transfers; every function returns 0 or
 * -1 with err filled. */
typedef struct {
    const char *name;
    int uncached;        /* asks the platform to bypass the page cache (direct) */
    int counts_syscalls; /* its calls are system calls the helper makes itself (POSIX engines);
                          * the foundation engine counts its Foundation calls instead */
    int (*open)(sb_job *job, sb_err *err);
    int (*io)(sb_job *job, enum sb_op op, uint64_t offset, uint64_t len, unsigned char *data, sb_err *err);
    int (*sync)(sb_job *job, sb_err *err);
    int (*close)(sb_job *job, sb_err *err);
} sb_engine;

/* The clock of a measurement bounded by time (--duration, --warmup, --stonewall), set when its requests start: a
 * request that completes before warm_end_ns counts into the warm-up, none is submitted at or after deadline_ns. */
typedef struct {
    uint64_t warm_end_ns, deadline_ns;
    uint64_t origin_ns;         /* the measurement's start (the gate's opening): --rate's due times count from it */
} sb_phase;

/* --rate: a request issued more than this after its due time is late (the instrument's own lateness). */
#define SB_LATE_NS 100000u

/* One request of the measurement's stream: which of the pass's requests it is, and whether it reads or writes. */
typedef struct {
    uint64_t index;
    enum sb_op op;
} sb_req;

/* State of the direct engine (sb_posix.c). */
typedef struct {
    int tail_fd;                /* Linux: buffered descriptor for an unaligned final part, or -1 */
    uint64_t body_end;          /* Linux: requests end here at most on the direct descriptor (a file offset) */
} sb_direct_state;

struct sb_job {
    /* what to do */
    enum sb_op op;
    const char *path;
    uint64_t bytes, granularity, stride, span;
    uint64_t offset;            /* --offset: every request lies this many bytes further into the file (a client's
                                 * segment of a shared file) */
    enum sb_access access;
    uint64_t seed, data_seed;
    int fill_byte;              /* -1: random data from data_seed; SB_FILL_OFFSET: each 8-byte word its own offset */
    unsigned compressible_pct;  /* with fill_byte -1: the share of each 4 KiB block that is zeros (--fill compressible=) */
    unsigned dedupe_pct;        /* and the share of blocks that repeat an earlier one (--fill ...,dedupe=) */
    enum sb_sync sync;
    int existing;               /* write into an existing file instead of creating one */
    int latency;                /* collect per-request latencies */
    const sb_engine *engine;
    const char *engine_name;    /* as asked: direct, buffered, foundation, app */
    unsigned queue_depth;       /* requests in flight per thread (1-256) */
    unsigned threads;           /* threads, each with its own part of the requests (1-64) */
    enum sb_io_asked io_asked;  /* --io-method: auto, io_uring, threads */
    int verify;                 /* check each request: its block once; reads: the block-numbered data */
    uint64_t chunk_bytes;       /* stream a row for every chunk_bytes moved (0: none) */
    double frame_ns;            /* --fps: each chunk a frame, chunk k started no earlier than start + k * frame_ns
                                 * (0: chunks back to back) */
    uint64_t pace_t0_ns;        /* --fps: the measurement's start, which the frames' times count from */
    uint64_t device_block_bytes;/* --device-block: the disk's block size where the caller knows it (0: not given) */
    double read_fraction;       /* mixed: the share of the requests that read (--read-fraction) */
    uint64_t duration_ns;       /* --duration: submit requests until this much time after the warm-up (0: one pass) */
    uint64_t warmup_ns;         /* --warmup: requests completed this long after the start count apart */
    uint64_t stonewall_ns;      /* --stonewall: a measurement of its bytes submits nothing this long after its start */
    int wearout;                /* --wearout: after the stonewall, ask on_stonewall how many requests to reach, and go
                                 * on to that many (many clients: every client completes the furthest one's count) */
    int (*on_stonewall)(sb_job *job, uint64_t *target, sb_err *err);
    void (*on_chunk)(const sb_job *job, const sb_chunk *chunk);
    double rate_per_s;          /* --rate: requests a second over the whole measurement (each thread's part its
                                 * share), each issued at its due time however many are still in flight, up to
                                 * queue_depth a thread (0: each as soon as its slot is free, closed loop) */
    int arrivals;               /* --arrivals: 0 constant (evenly spaced), 1 poisson (exponential gaps, seeded) */
    sb_hist *chunk_hist;        /* the current chunk's latencies (allocated when chunk_bytes is set) */

    /* prepared before the timer */
    uint64_t *offsets;
    uint64_t nrequests;         /* of one pass; a measurement by time repeats the pass until its deadline */
    unsigned char *writes;      /* mixed: 1 where request i of the first pass writes (exactly the asked share) */
    uint64_t mix_rotation;      /* mixed: pass p reads writes[] rotated by p times this many requests */
    const sb_phase *phase;      /* the warm-up's end and the deadline (zero: none) */
    size_t *slices;             /* writes: where request i's data start in buf */
    size_t slot_bytes;          /* reads with requests in flight: each one's part of buf */
    unsigned char *seen;        /* verify: one bit per block */
    sb_io_choice io;            /* how the requests move (sb_policy_io_method) */
    unsigned char *buf;         /* writes: the data stream */
    size_t buf_bytes;
    unsigned char *rbuf;        /* reads: one slot per request in flight */
    size_t page_bytes;
    sb_uncached_params uncached;/* what decides whether requests bypass the cache */
    uint64_t max_call_bytes;    /* the largest transfer one call makes */

    /* engine state */
    int fd;
    void *handle;               /* foundation: the NSFileHandle */
    sb_direct_state direct;
    int created;                /* this run created path (so may remove it on failure) */
    int removed_partial;        /* a failed write removed the file it had created */
    uint64_t file_size_bytes;

    /* decided per measurement from its requests (direct engine) */
    int direct_honoured;        /* 1 uncached, 0 not, -1 unknown */
    enum sb_uncached_how first_cached_how; /* why the first cached request went through the cache */
    uint64_t cached_bytes;      /* bytes of a direct measurement that went through the page cache */
    uint64_t tail_bytes_buffered; /* Linux: of those, moved through the buffered tail descriptor */

    /* measured */
    uint64_t open_ns, io_ns, sync_ns, close_ns, start_ns, end_ns;
    uint64_t bytes_moved;       /* every request's, warm-up included */
    uint64_t requests_done;     /* requests completed after the warm-up */
    uint64_t warm_bytes, warm_requests;  /* requests completed inside the warm-up */
    uint64_t op_bytes[2], op_requests[2];/* mixed, after the warm-up: by op (0 read, 1 write) */
    sb_hist *op_hists;          /* mixed: the latencies by op (two histograms; NULL otherwise) */
    uint64_t **arrival_ns;      /* --rate, poisson: each part's due times after the origin, prepared before the
                                 * timer (arrival_count[p] of them) */
    uint64_t *arrival_count;
    sb_hist *rate_hists;        /* --rate: [0] response time (completion less due time), [1] lateness (issue less
                                 * due time), of the requests completed after the warm-up; NULL without --rate */
    uint64_t late_issues;       /* --rate: of those, issued more than SB_LATE_NS after their due time */
    uint64_t unscheduled;       /* --rate: requests left undone because the schedule held no more due times */
    uint64_t calls, largest_call_bytes;  /* I/O calls made inside the timed interval */
    const char *sync_used;      /* fsync, F_FULLFSYNC, fsync (F_FULLFSYNC refused), synchronizeFile, none */
    double resident_before;     /* reads; -1 unknown */
    sb_hist hist;
    uint64_t verified;          /* verify: requests checked */
    uint64_t chunks, chunk_gaps_ns;  /* chunk rows written, and the time their writing took */
    uint64_t stonewall_requests;/* --stonewall: requests completed by the stonewall (before any wear-out) */
    uint64_t stonewall_io_ns;   /* and the time from the first submission to the last of their completions */
    uint64_t wearout_requests;  /* --wearout: requests completed after it */
};

#define SB_FILL_OFFSET (-2)
/* A mixed measurement's writes fall on other requests from pass to pass: each pass rotates the first pass's
 * choice by this share of the requests (the golden ratio's, so that the passes differ). */
#define SB_MIX_ROTATION 0.6180339887498949

/* Engines (sb_posix.c, sb_foundation.m). */
extern const sb_engine sb_engine_direct;
extern const sb_engine sb_engine_buffered;
extern const sb_engine sb_engine_foundation;
const char *sb_foundation_implementation(void);

/* Count one I/O call of `bytes` (engines call it for every call they make). */
void sb_count_call(sb_job *job, uint64_t bytes);

/* Request offsets for the access pattern (sb_pattern.c): fills job->offsets. */
int sb_pattern_plan(sb_job *job, sb_err *err);
/* Request a of the stream (from 0) among requests [first, first + len) of the pass: a measurement by time
 * cycles over them; a mixed one's reads and writes move to other requests from pass to pass (sb_request.c). */
sb_req sb_request_at(const sb_job *job, uint64_t first, uint64_t len, uint64_t a);
/* The warm-up's end and the deadline of a measurement whose requests start at origin_ns. */
sb_phase sb_phase_from(const sb_job *job, uint64_t origin_ns);
/* Whether request a of a part of len requests is submitted at now: before the deadline (where there is one),
 * and within the pass (a measurement by time cycles over it). */
int sb_request_more(const sb_job *job, uint64_t a, uint64_t len, uint64_t now);
/* Whether a request may still be submitted at now: before the deadline, where there is one. */
int sb_request_in_time(const sb_job *job, uint64_t now);
/* Whether request a is one to submit of a part of len: within the pass (a measurement by time cycles over it). */
int sb_request_in_pass(const sb_job *job, uint64_t a, uint64_t len);
/* --wearout: the stonewall has come (job->stonewall_requests recorded) with done requests completed in each of the
 * parts [firsts[i], ends[i]): asks job->on_stonewall for the total to reach and cuts what is left of it from the parts, in proportion to
 * what each has left, into extra[i] (sb_request.c). Returns 0 or -1 with err filled. */
int sb_wearout_plan(sb_job *job, unsigned nparts, const uint64_t *firsts, const uint64_t *ends, const uint64_t *done,
                    uint64_t *extra, sb_err *err);
/* A request of len bytes that took latency_ns completed at now: into the warm-up's counts or the
 * measurement's (and a mixed one's op); returns 1 where it counted into the measurement. */
int sb_request_account(sb_job *job, sb_req r, uint64_t len, uint64_t latency_ns, uint64_t now);
/* Length of request i (the last sequential request may be short). */
uint64_t sb_request_len(const sb_job *job, uint64_t i);
/* The largest request of the job. */
uint64_t sb_largest_request(const sb_job *job);

/* Whether the platform can set up an io_uring here (sb_uring.c; NOT_BUILT elsewhere). */
enum sb_uring_state sb_uring_probe(void);
/* Requests with several in flight (sb_parallel.c): moves every request of the job with its
 * method (io_uring or threads), from the first submission (*start_ns) to the last completion
 * (*end_ns); counters and latencies into job. */
int sb_parallel_io(sb_job *job, uint64_t *start_ns, uint64_t *end_ns, sb_err *err);
/* --chunk: a request of len bytes that took latency_ns completed into chunk c; returns 1 when that fills
 * the chunk (or was the measurement's last request), 0 otherwise (sb_request.c). */
int sb_chunk_add(sb_job *job, sb_chunk *c, uint64_t len, uint64_t latency_ns);
/* --chunk: close chunk c at end_ns (its row written by job->on_chunk) and start the next one; returns its
 * start, the time after the row was written (sb_request.c). */
uint64_t sb_close_chunk(sb_job *job, sb_chunk *c, uint64_t end_ns);
/* verify: request r's block was not moved before, and a read brought its own offsets. */
int sb_verify_request(sb_job *job, sb_req r, const unsigned char *data, sb_err *err);
/* Run the measurement (sb_run.c): validate, prepare, time, report in job. */
int sb_run(sb_job *job, sb_err *err);
#endif
