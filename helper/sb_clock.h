/* sb_clock.h: the raw monotonic clock the helper times I/O with, and the pure
 * tick-to-nanosecond conversion used on Apple platforms.
 * Linux: clock_gettime(CLOCK_MONOTONIC_RAW). Apple: mach_absolute_time() scaled by
 * mach_timebase_info (1/1 on Intel, 125/3 on Apple Silicon). */
#ifndef SB_CLOCK_H
#define SB_CLOCK_H
#include <stdint.h>

/* Nanoseconds for `ticks` of a timebase numer/denom, exact and without 64-bit
 * overflow of intermediates for any interval whose result fits in 64 bits. */
uint64_t sb_ticks_to_ns(uint64_t ticks, uint32_t numer, uint32_t denom);

/* Current reading of the raw monotonic clock, in nanoseconds. */
uint64_t sb_now_ns(void);

/* Returns once the raw clock reads t_ns or later, never before: a sleep to within about 200 us of it,
 * then the clock read until it passes (the schedulers' wake-up is late by tens of microseconds). */
void sb_sleep_until_ns(uint64_t t_ns);
/* The same, sleeping to within margin_ns of the time and yielding the processor while it reads the clock (many
 * threads waiting for due times close together: a spinning one leaves the others a processor to wake on). */
void sb_sleep_until_yielding_ns(uint64_t t_ns, uint64_t margin_ns);

/* Facts about the clock: its name, resolution (ns) and timebase (1/1 off Apple). */
const char *sb_clock_name(void);
uint64_t sb_clock_resolution_ns(void);
void sb_clock_timebase(uint32_t *numer, uint32_t *denom);
#endif
