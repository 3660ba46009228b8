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
    sb_utf8_clean(err->message);   /* the cut at 512 bytes can split a character of a path */
    err->errnum = errnum;
    return -1;
}

/* The length of the well-formed UTF-8 sequence at s (Unicode 15, table 3-7), or 0 where none starts. */
static int sb_utf8_sequence(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0)
        return 0;
    /* the second byte's range excludes overlong forms, surrogates and code points past U+10FFFF */
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

size_t sb_utf8_clean(char *s)
{
    size_t replaced = 0;
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        int len = sb_utf8_sequence(p);
        if (len == 0) {
            *p++ = '?';
            replaced++;
        } else {
            p += len;
        }
    }
    return replaced;
}
