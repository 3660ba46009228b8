"""A granularity is a system call: the helper's reads and writes traced with strace, one call per
request of exactly the granularity (up to the platform's largest transfer); rows that count the
calls; the memory check for requests that do not fit."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_helper
from stibium_py.plan import load_and_expand
from stibium_py.run.preflight import RunError, check_memory, largest_request_bytes

KiB, MiB, GiB = 1024, 2**20, 2**30
CALL = re.compile(r"^(?:\d+ +)?(pread64|pwrite64)\((\d+), .*, (\d+), (\d+)\) += (-?\d+)")
# openat2: the helper opens a test file by a path in which no name may be a link (RESOLVE_NO_SYMLINKS)
OPEN = re.compile(r'^(?:\d+ +)?openat2?\(.*?"(.*)", .*\) += (\d+)$')


def traced(helper: Path, tmp: Path, *args: str) -> tuple[dict, list[tuple[str, int, int, int]]]:
    """Run the helper under strace: its answer, and its pread64/pwrite64 calls on the test file (name, size,
    offset, result); the loader's and Foundation's own reads of other files are left out."""
    log = tmp / "strace.log"
    path = args[args.index("--path") + 1]
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat,openat2,pread64,pwrite64", "-o", str(log), str(helper),
                           *args], capture_output=True, text=True)
    import json
    out = json.loads(proc.stdout)
    assert proc.returncode == 0, out
    calls, fds = [], set()
    for line in log.read_text().splitlines():
        o = OPEN.match(line)
        if o and o.group(1) == path:
            fds.add(int(o.group(2)))
        m = CALL.match(line)
        if m and int(m.group(2)) in fds:
            calls.append((m.group(1), int(m.group(3)), int(m.group(4)), int(m.group(5))))
    return out, calls


@pytest.fixture(scope="module")
def strace() -> None:
    assert shutil.which("strace"), "strace not found: install.sh --test installs it"


@pytest.mark.parametrize("engine", ["direct", "buffered"])
@pytest.mark.parametrize("granularity,requests", [(4 * KiB, 8), (MiB, 4), (256 * MiB, 1), (GiB, 1)],
                         ids=["4KiB", "1MiB", "256MiB", "1GiB"])
def test_one_call_per_request_of_exactly_the_granularity(helper, disk_dir, strace, engine, granularity, requests):
    path = disk_dir / "g.bin"
    size = granularity * requests
    common = ["--path", str(path), "--bytes", str(size), "--granularity", str(granularity), "--engine", engine]
    wrote, writes = traced(helper, disk_dir, "write", *common, "--latency", "off")
    read, reads = traced(helper, disk_dir, "read", *common, "--access", "random", "--latency", "off")
    for answer, calls, name in ((wrote, writes, "pwrite64"), (read, reads, "pread64")):
        assert [c[0] for c in calls] == [name] * requests
        assert all(c[1] == granularity and c[3] == granularity for c in calls)
        assert sorted(c[2] for c in calls) == [i * granularity for i in range(requests)]
        assert answer["syscalls"] == requests and answer["largest_syscall_bytes"] == granularity
    path.unlink()


def test_a_whole_decimal_file_is_two_calls_with_direct_io(helper, disk_dir, strace):
    # the aligned body in one uncached call, the unaligned last bytes through the buffered descriptor
    path = disk_dir / "f.bin"
    out, calls = traced(helper, disk_dir, "write", "--path", str(path), "--bytes", "10MB", "--engine", "direct")
    align = 10_000_000 - out["tail_bytes_buffered"]
    assert [(c[0], c[1], c[2]) for c in calls] == [("pwrite64", align, 0), ("pwrite64", 10_000_000 - align, align)]
    assert out["syscalls"] == 2 and out["largest_syscall_bytes"] == align


def test_a_buffered_whole_file_is_one_call(helper, disk_dir):
    path = disk_dir / "f.bin"
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "300MB", "--engine", "buffered")
    assert rc == 0 and out["syscalls"] == 1 and out["largest_syscall_bytes"] == 300_000_000
    rc, out, _ = run_helper(helper, "read", "--path", str(path), "--bytes", "300MB", "--engine", "buffered")
    assert rc == 0 and out["syscalls"] == 1 and out["largest_syscall_bytes"] == 300_000_000


def test_written_data_do_not_repeat_within_a_large_request(helper, disk_dir):
    # a 96 MiB request is one slice of a 96 MiB buffer of seeded data, not a 64 MiB stream wrapped around
    path = disk_dir / "r.bin"
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "96MiB", "--engine", "buffered")
    assert rc == 0 and out["syscalls"] == 1
    with open(path, "rb") as f:
        head = f.read(MiB)
        f.seek(64 * MiB)
        later = f.read(MiB)
    assert head != later


def test_memory_check_names_what_a_large_request_needs():
    with pytest.raises(RunError) as e:
        check_memory(2 * GiB, available_bytes=1_500_000_000)
    assert str(e.value) == ("the plan's largest request is 2.15 GB: the helper needs about 2.28 GB of memory for it, "
                            "but only 1.5 GB is available; use smaller sizes or granularities, or free memory")
    assert e.value.exit_code == 2
    check_memory(2 * GiB, available_bytes=16 * 10**9)      # fits comfortably: no error
    check_memory(2 * GiB, available_bytes=None)            # unknown: not refused


def test_memory_check_counts_a_buffer_for_each_read_in_flight():
    with pytest.raises(RunError) as e:
        check_memory(64 * MiB, available_bytes=16 * 10**9, read_slots=64 * MiB * 256)
    assert str(e.value) == ("the plan's reads in flight hold 17.2 GB (a request's worth for each): the helper needs "
                            "about 17.3 GB of memory for it, but only 16 GB is available; use smaller sizes or "
                            "granularities, or fewer requests in flight, or free memory")


def test_largest_request_of_a_plan(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\ntests:\n  - name: t\n    kind: pattern\n    op: read\n    access: random\n"
                    "    granularities: [4KiB, 64MiB]\n    bytes: 128MiB\n    span: 256MiB\n    trials: 1\n"
                    "  - name: f\n    kind: files\n    sizes: [10MB, 300MB]\n    repeats: 1\n")
    _, _, expanded = load_and_expand(plan)
    assert largest_request_bytes(expanded) == 300_000_000
