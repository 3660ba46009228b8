/* sb_err.h: a failure as the helper reports it: one line and the errno behind it. */
#ifndef SB_ERR_H
#define SB_ERR_H

typedef struct {
    char message[512];
    int errnum;   /* 0 if none */
} sb_err;

/* Fill err (printf-style) and return -1, so that `return sb_fail(...)` ends a function. */
int sb_fail(sb_err *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
