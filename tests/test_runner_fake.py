"""The runner's order and resume logic with a fake helper (tests/fake_helper.py): no compiled binary."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from stibium_py.run.preflight import RunError
from stibium_py.run import LoadedPlan, RunOptions, resume_run, start_run
from stibium_py.rundir.store import read_run_json
from stibium_py.rundir.csvread import read_measurements

from fake_helper import LATENCY_S, RATE_BYTES_PER_S, FakeHelpers

PLAN = """name: fake
tests:
  - name: f
    kind: files
    sizes: [64KiB, 256KiB]
    repeats: 2
  - name: p
    kind: pattern
    op: [read, write]
    granularities: [4KiB, 16KiB]
    bytes: 64KiB
    trials: 2
"""


def _plan(tmp_path):
    path = tmp_path / "fake.yaml"
    path.write_text(PLAN)
    return LoadedPlan.read(path)


def _options(tmp_path):
    return RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)


def test_a_run_measures_every_operation_in_order_and_cleans_up(tmp_path):
    helpers = FakeHelpers()
    finished = start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), helpers)
    assert finished.status == "complete" and read_run_json(finished.path).status == "complete"
    rows, damaged = read_measurements(finished.path)
    assert damaged == 0 and sorted(rows.seq.tolist()) == list(range(16))      # 8 files ops, 8 pattern ops
    # files: every write before any read; each read of a files test and each pattern read evicted first
    calls = helpers.sessions[0].calls
    measured = [c for c in calls if c[0] in ("read", "write") and "--latency" not in c]
    files = [c[0] for c in measured if "/f/" in c[2]]
    assert files == ["write"] * 4 + ["read"] * 4
    evicted = {c[2] for c in calls if c[0] == "evict"}
    assert all(c[2] in evicted for c in measured if c[0] == "read")
    # the modelled seconds arrive in the rows unchanged
    first = rows.row(0)
    assert first.seconds == pytest.approx(LATENCY_S + first.bytes / RATE_BYTES_PER_S)
    assert list((tmp_path / "t").iterdir()) == []        # the test folder and the probe's file are gone


def test_the_disks_block_size_reaches_every_measurement_where_the_facts_know_it(tmp_path, monkeypatch):
    # macOS: diskutil's DeviceBlockSize is the unit of xnu's uncached-read rule; the helper cannot ask the disk
    from stibium_py.machine import sysinfo
    real = sysinfo.target_facts
    monkeypatch.setattr(sysinfo, "target_facts", lambda target: {**real(target), "device_block_bytes": 512})
    helpers = FakeHelpers()
    start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), helpers)
    assert helpers.once_calls[0][-2:] == ["--device-block", "512"]
    measured = [c for c in helpers.sessions[0].calls if c[0] in ("read", "write") and "--latency" not in c]
    assert measured and all(c[-2:] == ["--device-block", "512"] for c in measured)


def test_without_the_disks_block_size_no_flag_is_passed(tmp_path):
    helpers = FakeHelpers()      # Linux facts: statx gives the helper the alignment itself
    start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), helpers)
    assert "--device-block" not in helpers.once_calls[0]
    assert not any("--device-block" in c for c in helpers.sessions[0].calls)


def test_an_interrupted_run_resumes_without_repeating_a_measurement(tmp_path):
    helpers = FakeHelpers(interrupt_at=5)
    with pytest.raises(RunError) as e:
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), helpers)
    assert e.value.exit_code == 130
    run_dir = next((tmp_path / "r").iterdir())
    assert read_run_json(run_dir).status == "interrupted"
    kept, _ = read_measurements(run_dir)
    assert sorted(kept.seq.tolist()) == [0, 1, 2, 3, 4]
    finished = resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), helpers)
    assert finished.status == "complete"
    rows, _ = read_measurements(run_dir)
    assert sorted(rows.seq.tolist()) == list(range(16))
    # the resumed session measured only what was missing
    resumed = [c for c in helpers.sessions[1].calls if c[0] in ("read", "write") and "--latency" not in c]
    assert len(resumed) == 11


def test_a_reboot_between_writes_and_reads_waits_and_resumes_after_the_restart(tmp_path, monkeypatch):
    from stibium_py.machine import sysinfo
    path = tmp_path / "boot.yaml"
    path.write_text("name: boot\ntests:\n  - name: f\n    kind: files\n    sizes: [64KiB, 128KiB]\n    repeats: 3\n"
                    "    between: reboot\n")
    monkeypatch.setattr(sysinfo, "boot_id", lambda: "before")
    finished = start_run(LoadedPlan.read(path), _options(tmp_path), Console(quiet=True), FakeHelpers())
    assert finished.status == "waiting-for-reboot"
    rows, _ = read_measurements(finished.path)
    assert set(rows.op.tolist()) == {"write"} and len(rows) == 6
    with pytest.raises(RunError) as e:                  # the same boot: not restarted yet
        resume_run(finished.path, RunOptions(progress=False), Console(quiet=True), FakeHelpers())
    assert "has not restarted since" in str(e.value) and e.value.exit_code == 2
    monkeypatch.setattr(sysinfo, "boot_id", lambda: "after")
    helpers = FakeHelpers()
    assert resume_run(finished.path, RunOptions(progress=False), Console(quiet=True), helpers).status == "complete"
    rows, _ = read_measurements(finished.path)
    assert sorted(rows.op.tolist()) == ["read"] * 6 + ["write"] * 6
    # after the restart no write is measured again, and every file is read once
    measured = [c for c in helpers.sessions[0].calls if c[0] in ("read", "write") and "--latency" not in c]
    assert [c[0] for c in measured] == ["read"] * 6
    assert read_run_json(finished.path).rebooted is True


def _interrupted_on_volume(tmp_path, monkeypatch, uuid: str):
    """A run interrupted after five measurements, its target's volume recorded as `uuid` and its device number
    changed since (an external disk that came back as another diskN)."""
    import json

    from stibium_py.machine import sysinfo
    real = sysinfo.target_facts
    monkeypatch.setattr(sysinfo, "target_facts", lambda target: {**real(target), "volume_uuid": uuid})
    helpers = FakeHelpers(interrupt_at=5)
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), helpers)
    run_dir = next((tmp_path / "r").iterdir())
    meta = json.loads((run_dir / "run.json").read_text())
    meta["target_device"] += 1
    (run_dir / "run.json").write_text(json.dumps(meta))
    return run_dir, helpers


def test_resume_follows_the_volume_uuid_not_the_device_number(tmp_path, monkeypatch):
    from stibium_py.machine import sysinfo
    run_dir, helpers = _interrupted_on_volume(tmp_path, monkeypatch, "5E1F0A3C-7D2B-4C1E-9A8F-0123456789AB")
    monkeypatch.setattr(sysinfo, "volume_uuid", lambda path: "5E1F0A3C-7D2B-4C1E-9A8F-0123456789AB"
                        if path == tmp_path / "t" else None)        # asked of the target's folder
    assert resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), helpers).status == "complete"


def test_resume_on_another_volume_is_refused_by_its_uuid(tmp_path, monkeypatch):
    from stibium_py.machine import sysinfo
    run_dir, helpers = _interrupted_on_volume(tmp_path, monkeypatch, "5E1F0A3C-7D2B-4C1E-9A8F-0123456789AB")
    monkeypatch.setattr(sysinfo, "volume_uuid", lambda path: "0F00BA44-0000-4000-8000-000000000000")
    with pytest.raises(RunError) as e:
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), helpers)
    assert e.value.exit_code == 2
    assert str(e.value) == (f"the target {tmp_path / 't'} is on a different device than when the run started "
                            f"(volume 5E1F0A3C-7D2B-4C1E-9A8F-0123456789AB then, 0F00BA44-0000-4000-8000-000000000000 "
                            f"now); mount the same disk there to resume, or start a new run")


def test_the_memory_probes_file_is_gone_before_the_first_measurement(tmp_path, monkeypatch):
    # unsynced where Linux would not write it back before its removal, and removed at once (memory.probe_sync)
    from stibium_py.machine import memory
    monkeypatch.setattr(memory, "linux_background_bytes", lambda: 1 << 30)
    monkeypatch.setattr("sys.platform", "linux")
    helpers = FakeHelpers()
    there: list[bool] = []          # at each helper call: is the probe's file there?
    real_session = helpers.session

    def session():
        h = real_session()
        real_call = h.call
        h.call = lambda args, *a, **k: (there.append(any((tmp_path / "t").rglob(memory.PROBE_FILE))),
                                        real_call(args, *a, **k))[1]
        return h

    helpers.session = session
    start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), helpers)
    calls = helpers.sessions[0].calls
    probe_write = next(c for c in calls if c[0] == "write" and c[2].endswith(memory.PROBE_FILE))
    assert probe_write[probe_write.index("--sync") + 1] == "none"
    first_measured = next(i for i, c in enumerate(calls) if c[0] in ("read", "write") and "--latency" not in c)
    assert there[calls.index(probe_write) + 1] and not any(there[first_measured:])


def test_beside_a_report_the_files_are_removed_after_the_status_is_written(tmp_path, monkeypatch):
    # the command builds the report while a complete run's test files are removed (run.options.Removal)
    from stibium_py.run import driver
    seen: list[tuple[str, bool]] = []       # when the removal starts: run.json's status, the test folder there?

    class Watched(driver.Removal):
        def __init__(self, remove):
            run_dir = next((tmp_path / "r").iterdir())
            seen.append((read_run_json(run_dir).status, any((tmp_path / "t").iterdir())))
            super().__init__(remove)

    monkeypatch.setattr(driver, "Removal", Watched)
    finished = start_run(_plan(tmp_path), replace(_options(tmp_path), remove_beside_report=True),
                         Console(quiet=True), FakeHelpers())
    finished.wait_for_removal()
    assert seen == [("complete", True)]
    assert list((tmp_path / "t").iterdir()) == []


def test_a_removal_that_fails_is_raised_where_the_caller_waits(tmp_path, monkeypatch):
    from stibium_py.run.workdir import WorkDir

    def refused(self, names):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(WorkDir, "remove_files", refused)
    finished = start_run(_plan(tmp_path), replace(_options(tmp_path), remove_beside_report=True),
                         Console(quiet=True), FakeHelpers())
    assert finished.status == "complete"
    with pytest.raises(PermissionError):
        finished.wait_for_removal()
    finished.wait_for_removal()             # raised once


def test_in_a_series_a_runs_files_are_gone_before_the_next_run_measures(tmp_path, monkeypatch):
    import time
    from stibium_py.run import driver, start_series

    class Slow(driver.Removal):             # a removal still going on when the next run could begin
        def __init__(self, remove):
            super().__init__(lambda: (time.sleep(0.3), remove()))

    monkeypatch.setattr(driver, "Removal", Slow)
    helpers = FakeHelpers()
    folders: list[int] = []                 # at each session's start: how many test folders in the target
    real_session = helpers.session
    helpers.session = lambda: (folders.append(len(list((tmp_path / "t").iterdir()))), real_session())[1]
    finished = start_series(_plan(tmp_path), replace(_options(tmp_path), remove_beside_report=True), 2,
                            Console(quiet=True), helpers)
    assert finished.status == "complete" and finished.removal is not None
    finished.wait_for_removal()
    assert folders == [1, 1]                # each run's own folder only
    assert list((tmp_path / "t").iterdir()) == []


def test_a_series_whose_first_run_is_refused_leaves_no_folder(tmp_path):
    """The helper's `info` fails at the first run's start (after the series' own check of the plan and the
    target): the refusal in one line, and neither the series folder nor the folders made for it are left."""
    from stibium_py.run.helper import HelperResult
    from stibium_py.run import start_series

    class Failing(FakeHelpers):
        def once(self, args: list[str]) -> HelperResult:
            return HelperResult(1, {"error": "the helper could not open the target"})
    options = replace(_options(tmp_path), out_dir=tmp_path / "out" / "r")
    with pytest.raises(RunError) as refused:
        start_series(_plan(tmp_path), options, 2, Console(quiet=True), Failing())
    assert str(refused.value) == f"target {tmp_path / 't'}: the helper could not open the target"
    assert not (tmp_path / "out").exists() and not (tmp_path / "t").exists()


def test_a_series_cut_by_a_signal_says_so_and_resumes_from_that_run(tmp_path):
    """The first run of a series of two interrupted: the series is marked interrupted as its run is, and its
    resume finishes that run, runs the second and marks the series complete."""
    from stibium_py.run import resume_series, start_series
    from stibium_py.rundir.store import read_series_json
    out = tmp_path / "r"
    with pytest.raises(RunError):
        start_series(_plan(tmp_path), _options(tmp_path), 2, Console(quiet=True), FakeHelpers(interrupt_at=5))
    (series,) = out.iterdir()
    assert read_series_json(series).status == "interrupted"
    assert read_run_json(series / "run-1").status == "interrupted" and not (series / "run-2").exists()
    finished = resume_series(series, _options(tmp_path), Console(quiet=True), FakeHelpers())
    finished.wait_for_removal()
    assert finished.status == "complete" and read_series_json(series).status == "complete"
    assert [read_run_json(series / f"run-{i}").status for i in (1, 2)] == ["complete", "complete"]


def test_the_resumed_record_is_this_process_s_on_this_boot_with_one_more_resumption(tmp_path, monkeypatch):
    import os

    from stibium_py.machine import sysinfo
    helpers = FakeHelpers(interrupt_at=5)
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False, seed=7),
                  Console(quiet=True), helpers)
    run_dir = next((tmp_path / "r").iterdir())
    import json
    record = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**record, "pid": 1}))      # the run began in another process
    before = read_run_json(run_dir)
    monkeypatch.setattr(sysinfo, "boot_id", lambda: "a later boot")
    seen = []
    real_write = __import__("stibium_py.run.resume", fromlist=["write_run_json"]).write_run_json

    def watched(path, run):            # the record as resume writes it, before the driver goes on
        seen.append(run)
        real_write(path, run)
    monkeypatch.setattr("stibium_py.run.resume.write_run_json", watched)
    finished = resume_run(run_dir, RunOptions(progress=False, remove_beside_report=True), Console(quiet=True), helpers)
    assert finished.status == "complete" and finished.removal is not None      # the files go beside the report
    finished.wait_for_removal()
    assert not (tmp_path / "t" / before.work_dir.split("/")[-1]).exists()
    (resumed,) = seen
    assert resumed.status == "running" and resumed.pid == os.getpid() and not resumed.rebooted
    assert resumed.machine["boot_id"] == "a later boot" and len(resumed.resumed_utc) == len(before.resumed_utc) + 1
    after = read_run_json(run_dir)
    assert after.status == "complete" and after.seed == 7 and after.expanded["ops_sha256"] == before.expanded["ops_sha256"]
    assert after.clients == before.clients == {}             # one client: no crew recorded


@pytest.mark.parametrize("change,said", [
    ("complete", " is already complete; `stibium report {run}` shows it"),
    ("running", " is still running (process {pid}); wait for it or stop it first"),
    ("edited", "/run.json: its operations do not match its plan; was it edited?"),
    ("two clients", " ran with 2 clients; resume it with mpiexec -n 2 stibium resume {run}"),
])
def test_a_run_that_cannot_go_on_here_is_refused_in_one_line_with_status_2(tmp_path, monkeypatch, change, said):
    import json
    import os

    from click.testing import CliRunner

    from stibium_py.cli import main
    from stibium_py.machine import sysinfo
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    if change == "complete":
        record["status"] = "complete"
    elif change == "running":          # whether its process still runs is liveness.py's (tests/test_liveness.py)
        record.update(status="running", pid=os.getpid(), machine={**record["machine"], "boot_id": sysinfo.boot_id()})
        monkeypatch.setattr("stibium_py.run.resume.still_running", lambda run: run.pid == os.getpid())
    elif change == "edited":
        record["expanded"]["ops_sha256"] = "0" * 64
    else:
        record["clients"] = {"ranks": 2, "hosts": ["a", "b"], "read_shift": 1, "launches": []}
    (run_dir / "run.json").write_text(json.dumps(record))
    done = CliRunner().invoke(main, ["resume", str(run_dir)])
    assert done.exit_code == 2
    assert done.output == f"stibium: {run_dir}{said.format(run=run_dir, pid=os.getpid())}\n"


def test_one_client_s_run_resumed_under_two_is_refused_naming_one_client(tmp_path):
    from stibium_py.run.resume import resumable
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    with pytest.raises(RunError) as e:
        resumable(run_dir, clients=2)
    assert str(e.value) == f"{run_dir} ran with 1 client; resume it with stibium resume {run_dir}, without mpiexec"
    assert e.value.exit_code == 2


def test_the_ending_signals_raise_interrupted_in_this_process_and_are_put_back():
    import os
    import signal

    from stibium_py.run.signals import Interrupted, catch_ending_signals, restore
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        previous = catch_ending_signals()
        assert set(previous) == {signal.SIGTERM, signal.SIGHUP}
        for sig, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP")):
            with pytest.raises(Interrupted) as e:
                os.kill(os.getpid(), sig)         # the handler runs before the next statement
            assert e.value.signal_name == name
        restore(previous)
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL
        # SIGHUP ignored when the run starts (nohup) stays ignored; SIGTERM is still caught
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        previous = catch_ending_signals()
        assert set(previous) == {signal.SIGTERM} and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        restore(previous)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


SUSTAINED = """name: fill
tests:
  - name: s
    kind: sustained
    fraction_of_free: 0.5
    file_size: 1MiB
    granularity: 256KiB
    chunk: 512KiB
"""


def test_a_sustained_test_resumes_on_the_free_space_it_started_with_not_the_free_space_now(tmp_path, monkeypatch):
    # fraction_of_free is a share of the space free when the run began: the files the run wrote since take some
    # of it, so taken again at resume it would give other operations, and the run would be refused as edited
    import stibium_py.plan.load
    path = tmp_path / "fill.yaml"
    path.write_text(SUSTAINED)
    free = 200 << 20            # half of it to write: 100 MiB, which leaves the run's margin (5 %, 64 MB) free
    monkeypatch.setattr(stibium_py.plan.load, "free_bytes_at", lambda where: free)
    with pytest.raises(RunError):
        start_run(LoadedPlan.read(path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=2))
    run_dir = next((tmp_path / "r").iterdir())
    record = read_run_json(run_dir)
    assert [t.get("free_bytes") for t in record.expanded["tests"]] == [free]
    monkeypatch.setattr(stibium_py.plan.load, "free_bytes_at", lambda where: 2 << 20)     # less free now
    helpers = FakeHelpers()
    assert resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), helpers).status == "complete"
    rows, _ = read_measurements(run_dir)
    assert int(rows.bytes.sum()) == free // 2 and read_run_json(run_dir).expanded["ops_sha256"] == \
        record.expanded["ops_sha256"]


def test_resume_runs_the_plan_kept_in_run_json_not_the_file_edited_since(tmp_path):
    path = tmp_path / "fake.yaml"
    path.write_text(PLAN)
    with pytest.raises(RunError):
        start_run(LoadedPlan.read(path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    path.write_text(PLAN.replace("sizes: [64KiB, 256KiB]", "sizes: [1MiB]"))      # the plan file edited since
    assert resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers()).status == "complete"
    rows, _ = read_measurements(run_dir)
    assert sorted(set(rows.take(rows.test == "f").size_bytes.tolist())) == [64 << 10, 256 << 10]


@pytest.mark.parametrize("field", ["plan.source", "plan.text", "work_dir", "started_epoch_s"])
def test_a_run_json_without_what_resume_needs_names_the_field(tmp_path, field):
    import json
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    if field.startswith("plan."):
        del record["plan"][field.split(".")[1]]
    else:
        del record[field]
    (run_dir / "run.json").write_text(json.dumps(record))
    with pytest.raises(RunError) as e:
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers())
    assert str(e.value) == (f"{run_dir}/run.json: the run in it cannot be read again (KeyError: '{field}'); "
                            f"restore it from a copy of the run") and e.value.exit_code == 2


def test_resume_on_another_device_without_a_volume_uuid_is_refused_by_its_device_number(tmp_path, monkeypatch):
    import json
    from stibium_py.machine import sysinfo
    monkeypatch.chdir("/dev")          # another file system than the target's: the target's own device is looked at
    real = sysinfo.target_facts
    monkeypatch.setattr(sysinfo, "target_facts", lambda target: {k: v for k, v in real(target).items()
                                                                 if k != "volume_uuid"})
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    now = record["target_device"]
    (run_dir / "run.json").write_text(json.dumps({**record, "target_device": now + 1}))
    with pytest.raises(RunError) as e:
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers())
    from stibium_py.paths import volume_change
    assert str(e.value) == (f"the target {tmp_path / 't'} is on a different device than when the run started "
                            f"({volume_change(now + 1, None, now, None)}); mount the same disk there to resume, or "
                            f"start a new run")
    assert volume_change(now + 1, None, now, None) == f"device {now + 1} then, {now} now"


def test_a_test_folder_removed_since_is_made_again_and_one_that_cannot_be_is_refused(tmp_path, monkeypatch):
    import errno
    from stibium_py.run.workdir import WorkDir
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    work = read_run_json(run_dir).work_dir
    # an interrupted run's test folder keeps its marker alone (the proof that the run began here); removed since:
    assert sorted(p.name for p in Path(work).iterdir()) == [".stibium-run"]
    shutil.rmtree(work)
    # nothing on this machine shows the run as its own any more: its record alone does not choose where to write
    with pytest.raises(RunError) as e:
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers())
    assert e.value.exit_code == 2 and str(e.value) == (
        f"{run_dir}: nothing on this machine shows that this run was started here (its test folder {work} holds no "
        f"marker of it, and the history does not know it), so its record does not choose where to write; nothing "
        f"was written. Say where: stibium resume {run_dir} --target FOLDER")
    assert not Path(work).exists()
    given = RunOptions(progress=False, target=tmp_path / "t")
    real_create = WorkDir.create

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(WorkDir, "create", full)
    with pytest.raises(RunError) as e:
        resume_run(run_dir, given, Console(quiet=True), FakeHelpers())
    assert str(e.value) == f"cannot recreate the test folder {work}: No space left on device" and e.value.exit_code == 2
    markers = []

    def watched(self):                  # the folder made again carries this run's marker
        real_create(self)
        markers.append((self.path / ".stibium-run").read_text().splitlines()[0])
    monkeypatch.setattr(WorkDir, "create", watched)
    assert resume_run(run_dir, given, Console(quiet=True), FakeHelpers()).status == "complete"
    assert markers == [f"stibium test files of run {run_dir.name}; safe to delete"]
    rows, _ = read_measurements(run_dir)
    assert sorted(rows.seq.tolist()) == list(range(16))


def test_resume_shows_its_progress_on_a_terminal_when_asked(tmp_path):
    import io
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    assert resume_run(run_dir, RunOptions(progress=True), console, FakeHelpers()).status == "complete"
    assert "done" in out.getvalue()                       # the bar, ended at its total
    out = io.StringIO()
    quiet = tmp_path / "again"
    quiet.mkdir()
    with pytest.raises(RunError):
        start_run(_plan(quiet), _options(quiet), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((quiet / "r").iterdir())
    assert resume_run(run_dir, RunOptions(progress=False), Console(file=out, force_terminal=True, width=120),
                      FakeHelpers()).status == "complete"
    assert "done" not in out.getvalue()



class _RankOne:
    """Rank 1 of two, in this process: rank 0's shared values scripted, every value this rank gives to all kept."""

    rank, size, host = 1, 2, "here"

    def __init__(self, shared: list):
        self.shared, self.given = list(shared), []

    def share(self, value):
        return self.shared.pop(0)

    def everyone(self, value):
        self.given.append(value)
        return [None, value]


def test_a_rank_that_expands_the_resumed_plan_otherwise_stops_every_rank(tmp_path):
    # a rank with another stibium would measure other offsets than rank 0's: its operations are held to the
    # run's digest, and every rank stops (this rank quietly, with rank 0's exit status; rank 0 names it)
    from stibium_py import __version__
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    run = read_run_json(run_dir)
    sent = (run.plan.source, run.plan.text, run.seed, {**run.expanded, "ops_sha256": "0" * 64}, run.work_dir,
            run_dir.name)
    team = _RankOne([sent, {}])                     # rank 0 sends the run, then no trace (no replay test)
    with pytest.raises(SystemExit) as e:
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers(), team)
    assert e.value.code == 2
    assert team.given == [None, (2, f"this rank expanded the run's plan into other operations than rank 0; install "
                                    f"the same stibium ({__version__}) on every machine")]
    assert read_run_json(run_dir).status == "interrupted"          # nothing written


def test_a_run_json_without_its_tests_list_resumes_a_plan_that_needs_no_free_space(tmp_path):
    # expanded.tests keeps a sustained test's free space; a plan without one resumes without the list
    import json
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    del record["expanded"]["tests"]
    (run_dir / "run.json").write_text(json.dumps(record))
    assert resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers()).status == "complete"


class _Joined(Exception):
    """Raised by _RankZero where the crew would place the clocks: the test has seen what it came for."""


class _RankZero:
    """Rank 0 of two, in this process: every rank answers as rank 0 does, until the clocks."""

    rank, size, host = 0, 2, "here"

    def share(self, value):
        return value

    def everyone(self, value):
        return [value, value]

    def clocks(self, read_ns, boot_id=None):
        raise _Joined


def test_a_resume_of_many_clients_marks_the_test_folder_as_this_run_s(tmp_path):
    # the marker is what a later resume holds the folder to (workdir.made_for): the crew's token beside the run
    import json
    with pytest.raises(RunError):
        start_run(_plan(tmp_path), _options(tmp_path), Console(quiet=True), FakeHelpers(interrupt_at=5))
    run_dir = next((tmp_path / "r").iterdir())
    record = json.loads((run_dir / "run.json").read_text())
    record["clients"] = {"ranks": 2, "hosts": ["here", "here"], "read_shift": 1, "launches": []}
    (run_dir / "run.json").write_text(json.dumps(record))
    with pytest.raises(_Joined):
        resume_run(run_dir, RunOptions(progress=False), Console(quiet=True), FakeHelpers(), _RankZero())
    marker = (Path(record["work_dir"]) / ".stibium-run").read_text().splitlines()
    assert marker[0] == f"stibium test files of run {run_dir.name}; safe to delete"
    assert len(marker) == 2 and marker[1].startswith("clients: ")


class _LooseClocks(_RankZero):
    """Rank 0 of three, in this process: rank 2's clock placed no better than 6 ms (its round trips 12 ms)."""

    size = 3

    def everyone(self, value):
        return [value] * 3

    def clocks(self, read_ns, boot_id=None):
        from stibium_py.clients.team import ClientClock
        return [ClientClock(0, "here", 1, 0, 0, 0, 0, True), ClientClock(1, "here", 2, 0, 0, 8_000, 40, True),
                ClientClock(2, "far", 3, 123_000_000, 6_000_000, 12_000_000, 123_000_000, False)]


def test_a_rank_whose_clock_cannot_be_placed_within_the_bound_is_named_and_the_run_refused(tmp_path):
    from stibium_py.run.crew import join_crew
    from stibium_py.run.workdir import WorkDir
    work = WorkDir(tmp_path / "target" / "stibium-x", "x")
    (tmp_path / "target").mkdir()
    with pytest.raises(RunError) as e:
        join_crew(_LooseClocks(), work)
    assert e.value.exit_code == 2
    assert str(e.value) == ("the clock of rank 2 (far: the shortest round trip took 12.0 ms) cannot be placed on rank "
                            "0's within 5 ms, which the timeline and the aggregate need; run the clients over a "
                            "faster network, or fewer ranks than cores")
    assert list((tmp_path / "target").iterdir()) == []          # nothing left behind
