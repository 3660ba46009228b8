/* sb_tree_foundation.m: the Foundation engine of a tree's phases (sb_tree.h's sb_tree_engine_fn): what a Mac app's
 * own code calls for its files. create saves with NSData writeToFile:atomically: (the bytes go to a temporary
 * file first, which is then renamed over the file's name: Foundation's atomic save), making missing folders with
 * NSFileManager; stat asks NSFileManager attributesOfItemAtPath:error:, list contentsOfDirectoryAtPath:error:,
 * read reads the file into NSData (uncached on Apple: NSDataReadingUncached), rename is moveItemAtPath:toPath:,
 * delete removeItemAtPath:, copy copyItemAtPath:toPath: (Foundation is not open source: whether it clones is not
 * known here, and the engine cannot tell, so its copies are not counted as clones). sync each: NSFileHandle synchronizeFile after the save. One autorelease pool per
 * operation; manual reference counting, so that it builds with Apple clang and with GCC's Objective-C. */
#import <Foundation/Foundation.h>
#include "sb_tree.h"
#include <errno.h>
#include <string.h>

static NSString *sb_path(const char *p)
{
    return [[NSFileManager defaultManager] stringWithFileSystemRepresentation:p length:strlen(p)];
}

/* The failure of a Foundation call: its NSError's text where it gave one, else errno's. */
static int sb_tree_fail(sb_err *err, int errnum, NSError *e, const char *what, const char *path)
{
    if (errnum == 0)
        errnum = EIO;
    const char *why = e ? [[e localizedDescription] UTF8String] : strerror(errnum);
    return sb_fail(err, errnum, "%s %s: %s", what, path, why);
}

/* The folders above `path` made where missing, each by NSFileManager (counted). */
static int sb_tree_folders(const char *path, uint64_t *dirs_made, uint64_t *calls, sb_err *err)
{
    NSFileManager *fm = [NSFileManager defaultManager];
    NSString *folder = [sb_path(path) stringByDeletingLastPathComponent];
    NSMutableArray *missing = [NSMutableArray array];
    BOOL isDir = NO;
    (*calls)++;                        /* the last fileExistsAtPath:, which found a folder */
    while ([folder length] > 1 && ![fm fileExistsAtPath:folder isDirectory:&isDir]) {
        (*calls)++;
        [missing insertObject:folder atIndex:0];
        folder = [folder stringByDeletingLastPathComponent];
    }
    for (NSUInteger i = 0; i < [missing count]; i++) {
        NSError *e = nil;
        errno = 0;
        (*calls)++;
        if (![fm createDirectoryAtPath:[missing objectAtIndex:i] withIntermediateDirectories:NO attributes:nil
                                 error:&e])
            return sb_tree_fail(err, errno, e, "cannot make the folder", [[missing objectAtIndex:i] UTF8String]);
        (*dirs_made)++;
    }
    return 0;
}

static int sb_tree_save_data(const char *path, uint64_t size, const unsigned char *data, int sync_each, uint64_t *bytes,
                        uint64_t *dirs_made, uint64_t *calls, sb_err *err)
{
    NSString *p = sb_path(path);
    NSData *d = [NSData dataWithBytesNoCopy:(void *)data length:(NSUInteger)size freeWhenDone:NO];
    errno = 0;
    (*calls)++;
    if (![d writeToFile:p atomically:YES]) {
        if (sb_tree_folders(path, dirs_made, calls, err) != 0)
            return -1;
        errno = 0;
        (*calls)++;
        if (![d writeToFile:p atomically:YES])
            return sb_tree_fail(err, errno, nil, "cannot save (NSData writeToFile:atomically:)", path);
    }
    if (sync_each) {
        *calls += 3;                    /* fileHandleForWritingAtPath:, synchronizeFile, closeFile */
        NSFileHandle *h = [NSFileHandle fileHandleForWritingAtPath:p];
        if (!h)
            return sb_tree_fail(err, errno, nil, "cannot open for its sync", path);
        [h synchronizeFile];
        [h closeFile];
    }
    *bytes += size;
    return 0;
}

static int sb_tree_read_data(const char *path, uint64_t *bytes, sb_err *err)
{
    NSData *d;
    errno = 0;
#ifdef GNUSTEP
    d = [NSData dataWithContentsOfFile:sb_path(path)];
    if (!d)
        return sb_tree_fail(err, errno, nil, "cannot read (NSData dataWithContentsOfFile:)", path);
#else
    NSError *e = nil;
    d = [NSData dataWithContentsOfFile:sb_path(path) options:NSDataReadingUncached error:&e];
    if (!d)
        return sb_tree_fail(err, errno, e, "cannot read (NSData dataWithContentsOfFile:options:)", path);
#endif
    *bytes += [d length];
    return 0;
}

int sb_tree_foundation_op(sb_tree_phase phase, const char *path, const char *to, uint64_t size,
                          const unsigned char *data, int sync_each, uint64_t *bytes, uint64_t *names,
                          uint64_t *dirs_made, uint64_t *calls, sb_err *err)
{
    NSAutoreleasePool *pool = [[NSAutoreleasePool alloc] init];
    NSFileManager *fm = [NSFileManager defaultManager];
    NSError *e = nil;
    int rc = 0;
    errno = 0;
    if (phase != SB_TREE_CREATE)
        (*calls)++;                     /* the operation's one Foundation call (create counts its own) */
    switch (phase) {
    case SB_TREE_CREATE:
        rc = sb_tree_save_data(path, size, data, sync_each, bytes, dirs_made, calls, err);
        break;
    case SB_TREE_STAT:
        if (![fm attributesOfItemAtPath:sb_path(path) error:&e])
            rc = sb_tree_fail(err, errno, e, "cannot stat (NSFileManager attributesOfItemAtPath:)", path);
        break;
    case SB_TREE_LIST: {
        NSArray *found = [fm contentsOfDirectoryAtPath:sb_path(path) error:&e];
        if (!found)
            rc = sb_tree_fail(err, errno, e, "cannot list (NSFileManager contentsOfDirectoryAtPath:)", path);
        else
            *names += [found count];
        break;
    }
    case SB_TREE_READ:
        rc = sb_tree_read_data(path, bytes, err);
        break;
    case SB_TREE_RENAME:
        if (![fm moveItemAtPath:sb_path(path) toPath:sb_path(to) error:&e])
            rc = sb_tree_fail(err, errno, e, "cannot move (NSFileManager moveItemAtPath:toPath:)", path);
        break;
    case SB_TREE_DELETE:
        if (![fm removeItemAtPath:sb_path(path) error:&e])
            rc = sb_tree_fail(err, errno, e, "cannot remove (NSFileManager removeItemAtPath:)", path);
        break;
    case SB_TREE_COPY:
        if (sb_tree_folders(to, dirs_made, calls, err) != 0) {
            rc = -1;
        } else if (![fm copyItemAtPath:sb_path(path) toPath:sb_path(to) error:&e]) {
            rc = sb_tree_fail(err, errno, e, "cannot copy (NSFileManager copyItemAtPath:toPath:)", path);
        } else {
            *bytes += size;
        }
        break;
    default:
        rc = sb_fail(err, EINVAL, "no such phase");
    }
    [pool release];
    return rc;
}
