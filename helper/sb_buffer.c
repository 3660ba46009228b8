/* sb_buffer.c: the process's two I/O buffers (sb_buffer.h).
 * System calls: posix_memalign (mmap for large sizes), sysconf. */
#include "sb_buffer.h"
#include "sb_rng.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SB_LARGE_BUFFER_BYTES ((size_t)256 << 20)

typedef struct {
    unsigned char *data;
    size_t capacity, valid;
    int fill_byte;          /* write buffer: what it holds */
    unsigned compressible_pct, dedupe_pct;
    uint64_t data_seed;
} sb_slot;

static sb_slot sb_write_slot, sb_read_slot;

static void sb_slot_free(sb_slot *s)
{
    free(s->data);
    memset(s, 0, sizeof *s);
}

/* Make s hold at least bytes (page-aligned memory); returns 1 if it was (re)allocated. A large one frees the
 * other buffer first unless the measurement needs both (keep_other). */
static int sb_slot_reserve(sb_slot *s, sb_slot *other, size_t bytes, int keep_other, sb_err *err)
{
    if (s->capacity >= bytes)
        return 0;
    sb_slot_free(s);
    if (bytes >= SB_LARGE_BUFFER_BYTES && !keep_other)
        sb_slot_free(other);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (posix_memalign((void **)&s->data, page, bytes) != 0) {
        s->data = NULL;
        return sb_fail(err, ENOMEM, "cannot allocate a %zu-byte I/O buffer; free memory or use smaller sizes", bytes);
    }
    s->capacity = bytes;
    return 1;
}

/* Data of stated ratios in blocks of SB_FILL_BLOCK_BYTES: a unique block holds (100 - compressible) % of its
 * bytes from the seed's stream, then zeros (a compressor keeps about that share of it); block b repeats an
 * earlier block, drawn from a second stream, exactly where floor((b + 1) * dedupe / 100) passes a whole number,
 * so that any run of blocks holds the stated share of repeats to within one block (block 0 never repeats). */
static void sb_fill_ratios(uint64_t seed, unsigned char *buf, size_t len, unsigned compressible_pct,
                           unsigned dedupe_pct)
{
    sb_rng data, pick;
    sb_rng_seed(&data, seed);
    sb_rng_seed(&pick, seed ^ 0x6465647570ULL);      /* "dedup": a stream apart from the data's */
    size_t kept = SB_FILL_BLOCK_BYTES - SB_FILL_BLOCK_BYTES * compressible_pct / 100;
    size_t nblocks = (len + SB_FILL_BLOCK_BYTES - 1) / SB_FILL_BLOCK_BYTES;
    for (size_t b = 0; b < nblocks; b++) {
        unsigned char *p = buf + b * SB_FILL_BLOCK_BYTES;
        size_t n = len - b * SB_FILL_BLOCK_BYTES < SB_FILL_BLOCK_BYTES ? len - b * SB_FILL_BLOCK_BYTES
                                                                        : SB_FILL_BLOCK_BYTES;
        if (b > 0 && (uint64_t)(b + 1) * dedupe_pct / 100 > (uint64_t)b * dedupe_pct / 100) {
            memcpy(p, buf + sb_rng_below(&pick, b) * SB_FILL_BLOCK_BYTES, n);
            continue;
        }
        size_t r = kept < n ? kept : n;
        for (size_t i = 0; i < r; i += 8) {
            uint64_t v = sb_rng_next(&data);
            memcpy(p + i, &v, r - i < 8 ? r - i : 8);
        }
        memset(p + r, 0, n - r);
    }
}

unsigned char *sb_buffer_write(size_t bytes, int fill_byte, unsigned compressible_pct, unsigned dedupe_pct,
                               uint64_t data_seed, int keep_read, sb_err *err)
{
    sb_slot *s = &sb_write_slot;
    if (sb_slot_reserve(s, &sb_read_slot, bytes, keep_read, err) < 0)
        return NULL;
    int same = s->valid >= bytes && s->fill_byte == fill_byte && s->compressible_pct == compressible_pct &&
               s->dedupe_pct == dedupe_pct && (fill_byte >= 0 || s->data_seed == data_seed);
    if (!same) {
        if (fill_byte >= 0)
            memset(s->data, fill_byte, bytes);
        else if (compressible_pct || dedupe_pct)
            sb_fill_ratios(data_seed, s->data, bytes, compressible_pct, dedupe_pct);
        else
            sb_rng_fill(data_seed, s->data, bytes);
        s->valid = bytes;
        s->fill_byte = fill_byte;
        s->compressible_pct = compressible_pct;
        s->dedupe_pct = dedupe_pct;
        s->data_seed = data_seed;
    }
    return s->data;
}

unsigned char *sb_buffer_write_scratch(size_t bytes, int keep_read, sb_err *err)
{
    sb_slot *s = &sb_write_slot;
    if (sb_slot_reserve(s, &sb_read_slot, bytes, keep_read, err) < 0)
        return NULL;
    s->valid = 0;   /* the caller writes its own data: nothing later may take them for seeded data */
    return s->data;
}

unsigned char *sb_buffer_read(size_t bytes, int keep_write, sb_err *err)
{
    sb_slot *s = &sb_read_slot;
    int fresh = sb_slot_reserve(s, &sb_write_slot, bytes, keep_write, err);
    if (fresh < 0)
        return NULL;
    if (fresh)
        memset(s->data, 0, bytes);   /* fault every page in now, not inside a timed read */
    return s->data;
}

size_t sb_buffer_slice(size_t buf_bytes, size_t *cursor, uint64_t len, size_t page_bytes)
{
    size_t start = *cursor;
    if (start + len > buf_bytes)
        start = 0;
    size_t next = start + (size_t)len;
    next = (next + page_bytes - 1) / page_bytes * page_bytes;
    *cursor = next >= buf_bytes ? 0 : next;
    return start;
}
