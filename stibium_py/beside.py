"""A file a plan names beside itself (a fio job file, a trace to replay), read as a stranger's file is: a regular
file inside the plan's folder, reached by a path that does not climb out nor lead out through a link, opened without
waiting on a FIFO, read to at most its cap. Each refusal is one line in the words of what the file should be, and
quotes nothing of the file."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Named:
    """What the plan's file should be, in a refusal's words."""

    noun: str            # "job file", "trace"
    give: str            # what to give instead: "give a fio job file"
    cap_words: str       # after "larger than N": why a file of this kind is not that large
    error: type[Exception]


def read_beside(folder: Path, given: str, what: str, cap_bytes: int, named: Named) -> bytes:
    """The bytes of the file `given` (relative to the plan's `folder`); `what` names it in a refusal ("test x:
    bench_job a.fio"), each refusal a named.error."""
    noun, no = named.noun, named.error
    if not given or not given.strip():
        raise no(f"{what}: an empty path; give the {noun}'s path relative to the plan's folder")
    if "\x00" in given or len(given) > 1024:
        raise no(f"{what}: not a path (a NUL byte, or over 1024 characters); give the {noun}'s path relative "
                 f"to the plan's folder")
    if os.path.isabs(given) or given.startswith("~"):
        raise no(f"{what}: an absolute path; a plan's {noun} lies in the plan's folder: give its path relative to it")
    try:
        base = folder.resolve(strict=True)
        path = (base / given).resolve(strict=True)
    except FileNotFoundError:
        raise no(f"{what}: no such file; give the {noun}'s path relative to the plan's folder") from None
    except (OSError, RuntimeError) as e:
        # a loop of links: Python before 3.13 raises RuntimeError("Symlink loop from '<path>'"), 3.13 OSError ELOOP
        why = "a loop of symbolic links" if isinstance(e, RuntimeError) or getattr(e, "errno", None) == errno.ELOOP \
            else getattr(e, "strerror", None) or str(e)
        raise no(f"{what}: cannot be reached ({why}); give the {noun}'s path relative to the plan's folder") from None
    if not path.is_relative_to(base) or path == base:
        raise no(f"{what}: outside the plan's folder {base} (a path that climbs out of it, or a link that leads "
                 f"out); put the {noun} beside the plan")
    return read_regular(path, what, cap_bytes, named)


def read_regular(path: Path, what: str, cap_bytes: int, named: Named) -> bytes:
    """The bytes of a regular file at `path` (`what` names it in a refusal), at most cap_bytes: opened without
    waiting on a FIFO (O_NONBLOCK) and read to at most cap_bytes + 1; each refusal a named.error."""
    noun, no = named.noun, named.error
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise no(f"{what}: no such file; {named.give}") from None
    except OSError as e:
        if _is_socket(path):            # a socket opens to nothing (Linux: ENXIO; macOS: EOPNOTSUPP)
            raise no(f"{what}: a socket, not {_a(noun)}; {named.give}") from None
        raise no(f"{what}: cannot be opened ({e.strerror}); give {_a(noun)} you can read") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise no(f"{what}: {named_kind(mode)}, not {_a(noun)}; {named.give}")
        chunks, size = [], 0
        while size <= cap_bytes:
            part = os.read(fd, min(1 << 24, cap_bytes + 1 - size))
            if not part:
                break
            chunks.append(part)
            size += len(part)
    finally:
        os.close(fd)
    if size > cap_bytes:
        cap = f"{cap_bytes >> 20} MiB" if cap_bytes >= 1 << 20 else f"{cap_bytes >> 10} KiB" if cap_bytes >= 1 << 10 \
            else f"{cap_bytes} bytes"
        raise no(f"{what}: larger than {cap}; {named.cap_words}")
    return b"".join(chunks)


def _a(noun: str) -> str:
    """The noun with its article: a trace, fio's I/O log."""
    return noun if "'" in noun else f"a {noun}"


def named_kind(mode: int) -> str:
    """What a file that is not a regular one is, in a refusal's words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False
