/* parallel_disk.c: a disk whose every request takes a set delay and whose requests run in parallel, up
 * to a set number at once. A FUSE file system (libfuse 3) with one file, "disk", held in memory: each
 * read or write takes one of `parallel` slots, sleeps `delay` (clock_nanosleep to an absolute deadline
 * from its arrival), then moves its bytes. With N requests in flight it answers min(N, parallel) / delay
 * requests a second, plus FUSE's own cost (tens of microseconds).
 *
 * libfuse 3 asks the kernel for asynchronous direct I/O, so io_uring and a loop device with direct I/O on
 * top submit without waiting for the request before; init() raises the kernel's limit of requests queued
 * to the file system (max_background, 12 by default), and the loop runs up to 4 x parallel threads (its
 * default is 10).
 *
 *     parallel_disk MOUNTPOINT SIZE_BYTES DELAY_NS PARALLEL [FLUSH_NS [KEEP_BYTES [FAULTS]]]
 *
 * A flush (fsync of the file: a loop device on it sends the file system's cache flushes there) takes FLUSH_NS
 * from its arrival, as a drive writing its cache to the medium; 0 (the default) answers at once, as a drive
 * that does not flush.
 *
 * KEEP_BYTES (a fake drive): the disk says it holds SIZE_BYTES but keeps only KEEP_BYTES. Its first WRAP_HEAD
 * bytes (where a file system keeps its tables) are its own; every byte from KEEP_BYTES on lands at
 * WRAP_HEAD + (offset - WRAP_HEAD) mod (KEEP_BYTES - WRAP_HEAD), over what was written there before, as the
 * fake USB sticks and SSDs that report a capacity they do not have. 0 (the default): an honest disk.
 *
 * FAULTS (a failing drive): a comma-separated list of "flip@OFFSET" (the byte at OFFSET reads back with its lowest
 * bit flipped, every time) and "eio@START-END" (a read that touches [START, END) fails with EIO; writes there
 * succeed, as a drive's bad sectors) and "stall@PERIOD_NS:STALL_NS" (a read or write arriving in the first STALL_NS
 * of every PERIOD_NS since the start waits until that stall ends, as a drive that pauses now and then). "-" or
 * absent: none.
 *
 * Runs in the foreground until unmounted (fusermount3 -u MOUNTPOINT). Built by tests/truth/devices.py:
 *     cc -O2 parallel_disk.c $(pkg-config --cflags --libs fuse3) -o parallel_disk */
#define FUSE_USE_VERSION 312
#include <fuse.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static unsigned char *disk;
static size_t disk_bytes;
static size_t keep_bytes;               /* 0: every byte kept; else a fake of this real capacity */
#define WRAP_HEAD ((size_t)4 << 20)
#define MAX_FAULTS 64
static size_t flips[MAX_FAULTS], nflips;
static size_t eio_start[MAX_FAULTS], eio_end[MAX_FAULTS], neio;
static long long stall_period_ns, stall_ns;     /* stall@PERIOD_NS:STALL_NS: none where 0 */
static struct timespec started;

static int parse_faults(char *spec)
{
    for (char *item = strtok(spec, ","); item; item = strtok(NULL, ",")) {
        unsigned long long a, b;
        if (sscanf(item, "flip@%llu", &a) == 1 && nflips < MAX_FAULTS)
            flips[nflips++] = (size_t)a;
        else if (sscanf(item, "eio@%llu-%llu", &a, &b) == 2 && a < b && neio < MAX_FAULTS)
            eio_start[neio] = (size_t)a, eio_end[neio++] = (size_t)b;
        else if (sscanf(item, "stall@%llu:%llu", &a, &b) == 2 && b < a)
            stall_period_ns = (long long)a, stall_ns = (long long)b;
        else if (strcmp(item, "-") != 0)
            return -1;
    }
    return 0;
}

/* Where byte `off` is kept, and how many bytes from there on are kept in a row. */
static size_t kept_at(size_t off, size_t *run)
{
    if (!keep_bytes || off < keep_bytes) {
        *run = (keep_bytes ? keep_bytes : disk_bytes) - off;
        return off;
    }
    size_t at = WRAP_HEAD + (off - WRAP_HEAD) % (keep_bytes - WRAP_HEAD);
    *run = keep_bytes - at;
    return at;
}

/* Move size bytes at off between buf and where the disk keeps them. */
static void move(char *buf, size_t size, size_t off, int write)
{
    while (size) {
        size_t run, at = kept_at(off, &run);
        size_t n = size < run ? size : run;
        if (write)
            memcpy(disk + at, buf, n);
        else
            memcpy(buf, disk + at, n);
        buf += n, off += n, size -= n;
    }
}
static long delay_ns;
static long flush_ns;
static sem_t slots;

static void sleep_ns(long ns)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += ns % 1000000000L;
    until.tv_sec += ns / 1000000000L + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
}

/* stall@: a request arriving in the first STALL_NS of each PERIOD_NS since the start waits for the stall's end,
 * as a drive that stops now and then (a garbage collection, a thermal pause) holds every request that comes. */
static void wait_stall(void)
{
    if (!stall_period_ns)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long since = (now.tv_sec - started.tv_sec) * 1000000000LL + (now.tv_nsec - started.tv_nsec);
    long long in = since % stall_period_ns;
    if (in < stall_ns)
        sleep_ns((long)(stall_ns - in));
}

/* Wait for a slot, then until `delay` after the request arrived at the slot. */
static void wait_delay(void)
{
    wait_stall();
    while (sem_wait(&slots) != 0 && errno == EINTR)
        ;
    sleep_ns(delay_ns);
    sem_post(&slots);
}

static void *pd_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    conn->max_background = 1024;
    conn->congestion_threshold = 768;
    cfg->direct_io = 0;
    cfg->attr_timeout = cfg->entry_timeout = 3600;
    return NULL;
}

static int pd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    memset(st, 0, sizeof *st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    if (strcmp(path, "/disk") != 0)
        return -ENOENT;
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_size = (off_t)disk_bytes;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)(disk_bytes / 512);
    return 0;
}

static int pd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags)
{
    (void)off, (void)fi, (void)flags;
    if (strcmp(path, "/") != 0)
        return -ENOENT;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    fill(buf, "disk", NULL, 0, 0);
    return 0;
}

static int pd_open(const char *path, struct fuse_file_info *fi)
{
    (void)fi;
    return strcmp(path, "/disk") == 0 ? 0 : -ENOENT;
}

static int pd_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path, (void)fi;
    if ((size_t)off >= disk_bytes)
        return 0;
    if (size > disk_bytes - (size_t)off)
        size = disk_bytes - (size_t)off;
    wait_delay();
    for (size_t i = 0; i < neio; i++)
        if ((size_t)off < eio_end[i] && (size_t)off + size > eio_start[i])
            return -EIO;
    move(buf, size, (size_t)off, 0);
    for (size_t i = 0; i < nflips; i++)
        if (flips[i] >= (size_t)off && flips[i] < (size_t)off + size)
            buf[flips[i] - (size_t)off] ^= 1;
    return (int)size;
}

static int pd_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path, (void)fi;
    if ((size_t)off + size > disk_bytes)
        return -ENOSPC;
    wait_delay();
    move((char *)buf, size, (size_t)off, 1);
    return (int)size;
}

static int pd_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    (void)path, (void)size, (void)fi;
    return 0;
}

static int pd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path, (void)datasync, (void)fi;
    if (flush_ns > 0)
        sleep_ns(flush_ns);
    return 0;
}

static const struct fuse_operations ops = {
    .init = pd_init, .getattr = pd_getattr, .readdir = pd_readdir, .open = pd_open, .read = pd_read,
    .write = pd_write, .truncate = pd_truncate, .fsync = pd_fsync,
};

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 8) {
        fprintf(stderr, "usage: parallel_disk MOUNTPOINT SIZE_BYTES DELAY_NS PARALLEL [FLUSH_NS [KEEP_BYTES [FAULTS]]]\n");
        return 2;
    }
    if (argc == 8 && parse_faults(argv[7]) != 0) {
        fprintf(stderr, "parallel_disk: FAULTS is flip@OFFSET, eio@START-END and stall@PERIOD_NS:STALL_NS, "
                        "comma-separated\n");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &started);
    flush_ns = argc >= 6 ? strtol(argv[5], NULL, 10) : 0;
    disk_bytes = strtoull(argv[2], NULL, 10);
    delay_ns = strtol(argv[3], NULL, 10);
    keep_bytes = argc >= 7 ? strtoull(argv[6], NULL, 10) : 0;
    int parallel = atoi(argv[4]);
    if (keep_bytes && (keep_bytes <= WRAP_HEAD || keep_bytes >= disk_bytes)) {
        fprintf(stderr, "parallel_disk: KEEP_BYTES is more than 4 MiB and less than SIZE_BYTES\n");
        return 2;
    }
    disk = calloc(1, keep_bytes ? keep_bytes : disk_bytes);
    if (!disk || parallel < 1 || sem_init(&slots, 0, (unsigned)parallel) != 0) {
        fprintf(stderr, "parallel_disk: bad arguments or no memory\n");
        return 1;
    }
    char *fargv[] = {argv[0], "-o", "fsname=stibium-parallel-disk", NULL};
    struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
    struct fuse *fuse = fuse_new(&args, &ops, sizeof ops, NULL);
    if (!fuse || fuse_mount(fuse, argv[1]) != 0) {
        fprintf(stderr, "parallel_disk: cannot mount %s\n", argv[1]);
        return 1;
    }
    struct fuse_loop_config *cfg = fuse_loop_cfg_create();
    fuse_loop_cfg_set_max_threads(cfg, (unsigned)parallel * 4 + 16);
    fuse_loop_cfg_set_idle_threads(cfg, (unsigned)parallel * 4 + 16);
    int rc = fuse_loop_mt(fuse, cfg);
    fuse_loop_cfg_destroy(cfg);
    fuse_unmount(fuse);
    fuse_destroy(fuse);
    return rc < 0 ? 1 : 0;
}
