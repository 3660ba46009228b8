/* sb_sign.h: signed blocks, for `stibium verify` (does this drive keep what it is given?). Every block of a
 * verify's files carries a signature: a magic word, the verify's run id, the block's index among all the
 * verify's blocks, a checksum, and a payload drawn from the seed and the index, so that a block read back is
 * either itself, a whole other block of the same verify (a drive that wraps writes around a smaller real
 * capacity), or corrupted (how many bits differ), and a block that cannot be read says its errno.
 * Written and read back uncached, in chunks, a row a chunk (the rate along the way). */
#ifndef SB_SIGN_H
#define SB_SIGN_H
#include <stdint.h>
#include "sb_err.h"

#define SB_SIGN_HEADER_BYTES 32
#define SB_SIGN_BAD_KEPT 64             /* bad blocks listed one by one; the rest are counted */

typedef struct {
    uint64_t run;                       /* the verify's id: another verify's blocks are not this one's */
    uint64_t seed;                      /* the payload's seed */
    uint64_t block_bytes;               /* a multiple of 4096 */
} sb_sign_id;

typedef enum { SB_BLOCK_OK, SB_BLOCK_MOVED, SB_BLOCK_CORRUPT, SB_BLOCK_UNREADABLE } sb_block_kind;

typedef struct {
    uint64_t block;                     /* its index */
    sb_block_kind kind;
    uint64_t holds;                     /* moved: the index of the block it holds; corrupt: of the block it is a
                                         * damaged copy of, where it is nearer that one than its own (else 0) */
    uint64_t bits;                      /* corrupt: the bits that differ from what was written (or from the block
                                         * it is a copy of) */
    int copy;                           /* corrupt: 1 where holds names the block it is a damaged copy of */
    int errnum;                         /* unreadable: the read's errno */
} sb_bad_block;

typedef struct {
    uint64_t blocks, ok, moved, corrupt, unreadable;
    uint64_t period;                    /* moved blocks: the gcd of |holds - block| (a wrap's period), 0 if none */
    uint64_t bad_kept;
    sb_bad_block bad[SB_SIGN_BAD_KEPT]; /* the first bad blocks, in order */
    uint64_t start_ns, end_ns;          /* the first chunk's start, the last one's end (the sync's, for writes) */
    uint64_t sync_ns;                   /* writes: the closing sync's time */
    const char *sync_used;
    int direct_honoured;                /* the file system honours uncached I/O: 1, 0 (it caches anyway), -1 unknown */
    char fs_type[32];
} sb_sign_result;

/* A chunk done: its index, its bytes, the bytes so far, when it began and ended. */
typedef void (*sb_sign_row)(void *ctx, uint64_t chunk, uint64_t chunk_bytes, uint64_t done_bytes, uint64_t start_ns,
                            uint64_t end_ns);

/* Block `index`'s bytes (id->block_bytes) into out. */
void sb_sign_block(const sb_sign_id *id, uint64_t index, unsigned char *out);
/* What a block read back holds, against block `index` (expected: scratch of block_bytes). */
sb_bad_block sb_sign_check(const sb_sign_id *id, uint64_t index, const unsigned char *got, unsigned char *scratch);
/* Write (write 1: a new file of `blocks` blocks from index `first`, then a full sync) or read back and check
 * (write 0) the file at path, uncached, chunk_bytes at a time (a multiple of the block). 0, or -1 with err. */
int sb_sign_file(const char *path, int write, const sb_sign_id *id, uint64_t first, uint64_t blocks,
                 uint64_t chunk_bytes, sb_sign_row row, void *ctx, sb_sign_result *res, sb_err *err);
#endif
