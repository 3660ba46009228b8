"""Accuracy against devices of known speed, end to end through `stibium run`
(docs/truth-devices.md). Each test prints truth, estimate, interval and error."""

from __future__ import annotations

import csv
import subprocess
import time
import json

from pathlib import Path

import pytest

import devices
from conftest import entry, stibium_run

pytestmark = pytest.mark.truth

FILES_PLAN = """\
name: truth-files
tests:
  - name: files
    kind: files
    sizes: {{from: 1MB, to: 64MB, count: 7}}
    repeats: {repeats}
    write_order: random
    read_order: random
    between: evict
"""


def independent_4k_read_p50_s(folder, requests: int = 200) -> float:
    """The median time of random 4 KiB O_DIRECT preads of a 64 MiB file on the device, timed here in
    Python with the raw monotonic clock: the stack's own latency, measured without the helper."""
    import mmap
    import os
    import random
    import time

    path = folder / ".latency-reference"
    with open(path, "wb") as f:
        f.write(os.urandom(1 << 20) * 64)
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        buf = mmap.mmap(-1, 4096)
        rng = random.Random(1)
        times = []
        for block in rng.sample(range((64 << 20) // 4096), requests):
            t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)
            os.preadv(fd, [buf], block * 4096)
            times.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW) - t0)
    finally:
        os.close(fd)
        path.unlink()
    times.sort()
    return times[len(times) // 2] / 1e9


def report_value(what: str, truth: float, value: float) -> float:
    error = value / truth - 1
    print(f"TRUTH {what}: truth {truth:.6g}, measured {value:.6g}, error {error:+.2%}")
    return error


def report(what: str, truth: float, est: dict) -> float:
    error = est["estimate"] / truth - 1
    print(f"TRUTH {what}: truth {truth:.6g}, estimate {est['estimate']:.6g} [{est['low']:.6g}, {est['high']:.6g}], "
          f"error {error:+.2%}")
    return error


# The device's own accuracy: nbdkit's rate filter holds its rate within about 0.5 % once the burst is
# spent (docs/truth-devices.md), so "R inside the interval" is judged against R +- 0.5 %.
DEVICE_ACCURACY = 0.005


def assert_no_cache_below(summary: dict) -> None:
    """A device of known speed is never taken for a cache below the file system: no read at memory speed, and
    no layer below its file system that serves reads from memory (FUSE under its loop device is named, as
    information)."""
    assert [p for t in summary["tests"] for p in t.get("below_cache", [])] == []
    assert [p for t in summary["tests"] for p in t.get("points", []) if p.get("below_cache")] == []
    assert not [w for w in summary["warnings"] if w["level"] == "warning" and "memory" in w["message"]]


def test_files_rates_on_recipe_b(tmp_path, device_b):
    summary, _ = stibium_run(tmp_path, device_b, FILES_PLAN.format(repeats=3))
    assert_no_cache_below(summary)
    for op, truth in (("write", device_b.write_bytes_per_s), ("read", device_b.read_bytes_per_s)):
        rate = entry(summary, "files", op)["rate_bytes_per_s"]
        assert abs(report(f"recipe B files {op} rate (B/s)", truth, rate)) <= 0.03
        assert rate["low"] <= truth * (1 + DEVICE_ACCURACY) and truth * (1 - DEVICE_ACCURACY) <= rate["high"]


# The blkio throttle releases I/O in slices of about 100 ms, so a file that moves in less than a few
# slices has no meaningful time of its own (docs/truth-devices.md: exact over >= 1 s): Recipe A gets larger files.
RECIPE_A_PLAN = FILES_PLAN.replace("{{from: 1MB, to: 64MB, count: 7}}", "[32MB, 64MB, 128MB, 256MB]")


# The throttle's slices (about 100 ms) move a file's time by up to a slice, so the point must be within 4 % of the rate
# set, not the 3 % of a device without slices; the interval must hold the rate to the device's accuracy, as on Recipe
# B. Its image is in memory: on the machine's disk each fsync waited for a flush of that disk, for a time that changed
# with the file's size, and the writes' rate landed 1.2 to 3 % under the rate set (docs/truth-devices.md).
RECIPE_A_POINT_ERROR = 0.04


def test_separate_read_and_write_rates_on_recipe_a(tmp_path, device_a):
    """Each rate within 4 % of the rate set and its interval holding it; and by the device's own counters (read every
    2 ms on the helper's clock), every written file's bytes reached the device by the end of its measurement: no
    sample read from 20 ms after a write's end shows its bytes short, and for all but one write such a sample was
    read within 100 ms more (a sampling thread kept off the CPU takes no sample; it never takes a false one). A write
    that skipped its flush would stay short for about a second: its bytes at 30 MB/s behind the kernel's writeback."""
    from scipy import stats
    with devices.Counted(device_a) as counted:
        summary, run_dir = stibium_run(tmp_path, device_a, RECIPE_A_PLAN.format(repeats=3))
    for op, truth in (("write", device_a.write_bytes_per_s), ("read", device_a.read_bytes_per_s)):
        rate = entry(summary, "files", op)["rate_bytes_per_s"]
        assert abs(report(f"recipe A files {op} rate (B/s)", truth, rate)) <= RECIPE_A_POINT_ERROR
        assert rate["low"] <= truth * (1 + DEVICE_ACCURACY) and truth * (1 - DEVICE_ACCURACY) <= rate["high"]
    with open(run_dir / "measurements.csv", newline="") as f:
        writes = [r for r in csv.DictReader(f) if r["kind"] == "files" and r["op"] == "write" and not r["error"]]
    moved = [counted.moved(int(r["start_ns"]), int(r["bytes"]), counted.WRITE) for r in writes]
    for r in writes:
        late_ns = int(r["end_ns"]) + 20_000_000
        short = counted.short_after(int(r["start_ns"]), int(r["bytes"]), counted.WRITE, late_ns)
        assert not short, f"{r['bytes']} B written: short at the device {(short[-1] - int(r['end_ns'])) / 1e6:.1f} ms " \
                          f"after the measurement's end"
    seen = sum(counted.read_within(int(r["end_ns"]) + 20_000_000, int(r["end_ns"]) + 120_000_000) for r in writes)
    assert seen >= len(writes) - 1, f"the counters were read after only {seen} of {len(writes)} writes' ends"
    kernel = 1 / stats.theilslopes([s for s, _ in moved], [int(r["bytes"]) for r in writes]).slope
    report_value("recipe A files write: the rate through the device's counters' times, from each file's first byte to "
                 "its last (B/s)", device_a.write_bytes_per_s, kernel)


def test_latency_and_throughput_of_patterns_on_recipe_b(tmp_path, device_b):
    plan = """\
name: truth-patterns
tests:
  - name: rnd
    kind: pattern
    op: read
    access: random
    granularities: [4KiB]
    bytes: 1MiB
    span: 64MiB
    trials: 3
  - name: seq
    kind: pattern
    op: read
    access: sequential
    granularities: [1MiB]
    bytes: 64MiB
    trials: 3
"""
    before = independent_4k_read_p50_s(device_b.mount)
    summary, _ = stibium_run(tmp_path, device_b, plan)
    assert_no_cache_below(summary)
    after = independent_4k_read_p50_s(device_b.mount)
    p50 = entry(summary, "rnd", "read")["points"][0]["lat_p50_s"]
    d = device_b.delay_s
    low, high = min(before, after), max(before, after)
    print(f"TRUTH recipe B random 4 KiB read p50 latency (s): the delay {d}, independent timings before and "
          f"after {before:.6g} {after:.6g}, estimate {p50:.6g}")
    # at least the delay that was set; and within 0.1 ms or 10 % of the same requests timed independently just
    # before and after (the FUSE, nbdkit and loop overhead above the delay drifts between 0.15 and 0.7 ms
    # on these machines, from one minute to the next)
    assert d <= p50
    assert low - max(1e-4, 0.1 * low) <= p50 <= high + max(1e-4, 0.1 * high)
    tput = entry(summary, "seq", "read")["points"][0]["throughput_bytes_per_s"]
    assert abs(report("recipe B sequential 1 MiB read throughput (B/s)", device_b.read_bytes_per_s, tput)) <= 0.03


DEPTHS = (1, 4, 16)
# The helper's latency buckets hold 7 significant bits: from 2^25 ns (33.55 ms, Recipe C's delay) they are
# 524 us wide, so a median anywhere in [delay, delay + 524 us] is reported as delay + 262 us, and one a
# bucket later as delay + 786 us: the bound of half a millisecond is decided by the device, not rounding.
P50_ABOVE_DELAY_S = 0.0005


def fio_read_iops(path: Path, depth: int, requests: int) -> float:
    out = subprocess.run(["fio", "--name=parallel", f"--filename={path}", "--rw=randread", "--bs=4k", "--size=64M",
                          f"--io_size={requests * 4}k", "--direct=1", "--ioengine=io_uring", f"--iodepth={depth}",
                          "--randrepeat=0", "--output-format=json"], capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout)["jobs"][0]["read"]["iops"])


def test_requests_in_flight_on_recipe_c(tmp_path, device_c):
    """At N requests in flight the device answers N / delay requests a second (N below its parallelism):
    first shown with fio, then stibium's IOPS within 5 % of that at queue depth 1, 4 and 16, with each of
    the helper's methods, and its median latency at least the delay and within half a millisecond above fio's time
    in flight at that depth."""
    d = device_c.delay_s
    probe = device_c.mount / "probe.bin"
    subprocess.run(["dd", "if=/dev/zero", f"of={probe}", "bs=1M", "count=64", "oflag=direct", "status=none"],
                   check=True)
    # The device first: fio at each depth within 5 % of depth / delay. A virtual machine's CPUs are at times
    # slowed for some seconds by its host, which the device's timers feel (up to 7 % at 4 in flight, measured);
    # the check is repeated up to three times, a few seconds apart, until the device keeps its promise.
    for attempt in range(3):
        fio_iops = {depth: fio_read_iops(probe, depth, 32 * depth) for depth in DEPTHS}
        errors = {depth: report_value(f"recipe C fio random 4 KiB read IOPS at QD{depth} (attempt {attempt + 1})",
                                      depth / d, iops) for depth, iops in fio_iops.items()}
        if all(abs(e) <= 0.05 for e in errors.values()):
            break
        time.sleep(5)
    assert all(abs(e) <= 0.05 for e in errors.values()), errors
    fio_latency_s = {depth: depth / iops for depth, iops in fio_iops.items()}   # Little's law: time in flight
    probe.unlink()
    # 32 requests per trial at one in flight, 512 at 4 and 16: each trial about a second
    plan = """\
name: truth-in-flight
tests:
  - name: qd1
    kind: pattern
    op: read
    access: random
    granularities: [4KiB]
    bytes: 128KiB
    span: 64MiB
    trials: 3
  - name: qd
    kind: pattern
    op: read
    access: random
    granularities: [4KiB]
    bytes: 2MiB
    span: 64MiB
    queue_depth: [4, 16]
    trials: 3
"""
    summary, _ = stibium_run(tmp_path, device_c, plan)
    assert_no_cache_below(summary)
    points = {p["queue_depth"]: p for test in ("qd1", "qd") for p in entry(summary, test, "read")["points"]}
    for depth in DEPTHS:
        p = points[depth]
        assert abs(report(f"recipe C stibium random 4 KiB read IOPS at QD{depth} ({p['io_method']})", depth / d,
                          p["iops_estimate"])) <= 0.05
        print(f"TRUTH recipe C p50 latency at QD{depth}: delay {d:.6g}, fio's time in flight "
              f"{fio_latency_s[depth]:.6g}, estimate {p['lat_p50_s']:.6g}")
        # the FUSE, loop and ext4 layers on two CPUs add 0.3-1 ms to each wave of requests, which fio sees too
        # (its IOPS give its time in flight by Little's law): within half a millisecond above fio's. One at a
        # time too: in the two attempts that missed here on 2026-11-30, fio took 34.6 ms a request at QD1, 1.1 ms
        # above the delay, and stibium's median was 34.3 ms
        ceiling = max(d, fio_latency_s[depth])
        assert d <= p["lat_p50_s"] <= ceiling + P50_ABOVE_DELAY_S
    # each method on the same device: io_uring, and one thread per request in flight as macOS runs it
    from stibium_py.run.helper import find_helper
    target = device_c.mount / "methods.bin"
    subprocess.run([str(find_helper()), "write", "--path", str(target), "--bytes", "64MiB", "--granularity", "8MiB"],
                   check=True, capture_output=True)
    def helper_iops(method: str, depth: int) -> float:
        out = json.loads(subprocess.run([str(find_helper()), "read", "--path", str(target), "--bytes", "2MiB",
                                         "--granularity", "4KiB", "--access", "random", "--span", "64MiB",
                                         "--queue-depth", str(depth), "--io-method", method],
                                        capture_output=True, text=True).stdout)
        assert out["io_method"] == method
        return out["requests"] / out["seconds"]

    # The plan above ran with io_uring. The threads method (macOS's) on the same device: the two agree within
    # 5 % (median of three each, alternately), and each is within 10 % of depth / delay: single measurements
    # of a second each, where the plan's are medians over trials.
    for depth in (4, 16):
        runs: dict[str, list[float]] = {"io_uring": [], "threads": []}
        for i in range(3):
            for method in (("io_uring", "threads") if i % 2 == 0 else ("threads", "io_uring")):
                runs[method].append(helper_iops(method, depth))
        medians = {method: sorted(values)[1] for method, values in runs.items()}
        for method, value in medians.items():
            assert abs(report_value(f"recipe C helper {method} random 4 KiB read IOPS at QD{depth} (median of 3)",
                                    depth / d, value)) <= 0.10
        assert abs(medians["threads"] / medians["io_uring"] - 1) <= 0.05, medians
    target.unlink()


CACHE_PLAN = """\
name: truth-cache
tests:
  - name: files
    kind: files
    engine: {engine}
    sizes: [1MB, 2MB, 4MB]
    repeats: 3
    between: {between}
"""


@pytest.mark.parametrize("engine,between,flagged", [("app", "none", True), ("app", "evict", False),
                                                    ("direct", "none", False)])
def test_reads_from_the_page_cache_are_flagged(tmp_path, device_b, engine, between, flagged):
    summary, run_dir = stibium_run(tmp_path, device_b, CACHE_PLAN.format(engine=engine, between=between))
    reads = entry(summary, "files", "read")
    suspects = reads["cache_suspects"]
    print(f"TRUTH cache {engine}/{between}: {len(suspects)} of {reads['n']} reads flagged")
    if flagged:
        assert len(suspects) == reads["n"] == 9
        assert all(any(r.startswith("resident:") for r in s["reasons"]) for s in suspects)
    else:
        assert not [s for s in suspects if any(r.startswith("resident:") for r in s["reasons"])]
        assert_explained_by_the_burst(suspects, reads_in_order(run_dir), device_b)


def reads_in_order(run_dir) -> list[dict]:
    with open(run_dir / "measurements.csv", newline="") as f:
        return [r for r in csv.DictReader(f) if r["op"] == "read"]


def assert_explained_by_the_burst(suspects: list[dict], reads: list[dict], device) -> None:
    """A read the statistical rule flags without residency must have been served from the rate
    filter's burst allowance: a token bucket of burstiness x R bytes (full when the read phase
    starts, refilled at R while idle) must hold the bytes the read got for free."""
    rate = device.read_bytes_per_s
    capacity = device.burst_bytes
    bucket = capacity
    flagged = {s["seq"] for s in suspects}
    previous_end = None
    for r in reads:
        start, seconds, size = float(r["started_s"]), float(r["seconds"]), int(r["bytes"])
        if previous_end is not None:
            bucket = min(capacity, bucket + rate * max(0.0, start - previous_end))
        free = max(0.0, size - rate * max(0.0, seconds - device.delay_s))
        if int(r["seq"]) in flagged:
            assert free <= bucket * 1.1 + 65536, (r, free, bucket)
        bucket = max(0.0, bucket - free)
        previous_end = start + seconds


def test_a_rate_halved_mid_run_is_found(tmp_path, device_b):
    plan = """\
name: truth-drift
tests:
  - name: files
    kind: files
    sizes: [4MB, 8MB, 16MB]
    repeats: 12
    write_order: random
    between: evict
"""
    full = int(device_b.write_bytes_per_s * 8)
    changed = {}

    def halve_after_half_the_writes(rows: int, run_dir) -> None:
        if rows >= 18 and not changed:
            device_b.set_rate_bits_per_s(full // 2)
            changed["rows"] = rows
    summary, run_dir = stibium_run(tmp_path, device_b, plan, on_row=halve_after_half_the_writes)
    with open(run_dir / "measurements.csv", newline="") as f:
        writes = [r for r in csv.DictReader(f) if r["op"] == "write"]
    true_seq = changed["rows"]        # the first write measured after the change
    d = entry(summary, "files", "write")["drift"]
    assert d["detected"], d
    cp = min(d["change_points"], key=lambda c: abs(c["seq"] - true_seq))
    print(f"TRUTH drift: true change at write {true_seq} of {len(writes)}, found at {cp['seq']}; rate before "
          f"{cp['rate_before_bytes_per_s']:.6g} (truth {full / 8:.6g}), after {cp['rate_after_bytes_per_s']:.6g} "
          f"(truth {full / 16:.6g})")
    assert abs(cp["seq"] - true_seq) <= 0.1 * len(writes)
    assert cp["rate_before_bytes_per_s"] == pytest.approx(full / 8, rel=0.05)
    assert cp["rate_after_bytes_per_s"] == pytest.approx(full / 16, rel=0.05)


SUSTAINED_PLAN = """\
name: truth-sustained
tests:
  - name: long
    kind: sustained
    bytes: {bytes}
    file_size: 64MiB
    granularity: 1MiB
    chunk: 8MiB
"""
MiB = 2**20


def _chunk_bytes_so_far(run_dir: Path) -> int:
    with open(run_dir / "measurements.csv", newline="") as f:
        return sum(int(r["bytes"]) for r in csv.DictReader(f) if r.get("chunk") and not r["error"])


def test_a_sustained_write_finds_the_cliff_and_both_rates(tmp_path, device_b):
    """The device writes at R until the run has written 192 MiB (the switch is made the moment a chunk row
    shows it: nbdkit's rate filter reads rate-file at every request), then at R / 2, as an SSD whose fast
    cache is full. The cliff is found within 10 % of where the switch came, each rate within 3 %. (The stack
    between the helper and nbdkit holds some megabytes in flight, which the writes see the change late by.)"""
    fast = int(device_b.write_bytes_per_s * 8)
    switched = {}

    def slow_down_after_192_mib(rows: int, run_dir: Path) -> None:
        if not switched and rows and (done := _chunk_bytes_so_far(run_dir)) >= 192 * MiB:
            device_b.set_rate_bits_per_s(fast // 2)
            switched["bytes"] = done
    summary, _ = stibium_run(tmp_path, device_b, SUSTAINED_PLAN.format(bytes="448MiB"),
                             on_row=slow_down_after_192_mib)
    e = entry(summary, "long", "write")
    print(f"TRUTH sustained: {e['headline']}")
    assert len(e["stretches"]) == 2, e["headline"]
    # the switch came while the chunk after the one that showed it was being written
    true_cliff = switched["bytes"]
    assert abs(report("recipe B sustained cliff (bytes)", true_cliff, e["cliff_bytes"])) <= 0.10
    # the truth is known to within the chunk after the switch (the stack's megabytes in flight): the
    # interval meets that range
    assert e["cliff_bytes"]["low"] <= true_cliff + 8 * MiB and true_cliff <= e["cliff_bytes"]["high"]
    before, after = (s["rate_bytes_per_s"] for s in e["stretches"])
    assert abs(report("recipe B sustained rate before the cliff (B/s)", fast / 8, before)) <= 0.03
    assert abs(report("recipe B sustained rate after the cliff (B/s)", fast / 16, after)) <= 0.03


def test_a_steady_sustained_write_has_no_cliff(tmp_path, device_b):
    summary, _ = stibium_run(tmp_path, device_b, SUSTAINED_PLAN.format(bytes="256MiB"))
    e = entry(summary, "long", "write")
    print(f"TRUTH sustained steady: {e['headline']}")
    assert e["cliff_bytes"] is None and len(e["stretches"]) == 1, e["headline"]
    assert abs(report("recipe B sustained steady rate (B/s)", device_b.write_bytes_per_s,
                      e["stretches"][0]["rate_bytes_per_s"])) <= 0.03
