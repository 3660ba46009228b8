"""Stream tests (`kind: stream`): what a plan may say, the expansion into one operation per stream, the deadline
schedule counted exactly on the fake helper's clock (on time, late, dropped against the buffer; the most streams
without a drop), the words, and the compiled helper's pacing (no frame issued before its time)."""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from rich.console import Console

from stibium_py.run.helper import find_helper
from stibium_py.kinds.stream import formats
from stibium_py.kinds.stream.analysis import stream_result
from stibium_py.kinds.stream.words import sentence
from stibium_py.results.pipeline import load_run
from stibium_py.plan.expand import expand
from stibium_py.plan.load import load_plan
from stibium_py.report.publish import publish_run
from stibium_py.run import LoadedPlan, RunOptions, start_run

from fake_helper import FakeHelpers

KiB = 1024


def _plan(test: str) -> str:
    return f"name: s\ntests:\n  - name: clips\n    kind: stream\n{test}"


CUSTOM = """    frame_bytes: 1MiB
    fps: 25
    streams: [1, 2]
    seconds: 1
    trials: 2
    buffer_frames: 2
"""


def test_a_format_of_the_table_is_its_target_rate_in_frames_of_whole_16_kib():
    hq = formats.FORMATS["prores-422-hq-uhd-29.97"]
    assert hq.fps == Fraction(30000, 1001) and hq.rate_bits_per_s == pytest.approx(884e6, abs=8 * 30)
    assert hq.frame_bytes == 3_687_016         # 884e6 / 8 / (30000 / 1001)
    ops = expand(load_plan("p.yaml", _plan("    format: prores-422-hq-uhd-29.97\n    streams: 1\n"
                                           "    trials: 1\n    seconds: 1\n"))[0]).ops
    assert [o.op for o in ops] == ["write", "read"]
    assert ops[0].granularity_bytes == ops[0].chunk_bytes == 226 * 16 * KiB      # 3,702,784: rounded up
    assert ops[0].frames.fps == 30000 / 1001 and ops[0].bytes == 30 * ops[0].chunk_bytes      # 1 s: 30 frames


def test_a_stream_test_is_one_operation_a_stream_each_count_s_trials_together():
    ops = expand(load_plan("p.yaml", _plan(CUSTOM))[0]).ops
    assert [(o.frames.streams, o.trial, o.op, o.frames.stream) for o in ops] == [
        (1, 0, "write", 0), (1, 0, "read", 0), (1, 1, "write", 0), (1, 1, "read", 0),
        (2, 0, "write", 0), (2, 0, "write", 1), (2, 0, "read", 0), (2, 0, "read", 1),
        (2, 1, "write", 0), (2, 1, "write", 1), (2, 1, "read", 0), (2, 1, "read", 1)]
    assert all(o.bytes == 25 * KiB * KiB and o.frames.buffer_frames == 2 for o in ops)
    assert ops[5].file == "clips/2x-t0-s1.mov"


@pytest.mark.parametrize("test, message", [
    ("    format: prores-422-hq-uhd-30\n", "format 'prores-422-hq-uhd-30' is not in the table; did you mean "
                                        "prores-422-hq-uhd-23.976 or prores-422-hq-uhd-29.97"),
    ("    format: prores-9000\n", "format 'prores-9000' is not in the table; the table holds prores-{422,422-hq,"),
    ("    frame_bytes: 1MiB\n    fps: 25\n    streams: all\n", "streams: a count, a list of counts or most, not 'all'"),
    ("    frame_bytes: 1MiB\n", "give both frame_bytes and fps"),
    ("    format: prores-422-hd-29.97\n    fps: 24\n", "give format, or frame_bytes and fps"),
    ("    streams: 2\n", "give format, or frame_bytes and fps"),
    ("    frame_bytes: 1MiB\n    fps: 0\n", "frames a second from 0.01 to 1000, not 0"),
    ("    frame_bytes: 1MiB\n    fps: 30000/0\n", "frames a second such as 24, 29.97 or 30000/1001, not '30000/0'"),
    ("    frame_bytes: 1MiB\n    fps: 1e999999999\n", "frames a second such as 24, 29.97 or 30000/1001, not "),
    ("    frame_bytes: 1MiB\n    fps: 25\n    seconds: 0.01\n", "0.01 holds 0 frames at 25 a second; give at least 2"),
    ("    frame_bytes: 1MiB\n    fps: 25\n    streams: [0]\n", "must be a whole number from 1 to 32, not 0"),
    ("    frame_bytes: 1MiB\n    fps: 25\n    ops: [capture, capture]\n", "ops: give capture, playback or both, each "
                                                                        "once"),
])
def test_a_stream_test_a_plan_cannot_run_is_refused_with_what_to_give(test, message):
    from stibium_py.errors import PlanError
    with pytest.raises(PlanError) as e:
        expand(load_plan("p.yaml", _plan(test))[0])
    assert message in str(e.value)


def _run(tmp_path: Path, plan: str, frame_s) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(plan)
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    finished = start_run(LoadedPlan.read(path), options, Console(quiet=True), FakeHelpers(frame_s=frame_s))
    assert finished.status == "complete"
    return finished.path


def test_frames_are_counted_on_time_late_and_dropped_exactly_on_the_deadline_schedule(tmp_path):
    """At 25 fps (40 ms a frame) with a buffer of 2 frames (80 ms): one stream's frames take 10 ms (all on time);
    two streams' take 50 ms each, so frame k is issued when frame k - 1 ends, ends at (k + 1) x 50 ms against its
    time (k + 1) x 40 ms: (k + 1) x 10 ms late, dropped from k = 8 on (17 of each stream's 25 frames)."""
    run = _run(tmp_path, _plan(CUSTOM), lambda name, k: 0.010 if name.startswith("1x") else 0.050)
    rows = load_run(run).measurements
    result = stream_result("clips", "write", rows.take(rows.op == "write"))
    one, two = result.points
    assert (one.streams, one.frames, one.on_time, one.late, one.dropped) == (1, 50, 50, 0, 0)
    assert (two.streams, two.frames, two.on_time, two.late, two.dropped) == (2, 100, 0, 32, 68)
    assert two.dropped_by_trial == [34, 34] and result.most_by_trial == [1, 1] and result.most == 1
    assert two.frame_s["p50"] == pytest.approx(0.050) and two.latest_s == pytest.approx(0.25)
    assert result.sequential_bytes_per_s == pytest.approx(KiB * KiB / 0.010)
    assert result.promised == int(KiB * KiB / 0.010 // (KiB * KiB * 25))                   # 4
    assert sentence(result) == ("clips capture: 1 stream ran without a drop in every trial, 2 dropped 68.0 % of "
                                "their frames; one stream's frames moved at 105 MB/s, a sequential rate that "
                                "promises 4 streams")


def test_the_summary_the_terminal_and_the_page_say_the_same_streams(tmp_path):
    run = _run(tmp_path, _plan(CUSTOM), lambda name, k: 0.010 if name.startswith("1x") else 0.050)
    console = Console(record=True, width=120)
    summary = publish_run(run, console).to_json()
    said = console.export_text()
    capture = next(t for t in summary["tests"] if t["op"] == "write")
    assert capture["most_streams"] == 1 and capture["promised_streams"] == 4
    assert [p["dropped"] for p in capture["points"]] == [0, 68]
    assert "clips capture: 1 stream ran without a drop in every trial, 2 dropped 68.0 % of their frames" in said
    warning = next(w for w in summary["warnings"] if w["test"] == "clips (write)")
    assert warning["message"] == ("a sequential rate alone promises 4 streams of this format; 1 ran without a drop "
                                  "in every trial")
    assert "one stream's frames moved at 105 MB/s, a sequential rate that promises 4 streams" in " ".join(said.split())
    page = (run / "report.html").read_text()
    assert "Streams: will it play?" in page and "clips capture: 1 stream ran without a drop" in page
    # the will-it-play row: the format, capture's and playback's most streams with each trial's, the promises
    assert ("<td>clips</td><td>1 MiB a frame at 25.000 fps (26.2 MB/s a stream)</td><td>1 (in each trial)</td>"
            "<td>1 (in each trial)</td><td>capture 4 (105 MB/s)") in page


def test_a_stream_that_drops_from_its_first_count_is_said_so(tmp_path):
    run = _run(tmp_path, _plan(CUSTOM), lambda name, k: 0.2)
    summary = publish_run(run, Console(quiet=True)).to_json()
    playback = next(t for t in summary["tests"] if t["op"] == "read")
    assert playback["most_streams"] == 0
    said = [w["message"] for w in summary["warnings"] if w["test"] == "clips (read)"]
    # 200 ms a frame: frame k ends at (k + 1) x 200 ms against (k + 1) x 40 ms, 160 (k + 1) ms late: all past 80
    assert said == ["even 1 stream dropped 50 of 50 frames (a buffer of 2 frames)"]


def test_the_helper_issues_no_frame_before_its_time(tmp_path):
    """The compiled helper with --fps: frame k starts at t0 + k / fps or later (never before), within a few ms of
    it on an idle tmp folder; the last frame waits for nothing after it."""
    out = subprocess.run([str(find_helper()), "write", "--path", str(tmp_path / "f.bin"), "--bytes", str(8 * 64 * KiB),
                          "--granularity", str(64 * KiB), "--chunk", str(64 * KiB), "--fps", "50",
                          "--engine", "buffered", "--sync", "none"], capture_output=True, text=True, timeout=60)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    frames, answer = lines[:-1], lines[-1]
    assert out.returncode == 0 and len(frames) == 8
    t0 = frames[0]["start_ns"]
    early = [f["start_ns"] - (t0 + k * 20_000_000) for k, f in enumerate(frames)]
    assert min(early) >= 0
    assert max(early) < 10_000_000, early
    assert answer["end_ns"] - frames[-1]["end_ns"] < 10_000_000       # no wait after the last frame


def test_the_helper_refuses_fps_without_a_frame_or_with_requests_in_flight(tmp_path):
    base = [str(find_helper()), "write", "--path", str(tmp_path / "f.bin"), "--bytes", str(64 * KiB)]
    for extra, message in ((["--fps", "25"], "--fps paces frames: give --chunk, the bytes of a frame"),
                           (["--fps", "25", "--chunk", "16384", "--queue-depth", "4"],
                            "--fps moves a frame's requests one at a time, as a player or a recorder does; drop "
                            "--queue-depth and --threads"),
                           (["--fps", "25/x", "--chunk", "16384"],
                            "--fps must be frames a second from 0.01 to 100000, such as 24 or 30000/1001, not '25/x'")):
        out = subprocess.run(base + extra, capture_output=True, text=True, timeout=30)
        assert out.returncode == 2 and json.loads(out.stdout)["error"] == message
    assert not (tmp_path / "f.bin").exists()


def test_a_run_cut_in_the_middle_of_a_group_of_streams_resumes_the_group_whole(tmp_path):
    """Ctrl-C while two streams capture: the run is marked interrupted with the rows so far; resume measures that
    group's streams again together, and the counts are those of a run never cut."""
    from stibium_py.run import resume_run
    path = tmp_path / "s.yaml"
    path.write_text(_plan(CUSTOM))
    slow = lambda name, k: 0.010 if name.startswith("1x") else 0.050          # noqa: E731
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    from stibium_py.errors import RunError
    with pytest.raises(RunError) as e:
        start_run(LoadedPlan.read(path), options, Console(quiet=True), FakeHelpers(frame_s=slow, interrupt_at=4))
    assert e.value.exit_code == 130
    run = next((tmp_path / "r").iterdir())
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    finished = resume_run(run, RunOptions(progress=False), Console(quiet=True), FakeHelpers(frame_s=slow))
    assert finished.status == "complete"
    rows = load_run(run).measurements
    result = stream_result("clips", "write", rows.take(rows.op == "write"))
    assert [(p.streams, p.trials, p.on_time, p.late, p.dropped) for p in result.points] == [
        (1, 2, 50, 0, 0), (2, 2, 0, 32, 68)]
    assert not list((tmp_path / "t").rglob("*.mov"))          # every group's files removed
    # the frames of the group cut short stay in measurements.csv and are not counted: n is the frames counted
    assert result.n == 150 and result.left_out == len(result.measurements) - 150 == 25
    from stibium_py.report.publish import publish_run
    summary = publish_run(run, Console(quiet=True)).to_json()
    assert next(t["n"] for t in summary["tests"] if t["name"] == "clips" and t["op"] == "write") == 150
    note = (f"{result.left_out} frames of streams cut short are not counted (a measurement cut by an interruption "
            f"and done again on resume)")
    assert any(w["message"] == note and w["level"] == "info" for w in summary["warnings"])
    # the page says a note under Notes, as the terminal calls it, not under Warnings
    page = (run / "report.html").read_text()
    warnings, notes = page.split("<h2>Warnings</h2>", 1)[1].split("<h2>Notes</h2>", 1)
    assert note in notes and note not in warnings


def test_playback_alone_lays_out_each_stream_s_file_first(tmp_path):
    run = _run(tmp_path, _plan(CUSTOM + "    ops: [playback]\n"), None)
    rows = load_run(run).measurements
    assert set(rows.op.tolist()) == {"read"}
    result = stream_result("clips", "read", rows)
    assert [(p.streams, p.frames, p.dropped) for p in result.points] == [(1, 50, 0), (2, 100, 0)]


def test_a_stream_s_length_is_its_seconds_or_its_frames_not_both():
    ops = expand(load_plan("p.yaml", _plan("    frame_bytes: 1MiB\n    fps: 24000/1001\n    frames: 48\n"
                                           "    streams: 1\n    trials: 1\n"))[0]).ops
    assert ops[0].bytes == 48 * KiB * KiB and ops[0].frames.fps == 24000 / 1001
    from stibium_py.errors import PlanError
    with pytest.raises(PlanError) as e:
        expand(load_plan("p.yaml", _plan("    frame_bytes: 1MiB\n    fps: 24\n    frames: 48\n    seconds: 2\n"))[0])
    assert "give seconds or frames, not both" in str(e.value)


def test_the_stream_figures_render_without_javascript_errors(tmp_path):
    """Each stream result draws two figures (lateness against time with the drops, the frame times'
    distribution); Chromium draws them all."""
    import re
    from test_report_browser import CHROMIUM, open_in_chromium
    assert CHROMIUM is not None, "Chromium is installed by install.sh --test"
    run = _run(tmp_path, _plan(CUSTOM), lambda name, k: 0.010 if name.startswith("1x") else 0.050)
    publish_run(run, Console(quiet=True))
    dom, log = open_in_chromium(run / "report.html", ["--dump-dom"])
    figures = re.findall(r'<div id="fig\d+"[^>]*class="([^"]*)"', dom)
    assert len(figures) == 2 * 2 and all("js-plotly-plot" in classes for classes in figures), figures
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Error" in line], console


def test_compare_sets_two_runs_stream_counts_side_by_side(tmp_path):
    """A disk that plays 1 stream against one that plays 2 (each trial alike): compare says B carried more in
    every trial than A in any, on the terminal and the page; two runs alike show no difference."""
    from stibium_py.results.compare import load_side
    from stibium_py.results.compare import compare_many, compare_runs
    from stibium_py.results.compare import drawn
    from stibium_py.report import compare_page, compare_terminal
    fast = lambda name, k: 0.010          # noqa: E731
    one = lambda name, k: 0.010 if name.startswith("1x") else 0.050          # noqa: E731
    for side in ("a", "b", "c"):
        (tmp_path / side).mkdir()
    a, b = _run(tmp_path / "a", _plan(CUSTOM), one), _run(tmp_path / "b", _plan(CUSTOM), fast)
    c = _run(tmp_path / "c", _plan(CUSTOM), one)
    compared = compare_runs(load_side(a), load_side(b))
    assert not [d for d in compared.differences if "stream" in d]
    capture, playback = compared.kinds["stream"]
    assert (capture.name, capture.action, capture.a, capture.b, capture.verdict) == (
        "clips", "capture", [1, 1], [2, 2], "more")
    assert compared.to_json()["kinds"]["stream"][1]["verdict"] == "more"
    many = compare_many([load_side(a), load_side(b), load_side(c)]).to_json()      # each run against a's
    assert [(p["run"], p["op"], p["verdict"]) for p in many["kinds"]["stream"]] == [
        (b.name, "capture", "more"), (b.name, "playback", "more"), (c.name, "capture", "same range"),
        (c.name, "playback", "same range")]
    console = Console(record=True, width=200)
    for line in compare_terminal.two_runs(compared, 200):
        console.print(line)
    (tmp_path / "ab.html").write_text(compare_page.render(compared, drawn(load_side(a), load_side(b))))
    said = " ".join(console.export_text().split())
    assert ("clips playback (1 MiB at 25.000 fps, 26.2 MB/s a stream): A 1 stream without a drop in every trial, "
            "B 2: B carried more in every trial than A in any (1 more at the least)") in said
    assert "Streams: will it play, A and B" in (tmp_path / "ab.html").read_text()
    same = compare_runs(load_side(a), load_side(c))
    assert [p.verdict for p in same.kinds["stream"]] == ["same range", "same range"]


def _series(tmp_path: Path, frame_s, test: str = CUSTOM, out: str = "series") -> Path:
    from stibium_py.run import start_series
    path = tmp_path / "s.yaml"
    path.write_text(_plan(test))
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / out, progress=False)
    finished = start_series(LoadedPlan.read(path), options, 2, Console(quiet=True), FakeHelpers(frame_s=frame_s))
    assert finished.status == "complete"
    return finished.path


def _series_said(path: Path) -> tuple[dict, str, str]:
    """A series' summary, its terminal (one line of words) and its page."""
    from stibium_py.report import series_page
    from stibium_py.results.series import summarize_series
    summary = summarize_series(path)
    console = Console(record=True, width=200)
    for line in series_page.terminal(summary, {}, 200):
        console.print(line)
    return summary, " ".join(console.export_text().split()), series_page.render(summary)


def test_a_series_sets_each_run_s_most_streams_beside_the_others(tmp_path):
    """Two runs alike (2 streams play in every trial of each): the series puts the stream test together, each
    run's most streams and every trial's, on the terminal and the page; nothing differs, nothing is left out."""
    path = _series(tmp_path, lambda name, k: 0.010)
    summary, said, page = _series_said(path)
    assert summary["tests"] == []
    capture, playback = summary["kinds"]["stream"]
    runs = summary["runs"]
    assert (capture["test"], capture["action"], capture["most_streams"], capture["runs_differ"]) == (
        "clips", "capture", 2, False)
    assert [(r["run"], r["most_streams"], r["most_streams_by_trial"]) for r in playback["runs"]] == [
        (runs[0], 2, [2, 2]), (runs[1], 2, [2, 2])]
    assert "warnings" not in capture and not [w for w in summary["warnings"] if "stream" in w["message"]]
    assert (f"clips playback (1 MiB at 25.000 fps, 26.2 MB/s a stream): 2 streams without a drop in every trial "
            f"of 2 runs; {runs[0]}: 2 in each trial, {runs[1]}: 2 in each trial") in said
    assert "Streams across runs: will it play, run by run" in page and "the runs&#x27; trials overlap" in page


def test_a_series_whose_runs_carry_different_counts_says_they_differ(tmp_path):
    """The first run's frames take 10 ms (2 streams play), the second's two streams 50 ms (1 plays): the most
    across runs is 1, and the runs differ, said as a warning on the terminal and the page."""
    frames_a_run = (1 + 2) * 2 * 25 * 2          # counts 1 and 2, two trials, 25 frames, capture and playback
    calls = []

    def frame_s(name: str, k: int) -> float:
        calls.append(name)
        return 0.010 if len(calls) <= frames_a_run or name.startswith("1x") else 0.050
    path = _series(tmp_path, frame_s)
    summary, said, page = _series_said(path)
    first, second = summary["runs"]
    capture = summary["kinds"]["stream"][0]
    assert [(r["run"], r["most_streams_by_trial"]) for r in capture["runs"]] == [(first, [2, 2]), (second, [1, 1])]
    assert (capture["most_streams"], capture["runs_differ"]) == (1, True)
    warning = {"level": "warning", "test": "clips capture",
               "message": f"runs differ: {first} carried 2 streams or more in every trial, {second} at most 1",
               "what_to_do": "quote the fewest streams across runs; look for what changed between them (caches, "
                             "background work, temperature)"}
    assert warning in summary["warnings"]
    assert f"runs differ: {first} carried 2 streams or more in every trial, {second} at most 1" in said
    assert f"runs differ: {first} carried 2 streams or more in every trial, {second} at most 1" in page


def test_a_run_of_another_frame_under_the_test_s_name_is_left_out_and_said_why(tmp_path):
    """A run of the same test name at 30 frames a second beside two at 25: left out of the test's entry, named with
    its own frame and rate and the others' (not said to have had no whole trial)."""
    from stibium_py.analysis.settings import SERIES
    from stibium_py.results.compare import load_side
    from stibium_py.kinds.stream.series import across_runs
    runs = [(r.path.name, r.rows) for r in load_side(_series(tmp_path, lambda name, k: 0.010)).runs]
    other = load_side(_series(tmp_path, lambda name, k: 0.010, CUSTOM.replace("fps: 25", "fps: 30"), "other")).runs[0]
    capture = across_runs([*runs, ("other-run", other.rows)], SERIES)[0]
    assert [r["run"] for r in capture["runs"]] == [name for name, _ in runs]
    assert capture["warnings"] == [{
        "level": "warning", "test": "clips capture",
        "message": "left out other-run (1 MiB at 30.000 fps, 31.5 MB/s a stream): it ran another frame or rate than "
                   "the others (1 MiB at 25.000 fps, 26.2 MB/s a stream)",
        "what_to_do": "read that run's report for what it did"}]


def test_an_image_sequence_is_a_folder_a_stream_and_a_file_a_frame():
    ops = expand(load_plan("p.yaml", _plan("    format: dpx-10bit-2k-24\n    streams: 1\n    trials: 1\n"
                                           "    frames: 3\n"))[0]).ops
    write, read = ops
    assert (write.file, write.frames.sequence, write.chunk_bytes) == ("clips/1x-t0-s0", "dpx", 541 * 16 * KiB)
    assert [write.frame_file(k) for k in range(3)] == [f"clips/1x-t0-s0/000000{k}.dpx" for k in range(3)]
    assert write.sync == "none"              # a render's frames, not synced one by one
    movie = expand(load_plan("p.yaml", _plan("    format: dpx-10bit-2k-24\n    layout: movie\n    frames: 3\n"))[0])
    assert movie.ops[0].frames.sequence == "" and movie.ops[0].file.endswith(".mov")
    custom = expand(load_plan("p.yaml", _plan(CUSTOM + "    layout: sequence\n"))[0]).ops
    assert custom[0].frames.sequence == "frame"


def test_an_image_sequence_paces_its_frames_on_the_helper_s_clock_and_leaves_no_file(tmp_path):
    """Each frame a file of its own, one helper call a frame at its time: 10 ms frames at 100 ms all on time; 122.5
    ms frames fall 22.5 ms further behind each, past the 200 ms buffer from the ninth on. Real time, at 10 fps: a
    machine loaded by other tests stalls a frame by tens of ms, which 25 fps and an 80 ms buffer did not absorb
    (a run beside the MPI tests dropped 6 frames of one stream)."""
    frames_written = []

    def frame_s(stream: str, k: int) -> float:
        frames_written.append((stream, k))
        return 0.010 if stream.startswith("1x") else 0.1225
    plan = _plan("    frame_bytes: 1MiB\n    fps: 10\n    streams: [1, 2]\n    seconds: 2.5\n    trials: 1\n"
                 "    buffer_frames: 2\n    layout: sequence\n")
    run = _run(tmp_path, plan, frame_s)
    rows = load_run(run).measurements
    frame_rows = rows.take(rows.chunk == rows.chunk)              # not NaN: a frame
    assert sorted(set(frame_rows.file.tolist()))[:2] == ["clips/1x-t0-s0/0000000.frame", "clips/1x-t0-s0/0000001.frame"]
    for op in ("write", "read"):
        result = stream_result("clips", op, rows.take(rows.op == op))
        one, two = result.points
        # real time: a loaded machine may make a frame late (the fake writes its data first), none 80 ms late
        assert (one.frames, one.dropped) == (25, 0) and one.on_time >= 20
        # at least 22.5 ms later each (the fake's own work between frames, writing the file's data, adds more)
        assert two.frames == 50 and two.dropped >= 2 * 17 and result.most == 1
    assert len(frames_written) == 2 * (25 + 2 * 25)
    assert not [p for p in (tmp_path / "t").rglob("*") if p.is_file() and p.suffix == ".frame"]


def test_the_most_streams_stop_at_the_first_count_that_drops_though_a_larger_one_did_not(tmp_path):
    """Two streams drop, four happen not to (a disk's mood): the answer is one, and the sentence names the two."""
    plan = _plan(CUSTOM.replace("streams: [1, 2]", "streams: [1, 2, 4]"))
    run = _run(tmp_path, plan, lambda name, k: 0.050 if name.startswith("2x") else 0.010)
    rows = load_run(run).measurements
    result = stream_result("clips", "write", rows.take(rows.op == "write"))
    assert [p.dropped for p in result.points] == [0, 68, 0] and result.most_by_trial == [1, 1]
    assert sentence(result).startswith("clips capture: 1 stream ran without a drop in every trial, 2 dropped 68.0 %")


def _braces(pattern: str) -> set[str]:
    head, brace, rest = pattern.partition("{")
    if not brace:
        return {pattern}
    inner, _, tail = rest.partition("}")
    return {x for choice in inner.split(",") for x in _braces(head + choice + tail)}


def test_the_table_s_families_name_exactly_its_formats():
    """What the refusal of an unknown format lists is the table, no more and no less."""
    said = formats.families().replace(" (4k: hq, hqx, 444)", "")
    named = set().union(*(_braces(f) for f in said.split(", ")))
    lb_sq_4k = {f"dnxhr-{c}-4k-{r}" for c in ("lb", "sq") for r in ("23.976", "25", "29.97")}
    assert named - lb_sq_4k == set(formats.FORMATS)


def test_dnxhr_h264_and_tiff_frames_are_their_sources_figures():
    """DNxHR's bytes a frame are Avid's (UHD HQ at 29.97: 104.08 MiB/s in its table); Sony's XAVC S 4K at its top
    rate, 100 Mb/s; a TIFF frame its pixels' 6 bytes, 8 a row and 1 KiB."""
    hq = formats.FORMATS["dnxhr-hq-uhd-29.97"]
    assert hq.frame_bytes == 3_641_344 and round(float(hq.frame_bytes * hq.fps) / 2**20, 2) == 104.08
    assert formats.FORMATS["dnxhr-444-4k-23.976"].frame_bytes * Fraction(24000, 1001) / 2**20 == pytest.approx(
        177.67, abs=0.005)
    xavc = formats.FORMATS["h264-xavc-s-uhd-25"]
    assert xavc.rate_bits_per_s == 100e6 and xavc.low_bits_per_s == 60e6 and "60 to 100 Mb/s" in xavc.title
    hevc = formats.FORMATS["h265-gopro-high-uhd-59.94"]          # GoPro's "around 100Mb/s", HEVC only
    assert hevc.fps == Fraction(60000, 1001) and hevc.frame_bytes == 208_541 and "GoPro" in hevc.source
    assert hevc.rate_bits_per_s == pytest.approx(100e6, abs=8 * 60)
    tiff = formats.FORMATS["tiff-16bit-4k-24"]
    assert tiff.frame_bytes == 4096 * 2160 * 6 + 2160 * 8 + 1024 and tiff.extension == "tif"
    ops = expand(load_plan("p.yaml", _plan("    format: tiff-16bit-2k-24\n    streams: 1\n    trials: 1\n"
                                           "    seconds: 1\n"))[0]).ops
    assert ops[0].frames.sequence == "tif" and ops[0].frame_file(3).endswith("/0000003.tif")


def test_a_result_names_the_table_s_formats_of_its_frame():
    from stibium_py.kinds.stream.expand import FRAME_ALIGN_BYTES
    hq = formats.FORMATS["dnxhr-hq-uhd-29.97"]
    frame = -(-hq.frame_bytes // FRAME_ALIGN_BYTES) * FRAME_ALIGN_BYTES
    assert formats.named(frame, float(hq.fps), FRAME_ALIGN_BYTES) == "DNxHR HQ or HQX, 3840x2160 at 29.97"
    assert formats.named(frame, 24.0, FRAME_ALIGN_BYTES) == ""
    # codecs whose titles hold a comma of their own, of the same frame and rate: both named, the size said once
    hevc = formats.FORMATS["h265-gopro-high-uhd-29.97"]
    frame = -(-hevc.frame_bytes // FRAME_ALIGN_BYTES) * FRAME_ALIGN_BYTES
    assert formats.named(frame, float(hevc.fps), FRAME_ALIGN_BYTES) == (
        "H.264 (Sony XAVC S, 60 to 100 Mb/s) or H.265 (GoPro Protune high bit rate, about 100 Mb/s), 3840x2160 at "
        "29.97")


@pytest.mark.parametrize("most, path", [(0, [1]), (1, [1, 2]), (3, [1, 2, 4, 3]), (5, [1, 2, 4, 8, 6, 5]),
                                        (8, [1, 2, 4, 8, 16, 12, 10, 9]), (31, [1, 2, 4, 8, 16, 32, 24, 28, 30, 31]),
                                        (32, [1, 2, 4, 8, 16, 32])])
def test_the_search_doubles_then_halves_the_gap(most, path):
    from stibium_py.kinds.stream.analysis import next_count
    tried: dict[int, bool] = {}
    asked = []
    while (n := next_count(tried, 32)) is not None:
        asked.append(n)
        tried[n] = n > most
    assert asked == path


SEARCH = CUSTOM.replace("streams: [1, 2]", "streams: most")


def test_plan_show_of_a_search_counts_what_it_runs_where_nothing_drops(tmp_path):
    """`streams: most` expands to every count a search may ask for (1 to 32), and runs 1, 2, 4, 8, 16 and 32 where
    none drops: what plan show and --dry-run count, say and estimate."""
    from click.testing import CliRunner
    from stibium_py.cli import main
    from stibium_py.plan.expand import estimated_bytes
    plan = tmp_path / "s.yaml"
    plan.write_text(_plan(SEARCH))
    expanded = expand(load_plan(plan)[0], None, None)
    (test,) = expanded.tests
    assert sorted({o.frames.streams for o in test.planned_ops}) == [1, 2, 4, 8, 16, 32]
    assert len(test.ops) == 2 * 2 * sum(range(1, 33)) and len(test.planned_ops) == 2 * 2 * 63
    MiB = 1 << 20
    assert expanded.bytes_written == round(sum(estimated_bytes(o)[1] for o in test.planned_ops)) == 63 * 2 * 25 * MiB
    out = " ".join(CliRunner().invoke(main, ["plan", "show", str(plan)], env={"COLUMNS": "200"}).output.split())
    assert "capture then playback of 1, 2, 4, 8, 16, 32 streams (a movie file each) at once where none drops" in out
    assert f"measurements: 252 ({len(test.ops)} expanded: a search skips the counts it does not ask for)" in out
    assert f"bytes written: {63 * 2 * 25 * MiB}" in out


def _nine_ms_a_stream(name: str, k: int) -> float:
    """n streams at once take n x 9 ms a frame: up to 4 keep 25 fps (40 ms), 5 fall 5 ms a frame behind and pass
    the buffer's 80 ms by their 17th frame."""
    return 0.009 * int(name.split("x")[0])


def test_streams_most_runs_only_the_counts_its_search_asks_for_and_finds_the_most(tmp_path):
    run = _run(tmp_path, _plan(SEARCH), _nine_ms_a_stream)
    rows = load_run(run).measurements
    for op in ("write", "read"):
        mine = rows.take(rows.op == op)
        for t in (0, 1):
            assert sorted(set(mine.take(mine.trial == t).streams.tolist())) == [1, 2, 4, 5, 6, 8]
        result = stream_result("clips", op, mine)
        assert result.most_by_trial == [4, 4] and not result.cut
    summary = publish_run(run, Console(quiet=True)).to_json()
    capture = next(t for t in summary["tests"] if t["op"] == "write")
    assert capture["most_streams"] == 4
    assert not [w for w in summary["warnings"] if "trial" in w["message"]]
    assert not list((tmp_path / "t").rglob("*.mov"))


def test_a_search_cut_short_resumes_on_the_same_path(tmp_path):
    from stibium_py.errors import RunError
    from stibium_py.run import resume_run
    path = tmp_path / "s.yaml"
    path.write_text(_plan(SEARCH))
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    with pytest.raises(RunError):
        start_run(LoadedPlan.read(path), options, Console(quiet=True),
                  FakeHelpers(frame_s=_nine_ms_a_stream, interrupt_at=12))
    run = next((tmp_path / "r").iterdir())
    finished = resume_run(run, RunOptions(progress=False), Console(quiet=True),
                          FakeHelpers(frame_s=_nine_ms_a_stream))
    assert finished.status == "complete"
    rows = load_run(run).measurements
    result = stream_result("clips", "read", rows.take(rows.op == "read"))
    assert result.most_by_trial == [4, 4] and [p.streams for p in result.points] == [1, 2, 4, 5, 6, 8]


def _client_frames(rank: int, host: str, streams: int, frames: int, took_s: float) -> list:
    """One client's rows of a group of `streams` streams at 25 fps, each frame taking took_s (issued at its time,
    or when the one before ended), as the helper's --fps schedule gives them."""
    from stibium_py.rundir.measurement import Measurement
    rows, period_ns = [], 40_000_000
    for s in range(streams):
        end = 0
        for k in range(frames):
            start = max(k * period_ns, end)
            end = start + round(took_s * 1e9)
            rows.append(Measurement(
                seq=s, test="clips", op="read", kind="stream", access="sequential", size_bytes=frames * 65536,
                granularity_bytes=65536, stride_bytes=0, trial=0, file=f"clips/{streams}x-t0-s{s}.mov",
                bytes=65536, seconds=took_s, started_s=0.0, engine="direct", requests=1, chunk=k, start_ns=start,
                end_ns=end, fps=25.0, streams=streams, stream=s, buffer_frames=2, rank=rank, host=host))
    return rows


def test_many_clients_add_up_on_the_store_and_a_client_that_drops_alone_is_the_straggler():
    """Three clients of two streams each: clients 0 and 1 keep 25 fps (10 ms a frame), client 2 takes 50 ms a
    frame, 10 ms behind each frame time, and drops from its 8th frame on (17 of 25 in each stream)."""
    from stibium_py.rundir.table import Table
    rows = Table.from_rows([*_client_frames(0, "bay-1", 2, 25, 0.010), *_client_frames(1, "bay-2", 2, 25, 0.010),
                            *_client_frames(2, "bay-3", 2, 25, 0.050)])
    result = stream_result("clips", "read", rows)
    (point,) = result.points
    assert result.clients == 3 and (point.frames, point.dropped) == (150, 34)
    assert point.dropped_by_client == {0: 0, 1: 0, 2: 34} and point.stragglers == [2]
    assert result.most == 0 and result.sequential_bytes_per_s is None       # no stream ran alone
    assert sentence(result) == ("clips playback: even 3 clients x 2 streams (6 on the store) dropped 22.7 % of "
                                "their frames; client 2 (bay-3) dropped frames at 2 a client where the others "
                                "dropped none (a straggler)")
    said = []
    from stibium_py.kinds.stream.words import add_warnings
    add_warnings(result, lambda level, test, message, advice: said.append(message))
    assert "2 streams a client: client 2 (bay-3) dropped 34 frames where the other clients dropped none" in said
    # every client slow alike: the store is short, no client is a straggler
    slow = stream_result("clips", "read", Table.from_rows(
        [m for r in range(3) for m in _client_frames(r, f"bay-{r}", 2, 25, 0.050)]))
    assert slow.points[0].stragglers == [] and slow.points[0].dropped == 102


def _result(**changed):
    from stibium_py.kinds.stream.analysis import StreamPoint, StreamResult
    from stibium_py.rundir.table import Table
    point = dict(streams=1, trials=3, frames=90, on_time=90, late=0, dropped=0, dropped_by_trial=[0, 0, 0],
                 frame_s={"p50": 0.01, "p99": 0.02, "p999": 0.02, "max": 0.03}, latest_s=-0.01)
    points = [StreamPoint(**{**point, **p}) for p in changed.pop("points", [{}])]
    base = dict(name="clips", op="read", measurements=Table.empty(), frame_bytes=1 << 20, fps=25.0, buffer_frames=2,
                points=points, most_by_trial=[1, 1, 1], sequential_bytes_per_s=None, format_title="", cut=[],
                clients=1, hosts={})
    return StreamResult(**{**base, **changed})


def _warned(result) -> list[tuple[str, str, str]]:
    from stibium_py.kinds.stream.words import add_warnings
    said: list[tuple[str, str, str]] = []
    add_warnings(result, lambda level, test, message, todo: said.append((level, message, todo)))
    return said


def test_each_stream_warning_is_said_exactly_where_its_premise_holds():
    two = {"streams": 2, "dropped": 9, "dropped_by_trial": [3, 3, 3]}
    # every count clean: nothing to say, whatever a sequential rate promises
    assert _warned(_result(sequential_bytes_per_s=200 * 2**20)) == []
    # a count dropped and the rate promised more: the promise is named
    promised = _result(points=[{}, two], sequential_bytes_per_s=4.5 * 25 * 2**20)
    assert promised.promised == 4 and _warned(promised) == [
        ("info", "a sequential rate alone promises 4 streams of this format; 1 ran without a drop in every trial",
         "plan for the streams that ran, not for the rate: frames must arrive by their time, and streams at once "
         "share the disk")]
    # the promise no more than what ran: nothing
    assert _warned(_result(points=[{}, two], sequential_bytes_per_s=1.5 * 25 * 2**20)) == []
    # even the fewest dropped: one disk, then a store of clients, then a client alone
    first = {"dropped": 9, "dropped_by_trial": [3, 3, 3]}
    assert _warned(_result(points=[first], most_by_trial=[0, 0, 0]))[0][1:] == (
        "even 1 stream dropped 9 of 90 frames (a buffer of 2 frames)",
        "this disk does not carry the format: choose a lighter codec, a larger buffer or a faster disk")
    store = _result(points=[{**first, "dropped_by_client": {0: 4, 1: 5}}], most_by_trial=[0, 0, 0], clients=2)
    assert _warned(store)[0][1:] == (
        "even 1 stream a client on 2 clients dropped 9 of 90 frames (a buffer of 2 frames)",
        "this store does not carry the format: choose a lighter codec, a larger buffer or a faster store")
    alone = _result(points=[{**first, "dropped_by_client": {0: 0, 1: 9}, "stragglers": [1]}], most_by_trial=[0, 0, 0],
                    clients=2, hosts={1: "bay-2"})
    assert [x[1:] for x in _warned(alone)] == [
        ("even 1 stream a client on 2 clients dropped 9 of 90 frames (a buffer of 2 frames)",
         "client 1 (bay-2) dropped alone: see to that client before the store"),
        ("1 stream a client: client 1 (bay-2) dropped 9 frames where the other clients dropped none",
         "the store carried the others: look at the straggler's own link, mount and load")]
    # a group that did not run whole
    assert _warned(_result(cut=[(2, 1)])) == [
        ("warning", "2 streams, trial 2: not every stream ran to its last frame; the trial is left out",
         "resume the run to measure it again")]
