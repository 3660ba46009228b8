"""A stonewall (IOR's -D): the helper stops starting requests at it, and with --wearout asks how many to reach
and goes on from where each thread's part stopped; the plan's stonewall, the runner with one client, and what
the analysis says of it. Many clients' wear-out is tested under mpiexec in test_mpi.py."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import run_helper
from fake_helper import FakeHelpers
from stibium_py.rundir.measurement import ALL_CLIENTS
from stibium_py.analysis.stonewall import stonewall
from stibium_py.rundir.measurement import Measurement
from stibium_py.plan import PlanError
from stibium_py.rundir.table import Table

KiB = 1024
BIG = "32MiB"                # 8192 requests of 4 KiB: more than a millisecond's worth on any disk
PASS = 32 * 2**20 // (4 * KiB)


def _written_blocks(path: Path, nblocks: int) -> list[bool]:
    """Which 4 KiB blocks hold their own offsets (--fill offset) rather than a hole's zeros (the second word, as
    the first word of block 0 is 0 either way)."""
    data = path.read_bytes()
    return [len(data) >= (i + 1) * 4 * KiB and struct.unpack_from("<Q", data, i * 4 * KiB + 8)[0] == i * 4 * KiB + 8
            for i in range(nblocks)]


def test_a_stonewall_stops_the_requests_and_the_row_says_how_far_they_came(helper, disk_dir):
    path = disk_dir / "f.bin"
    rc, out, err = run_helper(helper, "write", "--path", str(path), "--bytes", BIG, "--granularity", "4KiB",
                              "--engine", "buffered", "--sync", "none", "--stonewall", "0.001")
    assert rc == 0, err
    assert out["stonewall_s"] == 0.001 and out["pass_requests"] == PASS
    assert 0 < out["requests"] == out["stonewall_requests"] < PASS and out["wearout_requests"] == 0
    assert out["bytes"] == out["requests"] * 4 * KiB == path.stat().st_size    # sequential: the file's first part
    assert out["stonewall_seconds"] <= out["io_seconds"]


@pytest.mark.parametrize("method", ["threads", "auto"])
def test_the_wearout_goes_on_from_where_each_threads_part_stopped(helper, disk_dir, method):
    """Four threads, three requests in flight each: at the stonewall each thread's part holds its first requests
    (no request is taken and left at the deadline); the wear-out adds to each part from there, so that the
    file's written blocks are a prefix of every part and as many as the count sent back."""
    path = disk_dir / "f.bin"
    proc = subprocess.Popen([str(helper), "write", "--path", str(path), "--bytes", BIG, "--granularity", "4KiB",
                             "--engine", "buffered", "--sync", "fsync", "--fill", "offset", "--threads", "4",
                             "--queue-depth", "3", "--io-method", method, "--stonewall", "0.001", "--wearout"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = json.loads(proc.stdout.readline())
    done = said["stonewall"]
    target = min(PASS, done + 1000)
    answer, err = proc.communicate(f"{target}\n", timeout=60)
    out = json.loads(answer)
    assert proc.returncode == 0, err
    assert out["stonewall_requests"] == done and out["wearout_requests"] == target - done
    assert out["requests"] == target and out["bytes"] == target * 4 * KiB
    written = _written_blocks(path, PASS)
    assert sum(written) == target
    for p in range(4):
        part = written[PASS * p // 4:PASS * (p + 1) // 4]
        k = sum(part)
        assert all(part[:k]) and not any(part[k:]), f"part {p}: its written blocks are not its first ones"


def test_a_wearout_count_outside_what_is_left_fails_with_the_counts(helper, disk_dir):
    proc = subprocess.run([str(helper), "write", "--path", str(disk_dir / "f.bin"), "--bytes", "64KiB",
                           "--granularity", "4KiB", "--engine", "buffered", "--stonewall", "60", "--wearout"],
                          input="99\n", capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    said = json.loads(lines[0])
    assert sorted(said) == ["seconds", "stonewall"] and said["stonewall"] == 16 and said["seconds"] > 0
    assert proc.returncode == 1
    assert json.loads(lines[1])["error"] == "the wear-out asked for 99 requests, but 16 were done and 0 are left"
    assert not (disk_dir / "f.bin").exists()          # the half-done file it created is removed


@pytest.mark.parametrize("args, message", [
    (["--wearout"], "--wearout needs --stonewall: the wear-out goes on after the stonewall"),
    (["--stonewall", "1", "--duration", "1"], "--stonewall caps a measurement of its bytes; a measurement by "
                                              "--duration is bounded by time already: give one or the other"),
    (["--stonewall", "0"], "--stonewall must be seconds above 0, at most a week, not '0'"),
])
def test_stonewall_refusals(helper, disk_dir, args, message):
    rc, out, _ = run_helper(helper, "write", "--path", str(disk_dir / "f.bin"), "--bytes", "64KiB", *args)
    assert rc == 2 and out["error"] == message
    assert not (disk_dir / "f.bin").exists()


def test_a_plan_cannot_give_a_stonewall_to_a_test_by_time(tmp_path, monkeypatch):
    from stibium_py.plan import load_and_expand
    monkeypatch.chdir(tmp_path)
    Path("plan.yaml").write_text("name: x\ntests:\n  - {name: p, kind: pattern, op: read, granularities: [4KiB], "
                                 "span: 1MiB, duration: 1s, stonewall: 2s}\n")
    with pytest.raises(PlanError) as e:
        load_and_expand(Path("plan.yaml"))
    assert str(e.value).endswith("stonewall caps a measurement of its bytes; with duration each trial is bounded by "
                                 "time already: give one or the other")


def test_one_client_run_with_a_stonewall_keeps_what_moved_and_says_so(tmp_path):
    """The fake helper's model does a 64 KiB request in 0.231 ms: a 2 ms stonewall stops each 4 MiB write after 8
    of its 64 requests; the rows keep what moved, and the summary (the terminal's line and the report's note)
    says so."""
    from rich.console import Console

    from stibium_py.results.pipeline import summarize_run
    from stibium_py.kinds.pattern.mix_view import terminal_lines
    from stibium_py.run import LoadedPlan, RunOptions, start_run
    path = tmp_path / "plan.yaml"
    path.write_text("name: sw\ntests:\n  - {name: p, kind: pattern, op: write, granularities: [64KiB], bytes: 4MiB, "
                    "trials: 3, stonewall: 0.002}\n")
    finished = start_run(LoadedPlan.read(path), RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r",
                                                           progress=False), Console(quiet=True), FakeHelpers())
    _, rows, summary = summarize_run(finished.path)
    assert [(r.requests, r.stonewall_requests, r.pass_requests, r.bytes) for r in rows] == [(8, 8, 64, 8 * 64 * KiB)] * 3
    said = ("stonewall 0.002 s: 3 of 3 measurements stopped by it, after 12% of their requests (median; least 12%); "
            "their rates are of what they moved by then")
    assert f"p write: {said}" in terminal_lines(summary.tests[0])
    assert [w.message for w in summary.warnings if "stonewall" in w.message] == [said]


def _rows(stonewall_s, done, passes, wearout=None, seconds=None, file="p/data.bin") -> Table:
    n = len(done)
    return Table.from_rows(Measurement(
        seq=k, test="p", op="write", kind="pattern", access="sequential", size_bytes=2**20, granularity_bytes=4096,
        stride_bytes=0, trial=k, file=file, bytes=4096 * done[k], seconds=(seconds or [1.0] * n)[k],
        stonewall_s=stonewall_s, stonewall_requests=done[k], pass_requests=passes[k],
        wearout_requests=(wearout or [0] * n)[k], stonewall_seconds=0.5, io_seconds=1.0) for k in range(n))


def test_the_stonewall_summary_counts_what_it_stopped():
    one = stonewall(_rows(0.5, [10, 30, 64, 20], [64] * 4))
    assert (one.stopped, one.measured, one.done_least, one.done_median, one.many) == (3, 4, 10 / 64, 20 / 64, False)
    assert one.line() == ("stonewall 0.5 s: 3 of 4 measurements stopped by it, after 31% of their requests (median; "
                          "least 16%); their rates are of what they moved by then")
    none = stonewall(_rows(9.0, [64, 64], [64, 64]))
    assert none.stopped == 0 and none.line() == "stonewall 9 s: no measurement reached it (each did its whole pass)"
    steps = stonewall(_rows(0.5, [8, 16], [64, 64], wearout=[40, 0], seconds=[2.0, 1.5], file=ALL_CLIENTS))
    assert steps.many and steps.wearout_max_s == 1.5            # 2.0 s minus the 0.5 s of the stonewall's requests
    assert "2 of 2 steps stopped by it, the slowest client by then after 19% of its requests" in steps.line()
    assert stonewall(_rows(np.nan, [1], [1])) is None


def test_plan_show_says_the_measurements_stop_at_the_stonewall(tmp_path):
    from click.testing import CliRunner

    from stibium_py.cli import main
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: x\ntests:\n  - {name: p, kind: pattern, op: write, granularities: [4KiB], bytes: 1MiB, "
                    "stonewall: 30s}\n")
    shown = CliRunner().invoke(main, ["plan", "show", str(plan)])
    assert shown.exit_code == 0, shown.output
    assert ("; each measurement stops at its stonewall, 30 s after its start, if its bytes take longer (the bytes "
            "are at most these)") in " ".join(shown.output.split())


@pytest.mark.parametrize("given", ["true", "false"])
def test_a_plan_s_stonewall_is_seconds_not_a_flag(tmp_path, given):
    from stibium_py.plan import load_plan
    plan = tmp_path / "p.yaml"
    plan.write_text("name: sw\ntests:\n  - name: t\n    kind: pattern\n    op: read\n    granularities: [64KiB]\n"
                    f"    bytes: 1MiB\n    stonewall: {given}\n")
    with pytest.raises(PlanError) as e:
        load_plan(plan)
    assert str(e.value) == (f"{plan}:8: tests[0].stonewall: takes a number or a value with its unit (such as 30s or "
                            f"4KiB), not {given}")
