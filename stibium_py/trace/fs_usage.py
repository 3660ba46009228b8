"""macOS's fs_usage output (`fs_usage -w -f filesys`, as root) read into a trace's calls: pure, line by line. The forms
are those fs_usage.c prints in wide mode (Apple's system_cmds-1026.100.5, fs_usage/fs_usage.c, format_print and
print_open; its manual page fs_usage.1 names the columns):

  HH:MM:SS.uuuuuu  CALL(17 wide)  ARGUMENTS  PATHNAME  S.UUUUUU[ W] COMMAND.THREADID

The time of day is when the call returned (the exit event's wall time); S.UUUUUU its time in the kernel, rounded up
to a microsecond; W where the thread was scheduled out during it. The arguments, by the call's format:
  open, open_nocancel, open_dprotected, openat:  F=FD      (MODE)   or  [ERR] (MODE)
        MODE: R, W, C (O_CREAT), A, T (O_TRUNC), E (O_EXCL) ... each letter or _
  close, fsync, fdatasync, fstat64:             F=FD   or  F=FD[ERR]
  read, write, readv, writev, getdirentries64:  F=FD  B=0xBYTES   or  F=FD[ERR]
  pread, pwrite, preadv, pwritev:               F=FD  B=0xBYTES O=0xOFFSET   (error: F=FD[ERR]  O=0x...)
  lseek:                                        F=FD  O=0xOFFSET <SEEK_SET>   (the offset it went to)
  ftruncate, truncate:                          F=FD  O=0xLENGTH  (truncate: no F=)
  fcntl:                                        F=FD <FULLFSYNC>   (the command's name)
  stat64, lstat64, unlink, mkdir, rmdir, rename, chdir: [ERR] where it failed, else blank
  fstatat64, unlinkat, mkdirat, openat, renameat: the path written [DIRFD]/PATH
  mmap:                                         F=FD  A=0x... O=0x... B=0xLENGTH <READ|WRITE>
ERR is the errno's number (Darwin's numbers, xnu bsd/sys/errno.h). PATHNAME is the path as the program gave it
(xnu's kdebug_lookup logs the lookup's own buffer, cn_pnbuf: bsd/vfs/vfs_lookup.c), so a relative one is joined to
the process's working folder: the recorded folder at the start, moved by chdir. fs_usage names a thread, not a
process: the descriptors of every thread of one command are taken as one process's. A rename's line names only its
first path (fs_usage keeps one pathname a call), so a rename is counted and left out, as is a path fs_usage cut to
fit its column (it keeps the path's end: no leading /)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable

from .model import Call
from .parsed import Parsed, file_in

_LINE = re.compile(r"(\d\d):(\d\d):(\d\d)\.(\d{6})  (.{17})(.*?)\s+(\d+)\.(\d{6})( W|  ) (.*)\.(\d+)")
_FD = re.compile(r"\bF=(\d+)")
_ERR = re.compile(r"\[\s*(\d+)\](?!/)")
_BYTES = re.compile(r"\bB=0x([0-9a-fA-F]+)")
_OFFSET = re.compile(r"\bO=0x([0-9a-fA-F]+)")
_MODE = re.compile(r"\(([R_][W_][C_][A_][T_][E_][^)\s]*)\)")
_AT = re.compile(r"\s\[(-?\d+)\]/(.*)")
_TAG = re.compile(r"<([A-Z_ |]+)>")
# every argument a line may carry, taken away to leave its path
_TOKENS = re.compile(r"\b[FBOAS]=(?:0x)?[0-9a-fA-F]+|\[\s*-?\d+\](?!/)|<[^>]*>|\([R_][W_][C_][A_][T_][E_][^)\s]*\)")
CUT_CHARS = 150
AT_FDCWD = -2                          # Darwin's (xnu bsd/sys/fcntl.h)

# the calls read, by fs_usage's names, and the trace's kind of each
KINDS = {"open": "open", "open_nocancel": "open", "open_extended": "open", "open_dprotected": "open",
         "openat": "open", "openat_nocancel": "open", "guarded_open_np": "open",
         "close": "close", "close_nocancel": "close", "guarded_close_np": "close",
         "read": "read", "read_nocancel": "read", "readv": "read", "pread": "read", "preadv": "read",
         "write": "write", "write_nocancel": "write", "writev": "write", "pwrite": "write", "pwritev": "write",
         "guarded_write_np": "write", "guarded_pwrite_np": "write",
         "lseek": "seek", "fsync": "fsync", "fsync_nocancel": "fsync", "fdatasync": "fdatasync",
         "ftruncate": "truncate", "truncate": "truncate", "rename": "rename", "renameat": "rename",
         "unlink": "unlink", "unlinkat": "unlink", "mkdir": "mkdir", "mkdirat": "mkdir", "rmdir": "rmdir",
         "stat": "stat", "stat64": "stat", "lstat": "stat", "lstat64": "stat", "fstat": "stat", "fstat64": "stat",
         "fstatat": "stat", "fstatat64": "stat", "getattrlist": "stat", "getdirentries": "list",
         "getdirentries64": "list", "mmap": "mmap", "fcntl": "fcntl", "chdir": "chdir"}
_BY_FD = ("close", "read", "write", "seek", "fsync", "fdatasync", "fullsync", "list", "mmap")
_OFFSET_CALLS = ("pread", "preadv", "pwrite", "pwritev", "guarded_pwrite_np")

# Darwin's errno numbers (xnu bsd/sys/errno.h), the names a trace keeps
ERRNO = {1: "EPERM", 2: "ENOENT", 4: "EINTR", 5: "EIO", 6: "ENXIO", 9: "EBADF", 12: "ENOMEM", 13: "EACCES",
         16: "EBUSY", 17: "EEXIST", 18: "EXDEV", 19: "ENODEV", 20: "ENOTDIR", 21: "EISDIR", 22: "EINVAL",
         23: "ENFILE", 24: "EMFILE", 25: "ENOTTY", 27: "EFBIG", 28: "ENOSPC", 29: "ESPIPE", 30: "EROFS",
         31: "EMLINK", 35: "EAGAIN", 45: "ENOTSUP", 62: "ELOOP", 63: "ENAMETOOLONG", 66: "ENOTEMPTY", 69: "EDQUOT",
         70: "ESTALE", 78: "ENOSYS", 84: "EOVERFLOW", 89: "ECANCELED", 93: "ENOATTR", 96: "ENODATA",
         102: "EOPNOTSUPP"}


class _Reader:
    def __init__(self, root: str) -> None:
        self.root = os.path.normpath(root)
        self.out = Parsed()
        self.cwd: dict[str, str] = {}               # command -> its working folder
        self.threads: dict[int, int] = {}
        self.handles: dict[tuple[str, int], tuple[int, int]] = {}     # (command, fd) -> (handle, file)
        self.next_handle = 0
        self.day_s = 0.0                            # a day's seconds added each time the clock passes midnight
        self.last_s: float | None = None
        self.left_out = 0                           # renames and cut paths: counted, not kept
        self.creating: set[tuple[int, int]] = set()  # (thread, start_ns) of the opens that may create (O_CREAT)
        self.commands: dict[str, int] = {}          # the commands of the calls kept, counted

    def line(self, text: str) -> None:
        found = _LINE.fullmatch(text.rstrip("\n"))
        if not found:
            return
        name = found[5].strip()
        kind = KINDS.get(name)
        if kind is None:
            return
        end_s = int(found[1]) * 3600 + int(found[2]) * 60 + int(found[3]) + int(found[4]) / 1e6
        if self.last_s is not None and end_s + self.day_s < self.last_s - 43200:
            self.day_s += 86400                     # past midnight
        end_s += self.day_s
        self.last_s = end_s
        took_s = int(found[7]) + int(found[8]) / 1e6
        self.call(name, kind, found[6], end_s - took_s, took_s, found[10], int(found[11]))

    def call(self, name: str, kind: str, args: str, start_s: float, took_s: float, command: str, tid: int) -> None:
        cwd = self.cwd.setdefault(command, self.root)
        err = _ERR.search(args)
        error = ERRNO.get(int(err[1]), f"E{int(err[1])}") if err else ""
        fd_found = _FD.search(args)
        fd = int(fd_found[1]) if fd_found else None
        if kind == "chdir":
            path = self._path(args, cwd, command)
            if not error and path is not None:
                self.cwd[command] = path
            return
        if kind == "fcntl":
            tag = _TAG.search(args)
            if tag is None or tag[1] != "FULLFSYNC":
                return
            kind = "fullsync"
        file, handle, offset, asked = -1, -1, -1, 0
        moved = _BYTES.search(args)
        at = _OFFSET.search(args)
        if kind in _BY_FD or (kind in ("stat", "truncate") and fd is not None):
            known = self.handles.get((command, fd)) if fd is not None else None
            if known is None:
                self.out.outside += 1       # a descriptor opened before the trace, or on a file outside the folder
                return
            handle, file = known
        else:
            path = self._path(args, cwd, command)
            if path is None:
                return
            if kind == "rename":
                self.left_out += 1
                return
            found = file_in(self.out, self.root, path, kind in ("mkdir", "rmdir"))
            if found is None:
                self.out.outside += 1
                return
            file = found
        if kind == "open":
            mode = _MODE.search(args)
            if mode and mode[1][2] == "C":
                self.creating.add((self.threads.setdefault(tid, len(self.threads)),
                                   round((start_s - (self.out.first_s if self.out.first_s is not None else start_s))
                                         * 1e9)))
            if not error and fd is not None:
                handle = self.next_handle
                self.next_handle += 1
                self.handles[(command, fd)] = (handle, file)
        elif kind == "close" and fd is not None:
            self.handles.pop((command, fd), None)
        if kind in ("read", "write", "list", "mmap"):
            asked = int(moved[1], 16) if moved else 0
            offset = int(at[1], 16) if at and (name in _OFFSET_CALLS or kind == "mmap") else -1
        elif kind == "seek":
            offset = int(at[1], 16) if at else -1
        elif kind == "truncate":
            asked = int(at[1], 16) if at else 0
        if kind == "list":
            self.out.folders.add(self._rel(file))
        if self.out.first_s is None:
            self.out.first_s = start_s
        thread = self.threads.setdefault(tid, len(self.threads))
        self.commands[command] = self.commands.get(command, 0) + 1
        # a read's or a write's B= is what it did (fs_usage prints the return's count); what it asked is not shown
        done = -1 if error else asked if kind in ("read", "write", "mmap") else handle if kind == "open" else 0
        self.out.calls.append(Call(thread, round((start_s - self.out.first_s) * 1e9), round(took_s * 1e9), kind,
                                   file, -1, handle, offset, asked, done, error))

    def _path(self, args: str, cwd: str, command: str) -> str | None:
        """The path a line names, joined to its directory descriptor's folder or the working folder; None where it
        names none, or where fs_usage may have cut it (a relative path of CUT_CHARS or more: wide mode cuts a path
        to the about 170 columns left after the others, keeping its end)."""
        at = _AT.search(args)
        if at:
            dirfd, raw = int(at[1]), at[2].strip()
            if raw.startswith("/"):
                return os.path.normpath(raw)
            if dirfd != AT_FDCWD:
                known = self.handles.get((command, dirfd))
                if known is None:
                    self.left_out += 1
                    return None
                cwd = os.path.join(self.root, self._rel(known[1]))
        else:
            raw = _TOKENS.sub(" ", args).strip()
        if not raw:
            return None
        if raw.startswith("/"):
            return os.path.normpath(raw)
        if len(raw) >= CUT_CHARS:
            self.left_out += 1
            return None
        return os.path.normpath(os.path.join(cwd, raw))

    def _rel(self, file: int) -> str:
        return self.out.names[file]


@dataclass(frozen=True)
class Read:
    parsed: Parsed
    left_out: int                   # renames, whose new name fs_usage does not print, and paths it cut
    creating: frozenset[tuple[int, int]]    # the opens that asked O_CREAT, by (thread, start_ns)
    program: str                    # the command that made most of the calls kept, printable, or "?"


def parse(lines: Iterable[str], root: str) -> Read:
    """fs_usage's lines read into calls on files inside `root`, the program having started there."""
    reader = _Reader(root)
    for text in lines:
        reader.line(text)
    reader.out.calls.sort(key=lambda c: c.start_ns)
    most = max(reader.commands, key=lambda k: reader.commands[k], default="?")
    program = "".join(c if c.isprintable() else "?" for c in most)[:200] or "?"
    return Read(reader.out, reader.left_out, frozenset(reader.creating), program)


def starting_sizes(read: Read) -> dict[str, int]:
    """What fs_usage's lines tell of the files before the program ran (they were not listed then): a file or folder
    whose first call succeeded and neither made it (an open asking O_CREAT, a mkdir) nor failed for its absence
    existed, its size the furthest its reads reached (a read's offset, or its open file's position)."""
    parsed = read.parsed
    first: dict[int, bool] = {}
    reach: dict[int, int] = {}
    position: dict[int, int] = {}
    for c in parsed.calls:
        if c.file >= 0 and c.file not in first:
            making = c.call == "mkdir" or (c.call == "open" and (c.thread, c.start_ns) in read.creating)
            first[c.file] = not making and not c.error
        if c.call == "open" and c.handle >= 0:
            position[c.handle] = 0
        elif c.call == "seek" and c.offset >= 0:
            position[c.handle] = c.offset
        elif c.call in ("read", "write") and c.result > 0:
            at = c.offset if c.offset >= 0 else position.get(c.handle, 0)
            if c.offset < 0:
                position[c.handle] = at + c.result
            if c.call == "read":
                reach[c.file] = max(reach.get(c.file, 0), at + c.result)
    by_index = {k: p for p, k in parsed.paths.items()}
    sizes = {by_index[k]: (0 if by_index[k] in parsed.folders else reach.get(k, 0))
             for k, existed in first.items() if existed}
    for path in list(sizes):            # the folders above what existed existed too
        parts = path.split("/")
        sizes.update({"/".join(parts[:n]): 0 for n in range(1, len(parts))})
    made = {by_index[k] for k, existed in first.items() if not existed}
    # a folder no call named, above a file a call named, was there unless the program made it
    sizes.update({f: 0 for f in parsed.folders if f not in parsed.paths and f not in made})
    sizes["."] = 0
    return sizes
