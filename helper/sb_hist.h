/* sb_hist.h: bounded-memory latency histogram (log-linear buckets, 7 significant
 * bits: values below 128 ns exact, above within 1/128 relative), as elbencho and
 * HdrHistogram do. Recording is a few integer operations, no allocation. */
#ifndef SB_HIST_H
#define SB_HIST_H
#include <stdint.h>

#define SB_HIST_BUCKETS 3776

typedef struct {
    uint64_t counts[SB_HIST_BUCKETS];
    uint64_t n, min_ns, max_ns;
    double sum_ns;
} sb_hist;

void sb_hist_reset(sb_hist *h);
void sb_hist_record(sb_hist *h, uint64_t ns);
/* Latency at quantile q (0..1), in ns; the bucket's midpoint clamped to [min, max]. */
uint64_t sb_hist_quantile(const sb_hist *h, double q);
#endif
