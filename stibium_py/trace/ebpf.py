"""The eBPF recorder (Linux, root): bpftrace's program that follows a process tree's file-system calls, and its
lines read into the same calls strace's are (pure).

bpftrace runs a small program in the kernel at each traced call's entry and return (the syscalls' tracepoints),
for the threads of the process tree alone (a map of thread ids, seeded with the program's and grown at each fork),
and prints one line a call's entry, one a string argument and one a return:
  E TID PID NS NAME INT...        a call's entry: its thread, process, the clock (CLOCK_MONOTONIC, ns), its numbers
  S TID NS TEXT                    a string argument of the entry at TID, NS (a path as the program gave it), read
                                   on the call's return
  X TID NS IN RESULT               a call's return: the clock, its time in the kernel (from the end of the entry's
                                   probe), what it returned
  F PARENT CHILD NS                a thread or process made
The kernel gives numbers, not names: which file a descriptor is, and which folder a relative path starts from, are
kept here as strace -y keeps them, per process (a descriptor's path from its open, dup, fork; the working folder
from chdir), seeded with the program's own before it starts. Each call is then handed, in strace's written form, to
strace's reader (strace.py), so that one set of rules decides what a call was and which file it named.

What this recorder cannot read, it refuses rather than guess: a name longer than bpftrace's strings hold
(STRING_BYTES - 1) or holding a line break, and events bpftrace dropped; the person records with strace then."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from typing import Iterable

from ..errors import TraceError
from .parsed import Parsed
from .strace import Reader

# bpftrace's longest string (0.17 allows no more than 200 on the BPF stack); a name filling it may be cut
STRING_BYTES = 200

# each call traced: its arguments printed, in order; '$' marks a string (a path). Names are the tracepoints' (the
# kernel's SYSCALL_DEFINE names: newstat is stat); a call the kernel does not have (aarch64 has no open or rename)
# is left out of the program
CALLS: dict[str, tuple[str, ...]] = {
    "open": ("$filename", "flags"), "openat": ("dfd", "$filename", "flags"), "openat2": ("dfd", "$filename"),
    "creat": ("$pathname",), "close": ("fd",),
    "read": ("fd", "count"), "pread64": ("fd", "count", "pos"), "readv": ("fd",), "preadv": ("fd", "pos_l"),
    "preadv2": ("fd", "pos_l"),
    "write": ("fd", "count"), "pwrite64": ("fd", "count", "pos"), "writev": ("fd",), "pwritev": ("fd", "pos_l"),
    "pwritev2": ("fd", "pos_l"),
    "lseek": ("fd", "offset", "whence"), "fsync": ("fd",), "fdatasync": ("fd",), "syncfs": ("fd",),
    "sync_file_range": ("fd", "offset", "nbytes"),
    "truncate": ("$path", "length"), "ftruncate": ("fd", "length"), "fallocate": ("fd", "mode", "offset", "len"),
    "rename": ("$oldname", "$newname"), "renameat": ("olddfd", "$oldname", "newdfd", "$newname"),
    "renameat2": ("olddfd", "$oldname", "newdfd", "$newname"),
    "unlink": ("$pathname",), "unlinkat": ("dfd", "$pathname", "flag"), "mkdir": ("$pathname",),
    "mkdirat": ("dfd", "$pathname"), "rmdir": ("$pathname",),
    "newstat": ("$filename",), "newlstat": ("$filename",), "newfstat": ("fd",),
    "newfstatat": ("dfd", "$filename", "flag"), "statx": ("dfd", "$filename", "flags"),
    "getdents64": ("fd", "count"), "copy_file_range": ("fd_in", "fd_out", "len"),
    "sendfile64": ("out_fd", "in_fd", "count"), "mmap": ("len", "fd", "off"),
    "fadvise64": ("fd", "offset", "len", "advice"),
    "chdir": ("$filename",), "fchdir": ("fd",), "dup": ("fildes",), "dup2": ("oldfd", "newfd"),
    "dup3": ("oldfd", "newfd"), "fcntl": ("fd", "cmd"), "close_range": ("fd", "max_fd"),
}

AT_FDCWD = -100
AT_REMOVEDIR = 0x200
AT_EMPTY_PATH = 0x1000
F_DUPFD, F_DUPFD_CLOEXEC = 0, 1030
# posix_fadvise's advice numbers (Linux's, every architecture but s390's), in strace's words
ADVICES = ("POSIX_FADV_NORMAL", "POSIX_FADV_RANDOM", "POSIX_FADV_SEQUENTIAL", "POSIX_FADV_WILLNEED",
           "POSIX_FADV_DONTNEED", "POSIX_FADV_NOREUSE")


def program(available: Iterable[str]) -> str:
    """bpftrace's program for the calls of CALLS the kernel has (`available`: tracepoint names), following the
    process tree of the thread given as its first argument; its second is the recorder's process."""
    have = [name for name in CALLS if name in set(available)]
    # every map holds a traced thread's key from its start, so that its exit deletes keys that exist (bpftrace 0.23
    # prints a warning into the output for each one that does not)
    lines = ["BEGIN { @t[$1] = 1; @ts[$1] = 0; @s0[$1] = 0; @s1[$1] = 0; @in[$1] = 0; printf(\"READY\\n\"); }",
             "tracepoint:sched:sched_process_fork /@t[args->parent_pid]/ { @t[args->child_pid] = 1; "
             "@ts[args->child_pid] = 0; @s0[args->child_pid] = 0; @s1[args->child_pid] = 0; "
             "@in[args->child_pid] = 0; "
             "printf(\"F %d %d %llu\\n\", args->parent_pid, args->child_pid, nsecs); }",
             "tracepoint:sched:sched_process_exit /@t[tid]/ { delete(@t[tid]); delete(@ts[tid]); delete(@s0[tid]); "
             "delete(@s1[tid]); delete(@in[tid]); }"]
    plain = []
    for name in have:
        numbers = [a for a in CALLS[name] if not a.startswith("$")]
        strings = [a[1:] for a in CALLS[name] if a.startswith("$")]
        body = ["$t = nsecs;", "@ts[tid] = $t;",
                "printf(\"E %d %d %llu " + name + "".join(" %lld" for _ in numbers) + "\\n\", tid, pid, $t"
                + "".join(f", (int64)args->{a}" for a in numbers) + ");"]
        # a path is read on the call's return, not its entry: by then the kernel has read it, so its page is in
        # memory (at entry a name in a page not yet touched, as a program's first opens after exec, reads empty)
        body += [f"@s{k}[tid] = (uint64)args->{a};" for k, a in enumerate(strings)]
        # the call's own time runs from the end of this probe (its print is not the call's) to the start of the
        # return's
        body.append("@in[tid] = nsecs;")
        lines.append(f"tracepoint:syscalls:sys_enter_{name} /@t[tid]/ {{ {' '.join(body)} }}")
        if strings:
            # one print a string: two paths in one print would pass the BPF stack's 512 bytes
            out = [f"printf(\"S %d %llu %s\\n\", tid, @ts[tid], str(@s{k}[tid]));" for k in range(len(strings))]
            lines.append(f"tracepoint:syscalls:sys_exit_{name} /@t[tid]/ {{ $x = nsecs; {' '.join(out)} "
                         f"printf(\"X %d %llu %lld %lld\\n\", tid, $x, $x - @in[tid], args->ret); }}")
        else:
            plain.append(name)
    lines.append(",".join(f"tracepoint:syscalls:sys_exit_{n}" for n in plain)
                 + " /@t[tid]/ { $x = nsecs; printf(\"X %d %llu %lld %lld\\n\", tid, $x, $x - @in[tid], "
                   "args->ret); }")
    # the recorder's own getppid (the process given as second argument) once the program has ended: every event
    # before it has been read when this line is
    lines.append("tracepoint:syscalls:sys_enter_getppid /pid == $2/ { printf(\"DONE\\n\"); }")
    lines.append("END { clear(@t); clear(@ts); clear(@s0); clear(@s1); clear(@in); }")
    return "\n".join(lines) + "\n"


@dataclass
class _Entry:
    tid: int
    pid: int
    ns: int
    name: str
    numbers: list[int]
    strings: list[str] = field(default_factory=list)


@dataclass
class Seed:
    """The program's process before it starts: its id, working folder and open descriptors' paths."""
    pid: int
    cwd: str
    fds: dict[int, str]


@dataclass(frozen=True)
class Read:
    parsed: Parsed
    lines: int


def parse(lines: Iterable[str], root: str, seed: Seed) -> Read:
    """bpftrace's lines (program()'s) read into calls on files inside `root`."""
    entries: dict[tuple[int, int], _Entry] = {}
    timeline: list[tuple[int, int, _Entry | tuple[str, int, int] | tuple[str, int, int, int]]] = []     # entries, returns and forks by time
    strings: list[tuple[int, int, str]] = []
    unreadable = lost = count = 0
    for text in lines:
        count += 1
        line = text.rstrip("\n")
        words = line.split(" ", 3)
        try:
            if words[0] == "E":
                rest = line.split(" ")
                entry = _Entry(int(rest[1]), int(rest[2]), int(rest[3]), rest[4], [int(x) for x in rest[5:]])
                entries[(entry.tid, entry.ns)] = entry
                timeline.append((entry.ns, 0, entry))
            elif words[0] == "S":
                strings.append((int(words[1]), int(words[2]), words[3] if len(words) > 3 else ""))
            elif words[0] == "X":
                took = line.split(" ")
                timeline.append((int(took[2]), 1, ("X", int(took[1]), int(took[4]), int(took[3]))))
            elif words[0] == "F":
                timeline.append((int(words[3]), 0, ("F", int(words[1]), int(words[2]))))
            elif line.startswith("Lost ") and line.endswith(" events"):
                lost += int(line.split()[1])
            elif line.strip() and line not in ("READY", "DONE") and not line.startswith("Attaching "):
                unreadable += 1          # a name's line break left the rest of it on a line of its own
        except (ValueError, IndexError):
            unreadable += 1
    # a call's strings follow its entry on the CPU it ran on; lines of other CPUs may come between or before
    for tid, ns, name in strings:
        began = entries.get((tid, ns))
        if began is None:            # the return of a call begun before the tracing did
            continue
        began.strings.append(name)
        if len(name.encode("utf-8", "surrogateescape")) >= STRING_BYTES - 1:
            unreadable += 1
    if lost:
        raise TraceError(f"record: bpftrace dropped {lost:,} events (the program made calls faster than it could "
                         f"pass them on); record with --tracer strace")
    timeline.sort(key=lambda e: (e[0], e[1]))
    state = _State(root, seed)
    for ns, _, event in timeline:
        if isinstance(event, _Entry):
            state.inflight[event.tid] = event
        elif len(event) == 3:
            state.fork(event[1], event[2])
        else:
            state.returned(event[1], event[2], event[3])
    unreadable += state.unnamed
    if unreadable:
        raise TraceError(f"record: {unreadable:,} of the names the program used could not be read whole by the "
                         f"eBPF recorder (longer than {STRING_BYTES - 2} bytes, or holding a line break); record "
                         f"with --tracer strace")
    state.reader.out.calls.sort(key=lambda c: c.start_ns)
    return Read(state.reader.out, count)


class _State:
    """The descriptors and working folders of the traced processes, and strace's reader fed each call."""

    def __init__(self, root: str, seed: Seed) -> None:
        self.reader = Reader(root, seed.cwd)
        self.fds: dict[int, dict[int, str]] = {seed.pid: dict(seed.fds)}
        self.cwd: dict[int, str] = {seed.pid: seed.cwd}
        self.process: dict[int, int] = {seed.pid: seed.pid}     # thread -> its process, as far as seen
        self.inflight: dict[int, _Entry] = {}
        self.unnamed = 0            # calls that returned without the names they were given

    def fork(self, parent: int, child: int) -> None:
        # a thread shares its process's tables (kept by process id); a new process starts with copies, kept under
        # its own id, which is its first thread's
        pid = self.process.get(parent, parent)
        self.fds[child] = dict(self.fds.get(pid, {}))
        self.cwd[child] = self.cwd.get(pid, self.reader.start_cwd)

    def returned(self, tid: int, result: int, took_ns: int) -> None:
        entry = self.inflight.pop(tid, None)
        if entry is None:                 # began before the tracing did
            return
        if len(entry.strings) < sum(a.startswith("$") for a in CALLS.get(entry.name, ())):
            self.unnamed += 1
            return
        self.process[tid] = entry.pid
        fds = self.fds.setdefault(entry.pid, {})
        cwd = self.cwd.setdefault(entry.pid, self.reader.start_cwd)
        formed = _strace_form(entry, result, fds, cwd)
        self._update(entry, result, fds)
        if formed is not None:
            name, args, shown = formed
            self.reader.call(tid, entry.ns / 1e9, name, args, shown, max(0, took_ns) / 1e9)

    def _update(self, e: _Entry, result: int, fds: dict[int, str]) -> None:
        if result < 0:
            return
        n, s = e.numbers, e.strings
        if e.name in ("open", "openat", "openat2", "creat"):
            path = _joined(fds, self.cwd[e.pid], n[0] if e.name in ("openat", "openat2") else AT_FDCWD, s[0])
            if path is not None:
                fds[result] = path
        elif e.name == "close":
            fds.pop(_fd(n[0]), None)
        elif e.name == "close_range":
            for fd in [fd for fd in fds if n[0] <= fd <= n[1]]:
                del fds[fd]
        elif e.name in ("dup", "dup2", "dup3") or (e.name == "fcntl" and n[1] in (F_DUPFD, F_DUPFD_CLOEXEC)):
            old = fds.get(_fd(n[0]))
            if old is not None:
                fds[result] = old
            else:
                fds.pop(result, None)
        elif e.name == "chdir":
            path = _joined(fds, self.cwd[e.pid], AT_FDCWD, s[0])
            if path is not None:
                self.cwd[e.pid] = path
        elif e.name == "fchdir" and _fd(n[0]) in fds:
            self.cwd[e.pid] = fds[_fd(n[0])]


def _fd(number: int) -> int:
    """A descriptor as the kernel's unsigned field holds it, back to its signed value (-1 stays -1)."""
    number &= 0xFFFFFFFF
    return number - (1 << 32) if number >= 1 << 31 else number


def _joined(fds: dict[int, str], cwd: str, dirfd: int, name: str) -> str | None:
    if name.startswith("/"):
        return os.path.normpath(name)
    base = cwd if _fd(dirfd) == AT_FDCWD else fds.get(_fd(dirfd))
    return None if base is None else os.path.normpath(os.path.join(base, name))


def _escaped(text: str) -> str:
    """A name as strace prints it (strace.py's _unescape reads it back): quotes, backslashes, '<' and '>' and bytes
    outside printable ASCII as \\xNN."""
    out = []
    for b in text.encode("utf-8", "surrogateescape"):
        out.append(chr(b) if 32 <= b < 127 and chr(b) not in '\\"<>' else f"\\x{b:02x}")
    return "".join(out)


def _quoted(path: str) -> str:
    return '"' + _escaped(path) + '"'


def _strace_form(e: _Entry, result: int, fds: dict[int, str], cwd: str) -> tuple[str, list[str], str] | None:
    """The call as strace -y would print it (its name, its arguments, what it returned), every path absolute;
    None for a call strace's reader has no use for or whose path this recorder does not know."""
    n, s, name = e.numbers, e.strings, e.name

    def fd(number: int) -> str:
        path = fds.get(_fd(number))
        return f"{_fd(number)}<{_escaped(path)}>" if path is not None else str(_fd(number))

    def at(dirfd: int, text: str) -> str | None:
        path = _joined(fds, cwd, dirfd, text)
        return None if path is None else _quoted(path)

    shown = f"-1 {errno.errorcode.get(-result, 'EIO')}" if result < 0 else str(result)
    if name in ("open", "openat", "openat2", "creat"):
        dirfd = n[0] if name in ("openat", "openat2") else AT_FDCWD
        path = _joined(fds, cwd, dirfd, s[0])
        if path is None:
            return None
        flags = n[1] if name == "openat" else n[0] if name == "open" else 0
        if result >= 0:
            shown = f"{result}<{_escaped(path)}>"
        return "open", [_quoted(path), "O_DIRECTORY" if flags & os.O_DIRECTORY else "0"], shown
    if name in ("rename", "renameat", "renameat2"):
        old = at(AT_FDCWD, s[0]) if name == "rename" else at(n[0], s[0])
        new = at(AT_FDCWD, s[1]) if name == "rename" else at(n[1], s[1])
        return None if old is None or new is None else ("rename", [old, new], shown)
    if name in ("unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "newstat", "newlstat", "truncate"):
        dirfd = n[0] if name in ("unlinkat", "mkdirat") else AT_FDCWD
        path = at(dirfd, s[0])
        kind = {"unlinkat": "rmdir" if name == "unlinkat" and n[1] & AT_REMOVEDIR else "unlink", "mkdirat": "mkdir",
                "newstat": "stat", "newlstat": "stat"}.get(name, name)
        if path is None:
            return None
        return kind, [path, str(n[0])] if kind == "truncate" else [path], shown
    if name in ("newfstatat", "statx"):
        if s[0] == "" and n[1] & AT_EMPTY_PATH:
            return "fstat", [fd(n[0])], shown
        path = at(n[0], s[0])
        return None if path is None else ("stat", [path], shown)
    if name in ("read", "write"):
        return name, [fd(n[0]), '""', str(n[1])], shown
    if name in ("pread64", "pwrite64"):
        return name, [fd(n[0]), '""', str(n[1]), str(n[2])], shown
    if name in ("readv", "writev", "preadv", "preadv2", "pwritev", "pwritev2"):
        # the vector's lengths are in the program's memory; what the call moved stands for what it asked
        vector = f"[{{iov_len={max(result, 0)}}}]"
        return name, [fd(n[0]), vector, "1"] + ([str(n[1])] if name.startswith("p") else []), shown
    if name == "lseek":
        return name, [fd(n[0]), str(n[1]), str(n[2])], shown
    if name in ("fsync", "fdatasync", "syncfs", "close"):
        return name, [fd(n[0])], shown
    if name == "newfstat":
        return "fstat", [fd(n[0])], shown
    if name == "sync_file_range":
        return name, [fd(n[0]), str(n[1]), str(n[2]), "0"], shown
    if name == "ftruncate":
        return name, [fd(n[0]), str(n[1])], shown
    if name == "fallocate":
        return name, [fd(n[0]), str(n[1]), str(n[2]), str(n[3])], shown
    if name == "getdents64":
        return name, [fd(n[0]), "0x0", str(n[1])], shown
    if name == "copy_file_range":
        return name, [fd(n[0]), "NULL", fd(n[1]), "NULL", str(n[2]), "0"], shown
    if name == "sendfile64":
        return "sendfile", [fd(n[0]), fd(n[1]), "NULL", str(n[2])], shown
    if name == "fadvise64":
        advice = ADVICES[n[3]] if 0 <= n[3] < len(ADVICES) else str(n[3])
        return name, [fd(n[0]), str(n[1]), str(n[2]), advice], shown
    if name == "mmap":
        if result < 0 or _fd(n[1]) < 0:
            return None
        return name, ["NULL", str(n[0]), "PROT_READ", "MAP_SHARED", fd(n[1]), str(n[2])], "0x1"
    return None
