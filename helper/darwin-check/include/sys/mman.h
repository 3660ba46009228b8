/* Darwin's mincore takes a `char *` vector (xnu bsd/sys/mman.h: int mincore(const void *, size_t,
 * char *)); glibc's takes `unsigned char *`. MS_INVALIDATE, PROT_READ and MAP_SHARED are the same
 * names in both. */
#define mincore sb_glibc_mincore
#include_next <sys/mman.h>
#undef mincore
int mincore(const void *, size_t, char *);
