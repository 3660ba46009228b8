/* sb_tree.c: one phase of a tree of files (see sb_tree.h). */
#include "sb_tree.h"
#include "sb_buffer.h"
#include "sb_clock.h"
#include "sb_platform.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const sb_tree_phase_names[SB_TREE_PHASES] = {"create", "stat", "list", "read", "rename", "delete",
                                                        "copy"};
const char *const sb_tree_sync_names[3] = {"none", "each", "end"};

#define SB_TREE_BUFFER_MAX (1u << 20)

int sb_relative_path_ok(const char *p)
{
    size_t len = strlen(p);
    if (len == 0 || len >= PATH_MAX / 2 || p[0] == '/' || p[len - 1] == '/')
        return 0;
    for (const char *c = p; *c;) {
        const char *end = strchr(c, '/');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += n + (end ? 1 : 0);
    }
    return 1;
}

void sb_tree_free(sb_tree_job *job)
{
    for (size_t i = 0; i < job->n; i++) {
        free(job->entries[i].path);
        free(job->entries[i].to);
    }
    free(job->entries);
    job->entries = NULL;
    job->n = 0;
}

int sb_tree_load(const char *list_path, sb_tree_job *job, sb_err *err)
{
    FILE *f = fopen(list_path, "r");
    if (!f)
        return sb_fail(err, errno, "cannot open the list %s: %s", list_path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, room = 0, lineno = 0;
    ssize_t len;
    job->entries = NULL;
    job->n = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        if (len == 0)
            continue;
        char *tab = strchr(line, '\t'), *end;
        errno = 0;
        unsigned long long size = strtoull(line, &end, 10);
        char *path = tab ? tab + 1 : NULL;
        char *to = path ? strchr(path, '\t') : NULL;
        if (to)
            *to++ = '\0';
        if (!tab || end != tab || errno || line[0] == '-' || !sb_relative_path_ok(path) || (to && !sb_relative_path_ok(to))) {
            sb_fail(err, EINVAL, "the list %s, line %zu: not SIZE<TAB>PATH[<TAB>NEWPATH] with relative paths "
                    "inside the folder", list_path, lineno);
            goto failed;
        }
        if (job->n == room) {
            room = room ? 2 * room : 1024;
            sb_tree_entry *grown = realloc(job->entries, room * sizeof *grown);
            if (!grown) {
                sb_fail(err, ENOMEM, "the list %s is too long for memory", list_path);
                goto failed;
            }
            job->entries = grown;
        }
        sb_tree_entry *e = &job->entries[job->n++];
        e->size = size;
        e->path = strdup(path);
        e->to = to ? strdup(to) : NULL;
    }
    free(line);
    fclose(f);
    if (job->n == 0)
        return sb_fail(err, EINVAL, "the list %s names no file", list_path);
    return 0;
failed:
    free(line);
    fclose(f);
    sb_tree_free(job);
    return -1;
}

static int sb_tree_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t sb_tree_dirs(const sb_tree_job *job, char ***dirs)
{
    size_t n = 0, room = 16;
    char **out = malloc(room * sizeof *out);
    if (!out || !(out[n++] = strdup(".")))
        goto no_memory;
    for (size_t i = 0; i < job->n; i++) {
        const char *p = job->entries[i].path;
        for (const char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
            if (n == room) {
                char **grown = realloc(out, (room *= 2) * sizeof *out);
                if (!grown)
                    goto no_memory;
                out = grown;
            }
            if (!(out[n++] = strndup(p, (size_t)(slash - p))))
                goto no_memory;
        }
    }
    qsort(out + 1, n - 1, sizeof *out, sb_tree_cmp);      /* a folder sorts before the folders inside it */
    size_t kept = 1;
    for (size_t i = 1; i < n; i++) {
        if (kept > 1 && strcmp(out[kept - 1], out[i]) == 0)
            free(out[i]);
        else
            out[kept++] = out[i];
    }
    *dirs = out;
    return kept;
no_memory:
    for (size_t i = 0; out && i < n; i++)
        free(out[i]);
    free(out);
    *dirs = NULL;
    return 0;
}

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ready, go, stop;
} sb_tree_gate;

typedef struct {
    const sb_tree_job *job;
    sb_tree_gate *gate;
    char **dirs;               /* list: the folders */
    size_t lo, hi;             /* this part's entries (or folders) */
    unsigned char *buf;         /* create: the data written; read: this thread's part of the read buffer */
    size_t buf_len;
    uint64_t ops, bytes, names, dirs_made, cloned, calls;
    const char *copy_method;
    sb_hist hist;
    sb_err err;
    int failed;
    pthread_t thread;
} sb_tree_worker;

static void sb_tree_path(char *out, const char *root, const char *rel)
{
    snprintf(out, PATH_MAX, "%s/%s", root, rel);
}

/* The folders above rel, made where missing (counted). */
static int sb_tree_parents(sb_tree_worker *w, const char *rel)
{
    char p[PATH_MAX];
    sb_tree_path(p, w->job->root, rel);
    size_t skip = strlen(w->job->root) + 1;
    for (char *slash = strchr(p + skip, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        w->calls++;
        if (mkdir(p, 0755) == 0)
            w->dirs_made++;
        else if (errno != EEXIST)
            return sb_fail(&w->err, errno, "cannot make the folder %s: %s", p, strerror(errno));
        *slash = '/';
    }
    return 0;
}

static int sb_tree_create(sb_tree_worker *w, const sb_tree_entry *e, char *p)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    w->calls++;
    if (fd < 0 && errno == ENOENT) {
        if (sb_tree_parents(w, e->path) != 0)
            return -1;
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        w->calls++;
    }
    if (fd < 0)
        return sb_fail(&w->err, errno, "cannot create %s: %s", p, strerror(errno));
    for (uint64_t left = e->size; left;) {
        ssize_t k = write(fd, w->buf, left < w->buf_len ? (size_t)left : w->buf_len);
        w->calls++;
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int errnum = k < 0 ? errno : EIO;
            close(fd);
            return sb_fail(&w->err, errnum, "cannot write %s: %s", p, strerror(errnum));
        }
        left -= (uint64_t)k;
    }
    w->calls += 1 + (w->job->sync == SB_TREE_SYNC_EACH);       /* the close, and the sync */
    if (w->job->sync == SB_TREE_SYNC_EACH && fsync(fd) != 0) {
        int errnum = errno;
        close(fd);
        return sb_fail(&w->err, errnum, "cannot sync %s: %s", p, strerror(errnum));
    }
    if (close(fd) != 0)
        return sb_fail(&w->err, errno, "cannot close %s: %s", p, strerror(errno));
    w->bytes += e->size;
    return 0;
}

static int sb_tree_read(sb_tree_worker *w, char *p)
{
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    w->calls += 2;                      /* the open and the close */
    if (fd < 0)
        return sb_fail(&w->err, errno, "cannot open %s: %s", p, strerror(errno));
    for (;;) {
        ssize_t k = read(fd, w->buf, w->buf_len);
        w->calls++;
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int errnum = errno;
            close(fd);
            return sb_fail(&w->err, errnum, "cannot read %s: %s", p, strerror(errnum));
        }
        if (k == 0)
            break;
        w->bytes += (uint64_t)k;
    }
    close(fd);
    return 0;
}

static int sb_tree_list(sb_tree_worker *w, char *p)
{
    DIR *d = opendir(p);
    w->calls += 2;                      /* opendir and closedir */
    if (!d)
        return sb_fail(&w->err, errno, "cannot open the folder %s: %s", p, strerror(errno));
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        w->calls++;
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            w->names++;
        errno = 0;
    }
    w->calls++;                         /* the readdir that found the end */
    int errnum = errno;
    closedir(d);
    if (errnum)
        return sb_fail(&w->err, errnum, "cannot list the folder %s: %s", p, strerror(errnum));
    return 0;
}

/* copy: a new file made a copy of the entry, as the platform's own copy makes it (a clone where it can). */
static int sb_tree_copy(sb_tree_worker *w, const sb_tree_entry *e, const char *p, const char *to)
{
    int cloned = 0;
    const char *method = NULL;
    int rc = sb_copy_file(p, to, w->buf, w->buf_len, &cloned, &method, &w->calls, &w->err);
    if (rc == 1) {
        if (sb_tree_parents(w, e->to) != 0)
            return -1;
        rc = sb_copy_file(p, to, w->buf, w->buf_len, &cloned, &method, &w->calls, &w->err);
        if (rc == 1)
            return sb_fail(&w->err, ENOENT, "cannot copy %s to %s: %s", p, to, strerror(ENOENT));
    }
    if (rc != 0)
        return -1;
    w->cloned += (uint64_t)cloned;
    if (!cloned)
        w->copy_method = method;
    w->bytes += e->size;
    return 0;
}

/* One operation of the phase on item i (an entry, or for list a folder). */
static int sb_tree_op(sb_tree_worker *w, size_t i)
{
    const sb_tree_job *job = w->job;
    char p[PATH_MAX], to[PATH_MAX];
    struct stat st;
    if (job->phase == SB_TREE_LIST) {
        sb_tree_path(p, job->root, w->dirs[i]);
        if (job->engine)
            return job->engine(job->phase, p, NULL, 0, NULL, 0, &w->bytes, &w->names, &w->dirs_made, &w->calls,
                               &w->err);
        return sb_tree_list(w, p);
    }
    const sb_tree_entry *e = &job->entries[i];
    sb_tree_path(p, job->root, e->path);
    if (job->engine) {
        if (e->to)
            sb_tree_path(to, job->root, e->to);
        return job->engine(job->phase, p, e->to ? to : NULL, e->size, w->buf, job->sync == SB_TREE_SYNC_EACH,
                           &w->bytes, &w->names, &w->dirs_made, &w->calls, &w->err);
    }
    switch (job->phase) {
    case SB_TREE_CREATE:
        return sb_tree_create(w, e, p);
    case SB_TREE_STAT:
        w->calls++;
        return stat(p, &st) == 0 ? 0 : sb_fail(&w->err, errno, "cannot stat %s: %s", p, strerror(errno));
    case SB_TREE_READ:
        return sb_tree_read(w, p);
    case SB_TREE_RENAME:
        sb_tree_path(to, job->root, e->to);
        w->calls++;
        return rename(p, to) == 0 ? 0 : sb_fail(&w->err, errno, "cannot rename %s to %s: %s", p, to, strerror(errno));
    case SB_TREE_DELETE:
        w->calls++;
        return unlink(p) == 0 ? 0 : sb_fail(&w->err, errno, "cannot delete %s: %s", p, strerror(errno));
    case SB_TREE_COPY:
        sb_tree_path(to, job->root, e->to);
        return sb_tree_copy(w, e, p, to);
    default:
        return sb_fail(&w->err, EINVAL, "no such phase");
    }
}

static void *sb_tree_work(void *arg)
{
    sb_tree_worker *w = arg;
    sb_tree_gate *g = w->gate;
    pthread_mutex_lock(&g->lock);
    g->ready++;
    pthread_cond_broadcast(&g->cond);
    while (!g->go)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
    for (size_t i = w->lo; i < w->hi && !__atomic_load_n(&g->stop, __ATOMIC_RELAXED); i++) {
        uint64_t t0 = sb_now_ns();
        if (sb_tree_op(w, i) != 0) {
            w->failed = 1;
            __atomic_store_n(&g->stop, 1, __ATOMIC_RELAXED);
            break;
        }
        sb_hist_record(&w->hist, sb_now_ns() - t0);
        w->ops++;
    }
    return NULL;
}

/* Every listed file opened for reading in turn, outside the threads, and handed to `fn`. */
typedef int sb_tree_file_fn(const sb_tree_job *job, int fd, const char *path, sb_tree_result *res, sb_err *err);

static int sb_tree_each_file(const sb_tree_job *job, sb_tree_file_fn *fn, sb_tree_result *res, sb_err *err)
{
    char p[PATH_MAX];
    for (size_t i = 0; i < job->n; i++) {
        sb_tree_path(p, job->root, job->entries[i].path);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return sb_fail(err, errno, "cannot open %s: %s", p, strerror(errno));
        int rc = fn(job, fd, p, res, err);
        close(fd);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* read, before the interval: the file's pages dropped (unless --evict off) and its residency added up. */
static int sb_tree_met(const sb_tree_job *job, int fd, const char *path, sb_tree_result *res, sb_err *err)
{
    (void)path;
    sb_residency r;
    if ((job->evict && sb_evict_fd(fd, 0, 0, err) != 0) || sb_residency_fd(fd, &r, err) < 0)
        return -1;
    res->pages += r.pages;
    res->resident_pages += r.resident;
    return 0;
}

/* create with sync at the end: every file synced after the last one is written. */
static int sb_tree_synced(const sb_tree_job *job, int fd, const char *path, sb_tree_result *res, sb_err *err)
{
    (void)job;
    (void)res;
    return fsync(fd) == 0 ? 0 : sb_fail(err, errno, "cannot sync %s: %s", path, strerror(errno));
}

int sb_tree_run(const sb_tree_job *job, sb_tree_result *res, sb_err *err)
{
    memset(res, 0, sizeof *res);
    sb_hist_reset(&res->hist);
    if (job->phase == SB_TREE_READ && sb_tree_each_file(job, sb_tree_met, res, err) != 0)
        return -1;
    char **dirs = NULL;
    size_t items = job->phase == SB_TREE_LIST ? sb_tree_dirs(job, &dirs) : job->n;
    if (items == 0)
        return sb_fail(err, ENOMEM, "no memory for the folders of the list");
    int threads = job->threads < 1 || job->engine ? 1 : (size_t)job->threads > items ? (int)items : job->threads;
    uint64_t largest = 0;
    for (size_t i = 0; i < job->n; i++)
        largest = job->entries[i].size > largest ? job->entries[i].size : largest;
    size_t buf_len = largest < 4096 ? 4096 : largest > SB_TREE_BUFFER_MAX ? SB_TREE_BUFFER_MAX : (size_t)largest;
    if (job->engine && job->phase == SB_TREE_CREATE)
        buf_len = largest < 4096 ? 4096 : (size_t)largest;     /* an engine writes a file from one buffer */
    if (job->phase == SB_TREE_READ || job->phase == SB_TREE_COPY)
        buf_len = SB_TREE_BUFFER_MAX;
    /* the process's page-aligned buffers (sb_buffer.h): one of seeded data that every thread writes from,
     * or one read buffer cut into a part per thread, touched before the interval (a buffer 16 bytes off a
     * page made the kernel's copies of 1-64 KiB reads take 17 us against 9) */
    unsigned char *buf = NULL;
    if (job->phase == SB_TREE_CREATE && !(buf = sb_buffer_write(buf_len, -1, 0, 0, job->data_seed, 0, err)))
        return -1;
    if ((job->phase == SB_TREE_READ || job->phase == SB_TREE_COPY) && !(buf = sb_buffer_read(buf_len * (size_t)threads, 0, err)))
        return -1;
    sb_tree_gate gate = {.ready = 0, .go = 0, .stop = 0};
    pthread_mutex_init(&gate.lock, NULL);
    pthread_cond_init(&gate.cond, NULL);
    sb_tree_worker *ws = calloc((size_t)threads, sizeof *ws);
    int started = 0, rc = 0;
    for (int t = 0; ws && t < threads; t++) {
        sb_tree_worker *w = &ws[t];
        w->job = job;
        w->gate = &gate;
        w->dirs = dirs;
        w->lo = items * (size_t)t / (size_t)threads;
        w->hi = items * (size_t)(t + 1) / (size_t)threads;
        sb_hist_reset(&w->hist);
        w->buf_len = buf_len;
        w->buf = job->phase == SB_TREE_READ || job->phase == SB_TREE_COPY ? buf + (size_t)t * buf_len : buf;
        if (job->engine) {          /* an engine's calls stay on this thread (GNUstep knows no other) */
            started++;
            break;
        }
        if (pthread_create(&w->thread, NULL, sb_tree_work, w) != 0)
            break;
        started++;
    }
    if (job->engine && started) {
        gate.go = 1;
        res->start_ns = sb_now_ns();
        sb_tree_work(&ws[0]);
        res->end_ns = sb_now_ns();
    }
    if (!job->engine) {
        pthread_mutex_lock(&gate.lock);
        while (gate.ready < started)
            pthread_cond_wait(&gate.cond, &gate.lock);
        if (started < threads)
            gate.stop = 1;                  /* a thread could not be started: the others do nothing */
        res->start_ns = sb_now_ns();
        gate.go = 1;
        pthread_cond_broadcast(&gate.cond);
        pthread_mutex_unlock(&gate.lock);
        for (int t = 0; t < started; t++)
            pthread_join(ws[t].thread, NULL);
        res->end_ns = sb_now_ns();
    }
    if (started < threads) {
        rc = sb_fail(err, EAGAIN, "cannot start %d threads", threads);
    } else {
        for (int t = 0; t < threads; t++) {
            sb_tree_worker *w = &ws[t];
            if (w->failed && rc == 0) {
                *err = w->err;
                rc = -1;
            }
            res->ops += w->ops;
            res->bytes += w->bytes;
            res->names += w->names;
            res->dirs_made += w->dirs_made;
            res->cloned += w->cloned;
            res->calls += w->calls;
            if (w->copy_method)
                res->copy_method = w->copy_method;
            sb_hist_merge(&res->hist, &w->hist);
        }
    }
    if (rc == 0 && job->phase == SB_TREE_CREATE && job->sync == SB_TREE_SYNC_END) {
        rc = sb_tree_each_file(job, sb_tree_synced, res, err);
        res->calls += 3 * job->n;               /* each file opened, synced and closed */
        uint64_t now = sb_now_ns();
        res->sync_ns = now - res->end_ns;
        res->end_ns = now;
    }
    free(ws);
    for (size_t i = 0; dirs && i < items; i++)
        free(dirs[i]);
    free(dirs);
    pthread_mutex_destroy(&gate.lock);
    pthread_cond_destroy(&gate.cond);
    return rc;
}
