/* sb_replay.h: a program's recorded file calls (a trace, docs/trace-format.md) issued again below a folder, each
 * thread's calls in order, and a call that another thread's call on the same file or open file preceded in the
 * recording waiting for it; every call timed on the raw monotonic clock. Python turns the trace into the script
 * this reads (stibium_py/kinds/replay/script.py, docs/helper-protocol.md): the files by index, the open files the
 * trace met already open, and one line per call. Plain POSIX calls, buffered, as the program made them. */
#ifndef SB_REPLAY_H
#define SB_REPLAY_H
#include <stddef.h>
#include <stdint.h>
#include "sb_err.h"
#include "sb_hist.h"

/* The calls, in the trace's order of kinds (model.CALLS without mmap, which no call replays). */
typedef enum { SB_RP_OPEN, SB_RP_CLOSE, SB_RP_READ, SB_RP_WRITE, SB_RP_SEEK, SB_RP_FSYNC, SB_RP_FDATASYNC,
               SB_RP_SYNC_RANGE, SB_RP_SYNCFS, SB_RP_TRUNCATE, SB_RP_ALLOCATE, SB_RP_RENAME, SB_RP_UNLINK,
               SB_RP_MKDIR, SB_RP_RMDIR, SB_RP_STAT, SB_RP_LIST, SB_RP_COPY, SB_RP_FULLSYNC,
               /* posix_fadvise's six advices, in Linux's order (sb_advise_fd) */
               SB_RP_ADVISE_NORMAL, SB_RP_ADVISE_RANDOM, SB_RP_ADVISE_SEQUENTIAL, SB_RP_ADVISE_WILLNEED,
               SB_RP_ADVISE_DONTNEED, SB_RP_ADVISE_NOREUSE, SB_RP_KINDS } sb_rp_kind;
extern const char *const sb_rp_kind_names[SB_RP_KINDS];

/* How each thread spaces its calls: fast (the next when the last returns), think (after the recorded time
 * between the last call's end and this one's start), recorded (at its recorded time after the replay's start;
 * late where the calls before it took longer). */
typedef enum { SB_RP_FAST, SB_RP_THINK, SB_RP_RECORDED, SB_RP_TIMINGS } sb_rp_timing;
extern const char *const sb_rp_timing_names[SB_RP_TIMINGS];

#define SB_RP_CREATE 1          /* open: the file does not exist yet at this point of the replay (O_CREAT) */
#define SB_RP_FOLDER 2          /* open: a folder (O_DIRECTORY) */

typedef struct {
    uint32_t thread;
    sb_rp_kind kind;
    int32_t file, to_file;      /* indexes into the files, -1 none */
    int32_t handle, to_handle;  /* open files, -1 none (a copy's to_handle: its destination's, or -1: opened by name) */
    int64_t offset;             /* -1: the open file's own position */
    uint64_t bytes;
    uint32_t flags;             /* SB_RP_CREATE, SB_RP_FOLDER */
    uint64_t gap_ns;            /* think: the recorded time between the thread's last call's end and this start */
    uint64_t due_ns;            /* recorded: its start after the replay's */
    int64_t after[4];           /* calls (indexes) of other threads on the same files or open files that come first */
    int failed;                 /* it failed in the recording */
    int needed;                 /* a later call of another thread waits for it */
} sb_rp_call;

typedef struct {
    char *path;                 /* relative to the root ("." the root itself) */
    int folder;
    int64_t size;               /* before the program ran; -1: it did not exist */
} sb_rp_file;

typedef struct {
    const char *root;
    sb_rp_timing timing;
    uint64_t data_seed;
    int fill_byte;              /* the data written (sb_buffer_write): -1 from the seed, of the shares below; or a byte */
    unsigned compressible_pct, dedupe_pct;
    int evict;                  /* layout: each file's pages dropped after it is written */
    sb_rp_file *files;
    size_t n_files;
    int32_t *preopened;         /* handle, file pairs: open files the trace met already open */
    size_t n_preopened;
    size_t n_handles;
    sb_rp_call *calls;
    size_t n_calls;
    uint32_t threads;
} sb_rp_job;

typedef struct {
    uint64_t count, bytes, in_calls_ns, mismatched;
    sb_hist hist;
} sb_rp_kind_total;

#define SB_RP_SLOWEST 10

typedef struct {
    uint64_t start_ns, end_ns;
    uint64_t in_calls_ns;       /* every thread's time in calls, summed */
    uint64_t think_ns;          /* the time the threads waited for a call's recorded gap or due time */
    uint64_t waited_ns;         /* the time the threads waited for another thread's call on the same file */
    uint64_t late, late_max_ns; /* recorded: calls issued more than 100 us after their due time, the latest of them */
    sb_hist lateness;           /* recorded: how late each late call was */
    uint64_t mismatched;        /* calls that failed where the recording's succeeded, or the other way round */
    int64_t first_mismatch;     /* the first such call's index, or -1 */
    int first_mismatch_errno;   /* its error (0: it succeeded where the recording's failed) */
    sb_rp_kind_total kinds[SB_RP_KINDS];
    int64_t slowest[SB_RP_SLOWEST];     /* the slowest calls' indexes, slowest first (-1: none) */
    uint64_t slowest_ns[SB_RP_SLOWEST];
} sb_rp_result;

/* The script (docs/helper-protocol.md, "replay"); every path held to a plain relative path. */
int sb_rp_load(const char *script_path, sb_rp_job *job, sb_err *err);
void sb_rp_free(sb_rp_job *job);
/* The files and folders that existed before the program ran, made below the root (which must exist and be empty
 * of them): each file written with the fill to its recorded size, synced and (evict) its pages dropped. */
int sb_rp_layout(const sb_rp_job *job, uint64_t *files, uint64_t *bytes, sb_err *err);
/* The calls issued, timed; res is large (a histogram a kind): allocate it. */
int sb_rp_run(const sb_rp_job *job, sb_rp_result *res, sb_err *err);
#endif
