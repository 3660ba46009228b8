"""Fills: what a plan may say of the data its writes put on the disk, the data the helper makes for a stated
compressibility and share of repeated blocks, each row's fill, and the words when a rate depends on the fill."""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

import pytest
from rich.console import Console

from stibium_py import fills
from stibium_py.analysis.estimate import Estimate
from stibium_py.analysis.fill_rates import FillRate, sentence
from stibium_py.analysis.rates import PointKey, key_json, key_of, label
from stibium_py.errors import PlanError
from stibium_py.fio.job import job_text
from stibium_py.run.helper import find_helper
from stibium_py.results.pipeline import load_run
from stibium_py.plan.expand import expand
from stibium_py.plan.load import load_plan
from stibium_py.report.publish import CompareRequest, publish_compare, publish_run
from stibium_py.run import LoadedPlan, RunOptions, start_run
from stibium_py.units import format_rate

from fake_helper import FakeHelpers

KiB, MiB = 1024, 1024 * 1024


def load_plan_text(text: str):
    return load_plan("plan.yaml", text)[0]


@pytest.mark.parametrize("said, kept", [
    ("random", "random"), ("0x41", "0x41"), ("65", "65"),
    ({"compressible": "50%"}, "compressible=50%"), ({"compressible": 50, "dedupe": "25 %"}, "compressible=50%,dedupe=25%"),
    ({"dedupe": "25%"}, "dedupe=25%"), ({"compressible": "0%", "dedupe": 0}, "random"),
    ({"dedupe": "10%", "compressible": "100%"}, "compressible=100%,dedupe=10%"),
])
def test_a_fill_is_kept_as_one_text(said, kept):
    assert fills.canonical(said) == kept
    assert fills.canonical(kept) == kept


@pytest.mark.parametrize("said, message", [
    ({"compressible": 0.5}, "fill.compressible is a whole percent from 0% to 100%, such as 50%, not 0.5"),
    ({"compressible": "150%"}, "fill.compressible is a whole percent from 0% to 100%, not 150%"),
    ({"compressible": True}, "fill.compressible is a whole percent from 0% to 100%, such as 50%, not True"),
    ({"ratio": "50%"}, "a fill of stated ratios takes compressible and dedupe (each a percent such as 50%), not ratio"),
    ({}, "give compressible, dedupe or both, such as {compressible: 50%}"),
    ("zeros", "fill must be random, a byte such as 0x41, or {compressible: 50%, dedupe: 25%}, not 'zeros'"),
    ("0x100", "fill must be random, a byte such as 0x41, or {compressible: 50%, dedupe: 25%}, not '0x100'"),
])
def test_a_fill_a_plan_cannot_say_is_refused_with_what_it_may_be(said, message):
    with pytest.raises(ValueError) as e:
        fills.canonical(said)
    assert str(e.value) == message


def test_the_helper_fio_and_people_are_told_the_same_fill():
    assert fills.helper_text("compressible=50%,dedupe=25%") == "compressible=50,dedupe=25"
    assert fills.helper_text("dedupe=25%") == "compressible=0,dedupe=25"
    assert fills.helper_text("0x41") == "0x41" and fills.helper_text("random") == "random"
    assert fills.same("compressible=0,dedupe=25", "dedupe=25%") and fills.same("65", "0x41")
    assert not fills.same("compressible=50,dedupe=0", "dedupe=50%")
    assert fills.fio_lines("compressible=50%,dedupe=25%") == [
        "buffer_compress_percentage=50", "buffer_compress_chunk=4096", "dedupe_percentage=25"]
    assert fills.fio_lines("0x41") == ["buffer_pattern=65"] and fills.fio_lines("random") == []
    assert fills.describe("compressible=50%,dedupe=25%") == "50 % compressible, 25 % repeated blocks"
    assert fills.describe("0x00") == "the byte 0x00" and fills.describe("random") == "random data"


def _plan(fill_yaml: str, op: str = "write", extra: str = "") -> str:
    return f"""name: f
tests:
  - name: w
    kind: pattern
    op: {op}
    granularities: [64KiB]
    bytes: 256KiB
    trials: 6
    fill: {fill_yaml}
{extra}"""


def test_a_pattern_test_measures_each_point_with_each_fill_of_its_list():
    ops = expand(load_plan_text(_plan('[random, {compressible: 50%}, "0x00"]'))).ops
    assert len(ops) == 18
    assert sorted({o.fill for o in ops}) == ["0x00", "compressible=50%", "random"]
    assert all(sum(o.fill == f and o.trial == t for o in ops) == 1 for f in ("random", "0x00") for t in range(6))


def test_a_plan_of_one_fill_expands_to_the_operations_it_always_did():
    # the resume digest of a run of then (its operations' fields) stays what it was
    before = expand(load_plan_text(_plan("random"))).ops
    assert before == expand(load_plan_text(_plan("[random]"))).ops
    assert [o.as_dict() for o in before] == [o.as_dict() for o in expand(load_plan_text(
        _plan("random").replace("    fill: random\n", ""))).ops]


@pytest.mark.parametrize("plan, message", [
    (_plan("[random, {compressible: 50%}]", op="read"),
     "a list of fills is for writes (op: write): reads read the file as it was laid out, in one fill; give op: "
     "write, or one fill"),
    (_plan("[random, {compressible: 50%}]", op="[read, write]"),
     "a list of fills is for writes (op: write): reads read the file as it was laid out, in one fill; give op: "
     "write, or one fill"),
    (_plan("[random, {compressible: 50%}]", extra="    bench: fio\n"),
     "bench: fio measures one fill a test; give one fill, or leave out bench"),
    (_plan("[]"), "the list of fills is empty; give one fill, or leave fill out for defaults.fill"),
])
def test_a_list_of_fills_where_it_cannot_be_measured_is_refused(plan, message):
    with pytest.raises(PlanError) as e:
        load_plan_text(plan)
    assert message in str(e.value)


def test_a_files_test_takes_one_fill_not_a_list():
    plan = """name: f
tests:
  - name: f
    kind: files
    sizes: [64KiB]
    fill: [random, "0x00"]
"""
    with pytest.raises(PlanError):
        load_plan_text(plan)


def _helper_write(tmp_path: Path, fill: str, size: int) -> bytes:
    path = tmp_path / f"{fill.replace(',', '_')}.bin"
    done = subprocess.run([str(find_helper()), "write", "--path", str(path), "--bytes", str(size), "--granularity",
                           str(MiB), "--fill", fill, "--engine", "buffered", "--sync", "none"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["fill"] == fill
    return path.read_bytes()


@pytest.mark.parametrize("compressible", [25, 50, 75, 90])
def test_the_helper_s_data_compress_to_the_stated_share_with_zlib(tmp_path, compressible):
    data = _helper_write(tmp_path, f"compressible={compressible}", 8 * MiB)
    kept = len(zlib.compress(data, 6)) / len(data)
    assert kept == pytest.approx(1 - compressible / 100, abs=0.015)


@pytest.mark.parametrize("dedupe", [10, 25, 50])
def test_the_helper_s_data_repeat_the_stated_share_of_4_kib_blocks(tmp_path, dedupe):
    data = _helper_write(tmp_path, f"compressible=0,dedupe={dedupe}", 8 * MiB)
    blocks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    repeated = len(blocks) - len(set(blocks))
    assert repeated == len(blocks) * dedupe // 100                   # exactly, spread evenly
    # and no more compressible than random data: the repeats lie beyond a compressor's window
    assert len(zlib.compress(data, 6)) / len(data) > 0.97


def test_random_data_neither_compress_nor_repeat(tmp_path):
    data = _helper_write(tmp_path, "random", 8 * MiB)
    blocks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    assert len(set(blocks)) == len(blocks) and len(zlib.compress(data, 6)) > len(data)


def test_the_helper_refuses_a_share_beyond_100_percent(tmp_path):
    done = subprocess.run([str(find_helper()), "write", "--path", str(tmp_path / "x"), "--bytes", "4096",
                           "--fill", "compressible=101"], capture_output=True, text=True)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"] == \
        "--fill compressible=N,dedupe=M takes whole percents from 0 to 100, not 'compressible=101'"
    assert not (tmp_path / "x").exists()


def test_fio_is_given_the_same_ratios():
    ops = expand(load_plan_text(_plan("{compressible: 50%, dedupe: 25%}"))).ops
    text = job_text(ops[0], Path("/t/w/data.bin"), "psync")
    assert "buffer_compress_percentage=50\nbuffer_compress_chunk=4096\ndedupe_percentage=25\n" in text


def _run(tmp_path: Path, name: str, plan: str, compressing: bool) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(plan)
    options = RunOptions(target=tmp_path / f"t-{name}", out_dir=tmp_path / f"r-{name}", progress=False)
    finished = start_run(LoadedPlan.read(path), options, Console(quiet=True), FakeHelpers(compressing=compressing))
    assert finished.status == "complete"
    return finished.path


SWEEP = _plan('[random, {compressible: 50%}, {dedupe: 25%}]')


def test_a_device_that_compresses_is_named_with_how_much_and_each_point_keeps_its_fill(tmp_path):
    run = _run(tmp_path, "a", SWEEP, compressing=True)
    rows = load_run(run).measurements
    assert sorted(set(rows.fill.tolist())) == ["compressible=50%", "dedupe=25%", "random"]
    summary = publish_run(run, Console(quiet=True)).to_json()
    test = summary["tests"][0]
    assert [p.get("fill", "random") for p in test["points"]] == ["random", "compressible=50%", "dedupe=25%"]
    said = [w for w in summary["warnings"] if w["test"] == "w (write)"]
    assert len(said) == 1
    # the fake's model: 0.1 ms a measurement plus the bytes the device keeps at 500 MB/s, of 256 KiB
    assert said[0]["message"] == (
        "write rates depend on the data written, against random data (intervals apart): 50 % compressible at "
        "sequential 64 KiB Q1T1: 1.72x (724 MB/s against 420 MB/s); 25 % repeated blocks at sequential 64 KiB Q1T1: "
        "1.27x (531 MB/s against 420 MB/s): the device or file system below compresses or deduplicates what it "
        "writes, so a rate measured with one fill is a property of that fill")
    # the headline is random data's point, not the fastest fill's
    assert test["points"][0]["throughput_bytes_per_s"]["estimate"] < test["points"][1]["throughput_bytes_per_s"][
        "estimate"]


def test_a_device_that_does_not_compress_is_not_said_to(tmp_path):
    run = _run(tmp_path, "a", SWEEP, compressing=False)
    summary = publish_run(run, Console(quiet=True)).to_json()
    assert not [w for w in summary["warnings"] if "depend on the data written" in w["message"]]
    assert all(not f["apart"] for f in summary["tests"][0]["fill_rates"])


def test_two_runs_of_a_sweep_compare_point_by_point_within_each_fill(tmp_path):
    a, b = _run(tmp_path, "a", SWEEP, compressing=True), _run(tmp_path, "b", SWEEP, compressing=True)
    result = publish_compare(CompareRequest((a, b), out_file=tmp_path / "c.html"), Console(quiet=True))
    assert sorted(p.key.fill for p in result.points) == ["compressible=50%", "dedupe=25%", "random"]
    assert all(p.ratio.estimate == pytest.approx(1.0) for p in result.points)


def test_the_fill_is_part_of_a_point_and_random_data_leave_its_key_as_it_was():
    key = PointKey("w", "write", "pattern", "sequential", 64 * KiB, 0, 1, 1)
    assert "fill" not in key_json(key) and key_of(key_json(key)) == key
    other = key._replace(fill="compressible=50%")
    assert key_json(other)["fill"] == "compressible=50%" and key_of(key_json(other)) == other
    assert label(other) == "w write sequential 64 KiB c50%"
    assert label(key) == "w write sequential 64 KiB"


def test_rows_of_a_file_made_before_the_fill_column_read_their_test_s_fill_from_the_plan(tmp_path):
    run = _run(tmp_path, "a", _plan('"0x41"'), compressing=False)
    csv = run / "measurements.csv"
    lines = csv.read_text().splitlines()
    header = lines[0].split(",")
    at = header.index("fill")
    # the file as a stibium before the fill column wrote it: the columns before it (those after came later)
    csv.write_text("\n".join(",".join(line.split(",")[:at]) for line in lines) + "\n")
    assert load_run(run).measurements.fill.tolist() == ["0x41"] * 6


def _rate(est: float, low: float, high: float) -> Estimate:
    return Estimate(est, low, high, "median throughput", 6)


def test_the_words_name_each_fill_its_ratio_and_what_the_device_does():
    moved = [FillRate("sequential 1 MiB Q1T1", "compressible=50%", "random", _rate(100e6, 98e6, 102e6),
                      _rate(52e6, 51e6, 53e6))]
    assert sentence("write", moved, format_rate) == (
        "write rates depend on the data written, against random data (intervals apart): 50 % compressible at "
        "sequential 1 MiB Q1T1: 1.92x (100 MB/s against 52 MB/s): the device or file system below compresses what "
        "it writes, so a rate measured with one fill is a property of that fill")
    dedup = [FillRate("sequential 1 MiB Q1T1", "dedupe=50%", "random", _rate(100e6, 98e6, 102e6),
                      _rate(52e6, 51e6, 53e6))]
    assert "below keeps one copy of repeated blocks (deduplicates), so" in sentence("write", dedup, format_rate)


def test_intervals_that_meet_or_a_point_without_one_claim_nothing():
    base = _rate(52e6, 51e6, 53e6)
    assert not FillRate("p", "0x00", "random", _rate(54e6, 53e6, 55e6), base).apart          # they touch
    assert FillRate("p", "0x00", "random", _rate(54e6, 53.01e6, 55e6), base).apart
    assert not FillRate("p", "0x00", "random", _rate(200e6, float("nan"), float("nan")), base).apart
