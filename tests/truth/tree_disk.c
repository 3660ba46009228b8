/* tree_disk.c: a file system whose metadata operations take a set delay, for the truth of a tree test's files per
 * second. A FUSE file system (libfuse 3) holding a tree of folders and files in memory (a file keeps its size;
 * its bytes read back as zeros); one kind of operation, named on the command line, sleeps `delay` from its
 * arrival (clock_nanosleep to an absolute deadline; getattr only for a file that is there), all others answer
 * at once. Operations run in parallel (libfuse's multithreaded loop), so T threads each waiting on their own
 * file see T / delay operations a second.
 *
 *     tree_disk MOUNTPOINT DELAY_NS create|getattr|opendir|open|rename|unlink [SERVED_FILE]
 *
 * A sleeper wakes after its deadline, by what the machine's timer and scheduler allow (a quarter of a millisecond
 * on a quiet virtual machine, more on a busy one). So the delayed calls are timed too, arrival to wake-up, and
 * after unmounting their count and total nanoseconds go to SERVED_FILE as "COUNT TOTAL_NS": the delay each call
 * was given, which the test holds a tree's rate to.
 *
 * The kernel keeps folder entries for an hour (entry_timeout) and attributes for no time (attr_timeout 0):
 * after create every path is known, and each stat asks for the file's attributes once, so each phase of a tree
 * makes exactly one delayed call per file (list: per folder). Runs in the foreground until unmounted
 * (fusermount3 -u MOUNTPOINT). Built by tests/truth/devices.py:
 *     cc -O2 tree_disk.c $(pkg-config --cflags --libs fuse3) -o tree_disk */
#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

typedef struct {
    char *path;          /* "/a/b" */
    mode_t mode;
    off_t size;
} node;

static node *nodes;
static size_t n_nodes, room;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long delay_ns;
static const char *delayed;          /* the one operation that waits */
static long long served_count, served_ns;   /* the delayed calls, and their time from arrival to wake-up */

static void wait_if(const char *op)
{
    if (strcmp(op, delayed) != 0)
        return;
    struct timespec arrival, until, woke;
    clock_gettime(CLOCK_MONOTONIC, &arrival);
    until = arrival;
    until.tv_nsec += delay_ns % 1000000000L;
    until.tv_sec += delay_ns / 1000000000L + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
    clock_gettime(CLOCK_MONOTONIC, &woke);
    long long ns = (woke.tv_sec - arrival.tv_sec) * 1000000000LL + (woke.tv_nsec - arrival.tv_nsec);
    __atomic_add_fetch(&served_ns, ns, __ATOMIC_RELAXED);
    __atomic_add_fetch(&served_count, 1, __ATOMIC_RELAXED);
}

/* The node of a path, or NULL; the caller holds the lock. */
static node *find(const char *path)
{
    for (size_t i = 0; i < n_nodes; i++)
        if (nodes[i].path && strcmp(nodes[i].path, path) == 0)
            return &nodes[i];
    return NULL;
}

static int add(const char *path, mode_t mode)
{
    if (find(path))
        return -EEXIST;
    if (n_nodes == room) {
        room = room ? 2 * room : 1024;
        node *grown = realloc(nodes, room * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        nodes = grown;
    }
    nodes[n_nodes++] = (node){.path = strdup(path), .mode = mode, .size = 0};
    return 0;
}

/* Whether `path` is directly inside folder `dir`; its name in *name. */
static int inside(const char *dir, const char *path, const char **name)
{
    size_t n = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
    if (strncmp(path, dir, n) != 0 || path[n] != '/' || path[n + 1] == '\0' || strchr(path + n + 1, '/'))
        return 0;
    *name = path + n + 1;
    return 1;
}

static void *td_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    conn->max_background = 1024;
    cfg->entry_timeout = 3600;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->direct_io = 0;
    return NULL;
}

static int td_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&lock);
    node *n = find(path);
    int file = n && S_ISREG(n->mode);
    pthread_mutex_unlock(&lock);
    if (file)
        wait_if("getattr");           /* a file's attributes: a name not there, or a folder's, answer at once */
    pthread_mutex_lock(&lock);
    n = find(path);
    int rc = 0;
    if (!n) {
        rc = -ENOENT;
    } else {
        st->st_mode = n->mode;
        st->st_nlink = S_ISDIR(n->mode) ? 2 : 1;
        st->st_size = n->size;
        st->st_blocks = (n->size + 511) / 512;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int td_mkdir(const char *path, mode_t mode)
{
    pthread_mutex_lock(&lock);
    int rc = add(path, S_IFDIR | (mode & 0777));
    pthread_mutex_unlock(&lock);
    return rc;
}

static int td_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    (void)fi;
    wait_if("create");
    pthread_mutex_lock(&lock);
    int rc = add(path, S_IFREG | (mode & 0777));
    pthread_mutex_unlock(&lock);
    return rc;
}

static int td_open(const char *path, struct fuse_file_info *fi)
{
    (void)fi;
    wait_if("open");
    pthread_mutex_lock(&lock);
    int rc = find(path) ? 0 : -ENOENT;
    pthread_mutex_unlock(&lock);
    return rc;
}

static int td_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)fi;
    pthread_mutex_lock(&lock);
    node *n = find(path);
    off_t have = n ? n->size : 0;
    pthread_mutex_unlock(&lock);
    if (!n)
        return -ENOENT;
    size_t k = off >= have ? 0 : (size_t)(have - off) < size ? (size_t)(have - off) : size;
    memset(buf, 0, k);
    return (int)k;
}

static int td_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)buf;
    (void)fi;
    pthread_mutex_lock(&lock);
    node *n = find(path);
    if (n && off + (off_t)size > n->size)
        n->size = off + (off_t)size;
    pthread_mutex_unlock(&lock);
    return n ? (int)size : -ENOENT;
}

static int td_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    (void)fi;
    pthread_mutex_lock(&lock);
    node *n = find(path);
    if (n)
        n->size = size;
    pthread_mutex_unlock(&lock);
    return n ? 0 : -ENOENT;
}

static int td_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    (void)datasync;
    (void)fi;
    return 0;
}

static int td_opendir(const char *path, struct fuse_file_info *fi)
{
    (void)fi;
    wait_if("opendir");
    pthread_mutex_lock(&lock);
    node *n = find(path);
    int rc = !n ? -ENOENT : S_ISDIR(n->mode) ? 0 : -ENOTDIR;
    pthread_mutex_unlock(&lock);
    return rc;
}

static int td_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_nodes; i++) {
        const char *name;
        if (nodes[i].path && inside(path, nodes[i].path, &name))
            fill(buf, name, NULL, 0, 0);
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

static int td_unlink(const char *path)
{
    wait_if("unlink");
    pthread_mutex_lock(&lock);
    node *n = find(path);
    if (n) {
        free(n->path);
        n->path = NULL;
    }
    pthread_mutex_unlock(&lock);
    return n ? 0 : -ENOENT;
}

static int td_rmdir(const char *path)
{
    pthread_mutex_lock(&lock);
    node *n = find(path);
    int rc = n ? 0 : -ENOENT;
    for (size_t i = 0; n && i < n_nodes; i++) {
        const char *name;
        if (nodes[i].path && inside(path, nodes[i].path, &name))
            rc = -ENOTEMPTY;
    }
    if (rc == 0) {
        free(n->path);
        n->path = NULL;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int td_rename(const char *from, const char *to, unsigned int flags)
{
    (void)flags;
    wait_if("rename");
    pthread_mutex_lock(&lock);
    node *n = find(from), *there = find(to);
    int rc = n ? 0 : -ENOENT;
    if (n) {
        if (there) {
            free(there->path);
            there->path = NULL;
        }
        free(n->path);
        n->path = strdup(to);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int td_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    (void)path;
    (void)tv;
    (void)fi;
    return 0;
}

/* 1 GiB and a million inodes free, names up to 255 bytes: what a run's checks ask before it writes. */
static int td_statfs(const char *path, struct statvfs *st)
{
    (void)path;
    memset(st, 0, sizeof *st);
    st->f_bsize = st->f_frsize = 4096;
    st->f_blocks = st->f_bfree = st->f_bavail = 1u << 18;
    st->f_files = st->f_ffree = st->f_favail = 1000000;
    st->f_namemax = 255;
    return 0;
}

static const struct fuse_operations ops = {
    .init = td_init, .getattr = td_getattr, .mkdir = td_mkdir, .create = td_create, .open = td_open,
    .read = td_read, .write = td_write, .truncate = td_truncate, .fsync = td_fsync, .opendir = td_opendir,
    .readdir = td_readdir, .unlink = td_unlink, .rmdir = td_rmdir, .rename = td_rename, .utimens = td_utimens,
    .statfs = td_statfs,
};

int main(int argc, char **argv)
{
    static const char *const known[] = {"create", "getattr", "opendir", "open", "rename", "unlink"};
    int ok = argc == 4 || argc == 5;
    for (size_t i = 0; ok && i < sizeof known / sizeof *known; i++)
        if (strcmp(argv[3], known[i]) == 0)
            ok = 2;
    if (ok != 2) {
        fprintf(stderr, "usage: tree_disk MOUNTPOINT DELAY_NS create|getattr|opendir|open|rename|unlink [SERVED_FILE]\n");
        return 2;
    }
    delay_ns = atol(argv[2]);
    delayed = argv[3];
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);      /* the loop's threads inherit it: wake at the deadline, not 50 us on */
    if (add("/", S_IFDIR | 0755) != 0)
        return 1;
    char *fargs[] = {argv[0], "-f", argv[1], NULL};
    int status = fuse_main(3, fargs, &ops, NULL);
    if (argc == 5) {
        FILE *f = fopen(argv[4], "w");
        if (f == NULL || fprintf(f, "%lld %lld\n", served_count, served_ns) < 0 || fclose(f) != 0)
            return 1;
    }
    return status;
}
