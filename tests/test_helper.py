"""The helper on a real file system: bytes on disk, fill, access patterns,
residency, eviction, latency percentiles, batch mode and every error case."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import is_root, run_helper

KiB = 1024


def test_write_puts_the_reported_bytes_on_disk_with_mode_0600(helper, helper_info, disk_dir, direct_align):
    path = disk_dir / "f.bin"
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "10000", "--granularity", "4KiB")
    assert rc == 0
    assert out["bytes"] == 10000 == path.stat().st_size
    assert out["requests"] == 3
    assert path.stat().st_mode & 0o777 == 0o600
    assert out["seconds"] > 0 and out["seconds"] == pytest.approx(out["io_seconds"] + out["sync_seconds"], abs=1e-6)
    if helper_info["platform"] == "linux":   # the unaligned tail through a buffered descriptor
        assert out["tail_bytes_buffered"] == out["cached_bytes"] == 10000 % direct_align
    else:                                    # 4 KiB writes are copied through the cache by xnu
        assert out["tail_bytes_buffered"] == 0 and out["direct_honoured"] is False


def test_fill_byte_is_written(helper, disk_dir):
    path = disk_dir / "a.bin"
    rc, _, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "1MB", "--fill", "0x41")
    assert rc == 0
    assert path.read_bytes() == b"A" * 1_000_000


def test_random_fill_follows_the_data_seed(helper, disk_dir):
    files = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        run_helper(helper, "write", "--path", str(disk_dir / name), "--bytes", "64KiB", "--data-seed", str(seed))
        files[name] = (disk_dir / name).read_bytes()
    assert files["a"] == files["b"] != files["c"]
    assert len(set(files["a"])) > 200  # incompressible-looking: nearly every byte value occurs


def test_random_data_do_not_repeat_from_request_to_request(helper, disk_dir):
    a, b = disk_dir / "a", disk_dir / "b"
    run_helper(helper, "write", "--path", str(a), "--bytes", "3MiB", "--granularity", "1MiB")
    run_helper(helper, "write", "--path", str(b), "--bytes", "3MiB")
    data = a.read_bytes()
    blocks = {data[i:i + 2**20] for i in range(0, 3 * 2**20, 2**20)}
    assert len(blocks) == 3               # three requests, three different megabytes
    assert data == b.read_bytes()         # one stream from the seed, however it is cut into requests


def _layout(helper, path: Path, size: str) -> None:
    rc, _, err = run_helper(helper, "write", "--path", str(path), "--bytes", size, "--fill", "0x00")
    assert rc == 0, err


def test_random_access_touches_each_block_exactly_once(helper, disk_dir):
    path = disk_dir / "r.bin"
    _layout(helper, path, "1MiB")
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--existing", "--bytes", "512KiB",
                            "--granularity", "4KiB", "--span", "1MiB", "--access", "random", "--fill", "0x41",
                            "--seed", "3")
    assert rc == 0 and out["requests"] == 128
    data = path.read_bytes()
    blocks = [data[i:i + 4 * KiB] for i in range(0, len(data), 4 * KiB)]
    written = [b for b in blocks if b == b"A" * 4 * KiB]
    untouched = [b for b in blocks if b == bytes(4 * KiB)]
    # every block is wholly written or wholly untouched, and as many were written as requests were made:
    # so no block was written twice
    assert len(written) + len(untouched) == 256
    assert len(written) == out["requests"]
    # the order follows the seed: a different seed picks different blocks
    path2 = disk_dir / "r2.bin"
    _layout(helper, path2, "1MiB")
    run_helper(helper, "write", "--path", str(path2), "--existing", "--bytes", "512KiB", "--granularity", "4KiB",
               "--span", "1MiB", "--access", "random", "--fill", "0x41", "--seed", "4")
    assert path2.read_bytes() != data


def test_random_access_over_the_whole_span_covers_every_block(helper, disk_dir):
    path = disk_dir / "all.bin"
    _layout(helper, path, "256KiB")
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--existing", "--bytes", "256KiB",
                            "--granularity", "4KiB", "--access", "random", "--fill", "0x42")
    assert rc == 0 and out["requests"] == 64
    assert path.read_bytes() == b"B" * 256 * KiB


def test_strided_access_leaves_the_gaps_untouched(helper, disk_dir):
    path = disk_dir / "s.bin"
    _layout(helper, path, "64KiB")
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--existing", "--bytes", "32KiB",
                            "--granularity", "4KiB", "--stride", "4KiB", "--span", "64KiB", "--access", "strided",
                            "--fill", "0x43")
    assert rc == 0 and out["requests"] == 8
    data = path.read_bytes()
    for i in range(16):
        block = data[i * 4 * KiB:(i + 1) * 4 * KiB]
        assert block == (b"C" * 4 * KiB if i % 2 == 0 else bytes(4 * KiB)), i


def test_residency_is_one_after_a_buffered_write_and_zero_after_evict(helper, disk_dir):
    path = disk_dir / "c.bin"
    rc, _, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "4MiB", "--engine", "buffered",
                          "--sync", "none")
    assert rc == 0
    _, res, _ = run_helper(helper, "residency", "--path", str(path))
    assert res["resident"] > 0.99
    rc, ev, _ = run_helper(helper, "evict", "--path", str(path))
    assert rc == 0 and ev["resident_before"] > 0.99 and ev["resident_after"] < 0.01
    pages = 4 * KiB * KiB // os.sysconf("SC_PAGESIZE")
    assert ev["resident_before_pages"] == pages and ev["resident_after_pages"] == 0
    if ev["residency_method"] == "cachestat":     # the kernel's own count; mincore, asked by residency, agrees
        assert res["resident_mincore_pages"] == res["resident_pages"] == pages
    rc, rd, _ = run_helper(helper, "read", "--path", str(path), "--bytes", "4MiB", "--engine", "buffered")
    assert rc == 0 and rd["resident_before"] < 0.01
    _, res, _ = run_helper(helper, "residency", "--path", str(path))
    assert res["resident"] > 0.99  # a buffered read fills the cache; the next read would meet it


def test_direct_write_leaves_nothing_cached_and_direct_read_sees_residency_zero(helper, disk_dir):
    path = disk_dir / "d.bin"
    rc, w, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "10MB", "--granularity", "1MiB")
    assert rc == 0 and w["direct_honoured"] is True
    rc, r, _ = run_helper(helper, "read", "--path", str(path), "--bytes", "10MB", "--granularity", "1MiB")
    assert rc == 0 and r["resident_before"] == 0 and r["bytes"] == 10_000_000
    _, res, _ = run_helper(helper, "residency", "--path", str(path))
    assert res["resident"] <= 1 / res["pages"]  # at most the buffered tail's page


def test_a_file_with_a_few_pages_cached_is_counted_page_by_page(helper, disk_dir):
    # residency by cachestat's count where the kernel has it (no mincore over every page of a large file):
    # 0 for a file written directly, and a few pages exactly as mincore counts them
    path = disk_dir / "p.bin"
    rc, w, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "8MiB", "--granularity", "1MiB")
    assert rc == 0 and w["direct_honoured"] is True
    _, res, _ = run_helper(helper, "residency", "--path", str(path))
    assert res["resident"] == 0 and res["pages"] == 8 * KiB * KiB // os.sysconf("SC_PAGESIZE")
    with open(path, "rb") as f:                  # a buffered 4 KiB read: that page and the readahead's
        f.read(4 * KiB)
    _, res, _ = run_helper(helper, "residency", "--path", str(path))
    assert 0 < res["resident_pages"] < res["pages"]
    if res["residency_method"] == "cachestat":
        assert res["resident_mincore_pages"] == res["resident_pages"]


def _random_4k_reads(helper, path: Path) -> dict:
    """The answer of 256 random 4 KiB reads of a laid-out 1 MiB file."""
    _layout(helper, path, "1MiB")
    rc, out, _ = run_helper(helper, "read", "--path", str(path), "--bytes", "1MiB", "--granularity", "4KiB",
                            "--access", "random")
    assert rc == 0
    return out


def test_latency_percentiles_are_ordered_for_many_requests(helper, disk_dir):
    path = disk_dir / "l.bin"
    out = _random_4k_reads(helper, path)
    keys = ["lat_min_s", "lat_p50_s", "lat_p90_s", "lat_p99_s", "lat_p999_s", "lat_max_s"]
    values = [out[k] for k in keys]
    assert values == sorted(values) and values[0] > 0
    assert out["lat_mean_s"] * out["requests"] <= out["io_seconds"] * 1.001
    rc, one, _ = run_helper(helper, "read", "--path", str(path), "--bytes", "1MiB")
    assert rc == 0 and "lat_p50_s" not in one  # a single request has no percentiles
    assert "lat_hist_ns" not in one


def test_the_latency_histogram_holds_every_request_and_agrees_with_the_percentiles(helper, disk_dir):
    from stibium_py.analysis.histogram import LatencyHistogram
    out = _random_4k_reads(helper, disk_dir / "h.bin")
    h = LatencyHistogram.parse(out["lat_hist_ns"])
    assert h.n == out["requests"] == 256
    assert (h.lo_ns < h.hi_ns).all() and (h.hi_ns[:-1] <= h.lo_ns[1:]).all()    # disjoint, ascending
    # 16 bins per octave above 128 ns: a bin is at most 1/16 of its lower bound wide
    assert ((h.hi_ns - h.lo_ns) * 16 <= h.lo_ns).all()
    assert h.lo_ns[0] <= out["lat_min_s"] * 1e9 < h.hi_ns[0] and h.lo_ns[-1] <= out["lat_max_s"] * 1e9 < h.hi_ns[-1]
    for q, key in ((0.5, "lat_p50_s"), (0.99, "lat_p99_s")):
        upper = h.quantile_s(q)      # the helper's percentile lies in the same 1/16-octave bin or a finer one
        assert upper / (1 + 1 / 16) <= out[key] * 1.0000001 and out[key] <= upper


@pytest.mark.parametrize("engine", ["buffered", "foundation", "app"])
def test_every_engine_writes_and_reads_the_bytes(helper, disk_dir, engine):
    path = disk_dir / f"{engine}.bin"
    rc, w, err = run_helper(helper, "write", "--path", str(path), "--bytes", "300KB", "--granularity", "64KiB",
                            "--engine", engine, "--fill", "0x44")
    assert rc == 0, err
    assert path.read_bytes() == b"D" * 300_000
    rc, r, err = run_helper(helper, "read", "--path", str(path), "--bytes", "300KB", "--engine", engine)
    assert rc == 0 and r["bytes"] == 300_000, err
    if engine == "foundation":
        assert r["foundation_implementation"].startswith(("GNUstep Base", "Apple Foundation"))


def test_batch_answers_one_line_per_command(helper, disk_dir):
    path = disk_dir / "b.bin"
    lines = [["write", "--path", str(path), "--bytes", "8KiB"], ["read", "--path", str(path), "--bytes", "8KiB"],
             ["frobnicate"]]
    proc = subprocess.run([str(helper), "batch"], input="".join(json.dumps(a) + "\n" for a in lines),
                          capture_output=True, text=True)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["status"] for a in answers] == [0, 0, 2]
    assert answers[1]["bytes"] == 8192


def test_info_names_the_clock_and_the_target_file_system(helper, disk_dir):
    rc, out, _ = run_helper(helper, "info", "--path", str(disk_dir))
    assert rc == 0
    assert out["clock"] in ("CLOCK_MONOTONIC_RAW", "mach_absolute_time")
    assert out["clock_resolution_ns"] >= 1
    assert out["target"]["direct_offset_align_bytes"] >= 512
    assert list(disk_dir.iterdir()) == []  # the probe file is gone


def test_the_helpers_engine_table_is_the_plans(helper):
    """One engine table in the helper (main.m) read by its lookup, info and the one-at-a-time rule; the plan
    checks queue depths against the same facts (plan/model.py ENGINES) without a helper."""
    from stibium_py.plan.model import ENGINES
    rc, out, _ = run_helper(helper, "info")
    assert rc == 0 and out["engines"] == list(ENGINES)
    assert {name: (tuple(c["ops"]), c["one_at_a_time"]) for name, c in out["engine_capabilities"].items()} == \
        {name: (e.ops, e.one_at_a_time) for name, e in ENGINES.items()}
    rc, out, _ = run_helper(helper, "read", "--path", "/nonexistent", "--engine", "fast")
    assert rc == 2 and out["error"] == "--engine must be direct, buffered, foundation or app, not 'fast'"
    for name, facts in ENGINES.items():
        rc, out, _ = run_helper(helper, "read", "--path", "/nonexistent", "--bytes", "4KiB", "--engine", name,
                                "--queue-depth", "4")
        assert (rc == 2 and "one request at a time" in out["error"]) == facts.one_at_a_time, (name, out)


# ------------------------------------------------------------------ errors

def _error(helper, *args, **kw):
    rc, out, err = run_helper(helper, *args, **kw)
    assert rc == 1, out
    assert err.count("\n") == 1 and err.startswith("stibium-helper: ")
    return out


def test_existing_file_is_refused(helper, disk_dir):
    path = disk_dir / "x"
    path.write_bytes(b"keep me")
    out = _error(helper, "write", "--path", str(path), "--bytes", "4KiB")
    assert out["errno"] == 17
    assert out["error"] == f"{path} already exists; stibium writes only new files (remove it or choose another path)"
    assert path.read_bytes() == b"keep me"


def test_symlink_is_refused_for_reads_and_writes(helper, disk_dir):
    target = disk_dir / "real"
    target.write_bytes(b"x" * 4096)
    link = disk_dir / "link"
    link.symlink_to(target)
    for cmd in ("write", "read"):
        out = _error(helper, cmd, "--path", str(link), "--bytes", "4KiB")
        assert out["error"] == f"{link} is a symbolic link; stibium never follows links for test files"
    out = _error(helper, "evict", "--path", str(link))
    assert "symbolic link" in out["error"]
    assert target.read_bytes() == b"x" * 4096


def _through_a_link(disk_dir: Path) -> tuple[Path, Path]:
    """A test folder whose subfolder `a` someone replaced by a link to a folder outside it."""
    outside = disk_dir / "outside"
    outside.mkdir()
    (outside / "old.bin").write_bytes(b"y" * 4096)
    work = disk_dir / "work"
    work.mkdir()
    (work / "a").symlink_to(outside)
    return work, outside


def test_a_folder_on_the_way_replaced_by_a_link_is_not_followed(helper, disk_dir):
    """The helper opens a test file by a path in which no name may be a link (O_NOFOLLOW takes only the last):
    a write, read, eviction or signed fill through a folder replaced by a link touches nothing outside."""
    work, outside = _through_a_link(disk_dir)
    said = "a folder on the way to {} is a symbolic link or not a folder (someone replaced it during the run?); " \
           "stibium never follows links for test files"
    for args in (("write", "--bytes", "4KiB"), ("read", "--bytes", "4KiB"), ("evict",)):
        name = "new.bin" if args[0] == "write" else "old.bin"
        out = _error(helper, args[0], "--path", str(work / "a" / name), *args[1:])
        assert out["errno"] in (40, 20) and out["error"] == said.format(work / "a" / name)
    rc, out, _ = run_helper(helper, "sign", "--path", str(work / "a" / "v.bin"), "--op", "write", "--blocks", "1",
                            "--first", "0", "--block", "4096", "--chunk", "4096", "--run", "1", "--seed", "1")
    assert rc == 1 and out["error"] == said.format(work / "a" / "v.bin")
    assert sorted(p.name for p in outside.iterdir()) == ["old.bin"] and (outside / "old.bin").read_bytes() == b"y" * 4096
    # the same path with no link on it is written
    (work / "a").unlink()
    (work / "a").mkdir()
    rc, out, _ = run_helper(helper, "write", "--path", str(work / "a" / "new.bin"), "--bytes", "4KiB")
    assert rc == 0 and (work / "a" / "new.bin").stat().st_size == 4096


WALK_DRIVER = r"""
#include "sb_nolinks.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int fd = -1, rc;
    if (strcmp(argv[1], "create") == 0)
        rc = fd = sb_open_no_links(argv[2], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    else if (strcmp(argv[1], "read") == 0)
        rc = fd = sb_open_no_links(argv[2], O_RDONLY | O_CLOEXEC, 0);
    else
        rc = sb_unlink_no_links(argv[2]);
    if (fd >= 0)
        close(fd);
    printf("%d %d\n", rc < 0 ? -1 : 0, rc < 0 ? errno : 0);
    (void)argc;
    return 0;
}
"""


@pytest.mark.parametrize("build", ["walking", "the kernel's call"])
def test_opening_and_removing_without_links_by_either_way(tmp_path, build):
    """sb_nolinks.c both ways: the kernel's one call (openat2 here; O_NOFOLLOW_ANY on a Mac) and the walk a name
    at a time that older kernels get: plain paths (absolute, relative, doubled slashes) open, create with mode
    0600 and are removed; a link anywhere on the way is refused, the file itself or a folder."""
    import shutil
    src = Path(__file__).resolve().parent.parent / "helper"
    (tmp_path / "driver.c").write_text(WALK_DRIVER)
    exe = tmp_path / "nolinks"
    subprocess.run([shutil.which("cc") or "gcc", "-std=gnu11", "-Wall", "-Werror", "-D_GNU_SOURCE",
                    *(["-DSB_NOLINKS_WALK_ONLY"] if build == "walking" else []), f"-I{src}", str(tmp_path / "driver.c"),
                    str(src / "sb_nolinks.c"), str(src / "sb_err.c"), "-o", str(exe)], check=True)
    work = tmp_path / "w"
    (work / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.bin").write_bytes(b"k")
    (work / "link").symlink_to(outside)
    (work / "file-link").symlink_to(outside / "keep.bin")

    def call(what: str, path: str) -> tuple[int, int]:
        out = subprocess.run([str(exe), what, path], capture_output=True, text=True, cwd=tmp_path, check=True).stdout
        rc, err = out.split()
        return int(rc), int(err)
    assert call("create", str(work / "sub" / "f.bin")) == (0, 0)
    assert (work / "sub" / "f.bin").stat().st_mode & 0o777 == 0o600
    assert call("read", str(work / "sub" / "f.bin")) == (0, 0)
    assert call("read", "w/sub/f.bin") == (0, 0)                         # relative to the working folder
    assert call("read", str(tmp_path) + "//w/sub//f.bin") == (0, 0)
    assert call("read", str(work / "sub" / "nope.bin")) == (-1, 2)
    for what in ("create", "read", "unlink"):
        rc, err = call(what, str(work / "link" / ("new.bin" if what == "create" else "keep.bin")))
        assert rc == -1 and err in (40, 20), (what, err)                  # ELOOP or ENOTDIR
    assert call("read", str(work / "file-link")) == (-1, 40)
    assert call("unlink", str(work / "file-link")) == (0, 0)              # the link itself goes, never its target
    assert sorted(p.name for p in outside.iterdir()) == ["keep.bin"] and (outside / "keep.bin").read_bytes() == b"k"
    assert call("unlink", str(work / "sub" / "f.bin")) == (0, 0) and not (work / "sub" / "f.bin").exists()


def test_missing_file_is_enoent(helper, disk_dir):
    out = _error(helper, "read", "--path", str(disk_dir / "nope"), "--bytes", "4KiB")
    assert out["errno"] == 2 and out["error"] == f"{disk_dir / 'nope'} does not exist"


@pytest.mark.parametrize("prefix", ["", "a", "ab", "abc"])
def test_an_error_cut_inside_a_character_is_still_answered(helper, disk_dir, prefix):
    # a missing path of 220 "é" then 120 "ü": the 512-byte message limit falls inside a two-byte
    # character at two of these four offsets, where Foundation would answer nil and the helper died
    name = prefix + "é" * 220 + "ü" * 120
    out = _error(helper, "read", "--path", str(disk_dir / name), "--bytes", "4KiB")
    assert out["errno"] == 36          # ENAMETOOLONG: no component may exceed 255 bytes
    # the message cut at 511 bytes; a character split by the cut is one '?'
    cut = f"cannot examine {disk_dir / name}".encode()[:511]
    assert out["error"] == cut.decode(errors="replace").replace("\ufffd", "?")


def test_a_path_that_is_not_utf8_is_answered_with_its_bytes_replaced(helper, disk_dir):
    path = os.fsencode(str(disk_dir)) + b"/caf\xe9"          # Latin-1 bytes, as an old archive may hold
    proc = subprocess.run([os.fsencode(str(helper)), b"read", b"--path", path, b"--bytes", b"4KiB"], capture_output=True)
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["errno"] == 2
    assert out["error"] == f"{disk_dir}/caf? does not exist"


def test_read_past_the_end_is_refused(helper, disk_dir):
    path = disk_dir / "short"
    _layout(helper, path, "8KiB")
    out = _error(helper, "read", "--path", str(path), "--bytes", "16KiB")
    assert out["error"] == f"read past the end of the file: the requests reach byte 16384 but {path} has 8192 bytes"


def test_granularity_larger_than_span_is_refused(helper, disk_dir):
    out = _error(helper, "write", "--path", str(disk_dir / "g"), "--bytes", "8KiB", "--granularity", "16KiB",
                 "--span", "8KiB", "--access", "random")
    assert out["error"] == "granularity 16384 is larger than the span 8192"
    assert not (disk_dir / "g").exists()


def test_unaligned_direct_io_is_einval_with_advice(helper, helper_info, disk_dir):
    path = disk_dir / "u"
    _layout(helper, path, "64KiB")
    if helper_info["platform"] == "darwin":  # F_NOCACHE accepts it and goes through the cache
        rc, out, _ = run_helper(helper, "read", "--path", str(path), "--bytes", "40000", "--granularity", "4000")
        assert rc == 0 and out["direct_honoured"] is False
        return
    out = _error(helper, "read", "--path", str(path), "--bytes", "40000", "--granularity", "4000")
    assert out["errno"] == 22
    assert out["error"].startswith("granularity 4000 is not a multiple of the direct I/O alignment")
    assert out["error"].endswith("use binary sizes (e.g. 4KiB) or --engine buffered")


def test_usage_errors_exit_2(helper):
    for args in (["write"], ["read", "--path", "x", "--bytes", "12QB"], ["write", "--path", "x", "--bytes", "1",
                                                                            "--engine", "turbo"], ["bogus"]):
        rc, out, _ = run_helper(helper, *args)
        assert rc == 2 and out["usage"] is True, args


@pytest.mark.skipif(not is_root, reason="needs root to drop to another user")
def test_permission_denied_is_eacces(helper, disk_dir):
    # a copy of the helper that the unprivileged user can reach, in a folder it may enter
    import shutil
    import tempfile
    open_dir = Path(tempfile.mkdtemp(prefix="stibium-eacces-", dir="/var/tmp"))
    try:
        open_dir.chmod(0o711)
        exe = open_dir / "stibium-helper"
        shutil.copy2(helper, exe)
        exe.chmod(0o755)
        locked = open_dir / "locked"
        locked.mkdir(mode=0o700)
        out = _error(exe, "write", "--path", str(locked / "f"), "--bytes", "4KiB",
                     preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)))
    finally:
        shutil.rmtree(open_dir, ignore_errors=True)
    assert out["errno"] == 13
    assert out["error"] == f"permission denied: cannot create {locked / 'f'}; check the folder's permissions"


@pytest.fixture
def small_mount(mount_tmpfs):
    """A 2 MiB tmpfs, for ENOSPC and read-only file systems."""
    return mount_tmpfs("2m")


def test_disk_full_is_enospc_and_the_partial_file_is_removed(helper, small_mount):
    path = small_mount / "big"
    out = _error(helper, "write", "--path", str(path), "--bytes", "8MiB", "--granularity", "1MiB",
                 "--engine", "buffered")
    assert out["errno"] == 28 and "No space left on device" in out["error"]
    assert out["removed_partial_file"] is True and not path.exists()


def test_read_only_file_system_is_erofs(helper, small_mount):
    subprocess.run(["mount", "-o", "remount,ro", str(small_mount)], check=True)
    out = _error(helper, "write", "--path", str(small_mount / "f"), "--bytes", "4KiB", "--engine", "buffered")
    assert out["errno"] == 30
    assert out["error"] == f"{small_mount / 'f'} is on a read-only file system; choose a writable target"


def test_tmpfs_reports_direct_io_not_honoured(helper, small_mount):
    rc, out, _ = run_helper(helper, "info", "--path", str(small_mount))
    assert rc == 0 and out["target"]["fs_type"] == "tmpfs"
    assert out["target"]["direct_honoured"] is False
