"""A trace made into the helper's replay script (kinds/replay/script.py): the facts the helper cannot know from a
call alone, each read off a script made from a trace written by hand."""

from __future__ import annotations

import pytest

from stibium_py.kinds.replay.script import CREATES, FOLDER, KINDS, MAX_MOVED_BYTES, ScriptError, script_of
from stibium_py.trace.model import Call, Trace, TraceFile

FILES = (TraceFile(".", True, 0), TraceFile("d", True, 0), TraceFile("d/old", False, 8192),
         TraceFile("d/new", False, None), TraceFile("d/sub", True, None))


def _trace(*calls: Call, files: tuple[TraceFile, ...] = FILES) -> Trace:
    return Trace(files, calls, "strace 6.1", "Linux", "app", 10_000_000)


def _lines(text: str) -> tuple[str, list[str], list[str], list[list[int]]]:
    rows = text.splitlines()
    return (rows[0], [r for r in rows if r.startswith("F ")], [r for r in rows if r.startswith("P ")],
            [list(map(int, r.split()[1:])) for r in rows if r.startswith("C ")])


# a C line's columns (docs/helper-protocol.md, "replay")
THREAD, KIND, FILE, TO_FILE, HANDLE, TO_HANDLE, OFFSET, BYTES, FLAGS, GAP, DUE, A0, A1, A2, A3, FAILED, NEEDED = \
    range(17)


def test_the_first_line_counts_files_preopened_handles_calls_and_threads():
    s = script_of(_trace(Call(0, 0, 10, "open", 2, handle=0, result=3), Call(1, 50, 10, "stat", 3, error="ENOENT",
                                                                            result=-1)))
    head, files, pre, calls = _lines(s.text)
    assert head == "stibium-replay 1 5 0 1 2 2"
    assert files == ["F 1 0 .", "F 1 0 d", "F 0 8192 d/old", "F 0 -1 d/new", "F 1 -1 d/sub"]
    assert pre == [] and len(calls) == 2
    assert (s.calls, s.threads, s.layout_files, s.layout_bytes) == (2, 2, 1, 8192)


def test_an_open_creates_only_a_file_that_does_not_exist_at_that_point():
    s = script_of(_trace(Call(0, 0, 1, "open", 3, handle=0, result=3),        # d/new, not there: made
                         Call(0, 10, 1, "close", 3, handle=0),
                         Call(0, 20, 1, "open", 3, handle=1, result=3),       # there now: opened
                         Call(0, 30, 1, "open", 2, handle=2, result=4),       # d/old, laid out: opened
                         Call(0, 40, 1, "unlink", 2),
                         Call(0, 50, 1, "open", 2, handle=3, result=4),       # gone: made again
                         Call(0, 60, 1, "open", 1, handle=4, result=5),       # a folder
                         Call(0, 70, 1, "open", 4, result=-1, error="ENOENT")))   # failed: not made
    flags = [c[FLAGS] for c in _lines(s.text)[3] if c[KIND] == KINDS.index("open")]
    assert flags == [CREATES, 0, 0, CREATES, FOLDER, FOLDER]


def test_a_rename_moves_what_exists_and_mkdir_makes_a_folder():
    s = script_of(_trace(Call(0, 0, 1, "rename", 2, 3),                        # d/old -> d/new
                         Call(0, 10, 1, "open", 3, handle=0, result=3),        # d/new exists now
                         Call(0, 20, 1, "open", 2, handle=1, result=4),        # d/old does not
                         Call(0, 30, 1, "mkdir", 4)))
    calls = _lines(s.text)[3]
    assert [c[FLAGS] for c in calls[1:3]] == [0, CREATES]
    assert calls[0][TO_FILE] == 3


def test_a_call_waits_for_the_last_call_of_another_thread_on_its_file_and_open_file():
    s = script_of(_trace(Call(0, 0, 5, "open", 2, handle=0, result=3),
                         Call(1, 10, 5, "write", 2, handle=0, bytes=4096, result=4096),   # another thread's handle
                         Call(1, 20, 5, "write", 2, handle=0, bytes=4096, result=4096),   # its own last: no wait
                         Call(0, 30, 5, "fsync", 2, handle=0),
                         Call(2, 40, 5, "stat", 3, result=-1, error="ENOENT")))           # another file: no wait
    calls = _lines(s.text)[3]
    assert calls[1][A0:A3 + 1] == [0, -1, -1, -1]
    assert calls[2][A0:A3 + 1] == [-1, -1, -1, -1]
    assert calls[3][A0:A3 + 1] == [2, -1, -1, -1]
    assert calls[4][A0:A3 + 1] == [-1, -1, -1, -1]
    assert [c[NEEDED] for c in calls] == [1, 0, 1, 0, 0]
    assert calls[4][FAILED] == 1 and calls[1][FAILED] == 0


def test_a_rename_waits_for_both_of_its_files():
    s = script_of(_trace(Call(0, 0, 5, "stat", 2), Call(1, 5, 5, "stat", 3, result=-1, error="ENOENT"),
                         Call(2, 10, 5, "rename", 2, 3)))
    assert _lines(s.text)[3][2][A0:A3 + 1] == [1, 0, -1, -1]


def test_think_gaps_and_due_times_are_the_recorded_ones():
    s = script_of(_trace(Call(0, 1_000, 200, "stat", 2), Call(0, 5_000, 300, "stat", 2),
                         Call(1, 2_000, 100, "stat", 2)))
    calls = _lines(s.text)[3]
    assert [c[GAP] for c in calls] == [1_000, 5_000 - 1_200, 2_000]
    assert [c[DUE] for c in calls] == [1_000, 5_000, 2_000]


def test_a_handle_met_before_its_open_is_opened_before_the_replay():
    s = script_of(_trace(Call(0, 0, 5, "write", 2, handle=0, bytes=10, result=10), Call(0, 10, 5, "close", 2, handle=0)))
    head, _, pre, _ = _lines(s.text)
    assert pre == ["P 0 2"] and head.split()[3:5] == ["1", "1"]


def test_a_copy_writes_to_its_destination_s_open_file_where_the_trace_has_one():
    s = script_of(_trace(Call(0, 0, 5, "open", 2, handle=0, result=3), Call(0, 10, 5, "open", 3, handle=1, result=4),
                         Call(0, 20, 5, "copy", 2, 3, handle=0, bytes=8192, result=8192),
                         Call(0, 30, 5, "close", 3, handle=1),
                         Call(0, 40, 5, "copy", 2, 3, handle=0, bytes=8192, result=0)))
    calls = _lines(s.text)[3]
    assert calls[2][TO_HANDLE] == 1 and calls[4][TO_HANDLE] == -1


def test_mappings_are_left_out_and_counted_and_indexes_map_back_to_the_trace():
    s = script_of(_trace(Call(0, 0, 5, "open", 2, handle=0, result=3), Call(0, 10, 5, "mmap", 2, handle=0, bytes=8192,
                                                                          result=8192),
                         Call(0, 20, 5, "close", 2, handle=0)))
    assert (s.calls, s.left_out, s.index) == (2, 1, (0, 2))
    assert "mmap" not in s.kinds and s.kinds == ("open", "close")


def test_a_call_larger_than_the_helper_s_buffers_is_refused_naming_it():
    with pytest.raises(ScriptError) as e:
        script_of(_trace(Call(0, 0, 5, "open", 2, handle=0, result=3),
                         Call(0, 10, 5, "read", 2, handle=0, bytes=MAX_MOVED_BYTES + 1, result=8192)))
    assert str(e.value) == ("call 1 of the trace (read) asks 268,435,457 bytes; a replayed read moves at most 256 MiB "
                            "in one call")


def test_compare_of_two_replays_states_the_elapsed_time_b_over_a_and_the_kind_that_moved_most_first():
    from types import SimpleNamespace
    from stibium_py.analysis.estimate import Estimate
    from stibium_py.analysis.settings import COMPARE
    from stibium_py.kinds.replay.compare import compare_replays

    def e(v: float, half: float = 0.02) -> Estimate:
        return Estimate(v, v * (1 - half), v * (1 + half), "median", 5)

    def result(elapsed: float, kinds: dict[str, float]):
        return SimpleNamespace(name="app", elapsed_s=e(elapsed),
                               kinds=[SimpleNamespace(call=c, in_calls_s=e(t)) for c, t in kinds.items()])
    a = result(2.0, {"read": 1.0, "fsync": 0.5, "stat": 0.01, "open": 0.2})
    b = result(4.0, {"read": 1.02, "fsync": 1.5, "stat": 0.005, "mkdir": 0.1})
    pair = compare_replays(a, b, COMPARE)
    assert pair.elapsed.what == "elapsed time" and abs(pair.elapsed.ratio.estimate - 2.0) < 1e-12
    assert pair.elapsed.ratio.low < 2.0 < pair.elapsed.ratio.high and pair.elapsed.verdict == "slower"
    # the kinds both made, the most moved first (fsync x3, stat x0.5, read x1.02); a time that halved is faster
    assert [(k.what, round(k.ratio.estimate, 3), k.verdict) for k in pair.kinds] == [
        ("fsync", 3.0, "slower"), ("stat", 0.5, "faster"), ("read", 1.02, "inconclusive")]


def test_compare_of_replays_of_one_trial_gives_no_interval_and_no_verdict():
    from types import SimpleNamespace
    import math
    from stibium_py.analysis.estimate import Estimate
    from stibium_py.analysis.settings import COMPARE
    from stibium_py.kinds.replay.compare import compare_replays
    one = lambda v: Estimate(v, v, v, "range of 1 trials", 1)          # noqa: E731
    a = SimpleNamespace(name="app", elapsed_s=one(2.0), kinds=[SimpleNamespace(call="read", in_calls_s=one(1.0))])
    b = SimpleNamespace(name="app", elapsed_s=one(4.0), kinds=[SimpleNamespace(call="read", in_calls_s=one(3.0))])
    pair = compare_replays(a, b, COMPARE)
    for r in (pair.elapsed, *pair.kinds):
        assert r.verdict == "inconclusive: one trial" and math.isnan(r.ratio.low) and math.isnan(r.ratio.high)
    assert pair.elapsed.ratio.estimate == 2.0
