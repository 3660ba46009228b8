"""strace's output (`strace -f -ttt -T -y -s 0 -qq -e signal=none -e trace=TRACED`) read into a trace's calls: pure,
line by line, each call's thread, start, time in the kernel, the file it names inside the recorded folder and what
it returned. A file outside the folder (a library, /proc) is counted, not kept.

The forms read (strace 6.x, -y: each descriptor followed by its path in <>, AT_FDCWD too):
  PID SECONDS.MICRO name(args) = RESULT <SECONDS>            a call
  PID SECONDS.MICRO name(args <unfinished ...>                a call another thread's line interrupted ...
  PID SECONDS.MICRO <... name resumed>args) = RESULT <SECONDS>  ... and its end
A RESULT is a number, a descriptor with its path (3</a/b>), or -1 and an error's name (-1 ENOENT (No such ...)).
A path a call names relative to its working folder (open, rename, unlink, mkdir, rmdir, stat...) is joined to the
thread's: the folder the program started in, changed by chdir and fchdir, inherited by a clone or fork, and set
again wherever strace prints AT_FDCWD with its path."""

from __future__ import annotations

import codecs
import os
import re
from typing import Iterable, Literal

from .model import MAX_BYTES, Call, TraceFile
from .parsed import Parsed, file_in

TRACED = ("open", "openat", "openat2", "creat", "close", "read", "pread64", "readv", "preadv", "preadv2", "write",
          "pwrite64", "writev", "pwritev", "pwritev2", "lseek", "fsync", "fdatasync", "sync_file_range", "syncfs",
          "truncate", "ftruncate", "fallocate", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir",
          "mkdirat", "rmdir", "stat", "lstat", "fstat", "newfstatat", "statx", "getdents64", "copy_file_range",
          "sendfile", "mmap", "fadvise64", "chdir", "fchdir", "clone", "clone3", "fork", "vfork")

_LINE = re.compile(r"(\d+)\s+(\d+\.\d+)\s+(.*)")
_RESUMED = re.compile(r"<\.\.\. (\w+) resumed>(.*)")
_CALL = re.compile(r"(\w+)\((.*)")
_END = re.compile(r"\s*=\s*(.*?)(?:\s+<(\d+(?:\.\d+)?)>)?\s*$")
_FD = re.compile(r"(-?\d+|AT_FDCWD)<(.*)>$", re.S)
_IOV_LEN = re.compile(r"iov_len=(\d+)")

# a kept call: (kind, file, to_file, handle, offset, bytes asked); None: a call of no file; False: one outside
_Made = tuple[str, int, int, int, int, int]
READS = {"read": None, "pread64": 3, "readv": None, "preadv": 3, "preadv2": 3}       # name: the offset's argument
WRITES = {"write": None, "pwrite64": 3, "writev": None, "pwritev": 3, "pwritev2": 3}
ADVICES = {"POSIX_FADV_NORMAL": "advise_normal", "POSIX_FADV_RANDOM": "advise_random",
           "POSIX_FADV_SEQUENTIAL": "advise_sequential", "POSIX_FADV_WILLNEED": "advise_willneed",
           "POSIX_FADV_DONTNEED": "advise_dontneed", "POSIX_FADV_NOREUSE": "advise_noreuse"}


class Reader:
    def __init__(self, root: str, start_cwd: str) -> None:
        self.root = os.path.normpath(root)
        self.start_cwd = os.path.normpath(start_cwd)
        self.out = Parsed()
        self.cwd: dict[int, str] = {}
        self.threads: dict[int, int] = {}
        self.pending: dict[int, tuple[float, str]] = {}
        self.handles: dict[tuple[int, str], int] = {}
        self.next_handle = 0

    # -- lines

    def line(self, text: str) -> None:
        found = _LINE.fullmatch(text.rstrip("\n"))
        if not found:
            return
        pid, seconds, rest = int(found[1]), float(found[2]), found[3]
        resumed = _RESUMED.match(rest)
        if resumed:
            began = self.pending.pop(pid, None)
            if began is None or not began[1].startswith(resumed[1] + "("):
                return
            seconds, rest = began[0], began[1] + resumed[2]
        elif rest.endswith("<unfinished ...>"):
            self.pending[pid] = (seconds, rest[: -len("<unfinished ...>")].rstrip())
            return
        call = _CALL.match(rest)
        if not call or call[1] not in TRACED:
            return
        args, end = _split_args(call[2])
        if end is None:
            return
        result = _END.fullmatch(end)
        if not result:
            return
        self.call(pid, seconds, call[1], args, result[1], float(result[2]) if result[2] else 0.0)

    # -- one call

    def call(self, pid: int, seconds: float, name: str, args: list[str], result: str, took_s: float) -> None:
        cwd = self.cwd.setdefault(pid, self.start_cwd)
        for a in args:                        # strace names the working folder wherever it prints AT_FDCWD
            fd = _FD.match(a)
            if fd and fd[1] == "AT_FDCWD":
                self.cwd[pid] = cwd = _unescape(fd[2])
        value, error = _result(result)
        if name in ("clone", "clone3", "fork", "vfork"):
            if value is not None and value > 0:
                self.cwd[value] = cwd
            return
        if name in ("chdir", "fchdir"):
            if not error:
                target = self._path_arg(args[0], cwd) if name == "chdir" else _fd_path(args[0])
                if target is not None:
                    self.cwd[pid] = target
            return
        made = self._made(name, args, value, error, cwd, _fd_path(result))
        if made is None:
            return
        if made is False:
            self.out.outside += 1
            return
        if self.out.first_s is None:        # the trace's time starts at its first call inside the folder
            self.out.first_s = seconds
        kind, file, to_file, handle, offset, asked = made
        thread = self.threads.setdefault(pid, len(self.threads))
        done = value if value is not None and not error else (-1 if error else 0)
        if kind == "mmap" and not error:    # its value is an address: the bytes mapped are what it did
            done = asked
        # a copy may ask for more than any file holds (cat asks copy_file_range for SSIZE_MAX: up to the end)
        asked = min(max(0, asked), MAX_BYTES)
        self.out.calls.append(Call(thread, round((seconds - self.out.first_s) * 1e9), round(took_s * 1e9), kind,
                                   file, to_file, handle, offset, asked, max(-1, done), error))

    def _made(self, name: str, args: list[str], value: int | None, error: str, cwd: str, returned: str | None
              ) -> _Made | None | Literal[False]:
        """(kind, file, to_file, handle, offset, bytes asked); None for a call of no file, False for one outside."""
        if name in ("open", "openat", "openat2", "creat"):
            at = 0 if name in ("open", "creat") else 1
            base = cwd if at == 0 else (_fd_path(args[0]) or cwd)
            path = returned or self._path_arg(args[at], base)     # the opened file's own path, where it opened
            if path is None:
                return None
            folder = "O_DIRECTORY" in (args[at + 1] if len(args) > at + 1 else "")
            file = self._file(path, folder)
            if file is None:
                return False
            handle = -1
            if not error and value is not None and value >= 0:
                handle = self._open(value, path)
            return "open", file, -1, handle, -1, 0
        if name in ("rename", "renameat", "renameat2"):
            if name == "rename":
                old, new = self._path_arg(args[0], cwd), self._path_arg(args[1], cwd)
            else:
                old = self._path_arg(args[1], _fd_path(args[0]) or cwd)
                new = self._path_arg(args[3], _fd_path(args[2]) or cwd) if len(args) > 3 else None
            if old is None or new is None:
                return None
            a, b = self._file(old, False), self._file(new, False)
            return False if a is None or b is None else ("rename", a, b, -1, -1, 0)
        if name in ("unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "truncate", "stat", "lstat", "newfstatat",
                    "statx"):
            at = 1 if name in ("unlinkat", "mkdirat", "newfstatat", "statx") else 0
            if len(args) <= at:
                return None
            raw = _string(args[at])
            if raw == "" and at == 1:           # AT_EMPTY_PATH: the descriptor's own file
                path = _fd_path(args[0])
                return self._on_fd(args[0], "stat") if path else None
            path = self._path_arg(args[at], (_fd_path(args[0]) or cwd) if at else cwd)
            if path is None:
                return None
            kind = {"unlink": "unlink", "unlinkat": "unlink", "mkdir": "mkdir", "mkdirat": "mkdir", "rmdir": "rmdir",
                    "truncate": "truncate"}.get(name, "stat")
            if name == "unlinkat" and len(args) > 2 and "AT_REMOVEDIR" in args[2]:
                kind = "rmdir"
            file = self._file(path, kind in ("mkdir", "rmdir"))
            if file is None:
                return False
            size = _int(args[1]) if kind == "truncate" and len(args) > 1 else 0
            return kind, file, -1, -1, -1, size or 0
        if name in READS or name in WRITES:
            kind = "read" if name in READS else "write"
            where = READS.get(name, WRITES.get(name))
            if name.endswith(("v", "v2")):
                # with -s 0 strace prints a vector as [...]: what the call moved stands for what it asked
                asked = _iov_bytes(args[1]) if "iov_len=" in args[1] else max(0, value or 0)
            else:
                asked = (_int(args[2]) or 0) if len(args) > 2 else 0
            offset = _int(args[where]) if where is not None and len(args) > where else -1
            return self._on_fd(args[0], kind, offset if offset is not None else -1, asked or 0)
        if name == "lseek":
            return self._on_fd(args[0], "seek", value if value is not None and not error else -1, 0)
        if name in ("fsync", "fdatasync", "syncfs"):
            return self._on_fd(args[0], name)
        if name == "sync_file_range":
            return self._on_fd(args[0], "sync_range", _int(args[1]) or 0, _int(args[2]) or 0)
        if name == "ftruncate":
            return self._on_fd(args[0], "truncate", -1, _int(args[1]) or 0)
        if name == "fallocate":
            return self._on_fd(args[0], "allocate", _int(args[2]) or 0, _int(args[3]) or 0)
        if name == "fstat":
            return self._on_fd(args[0], "stat")
        if name == "getdents64":
            return self._on_fd(args[0], "list", -1, (_int(args[2]) if len(args) > 2 else 0) or 0, folder=True)
        if name == "close":
            made = self._on_fd(args[0], "close")
            path = _fd_path(args[0])
            fd = _fd_number(args[0])
            if path is not None and fd is not None:
                self.handles.pop((fd, path), None)
            return made
        if name in ("copy_file_range", "sendfile"):
            src, dst = (args[0], args[2]) if name == "copy_file_range" else (args[1], args[0])
            count = _int(args[4]) if name == "copy_file_range" and len(args) > 4 else \
                _int(args[3]) if len(args) > 3 else 0
            source, dest = self._on_fd(src, "copy", -1, count or 0), _fd_path(dst)
            if not isinstance(source, tuple) or dest is None:
                return source
            to_file = self._file(dest, False)
            return False if to_file is None else ("copy", source[1], to_file, source[3], -1, count or 0)
        if name == "fadvise64":
            advice = ADVICES.get(args[3].strip()) if len(args) > 3 else None
            if advice is None:
                return None
            return self._on_fd(args[0], advice, _int(args[1]) or 0, _int(args[2]) or 0)
        if name == "mmap":
            if len(args) > 4 and _fd_path(args[4]) is not None:
                return self._on_fd(args[4], "mmap", _int(args[5]) if len(args) > 5 else -1, _int(args[1]) or 0)
            return None
        return None

    def _on_fd(self, arg: str, kind: str, offset: int | None = -1, asked: int = 0, folder: bool = False
               ) -> _Made | None | Literal[False]:
        path, fd = _fd_path(arg), _fd_number(arg)
        if path is None or fd is None:
            return None               # a pipe, a socket, a descriptor strace could not name
        file = self._file(path, folder)
        if file is None:
            return False
        handle = self.handles.get((fd, path))
        if handle is None:            # opened before the trace began: its first use opens it
            handle = self._open(fd, path)
        return kind, file, -1, handle, -1 if offset is None else offset, asked

    def _open(self, fd: int, path: str) -> int:
        handle = self.next_handle
        self.next_handle += 1
        self.handles[(fd, path)] = handle
        return handle

    def _path_arg(self, arg: str, base: str) -> str | None:
        raw = _string(arg)
        if raw is None:
            return None
        return os.path.normpath(raw if raw.startswith("/") else os.path.join(base, raw))

    def _file(self, path: str, folder: bool) -> int | None:
        return file_in(self.out, self.root, path, folder)


def parse(lines: Iterable[str], root: str, start_cwd: str) -> Parsed:
    """strace's lines read into calls on files inside `root` (paths as strace printed them: the folders as the
    kernel saw them, links resolved where -y resolved them); the program started in `start_cwd`."""
    reader = Reader(root, start_cwd)
    for text in lines:
        reader.line(text)
    reader.out.calls.sort(key=lambda c: c.start_ns)      # strace prints a call when it ends; a trace, by its start
    return reader.out


# -- strace's printing

def _split_args(text: str) -> tuple[list[str], str | None]:
    """The arguments of `name(` up to its closing parenthesis, split at top-level commas, and what follows it."""
    args, depth, quote, start, k = [], 0, False, 0, 0
    while k < len(text):
        c = text[k]
        if quote:
            if c == "\\":
                k += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c == "<" and k > 0 and (text[k - 1].isdigit() or text[k - 5:k] == "FDCWD"):
            close = text.find(">", k)       # a descriptor's path: -y prints it escaped, without a bare '>'
            if close < 0:
                return [], None
            k = close
        elif c in "([{":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == ")":
            if depth == 0:
                args.append(text[start:k].strip())
                return [a for a in args if a != ""], text[k + 1:]
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:k].strip())
            start = k + 1
        k += 1
    return [], None


def _unescape(text: str) -> str:
    """A string or path as strace prints it (\\xNN, \\n, \\", octal) back to its name."""
    raw = codecs.escape_decode(text.encode("utf-8", "surrogateescape"))[0]
    assert isinstance(raw, bytes)
    return raw.decode("utf-8", "surrogateescape")


def _string(arg: str) -> str | None:
    if len(arg) >= 2 and arg[0] == '"' and arg.endswith('"'):
        return _unescape(arg[1:-1])
    return None


def _fd_path(arg: str) -> str | None:
    found = _FD.match(arg.strip())
    if not found:
        return None
    path = _unescape(found[2])
    return path if path.startswith("/") else None     # pipe:[123], socket:[..], anon_inode: no file


def _fd_number(arg: str) -> int | None:
    found = _FD.match(arg.strip())
    return int(found[1]) if found and found[1] != "AT_FDCWD" else None


def _int(arg: str) -> int | None:
    arg = arg.strip().strip("[]")
    try:
        return int(arg, 0)
    except ValueError:
        return None


def _iov_bytes(arg: str) -> int:
    return sum(int(n) for n in _IOV_LEN.findall(arg))


def _result(text: str) -> tuple[int | None, str]:
    """What a call returned: (its value, '') or (None, its error's name)."""
    text = text.strip()
    if text.startswith("-1 E"):
        return None, text.split()[1]
    found = _FD.match(text)
    if found:
        return (int(found[1]) if found[1] != "AT_FDCWD" else None), ""
    number = text.split()[0] if text else ""
    try:
        return int(number, 0), ""
    except ValueError:
        return None, ""
