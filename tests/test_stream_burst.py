"""What a stream group that fell behind shows of the drive (kinds/stream/burst.py): the rate it sustained after a
burst, the counts that ran clean only while a burst lasted, answers that go the wrong way, and the waits for a
quiet drive, each said as a finding with what to do. Frames made by hand with known times."""

from __future__ import annotations

import numpy as np

from stibium_py.kinds.stream.burst import Burst, burst_of, carried_by_burst, wrong_way

MB = 1_000_000


def _group(streams: int, fps: float, burst_s: float, sustained: float, frames: int, frame: int = MB):
    """A group whose frames come at their times for burst_s, then each at the streams' share of `sustained`."""
    start, end, late = [], [], []
    for s in range(streams):
        t = 0.0
        for k in range(frames):
            due = (k + 1) / fps
            t = max(t, k / fps)
            t += frame / (50 * sustained) if t < burst_s else frame * streams / sustained
            start.append((k / fps) * 1e9)
            end.append(t * 1e9)
            late.append(t - due)
    return np.array(start), np.array(end), np.array(late)


def test_a_group_that_fell_behind_after_its_burst_gives_the_rate_after_it():
    # 3 streams of 30 MB/s (90 MB/s) on a drive that sustains 52 MB/s after 2.5 s of burst
    trials = [_group(3, 30, 2.5, 52 * MB, 120) for _ in range(2)]
    found = burst_of(3, trials, MB)
    assert found is not None and found.streams == 3
    assert abs(found.served_s - 2.5) < 0.1
    assert abs(found.sustained_bytes_per_s / (52 * MB) - 1) < 0.03
    # 2 streams of 30 MB/s need 60 MB/s: more than 1.05 x 52; 1 stream (30) does not
    assert carried_by_burst([1, 2], 30 * MB, found) == [2]
    assert carried_by_burst([1, 2], 30 * MB, None) == []


def test_a_group_late_from_its_first_frames_shows_no_burst():
    """A disk whose aggregate falls under more streams (seeks) is late at once: no burst is claimed from it."""
    trials = [_group(3, 30, 0.1, 40 * MB, 60)]
    assert burst_of(3, trials, MB) is None


def test_an_answer_that_goes_the_wrong_way_is_found_per_trial():
    drops = {(1, 0): 12, (2, 0): 0, (3, 0): 40, (1, 1): 0, (2, 1): 0, (3, 1): 38}
    assert wrong_way(drops) == [(0, 1, 2)]
    assert wrong_way({(1, 0): 0, (2, 0): 5, (3, 0): 9}) == []


def test_the_findings_are_said_with_what_to_do():
    from stibium_py.kinds.stream.analysis import StreamPoint, StreamResult
    from stibium_py.kinds.stream.words import add_warnings
    from stibium_py.rundir.table import Table

    def point(n: int, dropped: int) -> StreamPoint:
        return StreamPoint(n, 2, 100 * n, 100 * n - dropped, 0, dropped, [dropped // 2, dropped - dropped // 2],
                           {"p50": 0.01, "p99": 0.02, "p999": 0.02, "max": 0.03}, 0.0)
    result = StreamResult("clips", "read", Table.empty(), MB, 30.0, 2, [point(1, 0), point(2, 0), point(3, 40)],
                          [2, 2], None, "", [], 1, {}, burst=Burst(3, 2.74, 247e6, 53.5e6),
                          wrong_way=[(1, 1, 2)], quiet_waits=[(1, 0, 2.4, True), (2, 1, 10.0, False)])
    said: list[tuple[str, str, str]] = []
    add_warnings(result, lambda level, test, message, todo: said.append((level, message, todo)))
    assert ("warning", "2 streams ran without a drop, but 2 need 60 MB/s, more than the drive sustained once a burst "
            "was spent (3 streams' frames came on time for 2.74 s (247 MB), then all together at about 53.5 MB/s)",
            "a playback longer than the burst lasts may drop at that count: make the test longer (seconds) to "
            "measure past it, and count on 1 stream at the sustained rate") in said
    assert ("warning", "the answer goes the wrong way in trial 2: 2 streams ran without a drop where 1 dropped",
            "the drive was not in the same state for both (a burst refilled between them, a cache, writes still "
            "draining): run more trials or a longer playback before trusting the count") in said
    assert ("warning", "the drive did not go quiet before 1 playback (the first: 2 streams, trial 2, after 10 s): "
            "their frames met a drive still busy, with the layout's writes or another program's",
            "stop what else uses the drive and run again, or give the wait longer (STIBIUM_QUIET_WAIT_S)") in said
    assert ("info", "a playback waited up to 2.4 s for the drive to go quiet after its layout (1 stream, trial 1)",
            "nothing to do: it began once the drive was quiet") in said


def _trial(base_ns: int = 10**12):
    """Seven frames of one stream done at 0.5, 1, 1.5, 2, 3, 4 and 5 s after the first began at base_ns; the
    fourth exactly at its due time (lateness 0, not late), the last three late."""
    ends = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0])
    start = base_ns + (np.arange(7) * 0.5e9).astype(np.int64)
    end = base_ns + (ends * 1e9).astype(np.int64)
    late = np.array([-0.5, -0.5, -0.5, 0.0, 0.5, 1.0, 1.5])
    return start, end, late


def test_one_trial_is_timed_from_its_first_frame_to_its_first_late_one_and_after():
    from stibium_py.kinds.stream.burst import _one_trial
    start, end, late = _trial()
    # on time until 3 s (5 frames), then 2 frames in the 2 s after the first late one
    assert _one_trial(start, end, late, MB) == (3.0, 5.0 * MB, 1.0 * MB)
    # one frame after the first late one: too few to time
    assert _one_trial(start[:6], end[:6], late[:6], MB) is None
    # two frames after it within one second: timed
    end2 = end.copy()
    end2[5], end2[6] = end[4] + 500_000_000, end[4] + 1_000_000_000
    assert _one_trial(start, end2, late, MB) == (3.0, 5.0 * MB, 2.0 * MB)
    assert _one_trial(start, end, np.full(7, -0.1), MB) is None                     # none late
    assert _one_trial(start, end, np.array([-1, -1, -1, 0.0, -1, -1, -1]), MB) is None  # on time to the ns: not late


def test_a_burst_is_kept_from_the_trials_on_time_for_half_a_second_or_more():
    start, end, late = _trial()
    found = burst_of(4, [(start, end, late)], MB)
    assert found == Burst(4, 3.0, 5.0 * MB, 1.0 * MB)
    assert found.to_json() == {"streams": 4, "served_s": 3.0, "served_bytes": 5.0 * MB, "sustained_bytes_per_s": MB}
    # on time for exactly half a second: kept; the medians over trials
    half = (start, start[0] + np.arange(1, 8) * 100_000_000, np.array([-1, -1, -1, -1, 1, 1, 1.0]))
    assert burst_of(2, [half], MB) == Burst(2, 0.5, 5.0 * MB, 2 * MB / ((7e8 - 5e8) / 1e9))
    assert burst_of(2, [(start, end, late), (start, end, late), half], MB).served_s == 3.0


def test_a_count_is_carried_only_past_1_05_times_the_sustained_rate():
    b = Burst(3, 2.0, 1e8, 100.0)
    assert carried_by_burst([1, 2, 3], 52.5, b) == [3]          # 2 x 52.5 = 105.0 is not past 1.05 x 100
    assert carried_by_burst([1, 2, 3], 52.6, b) == [2, 3]


def test_the_wrong_way_is_judged_within_each_trial_alone():
    # trial 0 clean at 2 where 1 dropped; trial 1 clean at 1, dropped at 2: only trial 0 goes the wrong way
    drops = {(1, 0): 3, (2, 0): 0, (1, 1): 0, (2, 1): 4}
    assert wrong_way(drops) == [(0, 1, 2)]
    # the largest clean count above the first that dropped is named
    assert wrong_way({(1, 2): 1, (2, 2): 0, (3, 2): 0, (4, 2): 9}) == [(2, 1, 3)]


def _said(result):
    from stibium_py.kinds.stream.words import add_warnings
    out: list[tuple[str, str, str, str]] = []
    add_warnings(result, lambda level, test, message, todo: out.append((level, test, message, todo)))
    return out


def _result(points, burst=None, waits=(), clients=1, wrong=()):
    from stibium_py.kinds.stream.analysis import StreamResult
    from stibium_py.rundir.table import Table
    return StreamResult("clips", "read", Table.empty(), MB, 30.0, 2, points, [1, 1], None, "", [], clients, {},
                        burst=burst, wrong_way=list(wrong), quiet_waits=list(waits))


def _point(n: int, dropped: int):
    from stibium_py.kinds.stream.analysis import StreamPoint
    return StreamPoint(n, 2, 100 * n, 100 * n - dropped, 0, dropped, [dropped, 0],
                       {"p50": 0.01, "p99": 0.02, "p999": 0.02, "max": 0.03}, 0.0)


def test_a_burst_that_carried_no_count_is_a_note_and_every_finding_names_its_test():
    said = _said(_result([_point(1, 0), _point(2, 50)], burst=Burst(2, 1.5, 9e7, 50e6)))
    assert ("info", "clips (read)", "a burst or a cache served the first frames: 2 streams' frames came on time for "
            "1.5 s (90 MB), then all together at about 50 MB/s",
            "nothing to do: the counts that ran clean need no more than the rate after it") in said


def test_the_sustained_count_and_the_clients_are_said_as_they_are():
    # two clients of 30 MB/s streams: a count of n needs 60 n MB/s; the drive sustained 125 MB/s: 2 counts of it
    said = _said(_result([_point(1, 0), _point(2, 0), _point(3, 0), _point(4, 80)], burst=Burst(4, 1.0, 1e8, 125e6),
                         clients=2))
    warning = next(s for s in said if s[2].startswith("3 streams ran without a drop"))
    assert warning[1] == "clips (read)" and "but 3 need 180 MB/s, more than" in warning[2]
    assert warning[3].endswith("count on 2 streams at the sustained rate")
    said = _said(_result([_point(1, 0), _point(2, 0), _point(3, 0), _point(4, 80)], burst=Burst(4, 1.0, 1e8, 40e6)))
    assert [s[2][:52] for s in said if s[0] == "warning"] == ["2, 3 streams ran without a drop, but 3 need 90 MB/s,"]
    said = _said(_result([_point(1, 0), _point(2, 0), _point(3, 80)], burst=Burst(3, 1.0, 1e8, 40e6)))
    assert [s[3] for s in said if s[2].startswith("2 streams ran")] == [
        "a playback longer than the burst lasts may drop at that count: make the test longer (seconds) to measure "
        "past it, and count on 1 stream at the sustained rate"]


def test_the_waits_are_said_with_their_counts_and_the_longest():
    waits = [(1, 0, 0.5, True), (4, 1, 0.7, True), (2, 0, 3.0, False), (3, 1, 9.0, False)]
    said = _said(_result([_point(1, 0)], waits=waits))
    assert ("warning", "clips (read)", "the drive did not go quiet before 2 playbacks (the first: 2 streams, trial "
            "1, after 3 s): their frames met a drive still busy, with the layout's writes or another program's",
            "stop what else uses the drive and run again, or give the wait longer (STIBIUM_QUIET_WAIT_S)") in said
    assert ("info", "clips (read)", "a playback waited up to 700 ms for the drive to go quiet after its layout "
            "(4 streams, trial 2)", "nothing to do: it began once the drive was quiet") in said
    # the longest wait, whatever its count; a drive not quiet before one playback of 1 stream
    said = _said(_result([_point(1, 0)], waits=[(4, 0, 0.6, True), (1, 1, 2.0, True), (1, 0, 12.0, False)]))
    assert [s[2] for s in said] == [
        "the drive did not go quiet before 1 playback (the first: 1 stream, trial 1, after 12 s): their frames met a "
        "drive still busy, with the layout's writes or another program's",
        "a playback waited up to 2 s for the drive to go quiet after its layout (1 stream, trial 2)"]
    said = _said(_result([_point(1, 0)], waits=[(1, 0, 0.5, True)]))       # half a second: said, for 1 stream
    assert [s[2] for s in said] == ["a playback waited up to 500 ms for the drive to go quiet after its layout "
                                    "(1 stream, trial 1)"]
    assert _said(_result([_point(1, 0)], waits=[(1, 0, 0.49, True)])) == []
    said = _said(_result([_point(1, 0)], wrong=[(0, 1, 2)]))
    assert said[0][:2] == ("warning", "clips (read)")


def test_the_waits_are_read_from_each_stream_s_own_row_and_a_received_wait_that_is_no_time_is_not_one():
    from stibium_py.kinds.stream.analysis import _quiet_waits
    from stibium_py.rundir.measurement import Measurement
    from stibium_py.rundir.table import Table

    def row(streams: int, trial: int, chunk, wait, quiet):
        return Measurement(seq=0, test="clips", op="read", kind="stream", access="sequential", size_bytes=MB,
                           granularity_bytes=MB, stride_bytes=0, trial=trial, file="f", bytes=MB, seconds=0.1,
                           fps=30.0, streams=streams, stream=0, buffer_frames=2, chunk=chunk, quiet_wait_s=wait,
                           quiet=quiet)
    rows = Table.from_rows([row(2, 0, None, 0.4, True), row(2, 0, None, 1.5, True), row(2, 0, 3, 9.0, False),
                            row(1, 1, None, 12.0, False), row(3, 0, None, -1.0, True), row(3, 1, None, None, None)])
    # the longest of a group's own rows; a frame's row (a chunk) and a wait below 0 or none are not read
    assert _quiet_waits(rows) == [(1, 1, 12.0, False), (2, 0, 1.5, True)]
