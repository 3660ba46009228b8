"""Many clients under `mpiexec --oversubscribe -n 4` on one machine (Open MPI and mpi4py from the package
index, installed by the README's test command): both layouts, read_from: other, a rank that cannot see the
target, an interrupted run and its resume, a series of runs and its resume, a killed rank, compare's refusal of
many clients against one."""

from __future__ import annotations

import atexit
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from stibium_py.machine import sysinfo

MPIEXEC = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
STIBIUM = [sys.executable, "-m", "stibium_py"]

PLAN = """\
name: four
tests:
  - name: f
    kind: files
    sizes: [64KiB, 256KiB]
    repeats: 3
    clients: {read_from: other}
  - name: p
    kind: pattern
    op: [write, read]
    granularities: [64KiB]
    bytes: 1MiB
    trials: 3
    clients: {layout: shared, read_from: other}
"""

LONG_TRIALS = 250          # steps enough that a signal after the first ten meets the run in the middle
LONG_PLAN = f"""\
name: long
tests:
  - name: p
    kind: pattern
    op: [write, read]
    access: random
    granularities: [64KiB]
    bytes: 4MiB
    trials: {LONG_TRIALS}
"""


_SESSIONS: list[str] = []


def _env() -> dict[str, str]:
    """Open MPI refuses root unless told (CI runs as root). Its session folders (TMPDIR/ompi.PID) and its ranks'
    shared memory files (sm_segment.*, in /dev/shm by default) go into folders of the tests' own, removed when the
    test process ends: a job a test kills or stops leaves them behind (16 MiB files, four a job), and PMIx's socket
    paths under the session folder must stay within 108 bytes (a test's tmp_path can be longer)."""
    if not _SESSIONS:
        shm = Path("/dev/shm")
        _SESSIONS.append(tempfile.mkdtemp(prefix="sb-mpi-", dir="/tmp"))
        _SESSIONS.append(tempfile.mkdtemp(prefix="sb-mpi-", dir=shm) if shm.is_dir() else _SESSIONS[0])
        for folder in set(_SESSIONS):
            atexit.register(shutil.rmtree, folder, True)
    return {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "TMPDIR": _SESSIONS[0],
            "OMPI_MCA_btl_sm_backing_directory": _SESSIONS[1]}


def mpi(n: int, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([MPIEXEC, "--oversubscribe", "-n", str(n), *STIBIUM, *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout)


def mpi_background(n: int, *args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([MPIEXEC, "--oversubscribe", "-n", str(n), *STIBIUM, *args], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def rows_of(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "measurements.csv", newline="") as f:
        return list(csv.DictReader(f))


def the_run(out: Path) -> Path:
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


@pytest.fixture(scope="module")
def four(tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """One run of PLAN by four ranks: (its run directory, its target, the finished mpiexec)."""
    tmp = tmp_path_factory.mktemp("four")
    (tmp / "plan.yaml").write_text(PLAN)
    target = tmp / "store"
    done = mpi(4, "run", "plan.yaml", "--target", str(target), "--out", "reports", cwd=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    return the_run(tmp / "reports"), target, done


def test_four_clients_in_step_with_both_layouts_and_reads_of_another_clients_writes(four):
    run_dir, target, done = four
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "complete" and run["clients"]["ranks"] == 4
    clocks = run["clients"]["launches"][0]["clocks"]
    assert [c["rank"] for c in clocks] == [0, 1, 2, 3]
    assert all(c["same_clock"] and c["offset_ns"] == 0 for c in clocks)    # one machine: one clock
    rows = rows_of(run_dir)
    assert not [r for r in rows if r["error"]]
    by_seq: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        by_seq.setdefault(r["seq"], []).append(r)
    assert len(by_seq) == 2 * 2 * 3 + 2 * 3
    assert all(sorted(int(r["rank"]) for r in rs) == [0, 1, 2, 3] for rs in by_seq.values())
    for r in rows:
        rank = int(r["rank"])
        if r["test"] == "f":
            owner = rank if r["op"] == "write" else (rank + 1) % 4
            assert r["file"].startswith(f"client-{owner}/")
            assert r["written_by"] == ("" if r["op"] == "write" else str(owner))
        else:
            owner = rank if r["op"] == "write" else (rank + 1) % 4
            assert r["file"] == "p/data.bin"
            assert int(r["offset_bytes"] or 0) == owner << 20
    assert list(target.iterdir()) == []                  # every rank's files removed by rank 0
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["clients"]["ranks"] == 4
    assert all(len(p["clients"]) == 4 for p in summary["clients"]["points"])
    assert "4 clients on 1 machine" in done.stdout
    assert "<h2>Clients</h2>" in (run_dir / "report.html").read_text()
    # each rank sees a pty under Open MPI, even with the launcher's output captured: plain lines, no progress bar
    # redrawn and no colour (a captured log of 55 KB of escape codes, 2.4 KB without mpiexec)
    assert "\x1b" not in done.stdout and "\r" not in done.stdout


def test_the_aggregate_of_a_step_is_every_clients_bytes_over_its_whole_span(four):
    from stibium_py.results.pipeline import load_run
    run_dir, _, _ = four
    loaded = load_run(run_dir)
    rows = rows_of(run_dir)
    pattern = [r for r in rows if r["test"] == "p"]
    seqs = sorted({int(r["seq"]) for r in pattern})
    agg = loaded.measurements
    for seq in seqs:
        step = [r for r in pattern if int(r["seq"]) == seq]
        span = max(float(r["run_end_s"]) for r in step) - min(float(r["run_start_s"]) for r in step)
        k = list(agg.col("seq")).index(seq)
        assert agg.value(k, "bytes") == 4 << 20
        assert agg.value(k, "seconds") == pytest.approx(span)


STONEWALL_PLAN = """\
name: wall
defaults: {engine: buffered}
tests:
  - name: p
    kind: pattern
    op: [write, read]
    granularities: [4KiB]
    bytes: 32MiB
    threads: [1, 2]
    trials: 2
    stonewall: 0.002
    clients: {layout: shared, read_from: other}
"""


def test_a_stonewall_stops_every_client_and_the_wearout_brings_each_to_the_furthest_count(tmp_path):
    """32 MiB in 4 KiB requests takes far longer than 2 ms: every step is stopped by the stonewall, each client
    at its own count, and every client then goes on to the furthest one's, so that each step's clients did the
    same work (IOR's stoneWallingWearOut); the terminal says so."""
    (tmp_path / "plan.yaml").write_text(STONEWALL_PLAN)
    done = mpi(4, "run", "plan.yaml", "--target", str(tmp_path / "store"), "--out", "reports", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = rows_of(the_run(tmp_path / "reports"))
    assert not [r for r in rows if r["error"]]
    steps: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        steps.setdefault(r["seq"], []).append(r)
    assert len(steps) == 8 and all(len(step) == 4 for step in steps.values())
    for step in steps.values():
        reached = {int(r["requests"]) for r in step}
        assert len(reached) == 1, step                      # the same work for every client
        furthest = max(int(r["stonewall_requests"]) for r in step)
        assert reached == {furthest}                        # the furthest client's count, no more
        for r in step:
            assert int(r["stonewall_requests"]) + int(r["wearout_requests"]) == int(r["requests"])
            assert int(r["bytes"]) == int(r["requests"]) * 4096 and int(r["pass_requests"]) == 8192
    plain = " ".join(done.stdout.split())
    assert "p write: stonewall 0.002 s: 4 of 4 steps stopped by it" in plain


FAILING_HELPER = """\
import json, os, subprocess, sys
real = sys.argv[1]
if sys.argv[2:3] != ["batch"]:
    os.execv(real, [real, *sys.argv[2:]])
for line in sys.stdin:
    args = json.loads(line)
    if "--wearout" in args:          # a helper that dies in the measurement, before its stonewall
        sys.exit(3)
    done = subprocess.run([real, *args], capture_output=True, text=True)
    print(json.dumps({**json.loads(done.stdout), "status": done.returncode}), flush=True)
"""


def test_a_rank_whose_helper_fails_before_its_stonewall_stops_the_run_in_the_exchange(tmp_path):
    """Rank 3's helper dies in its first stonewalled measurement: the others, waiting in the exchange of
    counts, meet its stop there (a step like any other): the run ends failed, naming rank 3, without a hang and
    without files left in the target."""
    from stibium_py.run.helper import find_helper
    (tmp_path / "plan.yaml").write_text(STONEWALL_PLAN)
    (tmp_path / "failing.py").write_text(FAILING_HELPER)
    wrapper = tmp_path / "failing-helper"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'failing.py'} {find_helper()} \"$@\"\n")
    wrapper.chmod(0o755)
    store = tmp_path / "store"
    run = ["run", "plan.yaml", "--target", str(store), "--out", "reports", "--quiet"]
    done = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "3", *STIBIUM, *run, ":", "-n", "1", "-x",
                           f"STIBIUM_HELPER={wrapper}", *STIBIUM, *run], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    run_dir = the_run(tmp_path / "reports")
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed" and record["stopped_by"] == "rank 3: the helper crashed (exit status 3)"
    assert list(store.iterdir()) == []


def test_many_clients_against_one_are_refused_unless_asked(four, tmp_path):
    run_dir, _, _ = four
    (tmp_path / "plan.yaml").write_text(PLAN)
    one = subprocess.run([*STIBIUM, "run", "plan.yaml", "--target", str(tmp_path / "t"), "--out", "solo"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr
    solo = the_run(tmp_path / "solo")
    refused = subprocess.run([*STIBIUM, "compare", str(run_dir), str(solo), "--out", str(tmp_path / "c.html")],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    assert refused.stderr == (f"stibium: {run_dir.name} ran 4 clients (its rates are their aggregate) and {solo.name} "
                              f"one; compare runs of many clients with each other, or pass --allow-mixed-clients\n")
    asked = subprocess.run([*STIBIUM, "compare", str(run_dir), str(solo), "--allow-mixed-clients", "--out",
                            str(tmp_path / "c.html")], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert asked.returncode == 0, asked.stderr


@pytest.mark.parametrize("runs", ["1", "2"])
def test_a_rank_that_cannot_see_the_target_is_refused_in_one_line(tmp_path, runs):
    """Rank 3 is given another folder (as a machine whose share is mounted elsewhere, or not at all): it
    cannot see the test folder rank 0 created, and nothing is left behind: not a run directory, not the folder
    of a series of runs."""
    (tmp_path / "plan.yaml").write_text(PLAN)
    shared, elsewhere = tmp_path / "store", tmp_path / "elsewhere"
    done = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "3", *STIBIUM, "run", "plan.yaml", "--target", str(shared),
                           "--out", "reports", "--runs", runs, ":", "-n", "1", *STIBIUM, "run", "plan.yaml", "--target",
                           str(elsewhere), "--out", "reports", "--runs", runs], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if line.startswith("stibium:")]
    host = subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip()
    assert len(said) == 1, done.stderr
    assert said[0].startswith(f"stibium: rank 3 ({host}) cannot see the test folder {shared.resolve()}/stibium-four-")
    assert said[0].endswith("that rank 0 created: the clients must share one store; give every rank the same shared "
                            "folder with --target")
    assert not shared.exists() and not elsewhere.exists()          # the targets the ranks made, gone again
    assert not (tmp_path / "reports").exists()


def _wait_for_rows(out: Path, proc: subprocess.Popen, rows: int, timeout_s: float = 120) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = list(out.iterdir()) if out.exists() else []
        if runs and (runs[0] / "measurements.csv").exists() and len(rows_of(runs[0])) >= rows:
            return runs[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("the run did not get going")


def _tree_of(pid: int) -> list[int]:
    """A process and every process below it, parents first (from /proc: the test runs on Linux)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        parent = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        tree.append(todo.pop(0))
        todo.extend(children.get(tree[-1], []))
    return tree


def _freeze(pid: int) -> None:
    """Stop a rank as a frozen machine stops: the rank and its helper both (a helper left running finishes the
    request it holds, and one that was slow to start it under load made its file after rank 0's clean-up)."""
    for member in _tree_of(pid):
        try:
            os.kill(member, signal.SIGSTOP)
        except ProcessLookupError:
            pass


def _assert_stopped_clean(run_dir: Path, target: Path, stopped_by: str) -> list[dict[str, str]]:
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert run["stopped_by"].startswith(stopped_by), run["stopped_by"]
    # every rank's test files removed; the test folder stays with rank 0's marker alone, for the resume
    folders = list(target.iterdir())
    assert len(folders) == 1, folders
    left = sorted(str(p.relative_to(folders[0])) for p in folders[0].rglob("*"))
    assert left == [".stibium-run"], left
    rows = rows_of(run_dir)
    complete = Counter(r["seq"] for r in rows if not r["error"])
    assert complete and set(complete.values()) == {4}   # a step is kept whole, or its rows carry an error
    return rows


def test_an_interrupted_run_keeps_every_ranks_rows_and_resumes(tmp_path):
    (tmp_path / "plan.yaml").write_text(LONG_PLAN)
    target = tmp_path / "store"
    # a seed of the run's own: every rank must expand the resumed plan with it (random offsets), not the plan's
    proc = mpi_background(4, "run", "plan.yaml", "--target", str(target), "--out", "reports", "--seed", "7",
                          cwd=tmp_path)
    run_dir = _wait_for_rows(tmp_path / "reports", proc, 40)
    rank0 = json.loads((run_dir / "run.json").read_text())["pid"]
    os.kill(rank0, signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    _assert_stopped_clean(run_dir, target, "SIGINT at rank 0")
    # resumed with another number of clients: refused in one line
    two = mpi(2, "resume", str(run_dir), cwd=tmp_path)
    said = [line for line in two.stderr.splitlines() if line.startswith("stibium:")]
    assert said == [f"stibium: {run_dir} ran with 4 clients; resume it with mpiexec -n 4 stibium resume {run_dir}"]
    alone = subprocess.run([*STIBIUM, "resume", str(run_dir)], cwd=tmp_path, capture_output=True, text=True)
    assert alone.returncode == 2 and "resume it with mpiexec -n 4" in alone.stderr
    # the plan file edited since: every rank resumes the plan kept in run.json, which rank 0 sends
    (tmp_path / "plan.yaml").write_text(LONG_PLAN.replace("bytes: 4MiB", "bytes: 2MiB"))
    done = mpi(4, "resume", str(run_dir), cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = rows_of(run_dir)
    kept = Counter((r["seq"], r["rank"]) for r in rows if not r["error"])
    assert set(kept.values()) == {1} and len(kept) == 2 * LONG_TRIALS * 4      # every step of every rank, once
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "complete" and len(record["clients"]["launches"]) == 2
    assert len(record["resumed_utc"]) == 1 and record["machine"]["boot_id"] == sysinfo.boot_id()
    assert list(target.iterdir()) == []


def test_a_series_of_many_clients_runs_in_step_and_resumes_where_it_stopped(tmp_path):
    """--runs 2 under two ranks: SIGINT at rank 0 in the first run stops the series (it and the run marked
    interrupted, the test files gone, no second run begun); `stibium resume` of the series under two ranks
    finishes that run and runs the second, each with both clients' rows, and the series is summed up."""
    trials = 100
    (tmp_path / "plan.yaml").write_text(LONG_PLAN.replace(f"trials: {LONG_TRIALS}", f"trials: {trials}"))
    target, out = tmp_path / "store", tmp_path / "reports"
    proc = mpi_background(2, "run", "plan.yaml", "--target", str(target), "--out", "reports", "--runs", "2",
                          "--seed", "7", cwd=tmp_path)
    deadline = time.monotonic() + 120
    while True:
        first = next(out.iterdir()) / "run-1" if out.exists() and any(out.iterdir()) else Path("none")
        if (first / "measurements.csv").exists() and len(rows_of(first)) >= 10:
            break
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    series = first.parent
    os.kill(json.loads((first / "run.json").read_text())["pid"], signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert json.loads((series / "series.json").read_text())["status"] == "interrupted"
    assert json.loads((first / "run.json").read_text())["status"] == "interrupted"
    assert not (series / "run-2").exists()
    assert [sorted(p.name for p in d.iterdir()) for d in target.iterdir()] == [[".stibium-run"]]   # for the resume
    done = mpi(2, "resume", str(series), cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((series / "series.json").read_text())["status"] == "complete"
    for run_dir in (first, series / "run-2"):
        record = json.loads((run_dir / "run.json").read_text())
        assert record["status"] == "complete" and record["clients"]["ranks"] == 2
        kept = Counter((r["seq"], r["rank"]) for r in rows_of(run_dir) if not r["error"])
        assert set(kept.values()) == {1} and len(kept) == 2 * trials * 2      # every step of both ranks, once
    assert "stibium summary: 2 runs" in done.stdout
    assert list(target.iterdir()) == []


def test_a_killed_rank_stops_the_run_and_the_status_says_so(tmp_path):
    (tmp_path / "plan.yaml").write_text(LONG_PLAN)
    target = tmp_path / "store"
    proc = mpi_background(4, "run", "plan.yaml", "--target", str(target), "--out", "reports", cwd=tmp_path)
    run_dir = _wait_for_rows(tmp_path / "reports", proc, 40)
    clocks = json.loads((run_dir / "run.json").read_text())["clients"]["launches"][0]["clocks"]
    os.kill(clocks[2]["pid"], signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    _assert_stopped_clean(run_dir, target, "SIGTERM at rank 0")


def test_a_rank_that_stops_answering_is_named_after_the_silence_bound_and_the_run_resumes(tmp_path):
    """A rank stopped (SIGSTOP: as a machine that froze, or whose network was cut, it sends nothing and its
    connections stay open) is taken for lost after --client-silence: rank 0 marks the run interrupted naming it,
    with the rows of every step the ranks finished kept; resumed, the run completes."""
    (tmp_path / "plan.yaml").write_text(LONG_PLAN)
    target = tmp_path / "store"
    proc = subprocess.Popen([MPIEXEC, "--oversubscribe", "-n", "4", *STIBIUM, "run", "plan.yaml", "--target",
                             str(target), "--out", "reports", "--client-silence", "3"], cwd=tmp_path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        run_dir = _wait_for_rows(tmp_path / "reports", proc, 40)
        clocks = json.loads((run_dir / "run.json").read_text())["clients"]["launches"][0]["clocks"]
        _freeze(clocks[3]["pid"])
        deadline = time.monotonic() + 60
        while json.loads((run_dir / "run.json").read_text())["status"] == "running":
            assert time.monotonic() < deadline, "not marked within 60 s"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)        # the stopped rank keeps the launcher waiting
        proc.communicate(timeout=60)
    host = socket.gethostname()
    rows = _assert_stopped_clean(run_dir, target, f"rank 3 ({host}) stopped answering: nothing from it for 3 s "
                                                  f"(the bound: 3 s; a network cut, or a machine that stopped)")
    assert {r["rank"] for r in rows if not r["error"]} == {"0", "1", "2", "3"}
    done = mpi(4, "resume", str(run_dir), cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    kept = Counter((r["seq"], r["rank"]) for r in rows_of(run_dir) if not r["error"])
    assert set(kept.values()) == {1} and len(kept) == 2 * LONG_TRIALS * 4


def test_the_command_line_s_silence_default_is_the_team_s():
    from stibium_py.commands.running import run
    from stibium_py.clients.team import SILENCE_S
    option = next(p for p in run.params if p.name == "client_silence")
    assert option.default == SILENCE_S


def test_every_client_runs_the_plan_s_own_fio_job_file_that_rank_0_read(tmp_path):
    """bench_job with two clients: rank 0 reads the job file before the run, and every client runs it in its own
    folder, on its own laid-out file, a row for each of its jobs."""
    (tmp_path / "mine.fio").write_text("[global]\nfilename=data.bin\ndirect=1\nsize=1m\n\n[whole]\nrw=read\nbs=64k\n")
    (tmp_path / "plan.yaml").write_text("name: jobs\ntests:\n  - name: p\n    kind: pattern\n    op: read\n"
                                        "    granularities: [64KiB]\n    bytes: 1MiB\n    trials: 2\n    bench: fio\n"
                                        "    bench_job: mine.fio\n")
    done = mpi(2, "run", "plan.yaml", "--target", str(tmp_path / "store"), "--out", "reports", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    fio = [r for r in rows_of(the_run(tmp_path / "reports")) if r["instrument"] == "fio"]
    assert not [r for r in fio if r["error"]]
    assert sorted((int(r["trial"]), int(r["rank"]), int(r["bytes"])) for r in fio) == \
        [(0, 0, 1 << 20), (0, 1, 1 << 20), (1, 0, 1 << 20), (1, 1, 1 << 20)]
    # the run cut after its first trial (its later rows gone, its status interrupted) and resumed by both ranks:
    # every rank runs the job file rank 0 reads from the run directory again
    run_dir = the_run(tmp_path / "reports")
    kept = [r for r in rows_of(run_dir) if r["trial"] == "0"]
    with open(run_dir / "measurements.csv", newline="") as f:
        header = next(csv.reader(f))
    with open(run_dir / "measurements.csv", "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=header)
        out.writeheader()
        out.writerows(kept)
    record = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**record, "status": "interrupted", "ended_utc": None}))
    (tmp_path / "mine.fio").write_text("[global]\nfilename=data.bin\ndirect=1\nsize=1m\n\n[whole]\nrw=read\nbs=4k\n")
    done = mpi(2, "resume", str(run_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    fio = [r for r in rows_of(run_dir) if r["instrument"] == "fio"]
    assert sorted((int(r["trial"]), int(r["rank"]), int(r["granularity_bytes"])) for r in fio) == \
        [(0, 0, 65536), (0, 1, 65536), (1, 0, 65536), (1, 1, 65536)]        # the kept job, not the file edited since


def test_every_client_makes_a_tree_of_its_own_and_the_table_adds_their_files(tmp_path):
    """A tree test with two clients: every rank its own tree in its own folder, each phase a step of both; the
    summary's rate is the files both handled over the step's time, nothing of either tree left."""
    (tmp_path / "plan.yaml").write_text("name: trees\ntests:\n  - name: src\n    kind: tree\n    files: 50\n"
                                        "    file_size: 4KB\n    dirs: 5\n    trials: 2\n")
    store = tmp_path / "store"
    done = mpi(2, "run", "plan.yaml", "--target", str(store), "--out", "reports", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = the_run(tmp_path / "reports")
    rows = rows_of(run_dir)
    assert len(rows) == 2 * 7 * 2 and not [r for r in rows if r["error"]]
    assert {(r["rank"], r["op"]) for r in rows} == {(str(k), op) for k in (0, 1) for op in
                                                     ("create", "stat", "list", "read", "copy", "rename", "delete")}
    assert all(r["requests"] == "50" for r in rows if r["op"] != "list")
    summary = json.loads((run_dir / "summary.json").read_text())
    stat = next(t for t in summary["tests"] if t["op"] == "stat")
    assert stat["points"][0]["entries"] == 100                  # both clients' files in each step
    assert not list(store.rglob("*.dat"))


def test_every_client_replays_its_own_copy_of_the_trace_rank_0_read(tmp_path):
    """A replay test with two clients: rank 0 reads the trace beside the plan and sends it (the other rank's folder
    has none), each client replays it on a folder of its own, and the result takes both together: every call of
    both, a trial's elapsed time the slower client's; nothing of either copy left."""
    plan_dir = tmp_path / "plans"
    plan_dir.mkdir()
    shutil.copy(Path(__file__).parent / "fixtures" / "replay" / "save.trace", plan_dir / "save.trace")
    (plan_dir / "plan.yaml").write_text("name: replays\ntests:\n  - name: app\n    kind: replay\n"
                                        "    trace: save.trace\n    trials: 2\n")
    store = tmp_path / "store"
    done = mpi(2, "run", "plan.yaml", "--target", str(store), "--out", "reports", cwd=plan_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = the_run(plan_dir / "reports")
    rows = rows_of(run_dir)
    trials = [r for r in rows if not r["access"]]
    assert sorted((r["rank"], r["trial"]) for r in trials) == [("0", "0"), ("0", "1"), ("1", "0"), ("1", "1")]
    assert {r["file"] for r in trials} == {f"client-{k}/app/replay-{t}" for k in (0, 1) for t in (0, 1)}
    assert all(r["requests"] == "108" and r["mismatched_calls"] == "0" for r in trials)
    summary = json.loads((run_dir / "summary.json").read_text())
    (result,) = [t for t in summary["tests"] if t["kind"] == "replay"]
    assert (result["clients"], result["calls"]) == (2, 216)
    slower = [max(float(r["seconds"]) for r in trials if r["trial"] == t) for t in ("0", "1")]
    assert result["elapsed_s"]["estimate"] == pytest.approx(sum(slower) / 2)
    assert "216 calls by 2 clients together (108 each" in " ".join(done.stdout.split())
    assert not [p for p in store.rglob("*") if p.is_file() and p.name != ".stibium-run"]


def test_the_readme_s_one_machine_line_works_as_written(tmp_path):
    """The README's first many-clients line, for this user (root: the line with --allow-run-as-root), run as
    written on this machine (two cores: four clients need --oversubscribe), with PLAN a small plan. Open MPI's
    root switches are taken out of the environment, so that only the line's own flags count."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    lines = [ln.split("#")[0].split() for ln in readme.splitlines() if ln.startswith("mpiexec --oversubscribe")]
    as_root = os.geteuid() == 0
    (words,) = [w for w in lines if ("--allow-run-as-root" in w) == as_root]
    (tmp_path / "plan.yaml").write_text(PLAN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_ALLOW_RUN_AS_ROOT")}
    args = [MPIEXEC if w == "mpiexec" else "plan.yaml" if w == "PLAN" else w for w in words]
    stibium = args.index("stibium")
    done = subprocess.run([*args[:stibium], *STIBIUM, *args[stibium + 1:], "--out", "reports"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((the_run(tmp_path / "reports") / "run.json").read_text())["clients"]["ranks"] == 4


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_slowest_clients_table_is_one_line_a_point_at_every_width(four, width):
    from rich.console import Console
    from stibium_py.results.pipeline import summarize_run
    from stibium_py.report.build import terminal
    run_dir, _, _ = four
    _, _, summary = summarize_run(run_dir)
    console = Console(width=width, record=True, force_terminal=False)
    for r in terminal(summary, width):
        console.print(r)
    lines = console.export_text().splitlines()
    assert all(len(ln) <= width for ln in lines), [ln for ln in lines if len(ln) > width]
    start = next(k for k, ln in enumerate(lines) if "the slowest client of each point" in ln)
    rule = next(k for k in range(start, len(lines)) if set(lines[k].strip()) == {"─"})
    points = [p for p in summary.clients.points if p.slowest is not None]
    rows = lines[rule + 1:rule + 1 + len(points)]
    for p, row in zip(points, rows):
        assert re.match(r"\S", row) and re.search(rf" {p.slowest.rank} ", row), rows      # one line a point
        assert re.search(r"\d [kMGT]?B/s", row), row                                      # its rate whole


CLOCK_PLAN = """\
name: clocks
tests:
  - name: seq
    kind: pattern
    op: read
    access: sequential
    granularities: [1MiB]
    bytes: 16MiB
    trials: 4
"""


def _time_namespaces() -> str | None:
    """Why this machine cannot start a process with a clock of its own (a time namespace), or None."""
    if shutil.which("unshare") is None:
        return "no unshare (util-linux)"
    probe = subprocess.run(["unshare", "--time", "--monotonic", "5", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"no time namespaces here: {probe.stderr.strip()}"


@pytest.mark.parametrize("offset_s", [1000, -5])
def test_a_client_whose_clock_is_offset_is_placed_by_its_measured_offset(tmp_path, offset_s):
    """The second client in a time namespace of its own (its monotonic clocks offset_s ahead, or behind: as a
    container or a restored checkpoint has them), on the same boot as rank 0: its clock is placed by the
    measured offset, which must equal the namespace's exactly within the measured uncertainty, so its rows sit
    on rank 0's timeline (its steps start with rank 0's) and the aggregate is the clients' (the boot id, the
    same on both, once set the offset to 0: 33.6 KB/s for two clients that each read at 900 MB/s)."""
    why = _time_namespaces()
    if why:
        pytest.skip(why)
    (tmp_path / "plan.yaml").write_text(CLOCK_PLAN)
    run = [*STIBIUM, "run", "plan.yaml", "--target", str(tmp_path / "store"), "--out", "reports"]
    offset = ["unshare", "--time", "--monotonic", str(offset_s), "--boottime", str(offset_s)]
    done = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "1", *run, ":", "-n", "1", *offset, *run], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = the_run(tmp_path / "reports")
    zero, one = json.loads((run_dir / "run.json").read_text())["clients"]["launches"][0]["clocks"]
    assert zero["same_clock"] and zero["offset_ns"] == 0
    # rank 0's time = rank 1's time + offset: rank 1's clock is offset_s ahead, so its offset is -offset_s
    assert not one["same_clock"] and 0 < one["uncertainty_ns"] <= 5_000_000
    assert abs(one["offset_ns"] + offset_s * 10**9) <= one["uncertainty_ns"], one
    rows = rows_of(run_dir)
    for seq in {r["seq"] for r in rows}:
        starts = {r["rank"]: float(r["run_start_s"]) for r in rows if r["seq"] == seq}
        assert abs(starts["0"] - starts["1"]) < 0.5, (seq, starts)          # both start after the step's barrier
    summary = json.loads((run_dir / "summary.json").read_text())
    [point] = summary["clients"]["points"]
    each = [c["rate_bytes_per_s"] for c in point["clients"]]
    aggregate = next(p for t in summary["tests"] for p in t.get("points", []))["throughput_bytes_per_s"]["estimate"]
    # the step's bytes over its span from the first start to the last end: at least the slower client's rate (both
    # moved the same bytes), where a misplaced clock gave 33.6 KB/s. Not the faster one's: under load one client
    # read at 512 MB/s beside the other's 1269 (aggregate 1024, twice the slower: a CI run)
    assert aggregate >= 0.9 * min(each), (aggregate, each)


def test_streams_run_on_every_client_at_once_and_the_store_counts_them_all(tmp_path):
    """Three clients: each runs a count's streams at once, every client together, in a folder of its own; the
    result counts every client's frames (3 x n streams on the store). A search (streams: most) judged on rank 0
    and shared: 32 MiB frames at 1000 fps cannot be on time (32 GB/s), so every client's one stream drops and
    the search stops there, on every rank alike."""
    (tmp_path / "plan.yaml").write_text(
        "name: s\ntests:\n  - name: clips\n    kind: stream\n    frame_bytes: 256KiB\n    fps: 25\n"
        "    streams: [1, 2]\n    seconds: 1\n    trials: 1\n  - name: shots\n    kind: stream\n"
        "    frame_bytes: 128KiB\n    fps: 24\n    layout: sequence\n    streams: 2\n    frames: 6\n"
        "    trials: 1\n    ops: [capture]\n  - name: flood\n    kind: stream\n    frame_bytes: 32MiB\n"
        "    fps: 1000\n    frames: 2\n    buffer_frames: 0\n    streams: most\n    trials: 1\n")
    done = mpi(3, "run", "plan.yaml", "--target", str(tmp_path / "t"), "--out", "reports", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = the_run(tmp_path / "reports")
    rows = rows_of(run_dir)
    clips = [r for r in rows if r["test"] == "clips" and r["chunk"]]
    for n in (1, 2):
        for op in ("write", "read"):
            mine = [r for r in clips if r["streams"] == str(n) and r["op"] == op]
            assert sorted({r["rank"] for r in mine}) == ["0", "1", "2"] and len(mine) == 3 * n * 25
    shots = [r for r in rows if r["test"] == "shots" and r["chunk"]]
    assert len(shots) == 3 * 2 * 6
    flood = {(r["op"], r["streams"]) for r in rows if r["test"] == "flood"}
    assert flood == {("write", "1"), ("read", "1")}          # the search asked for 1 alone, on every rank
    summary = json.loads((run_dir / "summary.json").read_text())
    for t in summary["tests"]:
        assert t["clients"] == 3
    clips_write = next(t for t in summary["tests"] if t["name"] == "clips" and t["op"] == "write")
    assert [p["frames"] for p in clips_write["points"]] == [75, 150]
    flood_read = next(t for t in summary["tests"] if t["name"] == "flood" and t["op"] == "read")
    assert flood_read["most_streams"] == 0 and flood_read["points"][0]["dropped"] == 6
    said = " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", done.stdout).split())
    assert "flood playback: even 3 clients x 1 stream (3 on the store) dropped 100.0 % of their frames" in said
    assert not [p for p in (tmp_path / "t").rglob("*") if p.is_file()]