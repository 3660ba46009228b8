"""The eBPF recorder's reading (pure): bpftrace's lines of entries, strings, returns and forks turned into the calls
strace's reader keeps, with descriptors and working folders followed as strace -y follows them; and what it cannot
read refused in one line."""

from __future__ import annotations

import pytest

from stibium_py.errors import TraceError
from stibium_py.trace.ebpf import CALLS, Seed, parse, program

ROOT = "/w"
SEED = Seed(100, "/w", {0: "/dev/null", 3: "/w/inherited.log"})


def _kept(lines: list[str]) -> list[tuple]:
    parsed = parse(lines, ROOT, SEED).parsed
    return [(c.thread, c.call, parsed.names[c.file], parsed.names[c.to_file] if c.to_file >= 0 else None, c.offset,
             c.bytes, c.result, c.error) for c in parsed.calls]


def test_entries_and_returns_in_time_order_are_the_calls_strace_would_give():
    lines = [
        "Attaching 98 probes...", "READY",
        "E 100 100 1000 openat -100 66",          # openat(AT_FDCWD, "a/b", O_WRONLY|O_CREAT)
        "S 100 1000 a/b",
        "X 100 1500 50 4",
        "E 100 100 2000 pwrite64 4 4096 8192",
        "X 100 2600 550 4096",
        "E 100 100 3000 fsync 4", "X 100 3900 50 0",
        "E 100 100 4000 write 3 10", "X 100 4100 50 10",        # a descriptor the program was given open
        "E 100 100 5000 renameat2 -100 -100 0", "S 100 5000 a/b", "S 100 5000 /w/c", "X 100 5500 50 0",
        "E 100 100 6000 newfstatat -100 0", "S 100 6000 missing", "X 100 6100 50 -2",
        "E 100 100 7000 openat -100 0", "S 100 7000 /etc/passwd", "X 100 7100 50 5",
        "E 100 100 7200 read 5 100", "X 100 7300 50 100",
        "E 100 100 7400 fadvise64 4 0 0 4", "X 100 7500 50 0",          # POSIX_FADV_DONTNEED, the whole file
        "DONE",
    ]
    assert _kept(lines) == [
        (0, "open", "a/b", None, -1, 0, 4, ""),
        (0, "write", "a/b", None, 8192, 4096, 4096, ""),
        (0, "fsync", "a/b", None, -1, 0, 0, ""),
        (0, "write", "inherited.log", None, -1, 10, 10, ""),
        (0, "rename", "a/b", "c", -1, 0, 0, ""),
        (0, "stat", "missing", None, -1, 0, -1, "ENOENT"),
        (0, "advise_dontneed", "a/b", None, 0, 0, 0, ""),
    ]
    parsed = parse(lines, ROOT, SEED).parsed
    assert parsed.outside == 2                     # /etc/passwd's open and read
    assert [c.start_ns for c in parsed.calls][:2] == [0, 1000] and parsed.calls[1].took_ns == 550


def test_lines_from_other_cpus_out_of_order_are_put_back_in_time_order():
    lines = ["X 100 1500 50 4", "E 100 100 2000 read 4 7", "S 100 1000 f", "E 100 100 1000 openat -100 0",
             "X 100 2100 50 7"]
    lines = [lines[3], lines[2], lines[0], lines[1], lines[4]][::-1]
    assert _kept(lines) == [(0, "open", "f", None, -1, 0, 4, ""), (0, "read", "f", None, -1, 7, 7, "")]


def test_a_child_process_copies_the_descriptors_and_folder_a_thread_shares_them():
    lines = [
        "E 100 100 1000 openat -100 0", "S 100 1000 f", "X 100 1100 50 4",
        "F 100 200 1200",                                   # a process: its own copy
        "F 100 101 1250",                                   # a thread of 100
        "E 200 200 1300 chdir", "S 200 1300 sub", "X 200 1400 50 0",
        "E 200 200 1500 openat -100 0", "S 200 1500 g", "X 200 1600 50 5",   # /w/sub/g
        "E 100 100 1700 close 4", "X 100 1750 50 0",           # the parent's 4 closed; the child's stays open
        "E 200 200 1800 read 4 3", "X 200 1900 50 3",
        "E 101 100 2000 dup2 4 9", "X 101 2050 50 9",          # the thread sees the parent's table: 4 is closed
        "E 101 100 2100 openat -100 0", "S 101 2100 h", "X 101 2200 50 4",    # /w/h: the thread's folder is /w
        "E 101 100 2300 fcntl 4 1030", "X 101 2350 50 12",     # F_DUPFD_CLOEXEC
        "E 101 100 2400 fsync 12", "X 101 2500 50 0",
    ]
    kept = _kept(lines)
    assert kept == [
        (0, "open", "f", None, -1, 0, 4, ""),
        (1, "open", "sub/g", None, -1, 0, 5, ""),
        (0, "close", "f", None, -1, 0, 0, ""),
        (1, "read", "f", None, -1, 3, 3, ""),
        (2, "open", "h", None, -1, 0, 4, ""),
        (2, "fsync", "h", None, -1, 0, 0, ""),
    ]


def test_a_return_whose_entry_was_not_seen_is_left_out():
    assert _kept(["S 100 0 gate", "X 100 500 50 0", "E 100 100 1000 mkdirat -100", "S 100 1000 d", "X 100 1200 50 0"]) == \
        [(0, "mkdir", "d", None, -1, 0, 0, "")]
    with pytest.raises(TraceError):               # a return without the name it was given: not guessed
        parse(["E 100 100 1000 mkdirat -100", "X 100 1200 50 0"], ROOT, SEED)


@pytest.mark.parametrize("lines, said", [
    (["Lost 12 events"], "record: bpftrace dropped 12 events (the program made calls faster than it could pass them "
                         "on); record with --tracer strace"),
    (["E 100 100 1000 openat -100 0", "S 100 1000 " + "x" * 199, "X 100 1100 50 3"],
     "record: 1 of the names the program used could not be read whole by the eBPF recorder (longer than 198 bytes, "
     "or holding a line break); record with --tracer strace"),
    (["E 100 100 1000 openat -100 0", "S 100 1000 first", "second half", "X 100 1100 50 3"],
     "record: 1 of the names the program used could not be read whole by the eBPF recorder (longer than 198 bytes, "
     "or holding a line break); record with --tracer strace"),
])
def test_what_the_recorder_could_not_read_is_refused_in_one_line(lines, said):
    with pytest.raises(TraceError) as e:
        parse(lines, ROOT, SEED)
    assert str(e.value) == said


def test_the_program_traces_only_the_calls_the_kernel_has_and_reads_paths_on_return():
    text = program(["openat", "read", "renameat2", "getppid"])
    assert "sys_enter_openat " in text and "sys_enter_read " in text and "sys_enter_open " not in text
    # two names, two prints, on the return
    exit_rename = next(line for line in text.splitlines() if line.startswith("tracepoint:syscalls:sys_exit_renameat2"))
    assert exit_rename.count("str(@s") == 2 and "str(" not in next(
        line for line in text.splitlines() if line.startswith("tracepoint:syscalls:sys_enter_renameat2"))
    assert set(CALLS) >= {"openat", "pwrite64", "fsync", "fdatasync", "sync_file_range", "renameat2", "unlinkat",
                          "copy_file_range", "getdents64", "statx", "fallocate", "mmap"}
