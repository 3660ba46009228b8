/* sb_hist.c: log-linear latency histogram (see sb_hist.h). */
#include "sb_hist.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static unsigned sb_hist_index(uint64_t v)
{
    if (v < 128)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);      /* floor(log2 v) >= 7 */
    unsigned m = (unsigned)(v >> (e - 6));                 /* 64..127 */
    return 64u * (e - 6) + m;
}

static void sb_hist_bounds(unsigned idx, uint64_t *lo, uint64_t *width)
{
    if (idx < 128) {
        *lo = idx;
        *width = 1;
        return;
    }
    unsigned e = idx / 64 + 5;
    uint64_t m = idx % 64 + 64;
    *lo = m << (e - 6);
    *width = (uint64_t)1 << (e - 6);
}

void sb_hist_reset(sb_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min_ns = UINT64_MAX;
}

void sb_hist_record(sb_hist *h, uint64_t ns)
{
    h->counts[sb_hist_index(ns)]++;
    h->n++;
    h->sum_ns += (double)ns;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

void sb_hist_merge(sb_hist *into, const sb_hist *from)
{
    for (size_t i = 0; i < SB_HIST_BUCKETS; i++)
        into->counts[i] += from->counts[i];
    into->n += from->n;
    into->sum_ns += from->sum_ns;
    if (from->min_ns < into->min_ns)
        into->min_ns = from->min_ns;
    if (from->max_ns > into->max_ns)
        into->max_ns = from->max_ns;
}

uint64_t sb_hist_quantile(const sb_hist *h, double q)
{
    if (h->n == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < SB_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t lo, width;
            sb_hist_bounds(i, &lo, &width);
            uint64_t mid = lo + width / 2;
            if (mid < h->min_ns)
                mid = h->min_ns;
            if (mid > h->max_ns)
                mid = h->max_ns;
            return mid;
        }
    }
    return h->max_ns;
}

size_t sb_hist_format(const sb_hist *h, char *buf, size_t cap)
{
    size_t len = 0;
    uint64_t bin_lo = 0, bin_hi = 0, bin_count = 0;
    if (cap)
        buf[0] = '\0';
    for (unsigned i = 0; i <= SB_HIST_BUCKETS; i++) {
        uint64_t lo = 0, width = 0, count = 0;
        if (i < SB_HIST_BUCKETS) {
            count = h->counts[i];
            if (!count)
                continue;
            sb_hist_bounds(i, &lo, &width);
            if (lo >= 128) {                              /* 16 bins per octave: 4 buckets each */
                width <<= 2;
                lo &= ~(width - 1);
            }
        }
        if (bin_count && (i == SB_HIST_BUCKETS || lo != bin_lo)) {
            int w = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s%llu-%llu:%llu",
                             len ? " " : "", (unsigned long long)bin_lo, (unsigned long long)bin_hi,
                             (unsigned long long)bin_count);
            len += w > 0 ? (size_t)w : 0;
            bin_count = 0;
        }
        if (i < SB_HIST_BUCKETS) {
            if (!bin_count) {
                bin_lo = lo;
                bin_hi = lo + width;
            }
            bin_count += count;
        }
    }
    if (cap && len >= cap)
        buf[cap - 1] = '\0';
    return len;
}
