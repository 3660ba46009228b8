/* sb_sign.c: signed blocks written and read back uncached (sb_sign.h). A block: "stibVRFY", the run id, its
 * index, a checksum of the rest (little-endian 64-bit words), then the payload of the seed and the index. */
#include "sb_sign.h"
#include "sb_clock.h"
#include "sb_job.h"
#include "sb_platform.h"
#include "sb_nolinks.h"
#include "sb_rng.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const unsigned char sb_magic[8] = {'s', 't', 'i', 'b', 'V', 'R', 'F', 'Y'};

static void sb_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t sb_get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The checksum of a block: its first 24 bytes and its payload, word by word (the checksum's own word left out). */
static uint64_t sb_checksum(const unsigned char *b, uint64_t block_bytes)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint64_t k = 0; k < block_bytes; k += 8) {
        if (k == 24)
            continue;
        h = (h ^ sb_get64(b + k)) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

static uint64_t sb_bits_apart(const unsigned char *a, const unsigned char *b, uint64_t len)
{
    uint64_t bits = 0;
    for (uint64_t k = 0; k < len; k += 8)
        bits += (uint64_t)__builtin_popcountll(sb_get64(a + k) ^ sb_get64(b + k));
    return bits;
}

void sb_sign_block(const sb_sign_id *id, uint64_t index, unsigned char *out)
{
    memcpy(out, sb_magic, 8);
    sb_put64(out + 8, id->run);
    sb_put64(out + 16, index);
    sb_rng_fill(id->seed ^ (index * 0x9e3779b97f4a7c15ULL + 1), out + SB_SIGN_HEADER_BYTES,
                id->block_bytes - SB_SIGN_HEADER_BYTES);
    sb_put64(out + 24, sb_checksum(out, id->block_bytes));
}

sb_bad_block sb_sign_check(const sb_sign_id *id, uint64_t index, const unsigned char *got, unsigned char *scratch)
{
    sb_bad_block r = {.block = index, .kind = SB_BLOCK_OK};
    sb_sign_block(id, index, scratch);
    if (memcmp(scratch, got, id->block_bytes) == 0)
        return r;
    r.kind = SB_BLOCK_CORRUPT;
    r.bits = sb_bits_apart(got, scratch, id->block_bytes);
    uint64_t holds = sb_get64(got + 16);
    if (memcmp(got, sb_magic, 8) == 0 && sb_get64(got + 8) == id->run && holds != index) {
        sb_sign_block(id, holds, scratch);          /* another block of this verify: whole, or a damaged copy */
        uint64_t bits = sb_bits_apart(got, scratch, id->block_bytes);
        if (bits == 0)
            r.kind = SB_BLOCK_MOVED;
        if (bits < r.bits) {
            r.holds = holds;
            r.copy = 1;
            r.bits = bits;
        }
    }
    return r;
}

static uint64_t sb_gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void sb_count(sb_sign_result *res, sb_bad_block b)
{
    switch (b.kind) {
    case SB_BLOCK_OK:
        res->ok++;
        return;
    case SB_BLOCK_MOVED:
        res->moved++;
        res->period = sb_gcd(res->period, b.holds > b.block ? b.holds - b.block : b.block - b.holds);
        break;
    case SB_BLOCK_CORRUPT:
        res->corrupt++;
        break;
    case SB_BLOCK_UNREADABLE:
        res->unreadable++;
        break;
    }
    if (res->bad_kept < SB_SIGN_BAD_KEPT)
        res->bad[res->bad_kept++] = b;
}

/* Every byte of one request, or -1 with errno (a short count at the end of the file is EIO: the file is shorter
 * than the verify made it). */
static int sb_whole(int fd, int write, unsigned char *buf, uint64_t len, uint64_t offset)
{
    uint64_t done = 0;
    while (done < len) {
        ssize_t n = write ? pwrite(fd, buf + done, len - done, (off_t)(offset + done))
                          : pread(fd, buf + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = write ? ENOSPC : EIO;
            return -1;
        }
        done += (uint64_t)n;
    }
    return 0;
}

/* A chunk that could not be read whole: each of its blocks read alone, so that only the unreadable ones count
 * as such. */
static void sb_check_blocks_alone(int fd, const sb_sign_id *id, uint64_t first, uint64_t offset, uint64_t blocks,
                                  unsigned char *buf, unsigned char *scratch, sb_sign_result *res)
{
    for (uint64_t i = 0; i < blocks; i++) {
        uint64_t at = offset + i * id->block_bytes;
        uint64_t index = first + at / id->block_bytes;
        if (sb_whole(fd, 0, buf, id->block_bytes, at) != 0) {
            sb_bad_block b = {.block = index, .kind = SB_BLOCK_UNREADABLE, .errnum = errno};
            sb_count(res, b);
            continue;
        }
        sb_count(res, sb_sign_check(id, index, buf, scratch));
    }
}

int sb_sign_file(const char *path, int write, const sb_sign_id *id, uint64_t first, uint64_t blocks,
                 uint64_t chunk_bytes, sb_sign_row row, void *ctx, sb_sign_result *res, sb_err *err)
{
    memset(res, 0, sizeof *res);
    res->blocks = blocks;
    if (id->block_bytes < 4096 || id->block_bytes % 4096 || !chunk_bytes || chunk_bytes % id->block_bytes)
        return sb_fail(err, EINVAL, "a block is a multiple of 4096 bytes and a chunk a multiple of the block");
    int flags = write ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY;
    int fd = sb_open_no_links(path, flags | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        if (sb_fail_link(err, e, path))
            return -1;
        return sb_fail(err, e, "cannot open %s: %s", path, strerror(e));
    }
    unsigned char *buf = NULL, *scratch = NULL;
    int rc = -1;
    if (posix_memalign((void **)&buf, 16384, chunk_bytes) != 0 ||
        posix_memalign((void **)&scratch, 16384, id->block_bytes) != 0) {
        sb_fail(err, ENOMEM, "no memory for a chunk of %llu bytes", (unsigned long long)chunk_bytes);
        goto done;
    }
    if (sb_set_uncached(fd, err) != 0)
        goto done;
    sb_fsinfo info;
    sb_fsinfo_fd(fd, 0, &info);         /* FUSE and the like accept O_DIRECT and cache anyway: say which */
    res->direct_honoured = info.direct_honoured;
    memcpy(res->fs_type, info.fs_type, sizeof res->fs_type);
    uint64_t total = blocks * id->block_bytes;
    for (uint64_t offset = 0, chunk = 0; offset < total; offset += chunk_bytes, chunk++) {
        uint64_t len = total - offset < chunk_bytes ? total - offset : chunk_bytes;
        uint64_t n = len / id->block_bytes;
        if (write)
            for (uint64_t i = 0; i < n; i++)
                sb_sign_block(id, first + offset / id->block_bytes + i, buf + i * id->block_bytes);
        uint64_t t0 = sb_now_ns();
        int failed = sb_whole(fd, write, buf, len, offset);
        uint64_t t1 = sb_now_ns();
        if (failed && write) {
            int e = errno;
            sb_fail(err, e, e == ENOSPC ? "the file system is full at byte %llu of %s; give a smaller size"
                                        : "write at byte %llu of %s: %s", (unsigned long long)offset, path,
                    strerror(e));
            goto done;
        }
        if (!res->start_ns)
            res->start_ns = t0;
        res->end_ns = t1;
        if (!write) {
            if (failed)
                sb_check_blocks_alone(fd, id, first, offset, n, buf, scratch, res);
            else
                for (uint64_t i = 0; i < n; i++)
                    sb_count(res, sb_sign_check(id, first + offset / id->block_bytes + i, buf + i * id->block_bytes,
                                                scratch));
        }
        if (row)
            row(ctx, chunk, len, offset + len, t0, t1);
    }
    if (write) {
        uint64_t t0 = sb_now_ns();
        if (sb_sync_fd(fd, SB_SYNC_FULL, &res->sync_used, err) != 0)
            goto done;
        res->end_ns = sb_now_ns();
        res->sync_ns = res->end_ns - t0;
    }
    rc = 0;
done:
    free(buf);
    free(scratch);
    if (close(fd) != 0 && rc == 0 && write)
        rc = sb_fail(err, errno, "close %s: %s", path, strerror(errno));
    return rc;
}
