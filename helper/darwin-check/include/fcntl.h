/* Darwin additions to <fcntl.h>, from xnu bsd/sys/fcntl.h (xnu-11417):
 *   #define F_NOCACHE   48  turn data caching off/on for this fd
 *   #define F_FULLFSYNC 51  fsync + ask the drive to flush to the media */
#include_next <fcntl.h>
#define F_NOCACHE 48
#define F_FULLFSYNC 51
