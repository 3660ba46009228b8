/* main.m: the stibium helper's command line: parse flags, run one measurement
 * (or evict, residency, info), print one JSON object on stdout.
 * Exit status 0 ok, 1 I/O failure (JSON error object + one line on stderr),
 * 2 usage. `batch` reads one JSON array of arguments per line on stdin and
 * answers one JSON object per line, so a run pays Foundation's start-up once. */
#import <Foundation/Foundation.h>
#include "sb_clock.h"
#include "sb_job.h"
#include "sb_nolinks.h"
#include "sb_platform.h"
#include "sb_replay.h"
#include "sb_sign.h"
#include "sb_tree.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SB_VERSION
#define SB_VERSION "0.0.0"
#endif

enum { SB_OK = 0, SB_IO_FAILURE = 1, SB_USAGE = 2 };

static NSNumber *sb_u64(uint64_t v) { return [NSNumber numberWithUnsignedLongLong:v]; }
static NSNumber *sb_dbl(double v) { return [NSNumber numberWithDouble:v]; }
static NSNumber *sb_bool(int v) { return [NSNumber numberWithBool:v ? YES : NO]; }
/* Text for the answer: well-formed UTF-8 as it is; anything else (a path's bytes in another encoding, a
 * character cut by a length limit) with its ill-formed bytes as '?', since Foundation answers nil for it
 * and a nil value would end the helper instead of the answer. */
static NSString *sb_str(const char *s)
{
    NSString *text = [NSString stringWithUTF8String:s];
    if (text != nil)
        return text;
    char *copy = strdup(s);
    if (copy == NULL)
        return @"?";
    sb_utf8_clean(copy);
    text = [NSString stringWithUTF8String:copy];
    free(copy);
    return text != nil ? text : @"?";
}
static double sb_s(uint64_t ns) { return (double)ns / 1e9; }

static id sb_tristate(int v) { return v < 0 ? (id)[NSNull null] : (id)sb_bool(v); }

/* Parse a byte count: digits with an optional unit (K, KB, M, MB, G, GB, T, TB are
 * powers of 1000; KiB, MiB, GiB, TiB powers of 1024). */
static int sb_parse_bytes(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-')
        return -1;
    static const struct { const char *unit; uint64_t factor; } units[] = {
        {"", 1}, {"B", 1}, {"K", 1000ULL}, {"KB", 1000ULL}, {"M", 1000000ULL}, {"MB", 1000000ULL},
        {"G", 1000000000ULL}, {"GB", 1000000000ULL}, {"T", 1000000000000ULL}, {"TB", 1000000000000ULL},
        {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}, {"TiB", 1ULL << 40},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) == 0) {
            if (v > UINT64_MAX / units[i].factor)
                return -1;
            *out = v * units[i].factor;
            return 0;
        }
    }
    return -1;
}

/* The engines a command may ask for, each once: the name a plan uses, what moves its bytes on this
 * platform, the operations it does, and whether it moves one request at a time, as simple app code does
 * (no queue depth, threads or I/O method then). The lookup, `info`'s list and the one-at-a-time rule read
 * it; stibium_py/plan/model.py holds the same facts for plans checked without a helper, and a test holds
 * the two together (tests/test_helper.py). */
enum { SB_ENGINE_READ = 1, SB_ENGINE_WRITE = 2 };
typedef struct {
    const char *name;
    const sb_engine *engine;
    unsigned ops;               /* SB_ENGINE_READ | SB_ENGINE_WRITE */
    int one_at_a_time;
} sb_engine_entry;

static const sb_engine_entry sb_engines[] = {
    {"direct", &sb_engine_direct, SB_ENGINE_READ | SB_ENGINE_WRITE, 0},
    {"buffered", &sb_engine_buffered, SB_ENGINE_READ | SB_ENGINE_WRITE, 0},
    {"foundation", &sb_engine_foundation, SB_ENGINE_READ | SB_ENGINE_WRITE, 1},
#ifdef __APPLE__
    {"app", &sb_engine_foundation, SB_ENGINE_READ | SB_ENGINE_WRITE, 1},   /* what a Mac app uses: Foundation */
#else
    {"app", &sb_engine_buffered, SB_ENGINE_READ | SB_ENGINE_WRITE, 1},     /* elsewhere: plain buffered calls */
#endif
};
#define SB_ENGINE_COUNT (sizeof sb_engines / sizeof sb_engines[0])

static const sb_engine_entry *sb_engine_entry_named(const char *name)
{
    for (size_t i = 0; i < SB_ENGINE_COUNT; i++)
        if (strcmp(name, sb_engines[i].name) == 0)
            return &sb_engines[i];
    return NULL;
}

/* "direct, buffered, foundation or app" */
static NSString *sb_engine_names(void)
{
    NSMutableString *names = [NSMutableString string];
    for (size_t i = 0; i < SB_ENGINE_COUNT; i++)
        [names appendFormat:@"%s%s", i == 0 ? "" : (i + 1 == SB_ENGINE_COUNT ? " or " : ", "), sb_engines[i].name];
    return names;
}

typedef struct {
    const char *command;
    const char *path;
    int have_bytes, have_granularity, have_data_seed, have_read_fraction;
    sb_job job;
    const char *fill_text;
} sb_args;

static int sb_usage(NSMutableDictionary *out, const char *fmt, const char *arg)
{
    char line[512];
    snprintf(line, sizeof line, fmt, arg);
    [out setObject:sb_str(line) forKey:@"error"];
    [out setObject:sb_bool(1) forKey:@"usage"];
    return SB_USAGE;
}

#define SB_USAGE_TEXT                                                                                      \
    "usage: stibium-helper info [--path DIR] [--device-block N] | write|read|mixed --path F --bytes N [--granularity G] "     \
    "[--access sequential|strided|random] [--stride S] [--span N] [--offset N] [--seed K] [--data-seed K] "             \
    "[--fill random|offset|0xNN|compressible=N,dedupe=M] [--engine direct|buffered|foundation|app] [--sync fsync|full|none|data|barrier|dsync] [--existing] " \
    "[--latency on|off] [--queue-depth 1-256] [--threads 1-64] [--io-method auto|io_uring|threads] "          \
    "[--verify on|off] [--chunk N [--fps F]] [--device-block N] [--read-fraction F (mixed)] [--duration S] [--warmup S] "     \
    "[--stonewall S [--wearout]] [--rate R [--arrivals constant|poisson]] | "                              \
    "evict --path F | residency --path F | tree --path DIR --list FILE --phase create|stat|list|read|rename|delete|copy " \
    "[--threads 1-64] [--sync none|each|end] [--data-seed K] [--evict on|off] [--engine posix|foundation] | "      \
    "replay --path DIR --script FILE --phase layout|run [--timing fast|think|recorded] [--data-seed K] [--fill F] [--evict on|off] | batch"

/* The flags that take a value, and where each goes. */
enum sb_flag_kind { SB_FLAG_PATH, SB_FLAG_BYTES, SB_FLAG_GRANULARITY, SB_FLAG_STRIDE, SB_FLAG_SPAN, SB_FLAG_SEED,
                    SB_FLAG_DATA_SEED, SB_FLAG_ACCESS, SB_FLAG_FILL, SB_FLAG_ENGINE, SB_FLAG_SYNC, SB_FLAG_LATENCY,
                    SB_FLAG_QUEUE_DEPTH, SB_FLAG_THREADS, SB_FLAG_IO_METHOD, SB_FLAG_VERIFY, SB_FLAG_CHUNK, SB_FLAG_DEVICE_BLOCK,
                    SB_FLAG_OFFSET, SB_FLAG_READ_FRACTION, SB_FLAG_DURATION, SB_FLAG_WARMUP, SB_FLAG_STONEWALL, SB_FLAG_FPS,
                    SB_FLAG_RATE, SB_FLAG_ARRIVALS };

static const struct { const char *flag; enum sb_flag_kind kind; } sb_flags[] = {
    {"--path", SB_FLAG_PATH}, {"--bytes", SB_FLAG_BYTES}, {"--granularity", SB_FLAG_GRANULARITY},
    {"--stride", SB_FLAG_STRIDE}, {"--span", SB_FLAG_SPAN}, {"--seed", SB_FLAG_SEED},
    {"--data-seed", SB_FLAG_DATA_SEED}, {"--access", SB_FLAG_ACCESS}, {"--fill", SB_FLAG_FILL},
    {"--engine", SB_FLAG_ENGINE}, {"--sync", SB_FLAG_SYNC}, {"--latency", SB_FLAG_LATENCY},
    {"--queue-depth", SB_FLAG_QUEUE_DEPTH}, {"--threads", SB_FLAG_THREADS}, {"--io-method", SB_FLAG_IO_METHOD},
    {"--verify", SB_FLAG_VERIFY}, {"--chunk", SB_FLAG_CHUNK}, {"--device-block", SB_FLAG_DEVICE_BLOCK},
    {"--offset", SB_FLAG_OFFSET}, {"--read-fraction", SB_FLAG_READ_FRACTION}, {"--duration", SB_FLAG_DURATION},
    {"--warmup", SB_FLAG_WARMUP}, {"--stonewall", SB_FLAG_STONEWALL}, {"--fps", SB_FLAG_FPS},
    {"--rate", SB_FLAG_RATE}, {"--arrivals", SB_FLAG_ARRIVALS},
};
static const char *const sb_arrivals_names[] = {"constant", "poisson"};
/* The highest --rate: ten million requests a second. */
#define SB_MAX_RATE 1e7

/* The longest --duration, --warmup or --stonewall: a week. */
#define SB_MAX_SECONDS (7.0 * 24 * 3600)

/* Index of v in names (count of them), or -1. */
static int sb_choice(const char *v, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

static const char *const sb_access_names[] = {"sequential", "strided", "random"};
static const char *const sb_sync_names[] = {"fsync", "full", "none", "data", "barrier", "dsync"};
static const char *const sb_onoff_names[] = {"off", "on"};
static const char *const sb_io_asked_names[] = {"auto", "io_uring", "threads"};

/* A whole number from 1 to max, or -1. */
static long sb_parse_count(const char *v, long max)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    return errno || end == v || *end || n < 1 || n > max ? -1 : n;
}

/* One flag's value into the arguments; SB_OK or a usage error. */
/* A fill of data, as --fill gives it (but offset, which the caller takes): random; compressible=N,dedupe=M (either
 * part alone too), whole percents; or one byte (0x41). 0; -2 where its shares are not whole percents from 0 to 100;
 * -1 where it is none of these. */
static int sb_fill_parse(const char *v, int *fill_byte, unsigned *compressible, unsigned *dedupe)
{
    *fill_byte = -1;
    *compressible = *dedupe = 0;
    if (strcmp(v, "random") == 0)
        return 0;
    if (strncmp(v, "compressible=", 13) == 0 || strncmp(v, "dedupe=", 7) == 0) {
        unsigned c = 0, d = 0;
        int used = 0;
        if (!((sscanf(v, "compressible=%u,dedupe=%u%n", &c, &d, &used) == 2 && !v[used]) ||
              (sscanf(v, "compressible=%u%n", &c, &used) == 1 && !v[used]) ||
              (sscanf(v, "dedupe=%u%n", &d, &used) == 1 && !v[used])) || c > 100 || d > 100)
            return -2;
        *compressible = c;
        *dedupe = d;
        return 0;
    }
    char *end;
    long b = strtol(v, &end, 0);
    if (*end || end == v || b < 0 || b > 255)
        return -1;
    *fill_byte = (int)b;
    return 0;
}

static int sb_parse_value(enum sb_flag_kind kind, const char *flag, const char *v, sb_args *a, NSMutableDictionary *out)
{
    sb_job *j = &a->job;
    uint64_t n = 0;
    int choice, rc;
    char *end;
    switch (kind) {
    case SB_FLAG_PATH:
        a->path = v;
        return SB_OK;
    case SB_FLAG_BYTES:
    case SB_FLAG_GRANULARITY:
    case SB_FLAG_STRIDE:
    case SB_FLAG_SPAN:
    case SB_FLAG_CHUNK:
    case SB_FLAG_DEVICE_BLOCK:
    case SB_FLAG_OFFSET:
        if (sb_parse_bytes(v, &n) != 0)
            return sb_usage(out, "cannot read the size '%s' (digits with an optional unit such as KB or KiB)", v);
        if (kind == SB_FLAG_BYTES) { j->bytes = n; a->have_bytes = 1; }
        else if (kind == SB_FLAG_GRANULARITY) { j->granularity = n; a->have_granularity = 1; }
        else if (kind == SB_FLAG_STRIDE) j->stride = n;
        else if (kind == SB_FLAG_CHUNK) j->chunk_bytes = n;
        else if (kind == SB_FLAG_DEVICE_BLOCK) j->device_block_bytes = n;
        else if (kind == SB_FLAG_OFFSET) j->offset = n;
        else j->span = n;
        return SB_OK;
    case SB_FLAG_SEED:
    case SB_FLAG_DATA_SEED:
        errno = 0;
        n = strtoull(v, &end, 0);
        if (errno || *end || v[0] == '-' || end == v)
            return sb_usage(out, "cannot read the seed '%s' (a whole number)", v);
        if (kind == SB_FLAG_SEED) j->seed = n;
        else { j->data_seed = n; a->have_data_seed = 1; }
        return SB_OK;
    case SB_FLAG_ACCESS:
        if ((choice = sb_choice(v, sb_access_names, 3)) < 0)
            return sb_usage(out, "--access must be sequential, strided or random, not '%s'", v);
        j->access = (enum sb_access)choice;
        return SB_OK;
    case SB_FLAG_FILL:
        a->fill_text = v;
        if (strcmp(v, "offset") == 0) {
            j->fill_byte = SB_FILL_OFFSET;
            return SB_OK;
        }
        if ((rc = sb_fill_parse(v, &j->fill_byte, &j->compressible_pct, &j->dedupe_pct)) == -2)
            return sb_usage(out, "--fill compressible=N,dedupe=M takes whole percents from 0 to 100, not '%s'", v);
        if (rc != 0)
            return sb_usage(out, "--fill must be random, offset, compressible=N,dedupe=M or a byte such as 0x41, "
                            "not '%s'", v);
        return SB_OK;
    case SB_FLAG_ENGINE:
        j->engine_name = v;
        if (!sb_engine_entry_named(v))
            return sb_usage(out, [[NSString stringWithFormat:@"--engine must be %@, not '%%s'", sb_engine_names()]
                                  UTF8String], v);
        return SB_OK;
    case SB_FLAG_SYNC:
        if ((choice = sb_choice(v, sb_sync_names, SB_SYNC_COUNT)) < 0)
            return sb_usage(out, "--sync must be fsync, full, none, data, barrier or dsync, not '%s'", v);
        j->sync = (enum sb_sync)choice;
        return SB_OK;
    case SB_FLAG_LATENCY:
        if ((choice = sb_choice(v, sb_onoff_names, 2)) < 0)
            return sb_usage(out, "--latency must be on or off, not '%s'", v);
        j->latency = choice;
        return SB_OK;
    case SB_FLAG_QUEUE_DEPTH:
    case SB_FLAG_THREADS: {
        int depth = kind == SB_FLAG_QUEUE_DEPTH;
        long count = sb_parse_count(v, depth ? SB_MAX_QUEUE_DEPTH : SB_MAX_THREADS);
        if (count < 0)
            return sb_usage(out, depth ? "--queue-depth must be a whole number from 1 to 256, not '%s'"
                                       : "--threads must be a whole number from 1 to 64, not '%s'", v);
        if (depth) j->queue_depth = (unsigned)count;
        else j->threads = (unsigned)count;
        return SB_OK;
    }
    case SB_FLAG_IO_METHOD:
        if ((choice = sb_choice(v, sb_io_asked_names, 3)) < 0)
            return sb_usage(out, "--io-method must be auto, io_uring or threads, not '%s'", v);
        j->io_asked = (enum sb_io_asked)choice;
        return SB_OK;
    case SB_FLAG_ARRIVALS:
        if ((choice = sb_choice(v, sb_arrivals_names, 2)) < 0)
            return sb_usage(out, "--arrivals must be constant or poisson, not '%s'", v);
        j->arrivals = choice;
        return SB_OK;
    case SB_FLAG_VERIFY:
        if ((choice = sb_choice(v, sb_onoff_names, 2)) < 0)
            return sb_usage(out, "--verify must be on or off, not '%s'", v);
        j->verify = choice;
        return SB_OK;
    case SB_FLAG_RATE:
    case SB_FLAG_READ_FRACTION:
    case SB_FLAG_DURATION:
    case SB_FLAG_WARMUP:
    case SB_FLAG_STONEWALL:
    case SB_FLAG_FPS: {
        errno = 0;
        double x = strtod(v, &end);
        int ok = !errno && end != v && !*end && isfinite(x);
        if (kind == SB_FLAG_FPS) {      /* frames a second: 24, 29.97, or a ratio as video gives it, 30000/1001 */
            if (ok == 0 && !errno && end != v && *end == '/') {
                char *den_end;
                double den = strtod(end + 1, &den_end);
                ok = den_end != end + 1 && !*den_end && isfinite(den) && den > 0;
                x = ok ? x / den : x;
            }
            if (!ok || !(x >= 0.01 && x <= 100000))
                return sb_usage(out, "--fps must be frames a second from 0.01 to 100000, such as 24 or 30000/1001, "
                                "not '%s'", v);
            j->frame_ns = 1e9 / x;
            return SB_OK;
        }
        if (kind == SB_FLAG_RATE) {
            if (!ok || !(x > 0 && x <= SB_MAX_RATE))
                return sb_usage(out, "--rate must be requests a second above 0, at most ten million, not '%s'", v);
            j->rate_per_s = x;
            return SB_OK;
        }
        if (kind == SB_FLAG_READ_FRACTION) {
            if (!ok || x < 0 || x > 1)
                return sb_usage(out, "--read-fraction must be a number from 0 to 1, such as 0.7, not '%s'", v);
            j->read_fraction = x;
            a->have_read_fraction = 1;
            return SB_OK;
        }
        if (!ok || x <= 0 || x > SB_MAX_SECONDS)
            return sb_usage(out, kind == SB_FLAG_DURATION ? "--duration must be seconds above 0, at most a week, not '%s'"
                                 : kind == SB_FLAG_WARMUP ? "--warmup must be seconds above 0, at most a week, not '%s'"
                                 : "--stonewall must be seconds above 0, at most a week, not '%s'", v);
        uint64_t ns = (uint64_t)llround(x * 1e9);
        if (kind == SB_FLAG_DURATION) j->duration_ns = ns;
        else if (kind == SB_FLAG_WARMUP) j->warmup_ns = ns;
        else j->stonewall_ns = ns ? ns : 1;
        return SB_OK;
    }
    }
    return sb_usage(out, "unknown flag '%s'", flag);
}

static int sb_parse(int argc, char **argv, sb_args *a, NSMutableDictionary *out)
{
    memset(a, 0, sizeof *a);
    if (argc < 1)
        return sb_usage(out, "%s", SB_USAGE_TEXT);
    a->command = argv[0];
    sb_job *j = &a->job;
    j->access = SB_SEQUENTIAL;
    j->seed = 1;
    j->fill_byte = -1;
    j->latency = 1;
    j->queue_depth = j->threads = 1;
    j->engine_name = "direct";
    a->fill_text = "random";
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--existing") == 0) {
            j->existing = 1;
            continue;
        }
        if (strcmp(flag, "--wearout") == 0) {
            j->wearout = 1;
            continue;
        }
        size_t k = 0, nflags = sizeof sb_flags / sizeof sb_flags[0];
        while (k < nflags && strcmp(flag, sb_flags[k].flag) != 0)
            k++;
        if (k == nflags)
            return sb_usage(out, "unknown flag '%s'; run stibium-helper without arguments for usage", flag);
        if (i + 1 >= argc)
            return sb_usage(out, "%s needs a value", flag);
        int rc = sb_parse_value(sb_flags[k].kind, flag, argv[++i], a, out);
        if (rc != SB_OK)
            return rc;
    }
    const sb_engine_entry *entry = sb_engine_entry_named(j->engine_name);
    j->engine = entry->engine;
    j->path = a->path;
    if (entry->one_at_a_time && (j->queue_depth > 1 || j->threads > 1 || j->io_asked != SB_IO_ASK_AUTO))
        return sb_usage(out, "the %s engine moves one request at a time, as simple app code does; use --engine direct "
                        "or buffered for --queue-depth, --threads or --io-method", j->engine_name);
    int mixed = strcmp(a->command, "mixed") == 0;
    if (mixed != a->have_read_fraction)
        return sb_usage(out, "%s", mixed ? "mixed needs --read-fraction (the share of requests that read, such as 0.7)"
                                         : "--read-fraction is for mixed; read and write move one way");
    if (j->warmup_ns && !j->duration_ns)
        return sb_usage(out, "%s", "--warmup needs --duration: the warm-up is the first part of a measurement by time");
    if (j->duration_ns && (j->chunk_bytes || j->verify))
        return sb_usage(out, "%s", j->chunk_bytes ? "--duration does not go with --chunk; give one or the other"
                                                  : "--verify checks that each block moves once, which a measurement "
                                                    "by time repeats; drop --duration to verify");
    if (j->frame_ns > 0 && (!j->chunk_bytes || j->queue_depth * j->threads > 1))
        return sb_usage(out, "%s", !j->chunk_bytes ? "--fps paces frames: give --chunk, the bytes of a frame"
                                                    : "--fps moves a frame's requests one at a time, as a player or "
                                                      "a recorder does; drop --queue-depth and --threads");
    if (j->wearout && !j->stonewall_ns)
        return sb_usage(out, "%s", "--wearout needs --stonewall: the wear-out goes on after the stonewall");
    if (j->stonewall_ns && (j->duration_ns || j->chunk_bytes))
        return sb_usage(out, "%s", j->duration_ns ? "--stonewall caps a measurement of its bytes; a measurement by "
                                                    "--duration is bounded by time already: give one or the other"
                                                  : "--stonewall does not go with --chunk; give one or the other");
    if (j->rate_per_s > 0 && (j->chunk_bytes || j->stonewall_ns || j->io_asked == SB_IO_ASK_URING))
        return sb_usage(out, "%s", j->io_asked == SB_IO_ASK_URING
                                       ? "--rate issues each request at its due time from a thread of its own: drop "
                                         "--io-method io_uring (or give threads)"
                                       : "--rate does not go with --chunk or --stonewall; give one or the other");
    if (j->rate_per_s > 0)
        j->io_asked = SB_IO_ASK_THREADS;     /* a thread a request in flight, each waiting for its due time */
    if (!a->have_data_seed)
        j->data_seed = j->seed;
    if (!a->have_granularity)
        j->granularity = j->bytes;
    return SB_OK;
}

static int sb_io_error(NSMutableDictionary *out, const sb_err *err)
{
    [out setObject:sb_str(err->message) forKey:@"error"];
    [out setObject:[NSNumber numberWithInt:err->errnum] forKey:@"errno"];
    [out setObject:sb_str(err->errnum ? strerror(err->errnum) : "") forKey:@"strerror"];
    return SB_IO_FAILURE;
}

/* A histogram as the row's text (sb_hist_format) under key. */
static void sb_put_hist_text(NSMutableDictionary *out, const sb_hist *h, NSString *key)
{
    size_t need = sb_hist_format(h, NULL, 0) + 1;
    char *text = malloc(need);
    if (text) {
        sb_hist_format(h, text, need);
        [out setObject:sb_str(text) forKey:key];
        free(text);
    }
}

static void sb_put_latency(NSMutableDictionary *out, const sb_hist *h)
{
    static const struct { const char *key; double q; } qs[] = {
        {"lat_p50_s", 0.50}, {"lat_p90_s", 0.90}, {"lat_p99_s", 0.99}, {"lat_p999_s", 0.999},
    };
    [out setObject:sb_dbl(sb_s(h->min_ns)) forKey:@"lat_min_s"];
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        [out setObject:sb_dbl(sb_s(sb_hist_quantile(h, qs[i].q))) forKey:sb_str(qs[i].key)];
    [out setObject:sb_dbl(sb_s(h->max_ns)) forKey:@"lat_max_s"];
    [out setObject:sb_dbl(h->sum_ns / (double)h->n / 1e9) forKey:@"lat_mean_s"];
    sb_put_hist_text(out, h, @"lat_hist_ns");
}

/* A chunk row (--chunk): one JSON object on its own line, before the measurement's answer; plain C, so
 * that writing it out costs microseconds. */
static void sb_print_chunk(const sb_job *job, const sb_chunk *c)
{
    printf("{\"chunk\":%llu,\"chunk_bytes\":%llu,\"bytes_done\":%llu,\"requests\":%llu,\"start_ns\":%llu,"
           "\"end_ns\":%llu,\"gap_ns\":%llu,\"seconds\":%.9f", (unsigned long long)c->index,
           (unsigned long long)c->bytes, (unsigned long long)c->bytes_done, (unsigned long long)c->requests,
           (unsigned long long)c->start_ns, (unsigned long long)c->end_ns, (unsigned long long)c->gap_ns,
           sb_s(c->end_ns - c->start_ns));
    if (job->latency && c->hist->n)
        printf(",\"lat_p50_s\":%.9f,\"lat_p99_s\":%.9f,\"lat_max_s\":%.9f", sb_s(sb_hist_quantile(c->hist, 0.5)),
               sb_s(sb_hist_quantile(c->hist, 0.99)), sb_s(c->hist->max_ns));
    printf("}\n");
    fflush(stdout);
}

/* --wearout: at the stonewall, a row on its own line says how many requests were done by then and how long they
 * took ({"stonewall":N,"seconds":S}); the line that answers it on stdin is the count to reach (many clients: the
 * furthest client's). Plain C, as the chunk rows. */
static int sb_ask_wearout(sb_job *job, uint64_t *target, sb_err *err)
{
    printf("{\"stonewall\":%llu,\"seconds\":%.9f}\n", (unsigned long long)job->stonewall_requests,
           sb_s(job->stonewall_io_ns));
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin))
        return sb_fail(err, EINVAL, "--wearout: no count to reach came on stdin after the stonewall");
    char *end;
    errno = 0;
    unsigned long long n = strtoull(line, &end, 10);
    if (errno || end == line || (*end && *end != '\n') || line[0] == '-')
        return sb_fail(err, EINVAL, "--wearout: the count to reach must be a whole number on its own line");
    *target = n;
    return 0;
}

/* A mixed measurement's reads and writes apart: bytes, requests, latencies. */
static void sb_put_mix(NSMutableDictionary *out, const sb_job *j)
{
    static const char *const names[2] = {"read", "write"};
    [out setObject:sb_dbl(j->read_fraction) forKey:@"read_fraction"];
    for (int w = 0; w < 2; w++) {
        [out setObject:sb_u64(j->op_bytes[w]) forKey:[NSString stringWithFormat:@"%s_bytes", names[w]]];
        [out setObject:sb_u64(j->op_requests[w]) forKey:[NSString stringWithFormat:@"%s_requests", names[w]]];
        const sb_hist *h = &j->op_hists[w];
        if (!j->latency || h->n == 0)
            continue;
        [out setObject:sb_dbl(sb_s(sb_hist_quantile(h, 0.5))) forKey:[NSString stringWithFormat:@"%s_lat_p50_s", names[w]]];
        [out setObject:sb_dbl(sb_s(sb_hist_quantile(h, 0.99))) forKey:[NSString stringWithFormat:@"%s_lat_p99_s", names[w]]];
        sb_put_hist_text(out, h, [NSString stringWithFormat:@"%s_lat_hist_ns", names[w]]);
    }
}

/* --rate: the offered rate and arrivals, the response times (from each request's due time) as the latencies are
 * put (resp_ keys), and how late the requests were issued (the instrument's own lateness, or a slot's wait). */
static void sb_put_rate(NSMutableDictionary *out, const sb_job *j)
{
    [out setObject:sb_dbl(j->rate_per_s) forKey:@"rate_per_s"];
    [out setObject:sb_str(sb_arrivals_names[j->arrivals]) forKey:@"arrivals"];
    [out setObject:sb_u64(j->late_issues) forKey:@"late_issues"];
    [out setObject:sb_u64(j->unscheduled) forKey:@"unscheduled"];
    if (!j->rate_hists)
        return;
    const sb_hist *h = &j->rate_hists[0], *late = &j->rate_hists[1];
    if (h->n) {
        static const struct { const char *key; double q; } qs[] = {
            {"resp_p50_s", 0.50}, {"resp_p90_s", 0.90}, {"resp_p99_s", 0.99}, {"resp_p999_s", 0.999},
        };
        for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
            [out setObject:sb_dbl(sb_s(sb_hist_quantile(h, qs[i].q))) forKey:sb_str(qs[i].key)];
        [out setObject:sb_dbl(sb_s(h->max_ns)) forKey:@"resp_max_s"];
        [out setObject:sb_dbl(h->sum_ns / (double)h->n / 1e9) forKey:@"resp_mean_s"];
        sb_put_hist_text(out, h, @"resp_hist_ns");
    }
    if (late->n) {
        [out setObject:sb_dbl(sb_s(sb_hist_quantile(late, 0.5))) forKey:@"issue_late_p50_s"];
        [out setObject:sb_dbl(sb_s(sb_hist_quantile(late, 0.99))) forKey:@"issue_late_p99_s"];
        [out setObject:sb_dbl(sb_s(late->max_ns)) forKey:@"issue_late_max_s"];
    }
}

static const char *const sb_op_names[] = {"read", "write", "mixed"};

static int sb_cmd_io(sb_args *a, NSMutableDictionary *out)
{
    sb_job *j = &a->job;
    j->op = (enum sb_op)sb_choice(a->command, sb_op_names, 3);
    if (j->op == SB_MIXED)
        j->existing = 1;        /* reads need data: a mixed measurement works in a laid-out file */
    if (!a->path || !a->have_bytes)
        return sb_usage(out, "%s needs --path and --bytes", a->command);
    sb_err err;
    memset(&err, 0, sizeof err);
    j->on_chunk = sb_print_chunk;
    j->on_stonewall = sb_ask_wearout;
    int rc = sb_run(j, &err);
    free(j->offsets);
    j->offsets = NULL;
    [out setObject:sb_str(a->command) forKey:@"op"];
    [out setObject:sb_str(j->engine->name) forKey:@"engine"];
    [out setObject:sb_str(j->engine_name) forKey:@"engine_requested"];
    [out setObject:sb_str(a->path) forKey:@"path"];
    /* the bytes of the measured interval: a warm-up's are apart */
    [out setObject:sb_u64(j->bytes_moved - (rc == 0 ? j->warm_bytes : 0)) forKey:@"bytes"];
    if (rc != 0) {
        free(j->op_hists);
        j->op_hists = NULL;
        free(j->rate_hists);
        j->rate_hists = NULL;
        [out setObject:sb_bool(j->removed_partial) forKey:@"removed_partial_file"];
        return sb_io_error(out, &err);
    }
    [out setObject:sb_u64(j->requests_done) forKey:@"requests"];
    if (j->op == SB_MIXED)
        sb_put_mix(out, j);
    free(j->op_hists);
    j->op_hists = NULL;
    if (j->rate_per_s > 0)
        sb_put_rate(out, j);
    free(j->rate_hists);
    j->rate_hists = NULL;
    if (j->duration_ns) {
        [out setObject:sb_dbl(sb_s(j->duration_ns)) forKey:@"duration_s"];
        [out setObject:sb_dbl(sb_s(j->warmup_ns)) forKey:@"warmup_s"];
        [out setObject:sb_u64(j->warm_bytes) forKey:@"warmup_bytes"];
        [out setObject:sb_u64(j->warm_requests) forKey:@"warmup_requests"];
    }
    if (j->stonewall_ns) {
        [out setObject:sb_dbl(sb_s(j->stonewall_ns)) forKey:@"stonewall_s"];
        [out setObject:sb_u64(j->stonewall_requests) forKey:@"stonewall_requests"];
        [out setObject:sb_dbl(sb_s(j->stonewall_io_ns)) forKey:@"stonewall_seconds"];
        [out setObject:sb_u64(j->wearout_requests) forKey:@"wearout_requests"];
        [out setObject:sb_u64(j->nrequests) forKey:@"pass_requests"];
    }
    [out setObject:sb_u64(j->granularity) forKey:@"granularity_bytes"];
    [out setObject:sb_str(sb_access_names[j->access]) forKey:@"access"];
    [out setObject:sb_u64(j->stride) forKey:@"stride_bytes"];
    [out setObject:sb_u64(j->span) forKey:@"span_bytes"];
    if (j->offset)
        [out setObject:sb_u64(j->offset) forKey:@"offset_bytes"];
    [out setObject:sb_u64(j->seed) forKey:@"seed"];
    [out setObject:sb_str(a->fill_text) forKey:@"fill"];
    [out setObject:sb_dbl(sb_s(j->end_ns - j->start_ns)) forKey:@"seconds"];
    [out setObject:sb_dbl(sb_s(j->io_ns)) forKey:@"io_seconds"];
    [out setObject:sb_dbl(sb_s(j->sync_ns)) forKey:@"sync_seconds"];
    [out setObject:sb_dbl(sb_s(j->open_ns)) forKey:@"open_seconds"];
    [out setObject:sb_dbl(sb_s(j->close_ns)) forKey:@"close_seconds"];
    [out setObject:sb_u64(j->start_ns) forKey:@"start_ns"];
    [out setObject:sb_u64(j->end_ns) forKey:@"end_ns"];
    [out setObject:sb_str(j->op != SB_READ ? sb_sync_names[j->sync] : "none") forKey:@"sync"];
    [out setObject:sb_str(j->op != SB_READ ? j->sync_used : "none") forKey:@"sync_used"];
    [out setObject:sb_u64(j->calls) forKey:@"syscalls"];
    [out setObject:sb_u64(j->largest_call_bytes) forKey:@"largest_syscall_bytes"];
    [out setObject:(j->op == SB_READ && j->resident_before >= 0 ? (id)sb_dbl(j->resident_before) : (id)[NSNull null])
            forKey:@"resident_before"];
    [out setObject:(j->engine->uncached ? sb_tristate(j->direct_honoured) : (id)[NSNull null])
            forKey:@"direct_honoured"];
    [out setObject:sb_u64(j->engine->uncached ? j->cached_bytes : j->bytes_moved) forKey:@"cached_bytes"];
    [out setObject:sb_str(j->engine->uncached && j->direct_honoured == 0 ? sb_policy_reason(j->first_cached_how) : "")
            forKey:@"cached_reason"];
    [out setObject:sb_u64(j->tail_bytes_buffered) forKey:@"tail_bytes_buffered"];
    [out setObject:sb_u64(j->queue_depth) forKey:@"queue_depth"];
    [out setObject:sb_u64(j->threads) forKey:@"threads"];
    [out setObject:sb_str(sb_policy_io_name(j->io.method)) forKey:@"io_method"];
    [out setObject:sb_str(sb_policy_io_reason(j->io.why)) forKey:@"io_method_reason"];
    if (j->verify)
        [out setObject:sb_u64(j->verified) forKey:@"verified_requests"];
    if (j->chunk_bytes) {
        [out setObject:sb_u64(j->chunks) forKey:@"chunks"];
        [out setObject:sb_dbl(sb_s(j->chunk_gaps_ns)) forKey:@"chunk_gaps_seconds"];
    }
    if (!j->engine->counts_syscalls)
        [out setObject:sb_str(sb_foundation_implementation()) forKey:@"foundation_implementation"];
    if (j->latency && j->hist.n > 1)
        sb_put_latency(out, &j->hist);
    return SB_OK;
}

/* evict and residency: open the existing file read-only, never through a link. */
static int sb_open_existing(sb_args *a, NSMutableDictionary *out, int *fd)
{
    if (!a->path)
        return sb_usage(out, "%s needs --path", a->command);
    *fd = sb_open_no_links(a->path, O_RDONLY | O_CLOEXEC, 0);
    if (*fd < 0) {
        sb_err err;
        int e = errno;
        if (!sb_fail_link(&err, e, a->path))
            sb_fail(&err, e, "cannot open %s: %s", a->path, strerror(e));
        return sb_io_error(out, &err);
    }
    [out setObject:sb_str(a->path) forKey:@"path"];
    return SB_OK;
}

/* The residency under key (sb_residency_fd) and the method that counted it, with cachestat's dirty pages
 * where it answered; the residency command adds mincore's count (key_mincore_pages) as a second witness of
 * cachestat's. */
static int sb_put_residency(int fd, NSMutableDictionary *out, NSString *key, int witness, sb_err *err)
{
    sb_residency r;
    double fraction = sb_residency_fd(fd, &r, err);
    if (fraction < 0)
        return -1;
    [out setObject:sb_dbl(fraction) forKey:key];
    [out setObject:sb_u64(r.pages) forKey:@"pages"];
    [out setObject:sb_u64(r.resident) forKey:[key stringByAppendingString:@"_pages"]];
    [out setObject:(r.by_cachestat ? @"cachestat" : @"mincore") forKey:@"residency_method"];
    if (r.by_cachestat) {
        [out setObject:sb_u64(r.cached) forKey:[key stringByAppendingString:@"_cachestat_pages"]];
        [out setObject:sb_u64(r.dirty) forKey:[key stringByAppendingString:@"_cachestat_dirty_pages"]];
        uint64_t mapped_pages, mapped_resident;
        if (witness) {
            if (sb_mincore_fd(fd, &mapped_pages, &mapped_resident, err) < 0)
                return -1;
            [out setObject:sb_u64(mapped_resident) forKey:[key stringByAppendingString:@"_mincore_pages"]];
        }
    }
    return 0;
}

static int sb_cmd_cache(sb_args *a, NSMutableDictionary *out)
{
    int fd = -1;
    int rc = sb_open_existing(a, out, &fd);
    if (rc != SB_OK)
        return rc;
    sb_err err;
    int evict = strcmp(a->command, "evict") == 0;
    if (sb_put_residency(fd, out, evict ? @"resident_before" : @"resident", !evict, &err) != 0)
        goto failed;
    if (evict) {
        uint64_t t0 = sb_now_ns();
        if (sb_evict_fd(fd, 0, 0, &err) != 0)
            goto failed;
        [out setObject:sb_dbl(sb_s(sb_now_ns() - t0)) forKey:@"seconds"];
        if (sb_put_residency(fd, out, @"resident_after", 0, &err) != 0)
            goto failed;
    }
    close(fd);
    return SB_OK;
failed:
    close(fd);
    return sb_io_error(out, &err);
}

static int sb_cmd_info(sb_args *a, NSMutableDictionary *out)
{
    uint32_t numer, denom;
    sb_clock_timebase(&numer, &denom);
    [out setObject:@SB_VERSION forKey:@"helper_version"];
    [out setObject:sb_str(sb_platform_name()) forKey:@"platform"];
    [out setObject:sb_str(sb_clock_name()) forKey:@"clock"];
    [out setObject:sb_u64(sb_clock_resolution_ns()) forKey:@"clock_resolution_ns"];
    [out setObject:sb_u64(numer) forKey:@"timebase_numer"];
    [out setObject:sb_u64(denom) forKey:@"timebase_denom"];
    [out setObject:sb_u64(sb_now_ns()) forKey:@"now_ns"];
    [out setObject:sb_u64((uint64_t)sysconf(_SC_PAGESIZE)) forKey:@"page_size_bytes"];
    [out setObject:sb_u64(sb_platform_kernel_page_bytes()) forKey:@"kernel_page_size_bytes"];
    [out setObject:sb_tristate(sb_platform_translated()) forKey:@"translated"];
    NSMutableArray *engines = [NSMutableArray array];
    NSMutableDictionary *capabilities = [NSMutableDictionary dictionary];
    for (size_t i = 0; i < SB_ENGINE_COUNT; i++) {
        const sb_engine_entry *e = &sb_engines[i];
        NSMutableArray *ops = [NSMutableArray array];
        if (e->ops & SB_ENGINE_READ)
            [ops addObject:@"read"];
        if (e->ops & SB_ENGINE_WRITE)
            [ops addObject:@"write"];
        [engines addObject:sb_str(e->name)];
        [capabilities setObject:[NSDictionary dictionaryWithObjectsAndKeys:sb_str(e->engine->name), @"moved_by", ops,
                                 @"ops", [NSNumber numberWithBool:e->one_at_a_time ? YES : NO], @"one_at_a_time",
                                 [NSNumber numberWithBool:e->engine->uncached ? YES : NO], @"uncached", nil]
                         forKey:sb_str(e->name)];
    }
    [out setObject:engines forKey:@"engines"];
    [out setObject:capabilities forKey:@"engine_capabilities"];
    [out setObject:sb_str(sb_engine_entry_named("app")->engine->name) forKey:@"app_engine"];
    [out setObject:sb_str(sb_foundation_implementation()) forKey:@"foundation_implementation"];
    /* How requests in flight move here: what a measurement with a queue depth would use. */
    sb_io_choice many = sb_policy_io_method(sb_platform_os(), sb_uring_probe(), 8, 1, SB_IO_ASK_AUTO, 0);
    [out setObject:sb_str(sb_policy_io_name(many.method)) forKey:@"io_method_in_flight"];
    [out setObject:sb_str(sb_policy_io_reason(many.why)) forKey:@"io_method_reason"];
    if (!a->path)
        return SB_OK;
    /* Probe the target folder with a file of our own, removed at once. */
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/.stibium-probe-%ld", a->path, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        sb_err err;
        sb_fail(&err, errno, "cannot create a probe file in %s: %s", a->path, strerror(errno));
        return sb_io_error(out, &err);
    }
    sb_fsinfo info;
    sb_fsinfo_fd(fd, a->job.device_block_bytes, &info);
    sb_err ignored;
    int direct_open = sb_set_uncached(fd, &ignored) == 0;
    close(fd);
    unlink(probe);
    NSMutableDictionary *t = [NSMutableDictionary dictionary];
    [t setObject:sb_str(a->path) forKey:@"path"];
    [t setObject:sb_str(info.fs_type) forKey:@"fs_type"];
    [t setObject:sb_str(info.direct_how) forKey:@"direct_how"];
    [t setObject:sb_bool(direct_open) forKey:@"direct_accepted"];
    [t setObject:sb_tristate(direct_open && sb_platform_translated() != 1 ? info.direct_honoured : 0)
          forKey:@"direct_honoured"];
    [t setObject:sb_u64(info.mem_align_bytes) forKey:@"direct_mem_align_bytes"];
    [t setObject:sb_u64(info.offset_align_bytes) forKey:@"direct_offset_align_bytes"];
    [out setObject:t forKey:@"target"];
    return SB_OK;
}

/* tree: one phase of a tree of files under --path, the files named by --list (sb_tree.h). */
/* A seed as a flag gives it: a whole number, not negative. 0, or -1 where it is not one. */
static int sb_parse_seed(const char *v, uint64_t *seed)
{
    char *end;
    errno = 0;
    uint64_t n = strtoull(v, &end, 10);
    if (*end || end == v || errno || v[0] == '-')
        return -1;
    *seed = n;
    return 0;
}

/* on or off: 1 or 0 in *on; -1 where it is neither. */
static int sb_parse_onoff(const char *v, int *on)
{
    int choice = sb_choice(v, sb_onoff_names, 2);
    if (choice < 0)
        return -1;
    *on = choice == 1;
    return 0;
}

static int sb_cmd_tree(int argc, char **argv, NSMutableDictionary *out)
{
    sb_tree_job job = {.phase = SB_TREE_PHASES, .sync = SB_TREE_SYNC_NONE, .threads = 1, .evict = 1, .data_seed = 1};
    const char *list = NULL;
    for (int i = 1; i < argc; i += 2) {
        const char *flag = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int choice;
        char *end;
        if (!v)
            return sb_usage(out, "%s needs a value", flag);
        if (strcmp(flag, "--path") == 0) {
            job.root = v;
        } else if (strcmp(flag, "--list") == 0) {
            list = v;
        } else if (strcmp(flag, "--phase") == 0) {
            if ((choice = sb_choice(v, sb_tree_phase_names, SB_TREE_PHASES)) < 0)
                return sb_usage(out, "--phase is create, stat, list, read, rename, delete or copy, not '%s'", v);
            job.phase = (sb_tree_phase)choice;
        } else if (strcmp(flag, "--sync") == 0) {
            if ((choice = sb_choice(v, sb_tree_sync_names, 3)) < 0)
                return sb_usage(out, "--sync is none, each or end, not '%s'", v);
            job.sync = (sb_tree_sync)choice;
        } else if (strcmp(flag, "--threads") == 0) {
            long t = strtol(v, &end, 10);
            if (*end || end == v || t < 1 || t > 64)
                return sb_usage(out, "--threads is 1 to 64, not '%s'", v);
            job.threads = (int)t;
        } else if (strcmp(flag, "--data-seed") == 0) {
            if (sb_parse_seed(v, &job.data_seed) != 0)
                return sb_usage(out, "--data-seed is a whole number, not '%s'", v);
        } else if (strcmp(flag, "--evict") == 0) {
            if (sb_parse_onoff(v, &job.evict) != 0)
                return sb_usage(out, "--evict is on or off, not '%s'", v);
        } else if (strcmp(flag, "--engine") == 0) {
            if (strcmp(v, "foundation") == 0)
                job.engine = sb_tree_foundation_op;
            else if (strcmp(v, "posix") != 0)
                return sb_usage(out, "tree: --engine is posix or foundation, not '%s'", v);
        } else {
            return sb_usage(out, "tree: unknown flag '%s'; " SB_USAGE_TEXT, flag);
        }
    }
    if (!job.root || !list || job.phase == SB_TREE_PHASES)
        return sb_usage(out, "%s", "tree needs --path, --list and --phase");
    if (job.sync != SB_TREE_SYNC_NONE && job.phase != SB_TREE_CREATE)
        return sb_usage(out, "%s", "--sync goes with --phase create only");
    if (job.engine && job.threads > 1)
        return sb_usage(out, "%s", "--engine foundation runs on one thread, as an app's own code saves; use --threads 1");
    sb_err err;
    if (sb_tree_load(list, &job, &err) != 0)
        return sb_io_error(out, &err);
    for (size_t i = 0; (job.phase == SB_TREE_RENAME || job.phase == SB_TREE_COPY) && i < job.n; i++) {
        if (!job.entries[i].to) {
            sb_tree_free(&job);
            return sb_usage(out, "--phase %s needs a new name on each line of the list (SIZE<TAB>PATH<TAB>NEWPATH)",
                            sb_tree_phase_names[job.phase]);
        }
    }
    sb_tree_result *res = malloc(sizeof *res);
    if (!res) {
        sb_tree_free(&job);
        sb_fail(&err, ENOMEM, "no memory for the phase's histogram");
        return sb_io_error(out, &err);
    }
    int rc = sb_tree_run(&job, res, &err);
    [out setObject:sb_str(sb_tree_phase_names[job.phase]) forKey:@"phase"];
    [out setObject:sb_str(job.root) forKey:@"path"];
    [out setObject:sb_u64(job.n) forKey:@"files"];
    [out setObject:[NSNumber numberWithInt:job.threads] forKey:@"threads"];
    [out setObject:sb_str(job.engine ? "foundation" : "posix") forKey:@"engine"];
    if (job.phase == SB_TREE_CREATE)
        [out setObject:sb_str(sb_tree_sync_names[job.sync]) forKey:@"sync"];
    sb_tree_free(&job);
    if (rc != 0) {
        free(res);
        return sb_io_error(out, &err);
    }
    [out setObject:sb_u64(res->ops) forKey:@"ops"];
    [out setObject:sb_u64(res->calls) forKey:@"calls"];
    [out setObject:sb_u64(res->bytes) forKey:@"bytes"];
    [out setObject:sb_u64(res->start_ns) forKey:@"start_ns"];
    [out setObject:sb_u64(res->end_ns) forKey:@"end_ns"];
    [out setObject:sb_dbl(sb_s(res->end_ns - res->start_ns)) forKey:@"seconds"];
    if (job.phase == SB_TREE_CREATE) {
        [out setObject:sb_u64(res->dirs_made) forKey:@"dirs_made"];
        [out setObject:sb_dbl(sb_s(res->sync_ns)) forKey:@"sync_seconds"];
    }
    if (job.phase == SB_TREE_LIST)
        [out setObject:sb_u64(res->names) forKey:@"names"];
    if (job.phase == SB_TREE_COPY && job.engine) {
        [out setObject:sb_str("NSFileManager copyItemAtPath:toPath:") forKey:@"copy_method"];
    } else if (job.phase == SB_TREE_COPY) {
        [out setObject:sb_u64(res->cloned) forKey:@"cloned"];
        if (res->copy_method)
            [out setObject:sb_str(res->copy_method) forKey:@"copy_method"];
    }
    if (job.phase == SB_TREE_READ) {
        [out setObject:sb_bool(job.evict) forKey:@"evicted"];
        [out setObject:sb_u64(res->pages) forKey:@"pages"];
        [out setObject:sb_u64(res->resident_pages) forKey:@"resident_pages"];
        [out setObject:sb_dbl(res->pages ? (double)res->resident_pages / (double)res->pages : 0.0)
                forKey:@"resident_before"];
    }
    if (res->hist.n)
        sb_put_latency(out, &res->hist);
    free(res);
    return SB_OK;
}

/* sign: a verify's file of signed blocks written (then fully synced) or read back and checked (sb_sign.h),
 * uncached, a row a chunk before the answer. */
static void sb_sign_chunk_row(void *ctx, uint64_t chunk, uint64_t chunk_bytes, uint64_t done, uint64_t start_ns,
                              uint64_t end_ns)
{
    (void)ctx;
    printf("{\"chunk\":%llu,\"chunk_bytes\":%llu,\"bytes_done\":%llu,\"requests\":1,\"start_ns\":%llu,"
           "\"end_ns\":%llu,\"seconds\":%.9f}\n", (unsigned long long)chunk, (unsigned long long)chunk_bytes,
           (unsigned long long)done, (unsigned long long)start_ns, (unsigned long long)end_ns, sb_s(end_ns - start_ns));
    fflush(stdout);
}

static const char *const sb_block_kind_names[] = {"ok", "moved", "corrupt", "unreadable"};

static int sb_cmd_sign(int argc, char **argv, NSMutableDictionary *out)
{
    const char *path = NULL;
    int write = -1;
    uint64_t blocks = 0, first = 0, chunk = 4u << 20;
    int have_run = 0;
    sb_sign_id id = {.block_bytes = 4096, .seed = 1};
    for (int i = 1; i < argc; i += 2) {
        const char *flag = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t *number = NULL;
        if (!v)
            return sb_usage(out, "%s needs a value", flag);
        if (strcmp(flag, "--path") == 0) {
            path = v;
            continue;
        }
        if (strcmp(flag, "--op") == 0) {
            if ((write = sb_choice(v, (const char *const[]){"read", "write"}, 2)) < 0)
                return sb_usage(out, "sign: --op is write or read, not '%s'", v);
            continue;
        }
        if (strcmp(flag, "--blocks") == 0)
            number = &blocks;
        else if (strcmp(flag, "--first") == 0)
            number = &first;
        else if (strcmp(flag, "--block") == 0)
            number = &id.block_bytes;
        else if (strcmp(flag, "--chunk") == 0)
            number = &chunk;
        else if (strcmp(flag, "--run") == 0)
            number = &id.run, have_run = 1;
        else if (strcmp(flag, "--seed") == 0)
            number = &id.seed;
        else
            return sb_usage(out, "sign: unknown flag '%s'; sign --path P --op write|read --blocks N --first K "
                            "--block B --chunk C --run R --seed S", flag);
        char *end;
        errno = 0;
        *number = strtoull(v, &end, 10);
        if (*end || end == v || errno || v[0] == '-')
            return sb_usage(out, "sign: a whole number, not '%s'", v);
    }
    if (!path || write < 0 || !blocks || !have_run)
        return sb_usage(out, "%s", "sign needs --path, --op, --blocks and --run");
    if (id.block_bytes < 4096 || id.block_bytes % 4096 || id.block_bytes > (1u << 20))
        return sb_usage(out, "%s", "--block is a multiple of 4096 bytes, up to 1 MiB");
    if (!chunk || chunk % id.block_bytes || chunk > (64u << 20))
        return sb_usage(out, "%s", "--chunk is a multiple of the block, up to 64 MiB");
    if (blocks > UINT64_MAX / id.block_bytes || first > UINT64_MAX - blocks)
        return sb_usage(out, "%s", "--blocks and --first reach past 2^64 bytes");
    sb_sign_result *res = malloc(sizeof *res);
    if (!res)
        return sb_usage(out, "%s", "no memory");
    sb_err err;
    int rc = sb_sign_file(path, write, &id, first, blocks, chunk, sb_sign_chunk_row, NULL, res, &err);
    if (rc != 0) {
        free(res);
        return sb_io_error(out, &err);
    }
    [out setObject:sb_str(path) forKey:@"path"];
    [out setObject:sb_str(write ? "write" : "read") forKey:@"op"];
    [out setObject:sb_u64(res->blocks) forKey:@"blocks"];
    [out setObject:sb_u64(res->blocks * id.block_bytes) forKey:@"bytes"];
    [out setObject:sb_u64(res->start_ns) forKey:@"start_ns"];
    [out setObject:sb_u64(res->end_ns) forKey:@"end_ns"];
    [out setObject:sb_dbl(sb_s(res->end_ns - res->start_ns)) forKey:@"seconds"];
    [out setObject:sb_tristate(res->direct_honoured) forKey:@"direct_honoured"];
    [out setObject:sb_str(res->fs_type) forKey:@"fs_type"];
    if (write) {
        [out setObject:sb_str(res->sync_used ? res->sync_used : "") forKey:@"sync_used"];
        [out setObject:sb_dbl(sb_s(res->sync_ns)) forKey:@"sync_seconds"];
    } else {
        [out setObject:sb_u64(res->ok) forKey:@"ok"];
        [out setObject:sb_u64(res->moved) forKey:@"moved"];
        [out setObject:sb_u64(res->corrupt) forKey:@"corrupt"];
        [out setObject:sb_u64(res->unreadable) forKey:@"unreadable"];
        [out setObject:sb_u64(res->period) forKey:@"period_blocks"];
        NSMutableArray *bad = [NSMutableArray array];
        for (uint64_t i = 0; i < res->bad_kept; i++) {
            sb_bad_block b = res->bad[i];
            NSMutableDictionary *d = [NSMutableDictionary dictionary];
            [d setObject:sb_u64(b.block) forKey:@"block"];
            [d setObject:sb_str(sb_block_kind_names[b.kind]) forKey:@"kind"];
            if (b.kind == SB_BLOCK_MOVED)
                [d setObject:sb_u64(b.holds) forKey:@"holds"];
            if (b.kind == SB_BLOCK_CORRUPT) {
                [d setObject:sb_u64(b.bits) forKey:@"bits"];
                if (b.copy)
                    [d setObject:sb_u64(b.holds) forKey:@"copy_of"];
            }
            if (b.kind == SB_BLOCK_UNREADABLE) {
                [d setObject:[NSNumber numberWithInt:b.errnum] forKey:@"errno"];
                [d setObject:sb_str(strerror(b.errnum)) forKey:@"error"];
            }
            [bad addObject:d];
        }
        [out setObject:bad forKey:@"bad"];
    }
    free(res);
    return SB_OK;
}


/* replay: a trace's files laid out (--phase layout), or its calls issued again and timed (--phase run), from the
 * script Python made of it (sb_replay.h). */
static const char *const sb_replay_phase_names[] = {"layout", "run"};

static int sb_cmd_replay(int argc, char **argv, NSMutableDictionary *out)
{
    sb_rp_job job = {.timing = SB_RP_FAST, .data_seed = 1, .fill_byte = -1, .evict = 1};
    const char *script = NULL;
    int phase = -1;
    for (int i = 1; i < argc; i += 2) {
        const char *flag = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int choice;
        if (!v)
            return sb_usage(out, "%s needs a value", flag);
        if (strcmp(flag, "--path") == 0) {
            job.root = v;
        } else if (strcmp(flag, "--script") == 0) {
            script = v;
        } else if (strcmp(flag, "--phase") == 0) {
            if ((phase = sb_choice(v, sb_replay_phase_names, 2)) < 0)
                return sb_usage(out, "replay: --phase is layout or run, not '%s'", v);
        } else if (strcmp(flag, "--timing") == 0) {
            if ((choice = sb_choice(v, sb_rp_timing_names, SB_RP_TIMINGS)) < 0)
                return sb_usage(out, "replay: --timing is fast, think or recorded, not '%s'", v);
            job.timing = (sb_rp_timing)choice;
        } else if (strcmp(flag, "--data-seed") == 0) {
            if (sb_parse_seed(v, &job.data_seed) != 0)
                return sb_usage(out, "--data-seed is a whole number, not '%s'", v);
        } else if (strcmp(flag, "--fill") == 0) {
            if (sb_fill_parse(v, &job.fill_byte, &job.compressible_pct, &job.dedupe_pct) != 0)
                return sb_usage(out, "replay: --fill is random, compressible=N,dedupe=M or a byte such as 0x41, not "
                                "'%s'", v);
        } else if (strcmp(flag, "--evict") == 0) {
            if (sb_parse_onoff(v, &job.evict) != 0)
                return sb_usage(out, "--evict is on or off, not '%s'", v);
        } else {
            return sb_usage(out, "replay: unknown flag '%s'; " SB_USAGE_TEXT, flag);
        }
    }
    if (!job.root || !script || phase < 0)
        return sb_usage(out, "%s", "replay needs --path, --script and --phase");
    sb_err err = {{0}, 0};
    if (sb_rp_load(script, &job, &err) != 0)
        return sb_io_error(out, &err);
    [out setObject:sb_str(sb_replay_phase_names[phase]) forKey:@"phase"];
    [out setObject:sb_str(job.root) forKey:@"path"];
    [out setObject:sb_u64(job.n_calls) forKey:@"calls"];
    [out setObject:sb_u64(job.threads) forKey:@"threads"];
    if (phase == 0) {
        uint64_t files, bytes;
        int rc = sb_rp_layout(&job, &files, &bytes, &err);
        sb_rp_free(&job);
        if (rc != 0)
            return sb_io_error(out, &err);
        [out setObject:sb_u64(files) forKey:@"files"];
        [out setObject:sb_u64(bytes) forKey:@"bytes"];
        return SB_OK;
    }
    [out setObject:sb_str(sb_rp_timing_names[job.timing]) forKey:@"timing"];
    sb_rp_result *res = malloc(sizeof *res);
    if (!res) {
        sb_rp_free(&job);
        sb_fail(&err, ENOMEM, "no memory for the replay's histograms");
        return sb_io_error(out, &err);
    }
    int rc = sb_rp_run(&job, res, &err);
    sb_rp_free(&job);
    if (rc != 0) {
        free(res);
        return sb_io_error(out, &err);
    }
    uint64_t moved = 0;
    NSMutableArray *kinds = [NSMutableArray array];
    for (int k = 0; k < SB_RP_KINDS; k++) {
        const sb_rp_kind_total *t = &res->kinds[k];
        if (!t->count)
            continue;
        NSMutableDictionary *row = [NSMutableDictionary dictionary];
        [row setObject:sb_str(sb_rp_kind_names[k]) forKey:@"call"];
        [row setObject:sb_u64(t->count) forKey:@"count"];
        [row setObject:sb_u64(t->bytes) forKey:@"bytes"];
        [row setObject:sb_dbl(sb_s(t->in_calls_ns)) forKey:@"seconds"];
        [row setObject:sb_u64(t->mismatched) forKey:@"mismatched"];
        sb_put_latency(row, &t->hist);
        [kinds addObject:row];
        moved += t->bytes;
    }
    NSMutableArray *slowest = [NSMutableArray array];
    for (int k = 0; k < SB_RP_SLOWEST && res->slowest[k] >= 0; k++)
        [slowest addObject:[NSArray arrayWithObjects:sb_u64((uint64_t)res->slowest[k]),
                                                     sb_dbl(sb_s(res->slowest_ns[k])), nil]];
    [out setObject:kinds forKey:@"kinds"];
    [out setObject:slowest forKey:@"slowest"];
    [out setObject:sb_u64(moved) forKey:@"bytes"];
    [out setObject:sb_u64(res->start_ns) forKey:@"start_ns"];
    [out setObject:sb_u64(res->end_ns) forKey:@"end_ns"];
    [out setObject:sb_dbl(sb_s(res->end_ns - res->start_ns)) forKey:@"seconds"];
    [out setObject:sb_dbl(sb_s(res->in_calls_ns)) forKey:@"in_calls_s"];
    [out setObject:sb_dbl(sb_s(res->think_ns)) forKey:@"think_s"];
    [out setObject:sb_dbl(sb_s(res->waited_ns)) forKey:@"waited_s"];
    [out setObject:sb_u64(res->late) forKey:@"late"];
    [out setObject:sb_dbl(sb_s(res->late_max_ns)) forKey:@"late_max_s"];
    if (res->lateness.n)
        [out setObject:sb_dbl(sb_s(sb_hist_quantile(&res->lateness, 0.99))) forKey:@"late_p99_s"];
    [out setObject:sb_u64(res->mismatched) forKey:@"mismatched"];
    if (res->first_mismatch >= 0) {
        [out setObject:sb_u64((uint64_t)res->first_mismatch) forKey:@"first_mismatch"];
        [out setObject:sb_str(res->first_mismatch_errno ? strerror(res->first_mismatch_errno) : "")
                forKey:@"first_mismatch_strerror"];
    }
    free(res);
    return SB_OK;
}

static int sb_command(int argc, char **argv, NSMutableDictionary *out)
{
    if (argc >= 1 && strcmp(argv[0], "replay") == 0)
        return sb_cmd_replay(argc, argv, out);
    if (argc >= 1 && strcmp(argv[0], "tree") == 0)
        return sb_cmd_tree(argc, argv, out);
    if (argc >= 1 && strcmp(argv[0], "sign") == 0)
        return sb_cmd_sign(argc, argv, out);
    sb_args a;
    int rc = sb_parse(argc, argv, &a, out);
    if (rc != SB_OK)
        return rc;
    if (sb_choice(a.command, sb_op_names, 3) >= 0)
        return sb_cmd_io(&a, out);
    if (strcmp(a.command, "evict") == 0 || strcmp(a.command, "residency") == 0)
        return sb_cmd_cache(&a, out);
    if (strcmp(a.command, "info") == 0)
        return sb_cmd_info(&a, out);
    return sb_usage(out, "unknown command '%s'; " SB_USAGE_TEXT, a.command);
}

static void sb_print(NSDictionary *out)
{
    NSData *json = [NSJSONSerialization dataWithJSONObject:out options:0 error:NULL];
    fwrite([json bytes], 1, [json length], stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

/* One JSON array of arguments per line in, one JSON object per line out. */
static int sb_batch(void)
{
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        NSAutoreleasePool *pool = [[NSAutoreleasePool alloc] init];
        NSMutableDictionary *out = [NSMutableDictionary dictionary];
        NSData *data = [NSData dataWithBytes:line length:strlen(line)];
        id args = [NSJSONSerialization JSONObjectWithData:data options:0 error:NULL];
        int rc;
        if (![args isKindOfClass:[NSArray class]] || [args count] == 0 || [args count] > 64) {
            rc = sb_usage(out, "%s", "batch: each line must be a JSON array of arguments, such as [\"info\"]");
        } else {
            char *argv[64];
            int argc = (int)[args count];
            for (int i = 0; i < argc; i++)
                argv[i] = (char *)[[[args objectAtIndex:(NSUInteger)i] description] UTF8String];
            rc = sb_command(argc, argv, out);
        }
        [out setObject:[NSNumber numberWithInt:rc] forKey:@"status"];
        sb_print(out);
        [pool release];
    }
    free(line);
    return SB_OK;
}

int main(int argc, char **argv)
{
    NSAutoreleasePool *pool = [[NSAutoreleasePool alloc] init];
    int rc;
    if (argc >= 2 && strcmp(argv[1], "batch") == 0) {
        rc = sb_batch();
    } else {
        NSMutableDictionary *out = [NSMutableDictionary dictionary];
        rc = sb_command(argc - 1, argv + 1, out);
        sb_print(out);
        if (rc != SB_OK)
            fprintf(stderr, "stibium-helper: %s\n", [[out objectForKey:@"error"] UTF8String]);
    }
    [pool release];
    return rc;
}
