/* Darwin's struct statfs (64-bit inodes, the default since macOS 10.6) and fstatfs, from xnu
 * bsd/sys/mount.h (__DARWIN_STRUCT_STATFS64, MFSTYPENAMELEN 16). Replaces glibc's <sys/mount.h>,
 * which declares mount(2) and no statfs. */
#ifndef SB_DARWIN_SYS_MOUNT_H
#define SB_DARWIN_SYS_MOUNT_H
#include <stdint.h>
#include <sys/types.h>
#define MFSTYPENAMELEN 16
#define SB_DARWIN_MAXPATHLEN 1024
typedef struct { int32_t val[2]; } sb_darwin_fsid_t;
struct statfs {
    uint32_t f_bsize;
    int32_t f_iosize;
    uint64_t f_blocks;
    uint64_t f_bfree;
    uint64_t f_bavail;
    uint64_t f_files;
    uint64_t f_ffree;
    sb_darwin_fsid_t f_fsid;
    uid_t f_owner;
    uint32_t f_type;
    uint32_t f_flags;
    uint32_t f_fssubtype;
    char f_fstypename[MFSTYPENAMELEN];
    char f_mntonname[SB_DARWIN_MAXPATHLEN];
    char f_mntfromname[SB_DARWIN_MAXPATHLEN];
    uint32_t f_flags_ext;
    uint32_t f_reserved[7];
};
int fstatfs(int, struct statfs *);
#endif
