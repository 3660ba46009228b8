/* sb_foundation.m: the `foundation` engine, the road test of the articles' Mac app:
 * NSFileHandle writeData: + synchronizeFile for writes; for reads, a whole file
 * into NSData (dataWithContentsOfFile:options: with NSDataReadingUncached on Apple,
 * dataWithContentsOfFile: on GNUstep, which has no options variant), requests
 * of a pattern by seekToFileOffset: + readDataOfLength:.
 * One Foundation call per request on Apple, as the articles' app made; on GNUstep Base requests
 * are chunked to <= 1 GiB: its readDataOfLength: takes an unsigned int and one writeData: of
 * 2.5 GB failed there ("Bad address"). The row counts the Foundation calls (`syscalls`): the
 * system calls Foundation makes inside them are its own. Each chunk has an autorelease pool of
 * its own, so a 2 GiB read holds one chunk's NSData at a time.
 * Manual reference counting, NSAutoreleasePool, no blocks or literals, so it builds
 * with Apple clang and with GCC's Objective-C. */
#import <Foundation/Foundation.h>
#include "sb_job.h"
#include "sb_platform.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

#ifdef GNUSTEP
#define SB_FOUNDATION_CHUNK_BYTES ((uint64_t)1 << 30)
#else
#define SB_FOUNDATION_CHUNK_BYTES UINT64_MAX
#endif

const char *sb_foundation_implementation(void)
{
#ifdef GNUSTEP
#define SB_STR2(x) #x
#define SB_STR(x) SB_STR2(x)
    return "GNUstep Base " SB_STR(GNUSTEP_BASE_VERSION);
#else
    return "Apple Foundation";
#endif
}

static int sb_fail_exception(sb_err *err, NSException *e, const char *what)
{
    int saved = errno;
    return sb_fail(err, saved, "%s raised %s: %s", what, [[e name] UTF8String], [[e reason] UTF8String]);
}

static int sb_foundation_open(sb_job *job, sb_err *err)
{
    (void)err;
    job->handle = [[NSFileHandle alloc] initWithFileDescriptor:job->fd closeOnDealloc:YES];
    return 0;
}

/* A whole file read as the articles' app does: one call, the file into NSData. */
static int sb_foundation_read_whole(sb_job *job, uint64_t len, sb_err *err)
{
    NSAutoreleasePool *pool = [[NSAutoreleasePool alloc] init];
    /* a path's bytes as the file system has them, whatever their encoding (Apple's advice for paths) */
    NSString *path = [[NSFileManager defaultManager] stringWithFileSystemRepresentation:job->path
                                                                                 length:strlen(job->path)];
    NSData *data;
#ifdef GNUSTEP
    data = [NSData dataWithContentsOfFile:path];
#else
    NSError *error = nil;
    data = [NSData dataWithContentsOfFile:path options:NSDataReadingUncached error:&error];
#endif
    uint64_t got = data ? (uint64_t)[data length] : 0;
    [pool release];
    sb_count_call(job, len);
    if (!data)
        return sb_fail(err, EIO, "NSData could not read %s", job->path);
    if (got < len)
        return sb_fail(err, 0, "read past the end of the file: NSData gave %llu of %llu bytes",
                       (unsigned long long)got, (unsigned long long)len);
    job->bytes_moved += len;
    return 0;
}

static int sb_foundation_io(sb_job *job, enum sb_op op, uint64_t offset, uint64_t len, unsigned char *data,
                            sb_err *err)
{
    NSFileHandle *fh = (NSFileHandle *)job->handle;
    if (job->op == SB_READ && job->nrequests == 1 && !job->duration_ns && offset == 0 && len == job->file_size_bytes)
        return sb_foundation_read_whole(job, len, err);
    int rc = 0;
    @try {
        [fh seekToFileOffset:offset];
        while (len > 0 && rc == 0) {
            NSAutoreleasePool *pool = [[NSAutoreleasePool alloc] init];
            uint64_t chunk = len < SB_FOUNDATION_CHUNK_BYTES ? len : SB_FOUNDATION_CHUNK_BYTES;
            sb_count_call(job, chunk);
            if (op == SB_WRITE) {
                NSData *d = [[NSData alloc] initWithBytesNoCopy:data length:(NSUInteger)chunk freeWhenDone:NO];
                [fh writeData:d];
                [d release];
            } else {
                NSData *d = [fh readDataOfLength:(NSUInteger)chunk];
                if ([d length] == 0)
                    rc = sb_fail(err, 0, "read past the end of the file at offset %llu", (unsigned long long)offset);
                chunk = [d length];
            }
            [pool release];
            data += chunk;
            job->bytes_moved += chunk;
            offset += chunk;
            len -= chunk;
        }
    }
    @catch (NSException *e) {
        rc = sb_fail_exception(err, e, op == SB_WRITE ? "writeData:" : "readDataOfLength:");
    }
    return rc;
}

static int sb_foundation_sync(sb_job *job, sb_err *err)
{
    NSFileHandle *fh = (NSFileHandle *)job->handle;
    if (job->sync != SB_SYNC_FSYNC)      /* full, data, barrier, dsync: the descriptor's own call */
        return sb_sync_fd([fh fileDescriptor], (int)job->sync, &job->sync_used, err);
    int rc = 0;
    job->sync_used = "synchronizeFile";
    @try {
        [fh synchronizeFile];
    }
    @catch (NSException *e) {
        rc = sb_fail_exception(err, e, "synchronizeFile");
    }
    return rc;
}

static int sb_foundation_close(sb_job *job, sb_err *err)
{
    NSFileHandle *fh = (NSFileHandle *)job->handle;
    int rc = 0;
    if (fh) {
        @try {
            [fh closeFile];
        }
        @catch (NSException *e) {
            rc = sb_fail_exception(err, e, "closeFile");
        }
        [fh release];
        job->handle = NULL;
        job->fd = -1;
    } else if (job->fd >= 0) {
        close(job->fd);
        job->fd = -1;
    }
    return rc;
}

const sb_engine sb_engine_foundation = {.name = "foundation", .uncached = 0, .counts_syscalls = 0,
                                        .open = sb_foundation_open, .io = sb_foundation_io,
                                        .sync = sb_foundation_sync, .close = sb_foundation_close};
