"""What a write's sync makes durable on each platform. Linux's fsync ends by flushing the drive's write
cache (the block layer sends a cache flush where the device has a volatile cache: fsync(2)), so `sync:
fsync` and `sync: full` are one call there. macOS's fsync moves the data to the drive and leaves it in the
drive's cache; F_FULLFSYNC also asks the drive to flush it (xnu bsd/man/man2/fsync.2 lines 56-80; fcntl
hands F_FULLFSYNC to the file system, bsd/kern/kern_descrip.c 3836-3866). A Mac's writes with fsync are
therefore not comparable with a Linux machine's. The other syncs: Linux's fdatasync and O_DSYNC writes end with
the same flush (fdatasync(2), open(2)); on macOS fdatasync is fsync with data integrity only (xnu
bsd/vfs/vfs_syscalls.c: fsync_common with MNT_DWAIT), O_SYNC (which xnu makes of O_DSYNC, bsd/vfs/vfs_vnops.c
vn_write) writes synchronously to the drive, and F_BARRIERFSYNC is fsync and an ordering barrier that promises
nothing about what has been persisted (bsd/man/man2/fcntl.2): none of the three flushes the drive's cache.
Pure: platform names and the rows' `sync_used` in."""

from __future__ import annotations

from typing import Iterable

PLATFORM_NAMES = {"linux": "Linux", "darwin": "macOS"}
# the sync a Mac must use for writes that compare with Linux's fsync
MAC_ADVICE = "use sync: full (F_FULLFSYNC) for the Mac's writes to compare like with like"


def flushes_drive_cache(platform: str | None, sync_used: str | None) -> bool | None:
    """Whether the sync that ran also flushed the drive's write cache; None where not known (a row from
    before sync_used was recorded)."""
    if not sync_used:
        return None
    if sync_used == "none":
        return False
    if sync_used in ("each", "end"):     # a tree's create: every file synced by fsync(2) (foundation: synchronizeFile)
        sync_used = "fsync"
    if platform == "linux":
        return True                      # fsync, fdatasync, O_DSYNC and GNUstep's synchronizeFile all end in a flush
    if platform == "darwin":
        return sync_used == "F_FULLFSYNC"   # fsync, fdatasync, O_SYNC, F_BARRIERFSYNC, synchronizeFile, a refusal: not
    return None


def flushed(platform: str | None, syncs: Iterable[str | None]) -> bool | None:
    """Whether every write of a point flushed the drive's cache (False where any did not; None unknown)."""
    answers = {flushes_drive_cache(platform, s) for s in syncs}
    return False if False in answers else None if None in answers or not answers else True


def sync_caution(platform_a: str | None, syncs_a: Iterable[str | None],
                 platform_b: str | None, syncs_b: Iterable[str | None]) -> str | None:
    """compare's caution for a write point whose two sides made different things durable, or None."""
    syncs_a, syncs_b = list(syncs_a), list(syncs_b)
    fa, fb = flushed(platform_a, syncs_a), flushed(platform_b, syncs_b)
    if fa is None or fb is None or fa == fb:
        return None
    done, undone = ("A", platform_a, syncs_a), ("B", platform_b, syncs_b)
    if fb:
        done, undone = undone, done
    why = ("they were not synced" if "none" in undone[2] else
           f"fsync on {PLATFORM_NAMES.get(str(undone[1]), undone[1])} leaves the data in the drive's cache")
    mac = undone[1] == "darwin" and "none" not in undone[2]
    return (f"synced differently: {done[0]}'s writes include a flush of the drive's cache and "
            f"{undone[0]}'s do not ({why})" + (f"; {MAC_ADVICE}" if mac else ""))


def unflushed_count(platform: str | None, ops: Iterable[str], syncs: Iterable[str | None]) -> int:
    """The write measurements of a run (a tree's creates among them) that left their data in the drive's cache on
    macOS (fsync there)."""
    if platform != "darwin":
        return 0
    return sum(1 for op, s in zip(ops, syncs) if op in ("write", "create") and s and s != "none"
               and flushes_drive_cache(platform, s) is False)
