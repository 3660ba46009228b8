"""A stream test's analysis (kinds/stream/analysis.py) on frames made by hand: each count counted against the
deadline schedule to the nanosecond, the buffer's edge, the most streams per trial, a stream's last attempt, the
groups cut, the sequential promise, the many clients' hosts, and the search's one group at a time. No helper runs:
every frame's start and end is set here, so every number below follows from the docstring's model by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stibium_py.kinds.stream import formats
from stibium_py.kinds.stream.analysis import (DISTRIBUTION_POINTS, _frames, _spread, _Stream, clients_of,
                                              frames_by_stream, group_dropped, lateness_s, next_count,
                                              results_of_run, stream_result)
from stibium_py.kinds.stream.expand import FRAME_ALIGN_BYTES
from stibium_py.kinds.stream.model import MAX_STREAMS
from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.table import Table

FRAME = 65536
PERIOD_NS = 40_000_000          # 25 fps


def _stream(streams: int, trial: int, stream: int, took_s, frames: int = 10, *, rank=None, host=None,
            started_s=0.0, fps: float = 25.0, frame: int = FRAME, chunks=None, op: str = "read",
            kind: str = "stream", test: str = "clips", offset_ns: int = 0, size=None) -> list[Measurement]:
    """One stream's frames as the helper's schedule gives them: frame k issued at k / fps or when the one before
    ended, whichever is later, each taking took_s (a number, or a function of k)."""
    rows, end = [], offset_ns
    for k in (range(frames) if chunks is None else chunks):
        took = took_s(k) if callable(took_s) else took_s
        start = max(offset_ns + k * round(1e9 / fps), end)
        end = start + round(took * 1e9)
        rows.append(Measurement(
            seq=stream, test=test, op=op, kind=kind, access="sequential",
            size_bytes=frames * frame if size is None else size,
            granularity_bytes=frame, stride_bytes=0, trial=trial, file=f"clips/{streams}x-t{trial}-s{stream}.mov",
            bytes=frame, seconds=took, started_s=started_s, engine="direct", requests=1, chunk=k, start_ns=start,
            end_ns=end, fps=fps, streams=streams, stream=stream, buffer_frames=2, rank=rank, host=host))
    return rows


def _group(streams: int, trial: int, took_s=0.010, slow: dict[int, float] | None = None, **kw) -> list:
    """Every stream of a count's trial, each frame 10 ms, but the streams in `slow` (stream -> seconds)."""
    return [m for s in range(streams) for m in _stream(streams, trial, s, (slow or {}).get(s, took_s), **kw)]


def _three_counts() -> Table:
    """Counts 1, 2 and 3, trials 0 and 1, every frame 10 ms but the second stream of 2 streams in trial 1: 60 ms a
    frame, so frame k ends at 60 (k + 1) ms, 20 (k + 1) ms after its frame time 40 (k + 1) ms. The buffer holds
    2 frames (80 ms): frames 0-3 are late (frame 3 exactly at the buffer's edge), frames 4-9 dropped."""
    return Table.from_rows([*_group(1, 0), *_group(1, 1), *_group(2, 0), *_group(2, 1, slow={1: 0.060}),
                            *_group(3, 0), *_group(3, 1)])


def test_each_frame_is_counted_against_its_deadline_and_a_frame_at_the_buffer_s_edge_is_late_not_dropped():
    result = stream_result("clips", "read", _three_counts())
    assert result is not None
    one, two, three = result.points
    assert [(p.streams, p.trials, p.frames, p.on_time, p.late, p.dropped) for p in result.points] == [
        (1, 2, 20, 20, 0, 0), (2, 2, 40, 30, 4, 6), (3, 2, 60, 60, 0, 0)]
    assert [p.dropped_by_trial for p in result.points] == [[0, 0], [0, 6], [0, 0]]
    assert one.dropped_by_client == {0: 0} and two.dropped_by_client == {0: 6} and two.stragglers == []
    # a frame's I/O time: 30 frames of 10 ms and 10 of 60 ms
    assert two.frame_s == {"p50": 0.010, "p99": 0.060, "p999": 0.060, "max": 0.060}
    assert one.frame_s == {"p50": 0.010, "p99": 0.010, "p999": 0.010, "max": 0.010}
    assert one.frames_sorted_s == [0.010] * 20 and two.frames_sorted_s == [0.010] * 30 + [0.060] * 10
    # the latest frame: 30 ms early for every clean count, 200 ms after its time for the slow stream's last frame
    assert one.latest_s == pytest.approx(-0.030, abs=1e-12) and two.latest_s == pytest.approx(0.200, abs=1e-12)
    # the page's trace is the slow stream's: its frames' starts, lateness and drops
    assert two.trace_s == pytest.approx([0.0, 0.06, 0.12, 0.18, 0.24, 0.30, 0.36, 0.42, 0.48, 0.54])
    assert two.trace_late_s == pytest.approx([0.02 * (k + 1) for k in range(10)])
    assert two.trace_dropped == [False] * 4 + [True] * 6
    assert one.trace_s == pytest.approx([0.04 * k for k in range(10)]) and one.trace_dropped == [False] * 10
    assert three.dropped_share == 0.0 and two.dropped_share == 6 / 40
    assert result.n == 120 and result.left_out == 0 and result.cut == [] and result.clients == 1
    assert (result.frame_bytes, result.fps, result.buffer_frames, result.hosts) == (FRAME, 25.0, 2, {})
    assert result.format_title == formats.named(FRAME, 25.0, FRAME_ALIGN_BYTES)
    assert result.action == "playback" and result.name == "clips" and result.op == "read"


def test_the_most_streams_of_a_trial_end_at_its_first_count_that_dropped_and_a_larger_clean_one_goes_the_wrong_way():
    result = stream_result("clips", "read", _three_counts())
    assert result.most_by_trial == [3, 1] and result.most == 1
    assert result.wrong_way == [(1, 2, 3)]
    # no drop at all: the largest count in every trial
    clean = stream_result("clips", "read", Table.from_rows([*_group(1, 0), *_group(2, 0), *_group(1, 1),
                                                             *_group(2, 1)]))
    assert clean.most_by_trial == [2, 2] and clean.most == 2 and clean.wrong_way == [] and clean.burst is None
    # even the fewest dropped: 0
    slow = stream_result("clips", "read", Table.from_rows(_group(1, 0, took_s=0.060)))
    assert slow.most_by_trial == [0] and slow.most == 0 and slow.points[0].dropped == 6


def test_a_trial_in_which_the_fewest_streams_did_not_run_whole_gives_no_most_of_its_own():
    # trial 1 of 1 stream was cut (its last frame never came); its 2 streams ran whole
    rows = Table.from_rows([*_group(1, 0), *_group(2, 0), *_stream(1, 1, 0, 0.010, chunks=range(9)),
                            *_group(2, 1)])
    result = stream_result("clips", "read", rows)
    assert result.most_by_trial == [2] and result.cut == [(1, 1)]
    assert [(p.streams, p.trials) for p in result.points] == [(1, 1), (2, 2)]
    assert result.left_out == 9 and result.n == 10 + 40


def test_a_sequential_rate_is_one_stream_alone_and_promises_its_share_of_streams():
    result = stream_result("clips", "read", _three_counts())
    # one stream's frames: 65,536 B in 10 ms, 6,553,600 B/s; a stream needs 65,536 x 25 = 1,638,400 B/s
    assert result.sequential_bytes_per_s == 6_553_600.0 and result.stream_bytes_per_s == 1_638_400.0
    assert result.promised == 4
    # the median of the lone stream's frames, both trials together: 10 ms and 20 ms frames alike, then one of 40 ms
    rows = Table.from_rows([*_stream(1, 0, 0, lambda k: 0.010 if k < 5 else 0.020),
                            *_stream(1, 1, 0, lambda k: 0.020 if k < 6 else 0.040 if k == 9 else 0.010)])
    assert stream_result("clips", "read", rows).sequential_bytes_per_s == FRAME / 0.020
    # a frame that took no time is no rate; a search whose fewest count was 2 ran no stream alone
    zero = Table.from_rows([*_stream(1, 0, 0, lambda k: 0.0 if k == 3 else 0.010)])
    assert stream_result("clips", "read", zero).sequential_bytes_per_s is None
    assert stream_result("clips", "read", zero).promised is None
    assert stream_result("clips", "read", Table.from_rows(_group(2, 0))).sequential_bytes_per_s is None


def test_a_stream_s_last_attempt_counts_and_the_cut_one_before_it_is_left_out():
    # the first attempt (begun at 0 s) stopped after 6 frames; the run resumed and did the stream again at 100 s
    rows = Table.from_rows([*_stream(1, 0, 0, 0.060, chunks=range(6)), *_stream(1, 0, 0, 0.010, started_s=100.0)])
    result = stream_result("clips", "read", rows)
    (point,) = result.points
    assert (point.frames, point.dropped, result.left_out, result.n) == (10, 0, 6, 10)
    # rows with no start time: the stream's frames as they are
    found = frames_by_stream(Table.from_rows(_stream(1, 0, 0, 0.010, started_s=None)))
    assert list(found) == [(1, 0, 0, 0)] and len(found[(1, 0, 0, 0)].end_ns) == 10


def test_a_stream_is_whole_only_with_each_of_its_frames_once():
    whole = _stream(1, 0, 0, 0.010)
    assert list(frames_by_stream(Table.from_rows(whole))) == [(1, 0, 0, 0)]
    doubled = whole[:9] + [whole[8]]                      # frame 8 twice, frame 9 never
    assert frames_by_stream(Table.from_rows(doubled)) == {}
    extra = whole + [whole[9]._replace(chunk=10)]         # eleven frames of a ten-frame stream
    assert frames_by_stream(Table.from_rows(extra)) == {}
    no_frame = [m._replace(granularity_bytes=0) for m in whole]
    assert frames_by_stream(Table.from_rows(no_frame)) == {}
    one_of_nothing = _stream(1, 0, 0, 0.010, frames=1)[0]._replace(granularity_bytes=0, size_bytes=0)
    assert frames_by_stream(Table.from_rows([one_of_nothing])) == {}      # a frame of no bytes is never whole
    # frames in any order are put in their order
    found = frames_by_stream(Table.from_rows(whole[::-1]))[(1, 0, 0, 0)]
    assert list(found.start_ns) == sorted(found.start_ns) and found.start_ns[0] == 0
    assert list(found.seconds) == [0.010] * 10


def test_no_group_run_whole_is_no_result_even_where_one_of_its_streams_ran_to_its_end():
    rows = Table.from_rows(_group(2, 0)[:-1])           # stream 1 of 2 lost its last frame
    assert stream_result("clips", "read", rows) is None
    assert results_of_run(rows) == {("clips", "read"): None}
    assert stream_result("clips", "read", Table.empty()) is None


def test_many_clients_name_their_hosts_and_a_group_waits_for_every_client():
    rows = Table.from_rows([*_group(2, 0, rank=0, host="bay-1"), *_group(2, 0, rank=1, host="bay-2"),
                            *_group(1, 0, rank=0, host="bay-1")])             # 1 stream: client 1 never ran it
    result = stream_result("clips", "read", rows)
    assert result.clients == 2 and result.hosts == {0: "bay-1", 1: "bay-2"}
    assert [(p.streams, p.frames) for p in result.points] == [(2, 40)] and result.cut == [(1, 0)]
    assert result.sequential_bytes_per_s is None        # no stream ran alone on the store
    assert clients_of(rows) == [0, 1] and clients_of(Table.from_rows(_group(1, 0))) == [0]


def test_the_smallest_count_that_dropped_shows_the_drive_s_rate_after_its_burst():
    """1 stream keeps up; 2 streams run on a burst for 1 s (frames of 10 ms), then 50 ms a frame each (two
    streams' 65,536 B every 50 ms: 2.62 MB/s together); 3 streams fall behind from their first frames."""
    def burst(k: int) -> float:
        return 0.010 if k < 25 else 0.050
    rows = Table.from_rows([*_stream(1, 0, 0, 0.010, frames=50),
                            *[m for s in range(2) for m in _stream(2, 0, s, burst, frames=50)],
                            *[m for s in range(3) for m in _stream(3, 0, s, 0.050, frames=50)]])
    result = stream_result("clips", "read", rows)
    assert result.burst is not None and result.burst.streams == 2
    assert result.burst.served_s == pytest.approx(1.0, abs=0.06)
    assert result.burst.sustained_bytes_per_s == pytest.approx(2 * FRAME / 0.050, rel=0.03)
    assert result.carried_by_burst == [] and result.to_json()["burst"] == result.burst.to_json()
    # 1 stream (1.64 MB/s) clean: more than 1.05 x a drive sustaining 1.31 MB/s needs, so the burst carried it
    slower = rows.take(np.flatnonzero(rows.col("streams") != 3))
    fast = stream_result("clips", "read", Table.from_rows(
        [*_stream(1, 0, 0, 0.010, frames=50), *[m for s in range(2) for m in _stream(2, 0, s, lambda k: 0.010 if
                                                                                    k < 25 else 0.100, frames=50)]]))
    assert stream_result("clips", "read", slower).burst.streams == 2
    assert fast.burst.sustained_bytes_per_s == pytest.approx(2 * FRAME / 0.100, rel=0.03)
    assert fast.carried_by_burst == [1]


def test_the_result_s_json_holds_each_figure_the_page_and_compare_read():
    result = stream_result("clips", "read", _three_counts())
    said = result.to_json()
    assert {k: said[k] for k in ("name", "op", "kind", "n", "rate_bytes_per_s", "latency_s", "outliers",
                                 "cache_suspects", "fast_outliers", "drift")} == {
        "name": "clips", "op": "read", "kind": "stream", "n": 120, "rate_bytes_per_s": None, "latency_s": None,
        "outliers": [], "cache_suspects": [], "fast_outliers": [], "drift": {"detected": False}}
    assert {k: said[k] for k in ("frame_bytes", "fps", "buffer_frames", "format", "stream_bytes_per_s",
                                 "most_streams", "most_streams_by_trial", "clients", "sequential_bytes_per_s",
                                 "promised_streams", "burst", "carried_by_burst", "wrong_way")} == {
        "frame_bytes": FRAME, "fps": 25.0, "buffer_frames": 2, "format": result.format_title,
        "stream_bytes_per_s": 1_638_400.0, "most_streams": 1, "most_streams_by_trial": [3, 1], "clients": 1,
        "sequential_bytes_per_s": 6_553_600.0, "promised_streams": 4, "burst": None, "carried_by_burst": [],
        "wrong_way": [{"trial": 1, "dropped": 2, "clean": 3}]}
    two = said["points"][1]
    assert two == {"streams": 2, "trials": 2, "frames": 40, "on_time": 30, "late": 4, "dropped": 6,
                   "dropped_by_trial": [0, 6], "frame_s": result.points[1].frame_s,
                   "latest_s": result.points[1].latest_s, "dropped_by_client": {"0": 6}, "stragglers": []}
    assert len(said["points"]) == 3 and said["points"][0]["streams"] == 1


def test_a_capture_is_the_write_of_a_stream_test():
    rows = Table.from_rows(_group(1, 0, op="write"))
    assert stream_result("clips", "write", rows).action == "capture"


def test_only_rows_that_are_frames_of_a_count_a_plan_can_ask_for_are_counted():
    good = _stream(2, 0, 1, 0.010)[0]
    cases = [good, good._replace(streams=0, stream=0), good._replace(streams=MAX_STREAMS + 1),
             good._replace(stream=2), good._replace(stream=-1), good._replace(chunk=None), good._replace(fps=None),
             good._replace(buffer_frames=None), good._replace(start_ns=None), good._replace(end_ns=None),
             good._replace(streams=MAX_STREAMS, stream=MAX_STREAMS - 1), good._replace(streams=1, stream=0)]
    assert list(_frames(Table.from_rows(cases))) == [True, False, False, False, False, False, False, False,
                                                     False, False, True, True]


def test_a_frame_s_lateness_is_its_end_after_its_frame_time():
    stream = _Stream(np.array([5_000_000, 45_000_000, 100_000_000]), np.array([30_000_000, 85_000_000, 160_000_000]),
                     np.array([0.025, 0.040, 0.060]))
    # frame times 5 + 40 (k + 1) ms: 45, 85, 125
    assert list(lateness_s(stream, 25.0)) == pytest.approx([-0.015, 0.0, 0.035])
    assert list(lateness_s(stream, 50.0)) == pytest.approx([0.005, 0.040, 0.095])


def test_a_long_stream_s_frame_times_are_kept_as_evenly_spaced_quantiles():
    assert _spread(np.array([3.0, 1.0, 2.0])) == [1.0, 2.0, 3.0]
    exact = np.arange(DISTRIBUTION_POINTS, dtype=float)[::-1]
    assert _spread(exact) == list(np.arange(DISTRIBUTION_POINTS, dtype=float))
    long = _spread(np.arange(4 * DISTRIBUTION_POINTS + 1, dtype=float))
    assert len(long) == DISTRIBUTION_POINTS and long[0] == 0.0 and long[-1] == 4 * DISTRIBUTION_POINTS
    assert long[1] == pytest.approx(4 * DISTRIBUTION_POINTS / (DISTRIBUTION_POINTS - 1))


def test_a_search_asks_each_group_for_its_drops_and_none_until_every_client_s_streams_ran_whole():
    rows = _three_counts()
    assert [group_dropped(rows, n, t, [0]) for n in (1, 2, 3) for t in (0, 1)] == [0, 0, 0, 6, 0, 0]
    assert group_dropped(rows, 4, 0, [0]) is None and group_dropped(rows, 2, 2, [0]) is None
    assert group_dropped(rows, 2, 1, [0, 1]) is None            # client 1's streams never ran
    cut = Table.from_rows(_group(2, 0)[:-1])
    assert group_dropped(cut, 2, 0, [0]) is None
    # a frame at 0 fps is no frame of a schedule
    assert group_dropped(Table.from_rows([m._replace(fps=0.0) for m in _group(1, 0)]), 1, 0, [0]) is None


@pytest.mark.parametrize("tried, most, asked", [
    ({}, 32, 1), ({1: False}, 32, 2), ({1: False, 2: False}, 32, 4), ({1: False, 2: False, 4: False}, 5, 5),
    ({1: False, 2: False, 4: False, 5: False}, 5, None), ({1: True}, 32, None), ({1: False, 2: True}, 32, None),
    ({1: False, 2: False, 4: True}, 32, 3), ({1: False, 8: False, 16: True}, 32, 12),
    ({1: False, 8: False, 12: True}, 32, 10), ({1: False, 8: False, 10: True}, 32, 9),
    ({1: False, 8: False, 9: True}, 32, None), ({2: True}, 32, 1), ({3: True}, 32, 1),
    ({1: False, 16: False}, 20, 20), ({1: False, 16: False}, 17, 17), ({1: False, 2: False}, 3, 3),
    ({1: False, 2: False, 4: True}, 4, 3), ({1: False, 8: False, 11: True}, 32, 9)])
def test_the_search_s_next_count_from_what_it_tried(tried, most, asked):
    got = next_count(tried, most)
    assert got == asked and type(got) is type(asked)


def test_a_run_s_stream_results_are_its_stream_tests_each_op_apart():
    rows = Table.from_rows([*_group(1, 0), *_group(1, 0, op="write"), *_group(1, 0, test="other"),
                            *_group(1, 0, kind="pattern", test="seq")])
    found = results_of_run(rows)
    assert sorted(found) == [("clips", "read"), ("clips", "write"), ("other", "read")]
    assert all(r is not None and r.n == 10 for r in found.values())
    assert found[("clips", "write")].op == "write" and found[("other", "read")].name == "other"
    # a frame that failed is no measurement of the run
    failed = Table.from_rows([m._replace(error="EIO") if m.chunk == 4 else m for m in _group(1, 0)])
    assert results_of_run(failed) == {("clips", "read"): None}


def test_a_playback_s_waits_for_a_quiet_drive_are_kept_with_its_result():
    own = Measurement(seq=0, test="clips", op="read", kind="stream", access="sequential", size_bytes=10 * FRAME,
                      granularity_bytes=FRAME, stride_bytes=0, trial=0, file="f", bytes=10 * FRAME, seconds=0.5,
                      fps=25.0, streams=1, stream=0, buffer_frames=2, quiet_wait_s=0.75, quiet=True)
    result = stream_result("clips", "read", Table.from_rows([own, *_group(1, 0)]))
    assert result.quiet_waits == [(1, 0, 0.75, True)] and result.n == 10 and result.left_out == 0
    assert len(result.measurements) == 10         # the frames: the stream's own row is no frame
    # a drive quiet at once waited no time; the longest wait of a group is kept, and a bound reached in any
    waits = [own._replace(quiet_wait_s=0.0), own._replace(trial=1, quiet_wait_s=1.5, quiet=False),
             own._replace(trial=1, stream=0, quiet_wait_s=0.4, quiet=True)]
    got = stream_result("clips", "read", Table.from_rows([*waits, *_group(1, 0), *_group(1, 1)]))
    assert got.quiet_waits == [(1, 0, 0.0, True), (1, 1, 1.5, False)]
    assert math.isclose(result.points[0].frame_s["max"], 0.010)


def test_a_frame_done_exactly_at_its_frame_time_is_on_time():
    # 40 ms frames at 25 fps: frame k ends at 40 (k + 1) ms, its frame time
    (point,) = stream_result("clips", "read", Table.from_rows(_stream(1, 0, 0, 0.040))).points
    assert (point.on_time, point.late, point.dropped, point.latest_s) == (10, 0, 0, 0.0)


def test_a_stream_s_trace_is_timed_from_its_own_first_frame():
    rows = Table.from_rows(_stream(1, 0, 0, 0.010, offset_ns=3_000_000_000))
    (point,) = stream_result("clips", "read", rows).points
    assert point.trace_s == pytest.approx([0.04 * k for k in range(10)], abs=1e-12)


def _tied(trial: int, rank=None, offset_ns: int = 0) -> list:
    """Frame 9 takes 300 ms (done 260 ms after its time: the one drop); in trial 1 frame 0 also takes 50 ms (late
    within the buffer), so its stream's frames start later: the same drops, the same latest frame, another trace."""
    def took(k: int) -> float:
        return 0.300 if k == 9 else 0.050 if k == 0 and trial == 1 else 0.010
    return _stream(1, trial, 0, took, rank=rank, offset_ns=offset_ns)


def test_the_trace_is_the_stream_with_the_most_drops_then_the_latest_frame_then_the_first_trial():
    result = stream_result("clips", "read", Table.from_rows([*_tied(0), *_tied(1)]))
    (point,) = result.points
    assert point.dropped_by_trial == [1, 1] and point.latest_s == pytest.approx(0.260)
    assert point.trace_s[:2] == pytest.approx([0.0, 0.040]) and point.trace_dropped == [False] * 9 + [True]
    flipped = stream_result("clips", "read", Table.from_rows([*_tied(1), *_tied(0)]))
    assert flipped.points[0].trace_s[:2] == pytest.approx([0.0, 0.040])
    # of two clients, the first trial's stream though another client's comes first in the rows
    clients = [m._replace(rank=r) for r, trial in ((0, 1), (1, 0)) for m in _tied(trial)] + \
        [m._replace(rank=r) for r, trial in ((0, 0), (1, 1)) for m in _stream(1, trial, 0, 0.010)]
    two = stream_result("clips", "read", Table.from_rows(clients))
    assert two.clients == 2 and two.points[0].dropped_by_client == {0: 1, 1: 1}
    assert two.points[0].trace_s[:2] == pytest.approx([0.0, 0.040])


def test_a_straggler_is_named_among_two_clients_and_none_among_clients_that_all_dropped():
    rows = Table.from_rows([*_group(1, 0, rank=0, host="a"), *_group(1, 0, rank=1, host="b", took_s=0.060)])
    (point,) = stream_result("clips", "read", rows).points
    assert point.dropped_by_client == {0: 0, 1: 6} and point.stragglers == [1]
    both = Table.from_rows([*_group(1, 0, rank=0, took_s=0.060), *_group(1, 0, rank=1, took_s=0.060)])
    assert stream_result("clips", "read", both).points[0].stragglers == []


def test_one_stream_on_each_of_two_clients_promises_nothing_of_a_sequential_rate():
    rows = Table.from_rows([*_group(1, 0, rank=0), *_group(1, 0, rank=1), *_group(2, 0, rank=0),
                            *_group(2, 0, rank=1)])
    result = stream_result("clips", "read", rows)
    assert [p.streams for p in result.points] == [1, 2] and result.sequential_bytes_per_s is None


def test_a_host_is_kept_only_for_a_client_with_a_rank():
    assert stream_result("clips", "read", Table.from_rows(_group(1, 0, host="h"))).hosts == {}
    assert stream_result("clips", "read", Table.from_rows(_group(1, 0, rank=0, host=""))).hosts == {}
    assert stream_result("clips", "read", Table.from_rows(_group(1, 0, rank=3, host="h"))).hosts == {3: "h"}


def test_a_stream_of_one_frame_a_frame_of_one_byte_and_a_size_past_whole_frames_are_read_as_they_are():
    (point,) = stream_result("clips", "read", Table.from_rows(_stream(1, 0, 0, 0.010, frames=1))).points
    assert (point.frames, point.on_time) == (1, 1)
    assert group_dropped(Table.from_rows(_stream(1, 0, 0, 0.010, frames=1)), 1, 0, [0]) == 0
    one_byte = stream_result("clips", "read", Table.from_rows(_stream(1, 0, 0, 0.010, frame=1)))
    assert one_byte.frame_bytes == 1 and one_byte.n == 10
    # a file of 10.5 frames: its 10 whole frames are the stream
    ragged = stream_result("clips", "read", Table.from_rows(_stream(1, 0, 0, 0.010, size=10 * FRAME + FRAME // 2)))
    assert ragged.n == 10


def test_frames_at_one_a_second_count_and_frames_at_no_rate_are_left_out():
    slow = Table.from_rows(_stream(1, 0, 0, 0.010, fps=1.0))
    assert stream_result("clips", "read", slow).fps == 1.0 and group_dropped(slow, 1, 0, [0]) == 0
    none = [m._replace(fps=0.0) for m in _group(2, 0)]
    result = stream_result("clips", "read", Table.from_rows([*_group(1, 0), *none]))
    assert [p.streams for p in result.points] == [1] and len(result.measurements) == 10


def test_a_count_a_trial_did_not_run_is_passed_over_and_a_trial_whose_fewest_was_cut_gives_no_most():
    # trial 0: 1 stream cut; trial 1: counts 1 and 3 (2 cut there), each clean
    rows = Table.from_rows([*_stream(1, 0, 0, 0.010, chunks=range(9)), *_group(2, 0), *_group(3, 0),
                            *_group(1, 1), *_group(2, 1)[:-1], *_group(3, 1)])
    result = stream_result("clips", "read", rows)
    assert result.most_by_trial == [3] and result.cut == [(1, 0), (2, 1)]


def test_a_format_of_the_table_is_named_from_the_frame_and_rate_of_the_rows():
    fmt = next(iter(formats.FORMATS.values()))
    frame = -(-fmt.frame_bytes // FRAME_ALIGN_BYTES) * FRAME_ALIGN_BYTES
    rows = Table.from_rows(_stream(1, 0, 0, 0.001, frames=3, frame=frame, fps=float(fmt.fps)))
    title = stream_result("clips", "read", rows).format_title
    assert title and title == formats.named(frame, float(fmt.fps), FRAME_ALIGN_BYTES)


def test_a_frame_of_no_time_warns_of_nothing():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zero = Table.from_rows([*_stream(1, 0, 0, lambda k: 0.0 if k == 3 else 0.010)])
        assert stream_result("clips", "read", zero).sequential_bytes_per_s is None


def test_the_summary_s_pending_result_is_the_stream_result_or_nothing():
    from stibium_py.analysis.settings import SUMMARY
    from stibium_py.analysis.summary import SummaryContext
    from stibium_py.kinds.stream.analysis import summarise
    ctx = SummaryContext(SUMMARY, None, {}, None, {})
    (got,) = summarise("clips", "read", _three_counts(), ctx)()
    assert got == stream_result("clips", "read", _three_counts())
    assert got.name == "clips" and got.op == "read"
    assert summarise("clips", "read", Table.from_rows(_group(2, 0)[:-1]), ctx)() == []


def test_a_stream_op_of_no_whole_group_is_said_where_the_summary_lists_its_warnings():
    from stibium_py.analysis.summary import summarize
    rows = Table.from_rows([*_group(1, 0, op="write"), *_group(2, 0)[:-1]])     # the playback's last frame cut
    summary = summarize(rows)
    assert [(r.name, r.op) for r in summary.tests] == [("clips", "write")]
    said = [(n.level, n.test, n.message, n.what_to_do) for n in summary.warnings if n.test == "clips (read)"]
    assert said == [("warning", "clips (read)", "19 measurements of it, but no part of it ran whole, so the report "
                     "has nothing of it", "resume the run if it was cut, or run the test again")]
    assert not [n for n in summarize(Table.from_rows(_group(1, 0))).warnings if "no part of it" in n.message]
