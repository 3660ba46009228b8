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

unsigned char *sb_buffer_write(size_t bytes, int fill_byte, uint64_t data_seed, int keep_read, sb_err *err)
{
    sb_slot *s = &sb_write_slot;
    if (sb_slot_reserve(s, &sb_read_slot, bytes, keep_read, err) < 0)
        return NULL;
    int same = s->valid >= bytes && s->fill_byte == fill_byte && (fill_byte >= 0 || s->data_seed == data_seed);
    if (!same) {
        if (fill_byte < 0)
            sb_rng_fill(data_seed, s->data, bytes);
        else
            memset(s->data, fill_byte, bytes);
        s->valid = bytes;
        s->fill_byte = fill_byte;
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
