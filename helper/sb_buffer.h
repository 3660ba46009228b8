/* sb_buffer.h: the I/O buffers, kept for the life of the process so that a batch of
 * measurements generates its data and faults its pages in once, before any timer.
 * Write buffer: seeded data (or one fill byte), at least as large as the largest request,
 * so that every request is one contiguous slice: one system call, and data that do not
 * repeat within the request. Read buffer: as large as the largest request, pre-touched.
 * A buffer of 256 MiB or more frees the other one first, so that a run of 2 GB files
 * holds one 2 GB buffer, not two, unless the measurement needs both (keep_*: a mixed one). */
#ifndef SB_BUFFER_H
#define SB_BUFFER_H
#include <stddef.h>
#include <stdint.h>
#include "sb_err.h"

/* The block of a fill of stated ratios (sb_buffer.c): what its compressible share and its repeats are counted in. */
#define SB_FILL_BLOCK_BYTES ((size_t)4096)
/* fill_byte -1: data from the seed's stream, of the stated compressible and repeated shares (percent; 0 and 0:
 * incompressible and unique within the buffer); 0-255: that byte. */
unsigned char *sb_buffer_write(size_t bytes, int fill_byte, unsigned compressible_pct, unsigned dedupe_pct,
                               uint64_t data_seed, int keep_read, sb_err *err);
/* The write buffer for data the caller writes itself (--fill offset). */
unsigned char *sb_buffer_write_scratch(size_t bytes, int keep_read, sb_err *err);
unsigned char *sb_buffer_read(size_t bytes, int keep_write, sb_err *err);

/* Where the next write request of len bytes starts in a buffer of buf_bytes whose cursor is at
 * *cursor: a contiguous slice (back to the start when it would run past the end), after which
 * the cursor moves to the next page boundary (so uncached requests stay aligned in memory). */
size_t sb_buffer_slice(size_t buf_bytes, size_t *cursor, uint64_t len, size_t page_bytes);
#endif
