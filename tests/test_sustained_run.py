"""Sustained tests in real runs: the chunk rows add up, the clock runs on without gaps beyond the row's
writing out, the files are removed at the end and after an interruption, the space is checked before
anything is written, and a resumed run re-expands fraction_of_free from the free space it started with."""

from __future__ import annotations

import csv
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import interruptible
from click.testing import CliRunner

from stibium_py.kinds.sustained.result import chunks_in_order
from stibium_py.cli import main
from stibium_py.results.pipeline import load_run

from test_chunks import GAP_BOUND_NS

MiB = 2**20
PLAN = """\
name: sus
tests:
  - name: long
    kind: sustained
    bytes: 24MiB
    file_size: 8MiB
    granularity: 256KiB
    chunk: 1MiB
    read_back: true
"""


def _rows(run_dir: Path) -> list[dict]:
    with open(run_dir / "measurements.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("in_flight,chunk_mib", [("", 1), ("    queue_depth: 4\n    threads: 2\n", 4)])
def test_chunk_rows_add_up_and_the_clock_runs_on(disk_dir, in_flight, chunk_mib):
    """One request at a time (1 MiB chunks), and 4 in flight on each of 2 threads (4 MiB chunks, twice the
    2 MiB in flight)."""
    (disk_dir / "sus.yaml").write_text(PLAN.replace("chunk: 1MiB", f"chunk: {chunk_mib}MiB") + in_flight)
    per_file = 8 // chunk_mib
    result = CliRunner().invoke(main, ["run", str(disk_dir / "sus.yaml"), "--target", str(disk_dir / "t"),
                                       "--out", str(disk_dir / "r")])
    assert result.exit_code == 0, result.output
    run_dir = next((disk_dir / "r").glob("sus-*"))
    rows = _rows(run_dir)
    for op in ("write", "read"):
        files = [r for r in rows if r["op"] == op and r["chunk"] == ""]
        assert [int(r["trial"]) for r in files] == [0, 1, 2] and all(int(r["bytes"]) == 8 * MiB for r in files)
        for f in files:
            chunks = [r for r in rows if r["seq"] == f["seq"] and r["chunk"] != ""]
            assert [int(r["chunk"]) for r in chunks] == list(range(per_file))
            assert [int(r["bytes_done"]) for r in chunks] == [(k + 1) * chunk_mib * MiB for k in range(per_file)]
            assert sum(int(r["bytes"]) for r in chunks) == 8 * MiB
            assert all(r["started_s"] == f["started_s"] for r in chunks)
            # the chunks tile the measurement: each begins where the last ended plus its stated gap
            for before, after in zip(chunks, chunks[1:]):
                gap = int(after["start_ns"]) - int(before["end_ns"])
                assert 0 <= gap <= GAP_BOUND_NS
                assert abs(gap - float(after["chunk_gap_s"]) * 1e9) <= 2
            assert int(f["start_ns"]) <= int(chunks[0]["start_ns"]) and int(chunks[-1]["end_ns"]) <= int(f["end_ns"])
            # on the run's clock: after the runner sent the file, as long as the helper's clock says, in order
            starts, ends = ([float(r[k]) for r in chunks] for k in ("run_start_s", "run_end_s"))
            assert float(f["started_s"]) <= starts[0] < float(f["started_s"]) + 1
            for r, s, e in zip(chunks, starts, ends):
                assert abs((e - s) - float(r["seconds"])) < 1e-6
            assert all(b >= a for a, b in zip(ends, starts[1:]))
    assert list((disk_dir / "t").iterdir()) == []        # the files and the run's folder are gone
    summary = json.loads((run_dir / "summary.json").read_text())
    got = {(t["name"], t["op"]): t for t in summary["tests"]}
    assert set(got) == {("long", "write"), ("long", "read")}
    assert {(r["queue_depth"], r["threads"]) for r in rows} == {("4", "2") if in_flight else ("1", "1")}
    for t in got.values():
        assert t["kind"] == "sustained" and t["files"] == 3 and t["chunks"] == 3 * per_file
        assert t["bytes_written"] == 24 * MiB and t["points"]["bytes_done"][-1] == 24 * MiB
        assert 0 <= t["chunk_gap_s"]["max"] <= GAP_BOUND_NS / 1e9
    assert "long: sustained writes" in (run_dir / "report.html").read_text()


def test_too_little_space_is_refused_before_anything_is_written(disk_dir):
    free = shutil.disk_usage(disk_dir).free
    (disk_dir / "big.yaml").write_text(PLAN.replace("bytes: 24MiB", f"bytes: {free * 2}")
                                       .replace("file_size: 8MiB", "file_size: 1GiB"))
    result = CliRunner().invoke(main, ["run", str(disk_dir / "big.yaml"), "--target", str(disk_dir / "t"),
                                       "--out", str(disk_dir / "r")])
    assert result.exit_code == 2
    line = result.output.strip().splitlines()
    assert len(line) == 1 and line[0].startswith(f"stibium: target {disk_dir / 't'} has ")
    assert "free but the plan needs" in line[0] and line[0].endswith("free some space or choose another folder with --target")
    assert not (disk_dir / "t").exists() and not (disk_dir / "r").exists()


def test_an_interrupted_run_removes_its_files_and_resume_takes_the_same_bytes(disk_dir):
    """fraction_of_free is taken of the free space when the run started: resume expands the same files even
    though the free space has moved since (the run wrote and removed files in between)."""
    fraction = 48 * MiB / shutil.disk_usage(disk_dir).free
    plan = (PLAN.replace("bytes: 24MiB", f"fraction_of_free: {fraction:.12f}").replace("granularity: 256KiB",
                                                                                         "granularity: 4KiB")
            .replace("read_back: true", "read_back: false"))
    (disk_dir / "sus.yaml").write_text(plan)
    proc = interruptible([sys.executable, "-m", "stibium_py", "run", str(disk_dir / "sus.yaml"), "--target",
                          str(disk_dir / "t"), "--out", str(disk_dir / "r")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    run_dir = None
    while time.time() < deadline:
        runs = list((disk_dir / "r").glob("sus-*")) if (disk_dir / "r").exists() else []
        if runs and (runs[0] / "measurements.csv").exists() and len(_rows(runs[0])) >= 12:
            run_dir = runs[0]
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    assert run_dir is not None, "the run did not get going"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted"
    # removed after the interruption too; the test folder stays with its marker alone, for the resume
    assert [sorted(p.name for p in d.iterdir()) for d in (disk_dir / "t").iterdir()] == [[".stibium-run"]]
    before = _rows(run_dir)
    cut = [r for r in before if r["chunk"] != "" and not any(f["seq"] == r["seq"] and f["chunk"] == "" and
                                                             f["started_s"] == r["started_s"] for f in before)]
    done = subprocess.run([sys.executable, "-m", "stibium_py", "resume", str(run_dir)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert list((disk_dir / "t").iterdir()) == []
    after = _rows(run_dir)
    assert after[:len(before)] == before                             # nothing lost or rewritten
    files = [r for r in after if r["chunk"] == ""]
    total = sum(int(r["bytes"]) for r in files)
    # the same bytes as when the run started; near the 48 MiB aimed at (other writers on this disk may move the free
    # space between the test's reading of it and the run's: 1.3 % was seen while another job wrote to the disk)
    assert total == run["expanded"]["bytes_written"] and abs(total - 48 * MiB) <= 0.05 * 48 * MiB
    chunks, n_files = chunks_in_order(load_run(run_dir).valid)
    assert n_files == len(files) == len({r["seq"] for r in files})
    assert int(chunks.col("bytes").sum()) == total                   # the cut-off attempt's chunks are not counted
    assert len(chunks) + len(cut) == sum(1 for r in after if r["chunk"] != "")


def test_compare_puts_sustained_runs_side_by_side(disk_dir, tmp_path):
    (disk_dir / "sus.yaml").write_text(PLAN.replace("read_back: true", "read_back: false"))
    runs = []
    for i in range(3):
        out = disk_dir / f"r{i}"
        result = CliRunner().invoke(main, ["run", str(disk_dir / "sus.yaml"), "--target", str(disk_dir / "t"),
                                           "--out", str(out)])
        assert result.exit_code == 0, result.output
        runs.append(next(out.glob("sus-*")))
    page = tmp_path / "cmp.html"
    result = CliRunner().invoke(main, ["compare", *map(str, runs[:2]), "--json", "--out", str(page)])
    assert result.exit_code == 0, result.output
    cmp = json.loads(result.output)
    assert cmp["rows"] == [] and cmp["unmatched"] == {"only_in_a": [], "only_in_b": []}
    (entry,) = cmp["sustained"]
    assert (entry["test"], entry["op"]) == ("long", "write")
    for side in ("a", "b"):
        assert entry[side]["points"]["bytes_done"][-1] == 24 * MiB
    first = entry["ratios"][0]
    rate_a, rate_b = (entry[s]["stretches"][0]["rate_bytes_per_s"]["estimate"] for s in ("a", "b"))
    assert abs(first["ratio"]["estimate"] - rate_b / rate_a) < 1e-9
    assert first["ratio"]["low"] <= first["ratio"]["estimate"] <= first["ratio"]["high"]
    html = page.read_text()
    assert "long write: sustained" in html and "rate per chunk against bytes moved, both runs" in html
    # three runs: each against the first, in one table
    result = CliRunner().invoke(main, ["compare", *map(str, runs), "--json", "--out", str(page)])
    assert result.exit_code == 0, result.output
    many = json.loads(result.output)
    assert [(s["test"], s["op"], s["run"]) for s in many["sustained"]] == [("long", "write", runs[1].name),
                                                                          ("long", "write", runs[2].name)]
    assert many["sustained"][0]["ratios"] == entry["ratios"]
    html = page.read_text()
    assert "long write: sustained" in html and many["sustained"][1]["headline"] in html
    shown = CliRunner().invoke(main, ["compare", *map(str, runs), "--out", str(page)])
    assert shown.exit_code == 0 and f"long write, sustained, {runs[2].name}: " in " ".join(shown.output.split())


def test_plan_show_says_what_the_built_in_sustained_plan_writes_and_that_it_wears_the_drive():
    result = CliRunner().invoke(main, ["plan", "show", "sustained"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "sustained: writes " in text and " without a pause, 50% of the " in text and "free on the target now" in text
    assert "a row every 256 MiB" in text and "Wears the drive:" in text and "the files are removed at the end" in text
    assert " at 200 MB/s and " in text and " at 2 GB/s" in text


def test_a_sustained_plan_is_refused_in_one_line_where_it_cannot_run(tmp_path):
    cases = {
        "bytes: 1GB\n    fraction_of_free: 0.5": "give exactly one of bytes or fraction_of_free",
        "bytes: 1GB\n    max_bytes: 2GB": "max_bytes caps fraction_of_free; with bytes, lower bytes instead",
        "bytes: 1GB\n    engine: foundation\n    queue_depth: 4": "the foundation engine moves one request at a time",
        "bytes: 1GB\n    queue_depth: 64\n    threads: 32": "queue_depth 64 x threads 32 is 2048 requests in flight",
        "bytes: 1GB\n    chunk: 100KB": "100KB is less than one request of the granularity (1048576 bytes)",
        "bytes: 1GB\n    chunk: 4MiB\n    queue_depth: 4": "holds fewer than twice the 4 requests in flight",
    }
    for body, message in cases.items():
        plan = tmp_path / "p.yaml"
        plan.write_text(f"name: p\ntests:\n  - name: s\n    kind: sustained\n    {body}\n")
        result = CliRunner().invoke(main, ["plan", "check", str(plan)])
        assert result.exit_code == 2, (body, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (body, lines)


def test_a_series_of_sustained_runs_shows_each_run_s_curve_side_by_side(disk_dir):
    (disk_dir / "sus.yaml").write_text(PLAN.replace("read_back: true", "read_back: false"))
    result = CliRunner().invoke(main, ["run", str(disk_dir / "sus.yaml"), "--target", str(disk_dir / "t"),
                                       "--out", str(disk_dir / "r"), "--runs", "2"])
    assert result.exit_code == 0, result.output
    series = next((disk_dir / "r").glob("sus-*"))
    summary = json.loads((series / "summary.json").read_text())
    (entry,) = summary["sustained"]
    assert (entry["test"], entry["op"]) == ("long", "write")
    assert [r["run"] for r in entry["runs"]] == ["run-1", "run-2"]
    assert all(r["bytes_written"] == 24 * MiB and r["headline"] for r in entry["runs"])
    page = (series / "report.html").read_text()
    assert "long write: sustained, run by run" in page and entry["runs"][1]["headline"] in page


def test_the_drive_temperature_goes_with_each_chunk_read_at_most_once_a_period(disk_dir, monkeypatch):
    """The runner's temperature source replaced by a sensor that warms a degree each time it is asked, and
    its period (a second) shortened to 20 ms so that a short run asks several times: every chunk row
    carries the last reading, the sensor is asked at most once a period, and the summary and the report
    carry the temperature."""
    from stibium_py.machine import sysinfo
    from stibium_py.run.progress import Temperature
    monkeypatch.setattr(Temperature, "READ_EVERY_S", 0.02)
    asked = []

    def sensor(device):
        asked.append(time.monotonic())
        return 40.0 + len(asked), "hwmon"
    monkeypatch.setattr(sysinfo, "device_temperature_c", sensor)
    # the sensor is asked only for a device: give the target one, whatever this machine's layout (a container or
    # a chroot resolves none)
    target_facts = sysinfo.target_facts
    monkeypatch.setattr(sysinfo, "target_facts", lambda target: {**target_facts(target),
                                                                       "device": "/dev/stibium-test-disk"})
    # 4 KiB requests: the 24 MiB take long enough for many periods (0.22-0.25 s a file here)
    (disk_dir / "sus.yaml").write_text(PLAN.replace("read_back: true", "read_back: false")
                                       .replace("granularity: 256KiB", "granularity: 4KiB"))
    result = CliRunner().invoke(main, ["run", str(disk_dir / "sus.yaml"), "--target", str(disk_dir / "t"),
                                       "--out", str(disk_dir / "r")])
    assert result.exit_code == 0, result.output
    assert "temperature cannot be read" not in result.output
    run_dir = next((disk_dir / "r").glob("sus-*"))
    temps = [float(r["temperature_c"]) for r in _rows(run_dir) if r["chunk"] != ""]
    assert len(temps) == 24 and set(temps) <= {40.0 + k for k in range(1, len(asked) + 1)}
    assert len(asked) >= 3 and len(set(temps)) >= 2                     # asked again as the run went on
    assert temps == sorted(temps) and all(b - a >= 0.0199 for a, b in zip(asked, asked[1:]))
    assert len(asked) <= len(temps) + 1                                  # never more than a row's worth
    (t,) = json.loads((run_dir / "summary.json").read_text())["tests"]
    assert t["points"]["temperature_c"] == temps
    assert "drive temperature (" in (run_dir / "report.html").read_text()      # the second axis


def test_a_share_of_the_free_space_leaves_the_room_preflight_asks_for(tmp_path):
    """0.9 of a small disk's free space would leave less than the run's margin (5 % and 64 MB), and preflight
    would refuse the plan it made: the share is held to the room that leaves, as a verify's is."""
    from stibium_py.plan.expand import expand, space_wanted
    from stibium_py.plan.load import load_plan
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ntests:\n  - name: s\n    kind: sustained\n    fraction_of_free: 0.9\n"
                    "    granularity: 1MiB\n    chunk: 4MiB\n    file_size: 64MiB\n")
    plan, _ = load_plan(path)
    MiB = 1 << 20
    for free in (300 * MiB, 500 * MiB, 1000 * MiB):     # under 1.16 GB free, the room binds
        total = expand(plan, None, free).tests[0].files_bytes
        assert space_wanted(total) <= free < space_wanted(total + MiB)
    big = 100_000 * MiB                   # where the share leaves the margin, the share it is
    assert expand(plan, None, big).tests[0].files_bytes == int(0.9 * big) // MiB * MiB
