/* sb_err.h: a failure as the helper reports it: one line and the errno behind it. */
#ifndef SB_ERR_H
#define SB_ERR_H
#include <stddef.h>

typedef struct {
    char message[512];
    int errnum;   /* 0 if none */
} sb_err;

/* Fill err (printf-style) and return -1, so that `return sb_fail(...)` ends a function. */
int sb_fail(sb_err *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Make s well-formed UTF-8 in place: every byte that starts no well-formed sequence (a character cut by a
 * length limit, a path's bytes in another encoding) becomes '?'. Returns how many bytes were replaced.
 * Foundation refuses ill-formed UTF-8 (stringWithUTF8String: answers nil), so every text the helper
 * answers with passes through here first. */
size_t sb_utf8_clean(char *s);
#endif
