/* From xnu osfmk/mach/mach_time.h: struct mach_timebase_info { uint32_t numer; uint32_t denom; },
 * mach_timebase_info(), mach_absolute_time(). kern_return_t is an int (osfmk/mach/kern_return.h). */
#ifndef SB_DARWIN_MACH_TIME_H
#define SB_DARWIN_MACH_TIME_H
#include <stdint.h>
typedef int kern_return_t;
struct mach_timebase_info {
    uint32_t numer;
    uint32_t denom;
};
typedef struct mach_timebase_info *mach_timebase_info_t;
typedef struct mach_timebase_info mach_timebase_info_data_t;
kern_return_t mach_timebase_info(mach_timebase_info_t info);
uint64_t mach_absolute_time(void);
#endif
