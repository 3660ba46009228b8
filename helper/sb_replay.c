/* sb_replay.c: a trace's calls issued again (see sb_replay.h). */
#include "sb_replay.h"
#include "sb_buffer.h"
#include "sb_clock.h"
#include "sb_platform.h"
#include "sb_job.h"
#include "sb_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const sb_rp_kind_names[SB_RP_KINDS] = {"open", "close", "read", "write", "seek", "fsync", "fdatasync",
                                                   "sync_range", "syncfs", "truncate", "allocate", "rename",
                                                   "unlink", "mkdir", "rmdir", "stat", "list", "copy", "fullsync",
                                                   "advise_normal", "advise_random", "advise_sequential",
                                                   "advise_willneed", "advise_dontneed", "advise_noreuse"};
const char *const sb_rp_timing_names[SB_RP_TIMINGS] = {"fast", "think", "recorded"};

#define SB_RP_MAX_CALLS 2000000u
#define SB_RP_MAX_FILES 100000u
#define SB_RP_MAX_THREADS 4096u
#define SB_RP_MAX_REQUEST ((uint64_t)256 << 20)     /* a read, write or copy of one call (the buffers' size) */
#define SB_RP_LIST_BYTES ((size_t)1 << 16)          /* a listing's and a copy's buffer at the least */
#define SB_RP_LAYOUT_BUFFER ((size_t)1 << 20)
/* as-recorded: a call issued more than this after its due time is late (a sleep's own wake-up, sb_sleep_until_ns,
 * is within microseconds of it: a call due when its thread was idle is not late) */
#define SB_RP_LATE_NS ((uint64_t)100000)

/* A path the script may name: "." (the root), or a plain relative path (sb_relative_path_ok) of the trace's
 * characters, [A-Za-z0-9._-] and "/". */
static int sb_rp_path_ok(const char *p)
{
    if (strcmp(p, ".") == 0)
        return 1;
    for (const char *c = p; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-' || *c == '/'))
            return 0;
    return sb_relative_path_ok(p);
}

void sb_rp_free(sb_rp_job *job)
{
    for (size_t i = 0; job->files && i < job->n_files; i++)
        free(job->files[i].path);
    free(job->files);
    free(job->preopened);
    free(job->calls);
    job->files = NULL;
    job->preopened = NULL;
    job->calls = NULL;
    job->n_files = job->n_preopened = job->n_calls = 0;
}

/* Whole numbers from a line, space-separated: n of them, each within [lo, hi]; the rest of the line after them. */
static int sb_rp_numbers(char **at, int64_t *out, int n, int64_t lo, int64_t hi)
{
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(*at, &end, 10);
        if (end == *at || errno || v < lo || v > hi || (*end != ' ' && *end != '\n' && *end != '\0'))
            return -1;
        out[i] = v;
        *at = *end == ' ' ? end + 1 : end;
    }
    return 0;
}

static int sb_rp_line(sb_rp_job *job, char *line, size_t *files, size_t *pre, size_t *calls, sb_err *err)
{
    char tag = line[0];
    char *at = line + 2;
    int64_t v[17];
    if (line[0] == '\0' || line[1] != ' ')
        return -1;
    if (tag == 'F') {
        if (*files >= job->n_files || sb_rp_numbers(&at, v, 2, -1, INT64_MAX) != 0 || v[0] > 1)
            return -1;
        at[strcspn(at, "\n")] = '\0';
        if (!sb_rp_path_ok(at))
            return sb_fail(err, EINVAL, "the script names the path '%.80s', which is not a plain relative path", at);
        sb_rp_file *f = &job->files[(*files)++];
        f->folder = (int)v[0];
        f->size = v[1];
        if (!(f->path = strdup(at)))
            return sb_fail(err, ENOMEM, "no memory for the script's files");
        return 0;
    }
    if (tag == 'P') {
        if (*pre >= job->n_preopened || sb_rp_numbers(&at, v, 2, 0, INT32_MAX) != 0 ||
            (uint64_t)v[0] >= job->n_handles || (uint64_t)v[1] >= job->n_files)
            return -1;
        job->preopened[2 * *pre] = (int32_t)v[0];
        job->preopened[2 * *pre + 1] = (int32_t)v[1];
        (*pre)++;
        return 0;
    }
    if (tag != 'C' || *calls >= job->n_calls || sb_rp_numbers(&at, v, 17, -1, INT64_MAX) != 0)
        return -1;
    size_t k = *calls;
    int64_t nf = (int64_t)job->n_files, nh = (int64_t)job->n_handles;
    if (v[0] < 0 || v[0] >= job->threads || v[1] < 0 || v[1] >= SB_RP_KINDS || v[2] >= nf || v[3] >= nf ||
        v[4] >= nh || v[5] >= nh || v[7] < 0 || v[8] < 0 || v[8] > 3 || v[9] < 0 || v[10] < 0 ||
        v[11] >= (int64_t)k || v[12] >= (int64_t)k || v[13] >= (int64_t)k || v[14] >= (int64_t)k || v[15] < 0 ||
        v[15] > 1 || v[16] < 0 || v[16] > 1)
        return -1;
    sb_rp_call *c = &job->calls[k];
    *c = (sb_rp_call){.thread = (uint32_t)v[0], .kind = (sb_rp_kind)v[1], .file = (int32_t)v[2],
                      .to_file = (int32_t)v[3], .handle = (int32_t)v[4], .to_handle = (int32_t)v[5],
                      .offset = v[6], .bytes = (uint64_t)v[7], .flags = (uint32_t)v[8], .gap_ns = (uint64_t)v[9],
                      .due_ns = (uint64_t)v[10], .after = {v[11], v[12], v[13], v[14]}, .failed = (int)v[15],
                      .needed = (int)v[16]};
    int moves = c->kind == SB_RP_READ || c->kind == SB_RP_WRITE || c->kind == SB_RP_COPY;
    if (moves && c->bytes > SB_RP_MAX_REQUEST)
        return sb_fail(err, EINVAL, "call %zu asks %llu bytes; a replayed call moves at most 256 MiB", k,
                       (unsigned long long)c->bytes);
    /* what each call needs: a file by name, an open file, or both (a copy: its source open, its destination) */
    int by_handle = c->kind == SB_RP_CLOSE || c->kind == SB_RP_READ || c->kind == SB_RP_WRITE ||
                    c->kind == SB_RP_SEEK || c->kind == SB_RP_FSYNC || c->kind == SB_RP_FDATASYNC ||
                    c->kind == SB_RP_SYNC_RANGE || c->kind == SB_RP_SYNCFS || c->kind == SB_RP_ALLOCATE ||
                    c->kind == SB_RP_LIST || c->kind == SB_RP_COPY || c->kind == SB_RP_FULLSYNC ||
                    (c->kind >= SB_RP_ADVISE_NORMAL && c->kind <= SB_RP_ADVISE_NOREUSE);
    if ((by_handle && c->handle < 0) || (!by_handle && c->file < 0 && c->handle < 0) ||
        ((c->kind == SB_RP_RENAME || c->kind == SB_RP_COPY) && c->to_file < 0))
        return -1;
    (*calls)++;
    return 0;
}

int sb_rp_load(const char *script_path, sb_rp_job *job, sb_err *err)
{
    FILE *f = fopen(script_path, "r");
    if (!f)
        return sb_fail(err, errno, "cannot open the script %s: %s", script_path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, lineno = 1, files = 0, pre = 0, calls = 0;
    unsigned long long nf, np, nh, nc;
    unsigned threads;
    int rc = 0;
    if (getline(&line, &cap, f) < 0 ||
        sscanf(line, "stibium-replay 1 %llu %llu %llu %llu %u", &nf, &np, &nh, &nc, &threads) != 5 ||
        nf > SB_RP_MAX_FILES || np > nh || nh > SB_RP_MAX_CALLS || nc > SB_RP_MAX_CALLS || threads < 1 ||
        threads > SB_RP_MAX_THREADS) {
        rc = sb_fail(err, EINVAL, "%s is not a replay script of version 1 within its bounds", script_path);
    } else {
        job->n_files = nf;
        job->n_preopened = np;
        job->n_handles = nh;
        job->n_calls = nc;
        job->threads = threads;
        job->files = calloc(nf ? nf : 1, sizeof *job->files);
        job->preopened = calloc(np ? 2 * np : 1, sizeof *job->preopened);
        job->calls = calloc(nc ? nc : 1, sizeof *job->calls);
        if (!job->files || !job->preopened || !job->calls)
            rc = sb_fail(err, ENOMEM, "no memory for the script's %llu calls", nc);
    }
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        lineno++;
        if (sb_rp_line(job, line, &files, &pre, &calls, err) != 0) {
            if (!err->message[0] || err->errnum == 0)
                sb_fail(err, EINVAL, "line %zu of the script %s is not of its form", lineno, script_path);
            rc = -1;
        }
    }
    if (rc == 0 && (files != job->n_files || pre != job->n_preopened || calls != job->n_calls))
        rc = sb_fail(err, EINVAL, "the script %s holds fewer lines than its first line says", script_path);
    free(line);
    fclose(f);
    if (rc != 0)
        sb_rp_free(job);
    return rc;
}

static void sb_rp_path(char *out, const sb_rp_job *job, int32_t file)
{
    const char *rel = job->files[file].path;
    if (strcmp(rel, ".") == 0)
        snprintf(out, PATH_MAX, "%s", job->root);
    else
        snprintf(out, PATH_MAX, "%s/%s", job->root, rel);
}

/* The folders above path (below the root), made where missing. */
static int sb_rp_parents(const sb_rp_job *job, const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *slash = strchr(p + strlen(job->root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -1;
        *slash = '/';
    }
    return 0;
}

int sb_rp_layout(const sb_rp_job *job, uint64_t *files, uint64_t *bytes, sb_err *err)
{
    *files = *bytes = 0;
    unsigned char *buf = NULL;
    char p[PATH_MAX];
    for (size_t i = 0; i < job->n_files; i++) {
        const sb_rp_file *f = &job->files[i];
        if (f->size < 0 || strcmp(f->path, ".") == 0)
            continue;
        sb_rp_path(p, job, (int32_t)i);
        if (sb_rp_parents(job, p) != 0)
            return sb_fail(err, errno, "cannot make the folders of %s: %s", p, strerror(errno));
        if (f->folder) {
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return sb_fail(err, errno, "cannot make the folder %s: %s", p, strerror(errno));
            continue;
        }
        if (!buf && !(buf = sb_buffer_write(SB_RP_LAYOUT_BUFFER, job->fill_byte, job->compressible_pct, job->dedupe_pct,
                                            job->data_seed, 0, err)))
            return -1;
        int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
            return sb_fail(err, errno, "cannot create %s: %s", p, strerror(errno));
        for (uint64_t left = (uint64_t)f->size; left;) {
            ssize_t k = write(fd, buf, left < SB_RP_LAYOUT_BUFFER ? (size_t)left : SB_RP_LAYOUT_BUFFER);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                int e = k < 0 ? errno : EIO;
                close(fd);
                return sb_fail(err, e, "cannot write %s: %s", p, strerror(e));
            }
            left -= (uint64_t)k;
        }
        /* synced and its pages dropped: the replay's first reads of it go to the disk, as after a reboot */
        if (job->evict && f->size > 0 && sb_evict_fd(fd, 0, 0, err) != 0) {
            close(fd);
            return -1;
        }
        if (close(fd) != 0)
            return sb_fail(err, errno, "cannot close %s: %s", p, strerror(errno));
        (*files)++;
        *bytes += (uint64_t)f->size;
    }
    return 0;
}

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t ready_cond;  /* a thread is ready: the releasing thread alone waits on it */
    pthread_cond_t go_cond;     /* the release: every thread waits on it once (one broadcast, not one a thread) */
    int ready, go;
    unsigned char *done;        /* a call that returned */
    struct sb_rp_worker *workers;   /* each waits on its own condition for the one call it waits for: a call's
                                     * return wakes only its waiters (one condition for all woke every waiting
                                     * thread at every return: 57 s for 4096 threads of one stat each) */
    uint32_t n_workers;
} sb_rp_shared;

typedef struct sb_rp_worker {
    const sb_rp_job *job;
    sb_rp_shared *shared;
    pthread_cond_t cond;        /* signalled when the call it waits for returns */
    int64_t waiting_for;        /* that call, or -1 (under the shared lock) */
    int *fds;                   /* by handle, -1 closed (shared: a call on an open file waits for the one before) */
    size_t *mine;               /* this thread's calls, in order */
    size_t n_mine;
    unsigned char *read_buf;
    size_t read_len;
    const unsigned char *write_buf;
    uint64_t start_ns;
    sb_rp_result part;          /* this thread's counts */
    pthread_t thread;
} sb_rp_worker;

static int sb_rp_fd(const sb_rp_worker *w, int32_t handle)
{
    int fd = handle >= 0 ? __atomic_load_n(&w->fds[handle], __ATOMIC_ACQUIRE) : -1;
    if (fd < 0)
        errno = EBADF;
    return fd;
}

/* One call as the program made it: 0 or more where it succeeded, -1 (errno set) where it failed; *moved: the bytes
 * a read, write or copy moved. */
static long long sb_rp_issue(sb_rp_worker *w, const sb_rp_call *c, uint64_t *moved)
{
    const sb_rp_job *job = w->job;
    char p[PATH_MAX], q[PATH_MAX];
    if (c->file >= 0)
        sb_rp_path(p, job, c->file);
    if (c->to_file >= 0)
        sb_rp_path(q, job, c->to_file);
    int fd = -1;
    long long r;
    struct stat st;
    const char *used;
    sb_err ignored;
    *moved = 0;
    switch (c->kind) {
    case SB_RP_OPEN: {
        int flags = (c->flags & SB_RP_FOLDER ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC | O_NOFOLLOW |
                    (c->flags & SB_RP_CREATE ? O_CREAT : 0);
        fd = open(p, flags, 0644);
        if (fd >= 0 && c->handle >= 0) {
            int old = __atomic_exchange_n(&w->fds[c->handle], fd, __ATOMIC_ACQ_REL);
            if (old >= 0)
                close(old);
        } else if (fd >= 0) {
            close(fd);               /* the recording's open failed: this one's descriptor is not used again */
        }
        return fd < 0 ? -1 : 0;
    }
    case SB_RP_CLOSE:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        __atomic_store_n(&w->fds[c->handle], -1, __ATOMIC_RELEASE);
        return close(fd);
    case SB_RP_READ:
    case SB_RP_WRITE:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        if (c->kind == SB_RP_READ)
            r = c->offset >= 0 ? pread(fd, w->read_buf, (size_t)c->bytes, (off_t)c->offset)
                               : read(fd, w->read_buf, (size_t)c->bytes);
        else
            r = c->offset >= 0 ? pwrite(fd, w->write_buf, (size_t)c->bytes, (off_t)c->offset)
                               : write(fd, w->write_buf, (size_t)c->bytes);
        *moved = r > 0 ? (uint64_t)r : 0;
        return r;
    case SB_RP_SEEK:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        return lseek(fd, (off_t)(c->offset < 0 ? 0 : c->offset), SEEK_SET) < 0 ? -1 : 0;
    case SB_RP_FSYNC:
    case SB_RP_FDATASYNC:
    case SB_RP_FULLSYNC:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        if (c->kind == SB_RP_FSYNC)
            return fsync(fd);
        /* F_FULLFSYNC where the platform has it (Linux: fsync, sb_sync_fd) */
        if (sb_sync_fd(fd, c->kind == SB_RP_FULLSYNC ? SB_SYNC_FULL : SB_SYNC_DATA, &used, &ignored) != 0) {
            errno = ignored.errnum;
            return -1;
        }
        return 0;
    case SB_RP_SYNC_RANGE:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        return sb_sync_range_fd(fd, c->offset < 0 ? 0 : (uint64_t)c->offset, c->bytes);
    case SB_RP_SYNCFS:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        return sb_syncfs_fd(fd);
    case SB_RP_TRUNCATE:
        if (c->handle >= 0)
            return (fd = sb_rp_fd(w, c->handle)) < 0 ? -1 : ftruncate(fd, (off_t)c->bytes);
        return truncate(p, (off_t)c->bytes);
    case SB_RP_ALLOCATE:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        return sb_allocate_fd(fd, c->offset < 0 ? 0 : (uint64_t)c->offset, c->bytes);
    case SB_RP_RENAME:
        return rename(p, q);
    case SB_RP_UNLINK:
        return unlink(p);
    case SB_RP_MKDIR:
        return mkdir(p, 0755);
    case SB_RP_RMDIR:
        return rmdir(p);
    case SB_RP_STAT:
        if (c->handle >= 0)
            return (fd = sb_rp_fd(w, c->handle)) < 0 ? -1 : fstat(fd, &st);
        return lstat(p, &st);
    case SB_RP_LIST:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        return sb_list_fd(fd, w->read_buf, c->bytes && c->bytes < w->read_len ? (size_t)c->bytes : w->read_len);
    case SB_RP_COPY: {
        int src = sb_rp_fd(w, c->handle), dst = c->to_handle >= 0 ? sb_rp_fd(w, c->to_handle) : -1;
        int opened = 0;
        if (src < 0)
            return -1;
        if (dst < 0 && c->to_handle < 0) {      /* its destination's open file is not in the trace: by name */
            if ((dst = open(q, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
                return -1;
            opened = 1;
        } else if (dst < 0) {
            return -1;
        }
        r = sb_copy_range_fd(src, dst, c->bytes, w->read_buf, w->read_len);
        if (opened)
            close(dst);
        *moved = r > 0 ? (uint64_t)r : 0;
        return r;
    }
    case SB_RP_ADVISE_NORMAL:
    case SB_RP_ADVISE_RANDOM:
    case SB_RP_ADVISE_SEQUENTIAL:
    case SB_RP_ADVISE_WILLNEED:
    case SB_RP_ADVISE_DONTNEED:
    case SB_RP_ADVISE_NOREUSE:
        if ((fd = sb_rp_fd(w, c->handle)) < 0)
            return -1;
        return sb_advise_fd(fd, c->offset < 0 ? 0 : (uint64_t)c->offset, c->bytes,
                            (int)(c->kind - SB_RP_ADVISE_NORMAL));
    case SB_RP_KINDS:
        break;
    }
    errno = EINVAL;
    return -1;
}

static void sb_rp_slow(sb_rp_result *res, int64_t call, uint64_t ns)
{
    int k = SB_RP_SLOWEST;
    while (k > 0 && (res->slowest[k - 1] < 0 || res->slowest_ns[k - 1] < ns))
        k--;
    if (k >= SB_RP_SLOWEST)
        return;
    memmove(&res->slowest[k + 1], &res->slowest[k], (size_t)(SB_RP_SLOWEST - 1 - k) * sizeof res->slowest[0]);
    memmove(&res->slowest_ns[k + 1], &res->slowest_ns[k], (size_t)(SB_RP_SLOWEST - 1 - k) * sizeof res->slowest_ns[0]);
    res->slowest[k] = call;
    res->slowest_ns[k] = ns;
}

static void sb_rp_result_reset(sb_rp_result *res)
{
    memset(res, 0, sizeof *res);
    res->first_mismatch = -1;
    sb_hist_reset(&res->lateness);
    for (int k = 0; k < SB_RP_KINDS; k++)
        sb_hist_reset(&res->kinds[k].hist);
    for (int k = 0; k < SB_RP_SLOWEST; k++)
        res->slowest[k] = -1;
}

static void *sb_rp_work(void *arg)
{
    sb_rp_worker *w = arg;
    sb_rp_shared *s = w->shared;
    const sb_rp_job *job = w->job;
    sb_rp_result *res = &w->part;
    pthread_mutex_lock(&s->lock);
    s->ready++;
    pthread_cond_signal(&s->ready_cond);
    while (!s->go)
        pthread_cond_wait(&s->go_cond, &s->lock);
    uint64_t start = w->start_ns;
    pthread_mutex_unlock(&s->lock);
    for (size_t m = 0; m < w->n_mine; m++) {
        size_t i = w->mine[m];
        const sb_rp_call *c = &job->calls[i];
        for (int a = 0; a < 4; a++) {
            int64_t before = c->after[a];
            if (before < 0 || __atomic_load_n(&s->done[before], __ATOMIC_ACQUIRE))
                continue;
            uint64_t t = sb_now_ns();
            pthread_mutex_lock(&s->lock);
            w->waiting_for = before;
            while (!__atomic_load_n(&s->done[before], __ATOMIC_ACQUIRE))
                pthread_cond_wait(&w->cond, &s->lock);
            w->waiting_for = -1;
            pthread_mutex_unlock(&s->lock);
            res->waited_ns += sb_now_ns() - t;
        }
        if (job->timing == SB_RP_THINK && c->gap_ns) {
            uint64_t t = sb_now_ns();
            sb_sleep_until_ns(t + c->gap_ns);
            res->think_ns += sb_now_ns() - t;
        } else if (job->timing == SB_RP_RECORDED) {
            uint64_t due = start + c->due_ns, t = sb_now_ns();
            if (t < due) {
                sb_sleep_until_ns(due);
                res->think_ns += sb_now_ns() - t;
            } else if (t > due + SB_RP_LATE_NS) {
                res->late++;
                res->late_max_ns = t - due > res->late_max_ns ? t - due : res->late_max_ns;
                sb_hist_record(&res->lateness, t - due);
            }
        }
        uint64_t moved, t1 = sb_now_ns();
        long long r = sb_rp_issue(w, c, &moved);
        uint64_t t2 = sb_now_ns();
        int e = r < 0 ? errno : 0;
        if (c->needed) {
            pthread_mutex_lock(&s->lock);
            __atomic_store_n(&s->done[i], 1, __ATOMIC_RELEASE);
            for (uint32_t t = 0; t < s->n_workers; t++)
                if (s->workers[t].waiting_for == (int64_t)i)
                    pthread_cond_signal(&s->workers[t].cond);
            pthread_mutex_unlock(&s->lock);
        } else {
            __atomic_store_n(&s->done[i], 1, __ATOMIC_RELEASE);
        }
        sb_rp_kind_total *k = &res->kinds[c->kind];
        k->count++;
        k->bytes += moved;
        k->in_calls_ns += t2 - t1;
        sb_hist_record(&k->hist, t2 - t1);
        res->in_calls_ns += t2 - t1;
        if ((r < 0) != (c->failed != 0)) {
            k->mismatched++;
            res->mismatched++;
            if (res->first_mismatch < 0 || (int64_t)i < res->first_mismatch) {
                res->first_mismatch = (int64_t)i;
                res->first_mismatch_errno = e;
            }
        }
        sb_rp_slow(res, (int64_t)i, t2 - t1);
    }
    return NULL;
}

/* The open files the trace met already open, opened before the interval (made where they do not exist). */
static int sb_rp_preopen(const sb_rp_job *job, int *fds, sb_err *err)
{
    char p[PATH_MAX];
    for (size_t i = 0; i < job->n_preopened; i++) {
        int32_t handle = job->preopened[2 * i], file = job->preopened[2 * i + 1];
        sb_rp_path(p, job, file);
        int folder = job->files[file].folder;
        int fd = open(p, (folder ? O_RDONLY | O_DIRECTORY : O_RDWR | O_CREAT) | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
            return sb_fail(err, errno, "cannot open %s, which the program had open when the trace began: %s", p,
                           strerror(errno));
        fds[handle] = fd;
    }
    return 0;
}

int sb_rp_run(const sb_rp_job *job, sb_rp_result *res, sb_err *err)
{
    sb_rp_result_reset(res);
    uint32_t threads = job->threads;
    sb_rp_shared shared = {.ready = 0, .go = 0};
    int *fds = malloc((job->n_handles ? job->n_handles : 1) * sizeof *fds);
    size_t *order = malloc((job->n_calls ? job->n_calls : 1) * sizeof *order);
    size_t *counts = calloc(threads, sizeof *counts);
    uint64_t *largest = calloc(threads, sizeof *largest);
    sb_rp_worker *ws = calloc(threads, sizeof *ws);
    shared.done = calloc(job->n_calls ? job->n_calls : 1, 1);
    int rc = 0, started = 0;
    uint64_t biggest_write = 0;
    if (!fds || !order || !counts || !largest || !ws || !shared.done) {
        rc = sb_fail(err, ENOMEM, "no memory for a replay of %zu calls", job->n_calls);
        goto out;
    }
    for (size_t h = 0; h < job->n_handles; h++)
        fds[h] = -1;
    /* each thread's calls in order, by counting: one array, a slice a thread */
    for (size_t i = 0; i < job->n_calls; i++) {
        const sb_rp_call *c = &job->calls[i];
        counts[c->thread]++;
        if (c->kind == SB_RP_READ || c->kind == SB_RP_COPY || c->kind == SB_RP_LIST)
            largest[c->thread] = c->bytes > largest[c->thread] ? c->bytes : largest[c->thread];
        if (c->kind == SB_RP_WRITE && c->bytes > biggest_write)
            biggest_write = c->bytes;
    }
    size_t at = 0;
    for (uint32_t t = 0; t < threads; t++) {
        ws[t].mine = order + at;
        at += counts[t];
    }
    for (size_t i = 0; i < job->n_calls; i++) {
        sb_rp_worker *w = &ws[job->calls[i].thread];
        w->mine[w->n_mine++] = i;
    }
    /* the buffers made and touched before the interval: seeded data for the writes, a read buffer a thread */
    const unsigned char *write_buf = sb_buffer_write(biggest_write < 4096 ? 4096 : (size_t)biggest_write, job->fill_byte,
                                                     job->compressible_pct, job->dedupe_pct, job->data_seed, 1, err);
    if (!write_buf) {
        rc = -1;
        goto out;
    }
    for (uint32_t t = 0; t < threads && rc == 0; t++) {
        size_t len = largest[t] < SB_RP_LIST_BYTES ? SB_RP_LIST_BYTES : (size_t)largest[t];
        if (!(ws[t].read_buf = malloc(len)))
            rc = sb_fail(err, ENOMEM, "no memory for the reads of thread %u", t);
        else
            memset(ws[t].read_buf, 0, len);
        ws[t].read_len = len;
    }
    if (rc != 0 || sb_rp_preopen(job, fds, err) != 0) {
        rc = -1;
        goto out;
    }
    pthread_mutex_init(&shared.lock, NULL);
    pthread_cond_init(&shared.ready_cond, NULL);
    pthread_cond_init(&shared.go_cond, NULL);
    shared.workers = ws;
    shared.n_workers = threads;
    for (uint32_t t = 0; t < threads; t++) {
        pthread_cond_init(&ws[t].cond, NULL);
        ws[t].waiting_for = -1;
    }
    for (uint32_t t = 0; t < threads; t++) {
        sb_rp_worker *w = &ws[t];
        w->job = job;
        w->shared = &shared;
        w->fds = fds;
        w->write_buf = write_buf;
        sb_rp_result_reset(&w->part);
        if (pthread_create(&w->thread, NULL, sb_rp_work, w) != 0)
            break;
        started++;
    }
    pthread_mutex_lock(&shared.lock);
    while (shared.ready < started)
        pthread_cond_wait(&shared.ready_cond, &shared.lock);
    if ((uint32_t)started < threads) {
        /* a thread could not be started: the others are released with nothing to do */
        for (int t = 0; t < started; t++)
            ws[t].n_mine = 0;
        rc = sb_fail(err, EAGAIN, "cannot start the replay's %u threads", threads);
    }
    res->start_ns = sb_now_ns();
    for (int t = 0; t < started; t++)
        ws[t].start_ns = res->start_ns;
    shared.go = 1;
    pthread_cond_broadcast(&shared.go_cond);
    pthread_mutex_unlock(&shared.lock);
    for (int t = 0; t < started; t++)
        pthread_join(ws[t].thread, NULL);
    res->end_ns = sb_now_ns();
    for (int t = 0; t < started; t++) {
        const sb_rp_result *p = &ws[t].part;
        res->in_calls_ns += p->in_calls_ns;
        res->think_ns += p->think_ns;
        res->waited_ns += p->waited_ns;
        res->late += p->late;
        res->late_max_ns = p->late_max_ns > res->late_max_ns ? p->late_max_ns : res->late_max_ns;
        sb_hist_merge(&res->lateness, &p->lateness);
        res->mismatched += p->mismatched;
        if (p->first_mismatch >= 0 && (res->first_mismatch < 0 || p->first_mismatch < res->first_mismatch)) {
            res->first_mismatch = p->first_mismatch;
            res->first_mismatch_errno = p->first_mismatch_errno;
        }
        for (int k = 0; k < SB_RP_KINDS; k++) {
            sb_rp_kind_total *into = &res->kinds[k];
            const sb_rp_kind_total *from = &p->kinds[k];
            into->count += from->count;
            into->bytes += from->bytes;
            into->in_calls_ns += from->in_calls_ns;
            into->mismatched += from->mismatched;
            sb_hist_merge(&into->hist, &from->hist);
        }
        for (int k = 0; k < SB_RP_SLOWEST && p->slowest[k] >= 0; k++)
            sb_rp_slow(res, p->slowest[k], p->slowest_ns[k]);
    }
    pthread_mutex_destroy(&shared.lock);
    pthread_cond_destroy(&shared.ready_cond);
    pthread_cond_destroy(&shared.go_cond);
    for (uint32_t t = 0; t < threads; t++)
        pthread_cond_destroy(&ws[t].cond);
out:
    for (size_t h = 0; fds && h < job->n_handles; h++)
        if (fds[h] >= 0)
            close(fds[h]);               /* what the program left open */
    for (uint32_t t = 0; ws && t < threads; t++)
        free(ws[t].read_buf);
    free(fds);
    free(order);
    free(counts);
    free(largest);
    free(ws);
    free(shared.done);
    return rc;
}
