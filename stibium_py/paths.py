"""Every path a user types (a target, an output folder, a plan, a run directory) checked before use, with
one line for each way it can be wrong: a symbolic-link loop, a name too long, a part of the path that is
a file, a parent that cannot be entered, a kernel file system (/proc, /sys, /dev). Nothing is created
here. The errors are PathError; the command line turns them into one line and exit status 2."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from .errors import PathError  # noqa: F401 (raised here, declared apart)

KERNEL_FILE_SYSTEMS = ("/proc", "/sys", "/dev")


def _explain(e: OSError, path: Path, what: str, todo: str) -> PathError:
    reasons = {
        errno.ELOOP: "runs through a loop of symbolic links",
        errno.ENAMETOOLONG: "has a name too long for the file system",
        errno.ENOTDIR: "has a part that is a file, not a folder",
        errno.EACCES: "cannot be reached: permission denied on a folder above it",
        errno.EPERM: "cannot be reached: operation not permitted on a folder above it",
    }
    reason = reasons.get(e.errno, f"cannot be examined ({e.strerror})")
    return PathError(f"{what} {path} {reason}; {todo}")


def existing_part(path: Path, what: str, todo: str) -> Path:
    """The longest existing leading part of path (the path itself when it exists), after checking that
    every part of it can be walked; raises PathError."""
    path = Path(os.path.expanduser(str(path)))
    absolute = Path(os.path.abspath(path))
    for kernel in KERNEL_FILE_SYSTEMS:
        if str(absolute) == kernel or str(absolute).startswith(kernel + "/"):
            raise PathError(f"{what} {path} is under {kernel}, a kernel file system, not a disk; {todo}")
    probe = absolute
    while True:
        try:
            os.stat(probe)
            break
        except FileNotFoundError:
            if probe.parent == probe:
                break
            probe = probe.parent
        except NotADirectoryError:
            part = next((p for p in reversed(probe.parents) if p.is_file()), probe)
            raise PathError(f"{what} {path} has a part that is a file, not a folder ({part}); {todo}") from None
        except OSError as e:
            raise _explain(e, path, what, todo) from None
    try:
        real = Path(os.path.realpath(probe, strict=True))
    except OSError as e:
        raise _explain(e, path, what, todo) from None
    for kernel in KERNEL_FILE_SYSTEMS:
        if str(real) == kernel or str(real).startswith(kernel + "/"):
            raise PathError(f"{what} {path} leads into {kernel}, a kernel file system, not a disk; {todo}")
    return probe


def folder_to_write(path: Path, what: str, todo: str, check_writable: bool = True) -> Path:
    """A folder that exists or can be created by this user: its existing part must be a folder, and
    (check_writable) on a writable file system and writable by this user."""
    probe = existing_part(path, what, todo)
    if not probe.is_dir():
        if probe == Path(os.path.abspath(os.path.expanduser(str(path)))):
            raise PathError(f"{what} {path} is a file, not a folder; {todo}")
        raise PathError(f"{what} {path} has a part that is a file, not a folder ({probe}); {todo}")
    if not check_writable:
        return probe
    if os.statvfs(probe).f_flag & os.ST_RDONLY:
        raise PathError(f"{what} {path} is on a read-only file system; {todo}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise PathError(f"{what} {path} is not writable by this user ({probe}); {todo}")
    return probe


def existing_folder(path: Path, what: str, todo: str) -> Path:
    """A folder that must exist already (a run directory)."""
    probe = existing_part(path, what, todo)
    if probe != Path(os.path.abspath(os.path.expanduser(str(path)))):
        raise PathError(f"{what} {path} does not exist; {todo}")
    if not probe.is_dir():
        raise PathError(f"{what} {path} is not a folder; {todo}")
    return probe


def volume_change(device_then: int | None, uuid_then: str | None, device_now: int | None,
                  uuid_now: str | None) -> str | None:
    """Why a resumed run's target is not the volume it started on, or None where it is (or cannot be told).
    The volume's UUID decides where both are known: the device number follows the order disks were attached
    (macOS numbers them diskN, Linux sdX), so an external disk can come back under another number after a
    reboot; the number decides only where a UUID is missing."""
    if uuid_then and uuid_now:
        return None if uuid_then == uuid_now else f"volume {uuid_then} then, {uuid_now} now"
    if device_then is None or device_now is None or device_then == device_now:
        return None
    return f"device {device_then} then, {device_now} now"


def device_of(path: Path) -> int | None:
    """The device number of the file system holding path (its existing part), or None."""
    try:
        return os.stat(existing_part(path, "path", "")).st_dev
    except (PathError, OSError):
        return None


def missing_folders(path: Path) -> list[Path]:
    """The folders of `path` (itself and its parents) that do not exist, the deepest first: what a mkdir -p of it
    would make, and what remove_empty takes away again."""
    whole = Path(os.path.abspath(path))
    return [p for p in (whole, *whole.parents) if not p.exists()]


def remove_empty(folders: list[Path]) -> None:
    """Each folder that is still empty, in the order given (the deepest first); one that is not stays."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass
