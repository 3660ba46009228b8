/* sb_nolinks.h: opening and removing a test file by a path in which no name is a symbolic link (sb_nolinks.c). */
#ifndef SB_NOLINKS_H
#define SB_NOLINKS_H
#include <sys/types.h>
#include "sb_err.h"

/* open(2) of path, refused (ELOOP or ENOTDIR) where any of its names is a symbolic link. */
int sb_open_no_links(const char *path, int flags, mode_t mode);
/* The same by walking: the path name by name from / (or the working folder), each folder opened from the one
 * before with O_NOFOLLOW, the last name with flags; what sb_open_no_links does where the kernel has no call. */
int sb_open_walking(const char *path, int flags, mode_t mode);
/* unlink(2) of path, refused the same way where a folder on its way is a link (the last name is removed, a
 * link itself included, never what it points to). */
int sb_unlink_no_links(const char *path);
/* Where an open or removal by these failed with errno e because of a link (ELOOP, ENOTDIR): err filled with the
 * line that says which (the file itself, or a folder on its way) and -1; else 0, err untouched. */
int sb_fail_link(sb_err *err, int e, const char *path);

#endif
