/* sb_nolinks.c: a test file opened, or removed, by a path in which no name may be a symbolic link. stibium hands
 * the helper the test folder's path as it resolves (no link in it); a folder on the way that someone replaced by a
 * link during a run (a shared target) would otherwise lead writes, and the removal of a half-written file, outside
 * the test folder. O_NOFOLLOW alone covers only the last name.
 *
 * One call where the kernel has it: macOS's O_NOFOLLOW_ANY ("no symlinks allowed in path", xnu bsd/sys/fcntl.h;
 * used where the SDK defines it), Linux's openat2(2) with RESOLVE_NO_SYMLINKS (Linux 5.6 and later). Elsewhere (an older
 * kernel, a container whose seccomp filter refuses openat2) the path is walked a name at a time, each folder opened
 * from the one before with O_NOFOLLOW. Either refuses a link with ELOOP or ENOTDIR. The opens stay outside every
 * timed interval. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sb_nolinks.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#if defined(O_PATH)
#define SB_FOLDER_ONLY O_PATH           /* Linux: a folder to walk through, without the right to read it */
#elif defined(O_SEARCH)
#define SB_FOLDER_ONLY O_SEARCH         /* Apple: the same, by the POSIX name */
#else
#define SB_FOLDER_ONLY O_RDONLY
#endif

int sb_open_walking(const char *path, int flags, mode_t mode)
{
    char copy[PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof copy) {
        errno = len ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(copy, path, len + 1);
    int at = open(copy[0] == '/' ? "/" : ".", SB_FOLDER_ONLY | O_DIRECTORY | O_CLOEXEC);
    if (at < 0)
        return -1;
    char *name = copy;
    for (;;) {
        while (*name == '/')
            name++;
        char *end = strchr(name, '/'), *rest = end;
        while (rest && *rest == '/')
            rest++;
        if (!end || *rest == '\0') {               /* the last name (a trailing slash is the file's own) */
            if (end)
                *end = '\0';
            int fd = openat(at, *name ? name : ".", flags | O_NOFOLLOW, mode);
            int saved = errno;
            close(at);
            errno = saved;
            return fd;
        }
        *end = '\0';
        int next = openat(at, name, SB_FOLDER_ONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(at);
        if (next < 0) {
            errno = saved;
            return -1;
        }
        at = next;
        name = rest;
    }
}

int sb_open_no_links(const char *path, int flags, mode_t mode)
{
#if defined(SB_NOLINKS_WALK_ONLY)                   /* a test's build: the walk on any kernel */
    return sb_open_walking(path, flags, mode);
#elif defined(__APPLE__) && defined(O_NOFOLLOW_ANY)
    return open(path, flags | O_NOFOLLOW | O_NOFOLLOW_ANY, mode);
#else
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_NOFOLLOW);
    how.mode = flags & O_CREAT ? mode : 0;          /* openat2 refuses a mode without O_CREAT */
    how.resolve = RESOLVE_NO_SYMLINKS;
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
        return (int)fd;
#endif
    return sb_open_walking(path, flags, mode);
#endif
}

int sb_unlink_no_links(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return unlink(path);
    char folder[PATH_MAX];
    size_t len = (size_t)(slash - path);
    if (len >= sizeof folder) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(folder, path, len);
    folder[len] = '\0';
    int at = sb_open_no_links(len ? folder : "/", SB_FOLDER_ONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (at < 0)
        return -1;
    int rc = unlinkat(at, slash + 1, 0);
    int saved = errno;
    close(at);
    errno = saved;
    return rc;
}

int sb_fail_link(sb_err *err, int e, const char *path)
{
    if (e != ELOOP && e != ENOTDIR)
        return 0;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return sb_fail(err, e, "%s is a symbolic link; stibium never follows links for test files", path);
    return sb_fail(err, e, "a folder on the way to %s is a symbolic link or not a folder (someone replaced it during "
                   "the run?); stibium never follows links for test files", path);
}
