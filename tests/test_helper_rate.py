"""The helper's requests at a stated rate (--rate, --arrivals; helper/sb_parallel.c): every request issued at its
due time however many are in flight, its response time (completion less due time) kept beside its service time
(completion less issue), and the requests issued late counted. Facts a run cannot fake: how many requests a
duration holds at a rate, the order of response and service time, a slot's wait showing in the response time and
the lateness, the same seed giving the same Poisson schedule, and the refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_helper


def _file(helper, path: Path) -> None:
    rc, _, _ = run_helper(helper, "write", "--path", str(path), "--bytes", "4MiB", "--granularity", "1MiB",
                          "--engine", "buffered")
    assert rc == 0


def _at_rate(helper, path: Path, *extra: str) -> dict:
    rc, out, err = run_helper(helper, "read", "--path", str(path), "--bytes", "4MiB", "--granularity", "4KiB",
                              "--access", "random", "--engine", "buffered", *extra)
    assert rc == 0, (out, err)
    return out


def test_a_constant_rate_issues_every_due_request_of_its_duration_and_no_more(helper, disk_dir):
    _file(helper, disk_dir / "f")
    out = _at_rate(helper, disk_dir / "f", "--rate", "500", "--duration", "1", "--queue-depth", "4")
    # due times 0, 2 ms, ... 998 ms: 500 in the second; each completes long before the next is due
    assert out["requests"] == 500 and out["rate_per_s"] == 500 and out["arrivals"] == "constant"
    assert out["io_method"] == "threads" and out["unscheduled"] == 0
    assert out["seconds"] == pytest.approx(0.998, abs=0.05)
    # the response time runs from the due time, the service time from the issue, which is no earlier
    assert out["resp_p50_s"] >= out["lat_p50_s"] and out["resp_max_s"] >= out["lat_max_s"] * 0.99
    assert sum(int(b.split(":")[1]) for b in out["resp_hist_ns"].split()) == 500


def test_a_measurement_of_its_bytes_issues_each_request_once_at_the_rate(helper, disk_dir):
    _file(helper, disk_dir / "f")
    out = _at_rate(helper, disk_dir / "f", "--rate", "2000", "--threads", "2")
    # 1,024 requests of 4 KiB at 2,000 a second over two threads (1,000 each): about 0.51 s
    assert out["requests"] == 1024 and out["bytes"] == 4 << 20
    assert out["seconds"] == pytest.approx(1024 / 2000, abs=0.05)


def test_a_request_that_finds_every_slot_busy_waits_and_its_response_time_says_so(helper, disk_dir):
    """One slot, requests due every 100 us, each taking longer than that (a 256 KiB read from the cache takes tens
    of microseconds; 1 MiB more): the requests fall behind their due times, and the response time grows past the
    service time, as a closed loop would never show."""
    _file(helper, disk_dir / "f")
    rc, out, err = run_helper(helper, "read", "--path", str(disk_dir / "f"), "--bytes", "4MiB", "--granularity",
                              "1MiB", "--engine", "buffered", "--rate", "100000")
    assert rc == 0, err
    assert out["requests"] == 4 and out["late_issues"] >= 2
    assert out["resp_max_s"] > out["lat_max_s"] and out["issue_late_max_s"] > 100e-6


def test_poisson_arrivals_follow_the_seed(helper, disk_dir):
    _file(helper, disk_dir / "f")
    runs = [_at_rate(helper, disk_dir / "f", "--rate", "2000", "--arrivals", "poisson", "--duration", "0.5",
                     "--seed", str(seed)) for seed in (7, 7, 8)]
    # the schedule is drawn before the timer: one seed, one count of due times inside the half second
    assert runs[0]["requests"] == runs[1]["requests"] != runs[2]["requests"]
    assert all(abs(r["requests"] - 1000) < 5 * 1000 ** 0.5 for r in runs)
    assert runs[0]["arrivals"] == "poisson"


@pytest.mark.parametrize("extra, said", [
    (("--rate", "0"), "--rate must be requests a second above 0, at most ten million, not '0'"),
    (("--rate", "2e7"), "--rate must be requests a second above 0, at most ten million, not '2e7'"),
    (("--rate", "100", "--arrivals", "bursty"), "--arrivals must be constant or poisson, not 'bursty'"),
    (("--rate", "100", "--io-method", "io_uring"), "--rate issues each request at its due time from a thread of its "
                                                    "own: drop --io-method io_uring (or give threads)"),
    (("--rate", "100", "--stonewall", "1"), "--rate does not go with --chunk or --stonewall; give one or the other"),
])
def test_what_a_rate_cannot_be_is_refused(helper, disk_dir, extra, said):
    rc, out, _ = run_helper(helper, "read", "--path", str(disk_dir / "f"), "--bytes", "4MiB", *extra)
    assert rc == 2 and out["error"] == said


def test_the_poisson_schedule_is_the_one_its_seed_draws(helper, disk_dir):
    """tests/helper_schedule.py draws the helper's due times from its seed: as many fall inside the duration as
    the helper issued requests (the truth tests feed a queue those very arrivals)."""
    from helper_schedule import helper_poisson_due_ns
    _file(helper, disk_dir / "f")
    for seed, rate in ((7, 2000.0), (8, 2000.0), (11, 3333.5)):
        out = _at_rate(helper, disk_dir / "f", "--rate", repr(rate), "--arrivals", "poisson", "--duration", "0.5",
                       "--seed", str(seed))
        due = helper_poisson_due_ns(seed, 0, rate, 3000)
        assert out["requests"] == sum(1 for t in due if t < 500_000_000)
