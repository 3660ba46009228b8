"""Files in a folder that may have come from someone else: a run directory, a series, a verify's folder, a history
export. They travel as tar and zip files, which keep symbolic and hard links, and a folder can hold a FIFO or a
device node where a file belongs. This is the one way in and the one way out for every command:

- a file is read opened without following a link (O_NOFOLLOW), without blocking (O_NONBLOCK: a FIFO's open would
  wait for a writer), checked to be a regular file (not a FIFO, a device such as /dev/zero, a socket or a folder)
  and read to a cap larger than anything stibium writes there;
- a file is written whole under a temporary name of this module's own making in the same folder (random, created
  with O_EXCL | O_NOFOLLOW, so no file or link already there is opened), then renamed over its name: a rename
  replaces the folder's entry, never the file a link or a second hard link leads to;
- a file appended to (measurements.csv, a verify's chunks.csv) is opened without following a link and refused
  where it is not a regular file or has another name elsewhere (a hard link to a file of the person's);
- a folder stibium goes into because a record names it (a series' run-1) is refused where it is a link.

Every refusal is one line naming the path (`Refused`, a RunDirError: the commands that read run directories
already say those as one line with exit status 2)."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import IO

from ..errors import RunDirError

_NO_TTY = getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _NO_TTY
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _NO_TTY

# The caps: each file's largest size as stibium writes it, with room to spare. run.json of a million operations is
# about 60 KB (stibium-run/2 keeps a digest, not the operations); summary.json of 1,000 test points a few MB.
RECORD_CAP_BYTES = 64 << 20           # run.json, series.json, summary.json, verify.json
TABLE_CAP_BYTES = 16 << 30            # measurements.csv, chunks.csv: a million rows are about 220 MB
TEMP_PREFIX = ".stibium-"             # a temporary file of this module's: .stibium-<name>.<random>.tmp


class Refused(RunDirError):
    """A file or folder that is not what stibium keeps there (a link, a FIFO, a device, too large); one line."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _not_here(path: Path, what: str) -> Refused:
    return Refused(f"{path}: {what} where stibium keeps a file of its own; nothing was read or written there. "
                   f"Remove it, or restore the folder from a copy")


def open_read(path: Path, follow: bool = False) -> IO[bytes]:
    """`path` opened for reading, a regular file; Refused where it is a link (unless `follow`: a file the person
    named on the command line), a FIFO, a device, a socket or a folder. FileNotFoundError passes through."""
    try:
        fd = os.open(path, _READ_FLAGS & ~(os.O_NOFOLLOW if follow else 0))
    except OSError as e:
        if e.errno == errno.ELOOP or (e.errno == errno.EMLINK and not follow):    # EMLINK: FreeBSD's word for it
            raise _not_here(path, "a symbolic link") from None
        if e.errno == errno.ENXIO:           # a socket, or a FIFO's open for writing
            raise _not_here(path, "a socket or a FIFO") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_here(path, _kind(mode))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path, cap_bytes: int = RECORD_CAP_BYTES, follow: bool = False) -> bytes:
    """A regular file's bytes (open_read), Refused where it holds more than cap_bytes."""
    with open_read(path, follow) as f:
        data = f.read(cap_bytes + 1)
    if len(data) > cap_bytes:
        raise Refused(f"{path}: larger than {cap_bytes:,} bytes, more than stibium ever writes there; restore the "
                      f"folder from a copy")
    return data


def read_text(path: Path, cap_bytes: int = RECORD_CAP_BYTES, follow: bool = False, errors: str = "strict") -> str:
    return read_bytes(path, cap_bytes, follow).decode("utf-8", errors)


def refuse_links(folder: Path, names: tuple[str, ...]) -> None:
    """Refused, naming them, where any of `names` in `folder` is a symbolic link or anything but a regular file
    (a missing name is fine: it will be made)."""
    found = []
    for name in names:
        try:
            mode = os.lstat(folder / name).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(mode):
            found.append(f"{name} ({_kind(mode)})")
    if found:
        raise Refused(f"{folder}: holds {', '.join(found)} where stibium keeps its own file"
                      f"{'s' if len(found) > 1 else ''}; nothing was written. Remove "
                      f"{'them' if len(found) > 1 else 'it'}, or restore the folder from a copy")


def write_atomic(path: Path, data: bytes | str) -> None:
    """`data` as the file `path`, whole or not at all: written under a new temporary name in the same folder,
    then renamed over `path`. Refused where `path` is a link or not a regular file (a folder given as the output,
    a FIFO)."""
    refuse_links(path.parent, (path.name,))
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = _new_temporary(path)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _new_temporary(path: Path) -> tuple[int, Path]:
    """A file of the folder made new (O_EXCL: no name already there is opened, a dangling link included)."""
    for _ in range(100):
        tmp = path.with_name(f"{TEMP_PREFIX}{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, _NEW_FLAGS, 0o644), tmp
        except FileExistsError:
            continue
    raise Refused(f"{path.parent}: no new temporary file could be made there")


def _open_own(path: Path, flags: int) -> int:
    """A descriptor of `path` opened with `flags` (made where missing); Refused where it is a link (a dangling one
    too), not a regular file, or a file with other names (a hard link to a file elsewhere)."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _NO_TTY, 0o644)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):
            raise _not_here(path, "a symbolic link") from None
        if e.errno == errno.ENXIO:
            raise _not_here(path, "a FIFO or a socket") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_here(path, _kind(st.st_mode))
        if st.st_nlink > 1:
            raise _not_here(path, f"a file with {st.st_nlink - 1} other name{'s' if st.st_nlink > 2 else ''} "
                                  f"(a hard link)")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_append(path: Path) -> IO[str]:
    """`path` opened to append text (made where missing), held to _open_own's rules."""
    return os.fdopen(_open_own(path, os.O_WRONLY | os.O_APPEND), "a", newline="", encoding="utf-8")


def cut_to_last_line(path: Path) -> None:
    """Cut a row left half-written by a killed run, so appended rows start on their own line (the file held to
    _open_own's rules; a missing file is left missing)."""
    if not os.path.lexists(path):
        return
    fd = _open_own(path, os.O_RDWR)
    try:
        size = end = os.fstat(fd).st_size
        while end > 0:
            start = max(0, end - (1 << 16))
            block = os.pread(fd, end - start, start)
            if end == size and block.endswith(b"\n"):
                return
            cut = block.rfind(b"\n")
            if cut >= 0:
                os.ftruncate(fd, start + cut + 1)
                return
            end = start
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def folder_inside(folder: Path, name: str) -> Path:
    """`folder / name`, a folder a record names (a series' run-1): Refused where it is a link or not a folder;
    FileNotFoundError where it is missing."""
    path = folder / name
    mode = os.lstat(path).st_mode
    if not stat.S_ISDIR(mode):
        raise Refused(f"{path}: {_kind(mode)} where stibium keeps a folder of its own; nothing was read or written "
                      f"there. Remove it, or restore the folder from a copy")
    return path

