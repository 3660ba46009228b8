"""Real signals to a real run: SIGINT and SIGTERM keep every completed
measurement, mark the run interrupted, remove the test files and say how to
resume; resume finishes without repeating anything. After SIGKILL at most the
operation in flight is lost and resume still works."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import interruptible, measured_rows

PLAN = """\
name: slow
tests:
  - name: files
    kind: files
    sizes: [100KB, 1MB]
    repeats: 4
  - name: rnd
    kind: pattern
    op: read
    access: random
    granularities: [4KiB]
    bytes: 2MiB
    span: 16MiB
    trials: 60
"""
N_OPS = 16 + 60


def _start(d: Path) -> subprocess.Popen:
    (d / "slow.yaml").write_text(PLAN)
    return interruptible([sys.executable, "-m", "stibium_py", "run", str(d / "slow.yaml"), "--target", str(d / "t"),
                          "--out", str(d / "r")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_rows(d: Path, n: int, proc: subprocess.Popen) -> Path:
    deadline = time.time() + 60
    while time.time() < deadline:
        runs = list((d / "r").glob("slow-*")) if (d / "r").exists() else []
        if runs and (runs[0] / "measurements.csv").exists() and len(measured_rows(runs[0])) >= n:
            return runs[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("the run did not get going")


def _resume(run_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stibium_py", "resume", str(run_dir)], capture_output=True, text=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_keeps_the_measurements_and_resume_finishes(disk_dir, sig):
    proc = _start(disk_dir)
    run_dir = _wait_for_rows(disk_dir, 20, proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == f"stibium: run interrupted; finish it with `stibium resume {run_dir}`"
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted" and run["stopped_by"] == sig.name
    kept = measured_rows(run_dir)
    assert len(kept) >= 20 and all(r["error"] == "" for r in kept)
    # every reader says the run is not whole, and how to finish it
    said = subprocess.run([sys.executable, "-m", "stibium_py", "report", str(run_dir)], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "400"})
    assert said.returncode == 0, said.stderr
    assert (f"warning: this run is interrupted ({sig.name}): {len(kept)} of {N_OPS} measurements were taken, "
            f"and these numbers are of those alone. What to do: finish it with `stibium resume {run_dir}`"
            in " ".join(said.stdout.split()))
    # test files removed; the folder stays with its marker alone, the proof for resume that the run began here
    assert [p.name for p in (disk_dir / "t").iterdir()] == [Path(run["work_dir"]).name]
    assert [p.name for p in Path(run["work_dir"]).iterdir()] == [".stibium-run"]

    done = _resume(run_dir)
    assert done.returncode == 0, done.stderr
    rows = measured_rows(run_dir)
    seqs = [int(r["seq"]) for r in rows]
    assert sorted(seqs) == list(range(N_OPS))          # nothing repeated, nothing missing
    assert rows[: len(kept)] == kept                    # the first measurements untouched
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert (run_dir / "report.html").exists()


def test_the_interruption_tests_hold_where_the_shell_ignores_sigint(disk_dir):
    """pytest started in the background or under nohup inherits SIGINT ignored, and so would every child: the
    tests give their runs the default back (conftest.interruptible); a run started with SIGINT ignored keeps
    the ignore, as any program does (docs/run-directory.md)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)        # as nohup leaves it
    try:
        proc = _start(disk_dir)
    finally:
        signal.signal(signal.SIGINT, previous)
    run_dir = _wait_for_rows(disk_dir, 10, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP])
def test_a_signal_ignored_when_the_run_starts_stays_ignored(disk_dir, sig):
    """A run started with SIGINT ignored (in the background from a script) or SIGHUP ignored (nohup) keeps
    ignoring it, as any program does: the run goes on to its end (docs/run-directory.md)."""
    def ignored() -> None:
        for other in (signal.SIGINT, signal.SIGHUP):
            signal.signal(other, signal.SIG_IGN if other == sig else signal.SIG_DFL)
    (disk_dir / "slow.yaml").write_text(PLAN)
    proc = subprocess.Popen([sys.executable, "-m", "stibium_py", "run", str(disk_dir / "slow.yaml"), "--target",
                             str(disk_dir / "t"), "--out", str(disk_dir / "r")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=ignored)
    run_dir = _wait_for_rows(disk_dir, 10, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"


def test_sigkill_loses_at_most_the_operation_in_flight(disk_dir):
    proc = _start(disk_dir)
    run_dir = _wait_for_rows(disk_dir, 10, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    before = measured_rows(run_dir)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"
    # its process is gone: report and compare read it as interrupted, never as whole
    said = subprocess.run([sys.executable, "-m", "stibium_py", "report", str(run_dir), "--json"], capture_output=True,
                          text=True)
    assert said.returncode == 0, said.stderr
    first = json.loads(said.stdout)["warnings"][0]
    assert first["message"] == (f"this run is interrupted (its process ended without marking the run: a closed "
                                f"terminal, a kill, a crash or a power loss): {len(before)} of {N_OPS} measurements "
                                f"were taken, and these numbers are of those alone")
    assert first["what_to_do"] == f"finish it with `stibium resume {run_dir}`"
    compared = subprocess.run([sys.executable, "-m", "stibium_py", "compare", str(run_dir), str(run_dir), "--json",
                               "--out", str(disk_dir / "c.html")], capture_output=True, text=True)
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["differences"][:2] == [
        f"{side}'s run {run_dir.name} is interrupted (its process ended without marking the run: a closed terminal, a "
        f"kill, a crash or a power loss): its numbers are of the measurements taken before; finish it with `stibium "
        f"resume {run_dir}`" for side in "AB"]
    done = _resume(run_dir)
    assert done.returncode == 0, done.stderr
    seqs = sorted(int(r["seq"]) for r in measured_rows(run_dir))
    assert seqs == list(range(N_OPS))
    assert len(before) >= 10
