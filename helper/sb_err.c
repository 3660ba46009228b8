/* sb_err.c: filling a failure (sb_err.h). */
#include "sb_err.h"
#include <stdarg.h>
#include <stdio.h>

int sb_fail(sb_err *err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->errnum = errnum;
    return -1;
}
