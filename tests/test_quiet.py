"""The wait for a quiet drive before a playback (run/quiet.py): quiet after QUIET_SAMPLES samples with nothing in
flight and no sector written, bounded, and nothing asked where the counters cannot be read or the person asks
for no wait; the disk's counters as /sys/block gives them."""

from __future__ import annotations

import pytest

from stibium_py.run.quiet import Counters, QUIET_SAMPLES, SAMPLE_S, max_wait_s, read_counters, wait_quiet


class _Ticks:
    """A clock that starts at `start` and moves `step` seconds a sleep, whatever the sleep asks."""

    def __init__(self, start: float = 100.0, step: float = 0.25) -> None:
        self.now, self.step = start, step       # 100 s and a quarter of a second: exact in binary

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += self.step


def _wait(samples, bound_s=10.0):
    clock, it = _Ticks(0.0, SAMPLE_S), iter(samples)
    return wait_quiet(lambda: next(it), bound_s, clock.sleep, clock)


def test_a_drive_still_writing_is_waited_for_until_it_is_quiet():
    draining = [Counters(3, 100 + 8 * k) for k in range(10)]          # half a second of writes in flight
    quiet = [Counters(0, 180)] * QUIET_SAMPLES
    waited = _wait(draining + quiet)
    assert waited is not None and waited.quiet
    assert waited.seconds == pytest.approx((len(draining) + QUIET_SAMPLES - 1) * SAMPLE_S)


def test_an_idle_drive_is_quiet_in_its_first_samples():
    waited = _wait([Counters(0, 5)] * QUIET_SAMPLES)
    assert waited is not None and waited.quiet and waited.seconds == pytest.approx((QUIET_SAMPLES - 1) * SAMPLE_S)


def test_sectors_written_with_nothing_in_flight_at_the_samples_are_not_quiet():
    waited = _wait([Counters(0, 8 * k) for k in range(400)], bound_s=2.0)
    assert waited is not None and not waited.quiet and waited.seconds >= 2.0


def test_no_wait_where_the_counters_cannot_be_read_or_none_is_asked(tmp_path, monkeypatch):
    assert _wait([None]) is None
    assert _wait([Counters(0, 0)] * QUIET_SAMPLES, bound_s=0) is None
    assert read_counters(tmp_path) is None                              # no inflight, no stat
    (tmp_path / "inflight").write_text("       2        1\n")
    (tmp_path / "stat").write_text("  10 0 80 5 20 0 160 7 3 12 12 0 0 0 0 0 0\n")
    assert read_counters(tmp_path) == Counters(3, 160)
    for value, bound in (("2.5", 2.5), ("0", 0.0), ("-1", 10.0), ("soon", 10.0)):
        monkeypatch.setenv("STIBIUM_QUIET_WAIT_S", value)
        assert max_wait_s() == bound


def test_the_bound_is_ten_seconds_unless_the_person_says_otherwise(monkeypatch):
    monkeypatch.delenv("STIBIUM_QUIET_WAIT_S", raising=False)
    assert max_wait_s() == 10.0




def test_the_wait_is_timed_from_its_first_sample_and_ends_at_its_bound():
    ticks = _Ticks()
    busy = iter([Counters(1, k) for k in range(100)])
    waited = wait_quiet(lambda: next(busy), 1.0, ticks.sleep, ticks)
    assert waited is not None and waited.quiet is False and waited.seconds == 1.0      # not 1.25: the bound ends it
    ticks = _Ticks()
    idle = iter([Counters(0, 7)] * QUIET_SAMPLES)
    waited = wait_quiet(lambda: next(idle), 0.8, ticks.sleep, ticks)                    # a bound under a second
    assert waited is not None and waited.quiet is True and waited.seconds == (QUIET_SAMPLES - 1) * 0.25
