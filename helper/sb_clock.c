/* sb_clock.c: raw monotonic clock (clock_gettime CLOCK_MONOTONIC_RAW on Linux,
 * mach_absolute_time + mach_timebase_info on Apple) and the pure conversion. */
#include "sb_clock.h"
#include <sched.h>
#include <time.h>
#ifdef __APPLE__
#include <mach/mach_time.h>
#endif

uint64_t sb_ticks_to_ns(uint64_t ticks, uint32_t numer, uint32_t denom)
{
    /* ticks * numer / denom, split so that no intermediate exceeds 64 bits:
     * (q*denom + r) * numer / denom = q*numer + r*numer/denom, with r < denom < 2^32. */
    uint64_t q = ticks / denom;
    uint64_t r = ticks % denom;
    return q * numer + (r * numer) / denom;
}

void sb_sleep_until_ns(uint64_t t_ns)
{
    for (;;) {
        uint64_t now = sb_now_ns();
        if (now >= t_ns)
            return;
        uint64_t left = t_ns - now;
        if (left > 200000) {
            uint64_t nap = left - 200000;
            struct timespec ts = {(time_t)(nap / 1000000000u), (long)(nap % 1000000000u)};
            nanosleep(&ts, NULL);
        }
    }
}

void sb_sleep_until_yielding_ns(uint64_t t_ns, uint64_t margin_ns)
{
    for (;;) {
        uint64_t now = sb_now_ns();
        if (now >= t_ns)
            return;
        uint64_t left = t_ns - now;
        if (left > margin_ns) {
            uint64_t nap = left - margin_ns;
            struct timespec ts = {(time_t)(nap / 1000000000u), (long)(nap % 1000000000u)};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

#ifdef __APPLE__
static mach_timebase_info_data_t sb_timebase;

void sb_clock_timebase(uint32_t *numer, uint32_t *denom)
{
    if (sb_timebase.denom == 0)
        mach_timebase_info(&sb_timebase);
    *numer = sb_timebase.numer;
    *denom = sb_timebase.denom;
}

uint64_t sb_now_ns(void)
{
    uint32_t numer, denom;
    sb_clock_timebase(&numer, &denom);
    return sb_ticks_to_ns(mach_absolute_time(), numer, denom);
}

const char *sb_clock_name(void) { return "mach_absolute_time"; }

uint64_t sb_clock_resolution_ns(void)
{
    uint32_t numer, denom;
    sb_clock_timebase(&numer, &denom);
    uint64_t ns = sb_ticks_to_ns(1, numer, denom);
    return ns ? ns : 1;
}
#else
void sb_clock_timebase(uint32_t *numer, uint32_t *denom)
{
    *numer = 1;
    *denom = 1;
}

uint64_t sb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *sb_clock_name(void) { return "CLOCK_MONOTONIC_RAW"; }

uint64_t sb_clock_resolution_ns(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC_RAW, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
