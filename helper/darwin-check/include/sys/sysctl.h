/* sysctlbyname, from xnu bsd/sys/sysctl.h:
 *   int sysctlbyname(const char *, void *oldp, size_t *oldlenp, void *newp, size_t newlen); */
#ifndef SB_DARWIN_SYS_SYSCTL_H
#define SB_DARWIN_SYS_SYSCTL_H
#include <stddef.h>
int sysctlbyname(const char *, void *, size_t *, void *, size_t);
#endif
