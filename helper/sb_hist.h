/* sb_hist.h: bounded-memory latency histogram (log-linear buckets, 7 significant
 * bits: values below 128 ns exact, above within 1/128 relative), as elbencho and
 * HdrHistogram do. Recording is a few integer operations, no allocation. */
#ifndef SB_HIST_H
#define SB_HIST_H
#include <stddef.h>
#include <stdint.h>

#define SB_HIST_BUCKETS 3776

typedef struct {
    uint64_t counts[SB_HIST_BUCKETS];
    uint64_t n, min_ns, max_ns;
    double sum_ns;
} sb_hist;

void sb_hist_reset(sb_hist *h);
void sb_hist_record(sb_hist *h, uint64_t ns);
/* Add the counts of `from` into `into` (the latencies of several workers as one). */
void sb_hist_merge(sb_hist *into, const sb_hist *from);
/* Latency at quantile q (0..1), in ns; the bucket's midpoint clamped to [min, max]. */
uint64_t sb_hist_quantile(const sb_hist *h, double q);

/* The histogram as text for the measurement row: "lo-hi:count" per non-empty bin, separated by spaces,
 * bins [lo, hi) in ns at 16 per octave (4 of the recording's buckets each; 1/16 relative, plenty for a
 * distribution plot), exact below 128 ns. Writes at most cap bytes including the NUL; returns the length
 * it needed (as snprintf does), so a result >= cap means the text was cut. */
size_t sb_hist_format(const sb_hist *h, char *buf, size_t cap);
#endif
