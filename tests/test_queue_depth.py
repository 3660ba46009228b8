"""Requests in flight: the helper's --queue-depth and --threads, with io_uring and with one thread per
request in flight. Observable facts: with --fill offset every 8-byte word of the file holds its own
offset, so the bytes on disk show that each request went to its own place; a read with --verify checks
that each request brought its own block-numbered data and that no block was moved twice; the
histogram holds every request; bad values are refused with exact messages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import run_helper

KiB, MiB = 1024, 2**20
METHODS = ["io_uring", "threads"]


def _ok(helper, *args) -> dict:
    rc, out, err = run_helper(helper, *args)
    assert rc == 0, (out, err)
    return out


def _words(path: Path) -> np.ndarray:
    return np.frombuffer(path.read_bytes(), dtype="<u8")


def _offsets_written(words: np.ndarray) -> np.ndarray:
    """Which 8-byte words hold their own offset."""
    return words == np.arange(words.size, dtype=np.uint64) * 8



@pytest.mark.parametrize("access,extra", [("sequential", []), ("random", ["--span", "4MiB"]),
                                          ("strided", ["--stride", "12KiB", "--span", "16MiB"])])
@pytest.mark.parametrize("depth,threads", [(8, 1), (4, 3), (32, 4)])
def test_each_request_writes_its_own_block_once(helper, disk_dir, method, access, extra, depth, threads):
    path = disk_dir / "f"
    out = _ok(helper, "write", "--path", str(path), "--bytes", "4MiB", "--granularity", "4KiB", "--access", access,
              "--queue-depth", str(depth), "--threads", str(threads), "--io-method", method, "--fill", "offset",
              "--verify", "on", *extra)
    assert (out["io_method"], out["queue_depth"], out["threads"]) == (method, depth, threads)
    assert out["bytes"] == 4 * MiB and out["requests"] == out["verified_requests"] == 1024
    words = _words(path)
    own = _offsets_written(words)
    if access == "strided":  # 4 KiB written, 12 KiB left alone, 1024 times
        blocks = own.reshape(-1, 512)
        assert blocks[::4].all() and not words.reshape(-1, 512)[1::4].any() and not words.reshape(-1, 512)[3::4].any()
    else:
        assert own.sum() == 4 * MiB // 8 and path.stat().st_size == 4 * MiB


@pytest.mark.parametrize("access", ["sequential", "random"])
def test_each_request_reads_its_own_block_once(helper, disk_dir, method, access):
    path = disk_dir / "f"
    _ok(helper, "write", "--path", str(path), "--bytes", "8MiB", "--granularity", "1MiB", "--fill", "offset")
    out = _ok(helper, "read", "--path", str(path), "--bytes", "8MiB", "--granularity", "16KiB", "--access", access,
              "--queue-depth", "16", "--threads", "2", "--io-method", method, "--verify", "on")
    assert out["requests"] == out["verified_requests"] == 512 and out["bytes"] == 8 * MiB
    hist = sum(int(b.split(":")[1]) for b in out["lat_hist_ns"].split())
    assert hist == 512  # every request's latency, from every worker
    assert 0 < out["lat_min_s"] <= out["lat_p50_s"] <= out["lat_p99_s"] <= out["lat_max_s"] <= out["io_seconds"]


def test_a_read_of_other_data_fails_verify(helper, disk_dir):
    path = disk_dir / "f"
    _ok(helper, "write", "--path", str(path), "--bytes", "1MiB", "--fill", "0x41")
    rc, out, _ = run_helper(helper, "read", "--path", str(path), "--bytes", "1MiB", "--granularity", "4KiB",
                            "--queue-depth", "4", "--verify", "on")
    assert rc == 1
    assert out["error"].startswith("verify: the word at offset ")
    assert out["error"].endswith("; the file was not written with --fill offset, or a request read the wrong place")


def test_both_methods_agree_on_what_they_did(helper, disk_dir, helper_info):
    if helper_info["platform"] == "darwin":
        pytest.skip("macOS has no io_uring")
    path = disk_dir / "f"
    _ok(helper, "write", "--path", str(path), "--bytes", "16MiB", "--granularity", "1MiB", "--fill", "offset")
    answers = {m: _ok(helper, "read", "--path", str(path), "--bytes", "16MiB", "--granularity", "4KiB",
                      "--access", "random", "--queue-depth", "8", "--threads", "2", "--io-method", m, "--verify", "on")
               for m in METHODS}
    keys = ("bytes", "requests", "verified_requests", "syscalls", "largest_syscall_bytes", "cached_bytes",
            "direct_honoured", "queue_depth", "threads")
    assert {k: answers["io_uring"][k] for k in keys} == {k: answers["threads"][k] for k in keys}
    assert answers["io_uring"]["io_method"] == "io_uring" and answers["threads"]["io_method"] == "threads"


def test_one_request_in_flight_is_the_plain_loop(helper, disk_dir):
    out = _ok(helper, "write", "--path", str(disk_dir / "f"), "--bytes", "64KiB", "--granularity", "4KiB")
    assert (out["io_method"], out["io_method_reason"], out["queue_depth"], out["threads"]) == ("sync", "", 1, 1)


def test_the_unaligned_tail_of_a_direct_sequential_write_falls_back_to_threads(helper, helper_info, disk_dir):
    path = disk_dir / "f"
    out = _ok(helper, "write", "--path", str(path), "--bytes", "1000000", "--granularity", "64KiB",
              "--queue-depth", "4", "--fill", "offset")
    assert out["bytes"] == 1_000_000 and path.stat().st_size == 1_000_000
    assert _offsets_written(_words(path)[: 1_000_000 // 8]).all()
    if helper_info["platform"] == "linux":
        assert out["io_method"] == "threads"
        assert out["io_method_reason"] == ("the last request's unaligned part goes through a second, buffered "
                                           "descriptor, which the ring does not serve")


def test_a_failed_write_with_requests_in_flight_removes_its_file(helper, mount_tmpfs, method):
    mnt = mount_tmpfs("2m")
    path = mnt / "big"
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "8MiB", "--granularity", "256KiB",
                            "--engine", "buffered", "--queue-depth", "4", "--io-method", method)
    assert rc == 1 and out["errno"] == 28 and "No space left on device" in out["error"]
    assert out["removed_partial_file"] is True and not path.exists()


@pytest.mark.parametrize("args,message", [
    (["--queue-depth", "0"], "--queue-depth must be a whole number from 1 to 256, not '0'"),
    (["--queue-depth", "257"], "--queue-depth must be a whole number from 1 to 256, not '257'"),
    (["--queue-depth", "8x"], "--queue-depth must be a whole number from 1 to 256, not '8x'"),
    (["--threads", "65"], "--threads must be a whole number from 1 to 64, not '65'"),
    (["--threads", "-1"], "--threads must be a whole number from 1 to 64, not '-1'"),
    (["--io-method", "aio"], "--io-method must be auto, io_uring or threads, not 'aio'"),
    (["--verify", "yes"], "--verify must be on or off, not 'yes'"),
    (["--engine", "foundation", "--queue-depth", "8"],
     "the foundation engine moves one request at a time, as simple app code does; use --engine direct or "
     "buffered for --queue-depth, --threads or --io-method"),
    (["--engine", "app", "--threads", "2"],
     "the app engine moves one request at a time, as simple app code does; use --engine direct or "
     "buffered for --queue-depth, --threads or --io-method"),
])
def test_bad_values_are_refused_with_exact_messages(helper, disk_dir, args, message):
    rc, out, err = run_helper(helper, "read", "--path", str(disk_dir / "f"), "--bytes", "4KiB", *args)
    assert rc == 2 and out["usage"] is True and out["error"] == message
    assert err == f"stibium-helper: {message}\n"


def test_more_threads_than_the_threads_method_starts_are_refused(helper, disk_dir):
    path = disk_dir / "f"
    rc, out, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "4MiB", "--granularity", "4KiB",
                            "--queue-depth", "256", "--threads", "8", "--io-method", "threads")
    assert rc == 1 and out["error"] == ("2048 requests in flight (queue depth 256 x 8 threads) need one thread each "
                                        "with the threads method, and the helper starts at most 1024; lower "
                                        "--queue-depth or --threads")
    assert not path.exists()


def test_fill_offset_is_refused_beyond_its_check_size(helper, disk_dir):
    rc, out, _ = run_helper(helper, "write", "--path", str(disk_dir / "f"), "--bytes", "512MiB", "--fill", "offset")
    assert rc == 1 and out["error"] == "--fill offset is for checks of at most 256 MiB; lower --bytes"
    assert not (disk_dir / "f").exists()
