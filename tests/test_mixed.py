"""Mixed reads and writes, and measurements by time: the helper on a real file system (the share of writes
exact and on the right blocks, a measurement that ends within one request of its duration, a warm-up counted
apart), the plan's keys and their errors, and a mixed point in the analysis and in compare (its read share in
its key)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import run_helper
from stibium_py.kinds.pattern.result import pattern_result
from stibium_py.analysis.rates import by_point, label
from stibium_py.rundir.measurement import Measurement
from stibium_py.plan import PlanError, load_and_expand
from stibium_py.rundir.table import Table

KiB = 1024


def _layout(helper, path: Path, size: str, fill: str = "0x00") -> None:
    rc, _, err = run_helper(helper, "write", "--path", str(path), "--bytes", size, "--granularity", "256KiB",
                            "--fill", fill)
    assert rc == 0, err


def _blocks(path: Path, size: int = 4 * KiB) -> list[bytes]:
    data = path.read_bytes()
    return [data[i:i + size] for i in range(0, len(data), size)]


def test_a_mixed_measurement_writes_exactly_the_asked_share_of_its_blocks(helper, disk_dir):
    path = disk_dir / "m.bin"
    _layout(helper, path, "1MiB")
    rc, out, err = run_helper(helper, "mixed", "--path", str(path), "--bytes", "1MiB", "--granularity", "4KiB",
                              "--access", "random", "--read-fraction", "0.7", "--fill", "0x41", "--seed", "3")
    assert rc == 0, err
    # 256 requests: round(0.3 x 256) = 77 write, the other 179 read, each block once
    assert (out["op"], out["read_fraction"], out["requests"]) == ("mixed", 0.7, 256)
    assert (out["write_requests"], out["read_requests"]) == (77, 179)
    assert (out["write_bytes"], out["read_bytes"]) == (77 * 4 * KiB, 179 * 4 * KiB)
    assert out["bytes"] == out["read_bytes"] + out["write_bytes"] == 1 << 20
    blocks = _blocks(path)
    written = [b for b in blocks if b == b"A" * 4 * KiB]
    assert len(written) == 77 and len(written) + blocks.count(bytes(4 * KiB)) == 256
    # the reads and the writes each have their latencies
    for op in ("read", "write"):
        assert 0 < out[f"{op}_lat_p50_s"] <= out[f"{op}_lat_p99_s"]
        counts = sum(int(b.split(":")[1]) for b in out[f"{op}_lat_hist_ns"].split())
        assert counts == out[f"{op}_requests"]
    assert out["sync_used"] != "none"            # its writes were synced inside the interval
    # which blocks write follows the seed
    other = disk_dir / "m2.bin"
    _layout(helper, other, "1MiB")
    run_helper(helper, "mixed", "--path", str(other), "--bytes", "1MiB", "--granularity", "4KiB", "--access", "random",
               "--read-fraction", "0.7", "--fill", "0x41", "--seed", "4")
    assert _blocks(other).count(b"A" * 4 * KiB) == 77 and other.read_bytes() != path.read_bytes()


@pytest.mark.parametrize("flight", [[], ["--queue-depth", "8", "--threads", "2"],
                                    ["--queue-depth", "4", "--threads", "3", "--io-method", "threads"]])
def test_mixed_requests_in_flight_move_each_block_once_and_read_the_right_data(helper, disk_dir, flight):
    """A file whose every word holds its own offset: a mixed measurement's reads find their offsets and its
    writes write them again (--verify checks each request and that no block moves twice)."""
    path = disk_dir / "v.bin"
    _layout(helper, path, "2MiB", fill="offset")
    rc, out, err = run_helper(helper, "mixed", "--path", str(path), "--bytes", "2MiB", "--granularity", "4KiB",
                              "--access", "random", "--read-fraction", "0.6", "--fill", "offset", "--verify", "on",
                              *flight)
    assert rc == 0, err
    assert out["verified_requests"] == out["requests"] == 512
    assert (out["read_requests"], out["write_requests"]) == (307, 205)
    rc, out, err = run_helper(helper, "read", "--path", str(path), "--bytes", "2MiB", "--granularity", "64KiB",
                              "--verify", "on")
    assert rc == 0, err


@pytest.mark.parametrize("op,flight", [("read", []), ("mixed", ["--queue-depth", "4"]),
                                       ("write", ["--queue-depth", "2", "--threads", "2", "--io-method", "threads"])])
def test_a_measurement_by_time_ends_within_one_request_of_its_duration_and_counts_its_warmup_apart(
        helper, disk_dir, op, flight):
    path = disk_dir / "t.bin"
    _layout(helper, path, "1MiB")
    args = ["--existing"] if op == "write" else ["--read-fraction", "0.5"] if op == "mixed" else []
    rc, out, err = run_helper(helper, op, "--path", str(path), "--bytes", "1MiB", "--granularity", "4KiB",
                              "--access", "random", "--duration", "0.4", "--warmup", "0.1", *args, *flight)
    assert rc == 0, err
    assert (out["duration_s"], out["warmup_s"]) == (0.4, 0.1)
    # the requests went round the 256 of a pass until the time was spent; the last ended within its own
    # latency (at most the slowest request's) after the deadline
    assert out["requests"] > 256
    assert 0.4 <= out["io_seconds"] <= 0.4 + out["lat_max_s"] + 1e-4
    # the warm-up's requests are counted apart: not in bytes, not in the latencies
    assert out["warmup_requests"] > 0 and out["warmup_bytes"] == out["warmup_requests"] * 4 * KiB
    assert out["bytes"] == out["requests"] * 4 * KiB
    assert sum(int(b.split(":")[1]) for b in out["lat_hist_ns"].split()) == out["requests"]
    if op == "mixed":
        assert out["read_requests"] + out["write_requests"] == out["requests"]
        assert abs(out["read_requests"] / out["requests"] - 0.5) < 0.02


@pytest.mark.parametrize("args,message", [
    (["mixed", "--bytes", "1MiB"], "mixed needs --read-fraction (the share of requests that read, such as 0.7)"),
    (["read", "--bytes", "1MiB", "--read-fraction", "0.5"], "--read-fraction is for mixed; read and write move one way"),
    (["mixed", "--bytes", "1MiB", "--read-fraction", "1.5"],
     "--read-fraction must be a number from 0 to 1, such as 0.7, not '1.5'"),
    (["read", "--bytes", "1MiB", "--warmup", "1"],
     "--warmup needs --duration: the warm-up is the first part of a measurement by time"),
    (["read", "--bytes", "1MiB", "--duration", "-1"], "--duration must be seconds above 0, at most a week, not '-1'"),
    (["read", "--bytes", "1MiB", "--duration", "1", "--chunk", "64KiB"],
     "--duration does not go with --chunk; give one or the other"),
    (["read", "--bytes", "1MiB", "--duration", "1", "--verify", "on"],
     "--verify checks that each block moves once, which a measurement by time repeats; drop --duration to verify"),
])
def test_mixed_and_timed_usage_errors_say_what_to_do(helper, disk_dir, args, message):
    rc, out, _ = run_helper(helper, args[0], "--path", str(disk_dir / "x"), *args[1:])
    assert rc == 2 and out["usage"] is True and out["error"] == message


def test_a_mixed_measurement_needs_a_laid_out_file(helper, disk_dir):
    rc, out, _ = run_helper(helper, "mixed", "--path", str(disk_dir / "none"), "--bytes", "1MiB",
                            "--read-fraction", "0.5")
    assert rc == 1 and out["error"] == f"{disk_dir / 'none'} does not exist"
    assert not (disk_dir / "none").exists()


PLAN = """\
name: m
tests:
  - name: rnd
    kind: pattern
    access: random
    granularities: [4KiB]
    span: 1MiB
    trials: 2
{extra}"""


def _plan(tmp_path: Path, extra: str, name: str = "plan.yaml"):
    path = tmp_path / name
    path.write_text(PLAN.format(extra=extra))
    return load_and_expand(path)[2]


def test_read_fraction_makes_mixed_measurements_beside_reads_and_writes(tmp_path):
    e = _plan(tmp_path, "    op: [read, write]\n    read_fraction: [0.7, 0.3]\n    bytes: 512KiB\n")
    assert len(e.ops) == 4 * 2
    assert {(o.op, o.read_fraction) for o in e.ops} == {("read", None), ("write", None), ("mixed", 0.7),
                                                      ("mixed", 0.3)}
    mixed = [o for o in e.ops if o.op == "mixed"]
    assert all(o.existing and o.file == "rnd/data.bin" and o.sync == "fsync" for o in mixed)
    assert len({o.seed for o in e.ops}) == len(e.ops)
    # a plan of reads and writes alone keeps its seeds and digest: runs made before mixes existed still resume
    plain = _plan(tmp_path, "    op: [read, write]\n    bytes: 512KiB\n", "b.yaml")
    assert "read_fraction" not in plain.ops_as_dicts()[0]
    same = [o for o in e.ops if o.op != "mixed"]
    assert sorted(o.seed for o in same) == sorted(o.seed for o in plain.ops)


def test_a_test_by_time_runs_its_duration_after_its_warmup(tmp_path):
    e = _plan(tmp_path, "    read_fraction: 0.7\n    duration: 30s\n    warmup: 5\n")
    assert [(o.op, o.bytes, o.duration_s, o.warmup_s) for o in e.ops] == [("mixed", 1 << 20, 30.0, 5.0)] * 2
    assert e.estimated_s == pytest.approx((1 << 20) / 200e6 + 2 * (35 + 0.002))   # the layout, then two trials
    two_min = _plan(tmp_path, "    op: read\n    duration: 2min\n", "b.yaml")
    assert two_min.ops[0].duration_s == 120.0


@pytest.mark.parametrize("extra,message", [
    ("    bytes: 1MiB\n", "plan.yaml:3: tests[0]: give op (read, write or both), read_fraction (mixed reads and "
                        "writes), or both"),
    ("    op: read\n", "plan.yaml:3: tests[0]: give bytes (moved per trial) or duration (how long each trial runs)"),
    ("    op: read\n    bytes: 1MiB\n    warmup: 5s\n",
     "plan.yaml:3: tests[0]: warmup needs duration: the warm-up is the first part of a trial that runs for a time"),
    ("    read_fraction: 1.5\n    bytes: 1MiB\n",
     "plan.yaml:9: tests[0] (rnd).read_fraction: a share of the requests is from 0 to 1 (0.7: 70 % reads), not 1.5"),
    ("    read_fraction: [0.5, -1]\n    bytes: 1MiB\n",
     "plan.yaml:9: tests[0] (rnd).read_fraction[1]: a share of the requests is from 0 to 1 (0.7: 70 % reads), not -1"),
    ("    op: read\n    duration: 5 parsecs\n",
     "plan.yaml:10: tests[0] (rnd).duration: cannot read the time '5 parsecs'; write seconds such as 30 or 30s, or "
     "5min, 1h, 2ms or 500us"),
    ("    op: read\n    duration: 8d\n",
     "plan.yaml:10: tests[0] (rnd).duration: cannot read the time '8d'; write seconds such as 30 or 30s, or 5min, "
     "1h, 2ms or 500us"),
    ("    op: read\n    duration: 200h\n", "plan.yaml:10: tests[0] (rnd).duration: '200h' is longer than a week; split "
                                         "the test"),
])
def test_mixed_and_timed_plan_errors(tmp_path, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    Path("plan.yaml").write_text(PLAN.format(extra=extra))
    with pytest.raises(PlanError) as e:
        load_and_expand(Path("plan.yaml"))
    assert str(e.value) == message


def _mixed_rows(fraction: float, rate: float, trials: int = 5, seed: int = 0) -> list[Measurement]:
    """A mixed point's trials: 64 MiB each at `rate` with 3 % noise, the reads the asked share of the bytes."""
    rng = np.random.default_rng(seed)
    rows = []
    for trial in range(trials):
        moved = 64 << 20
        seconds = moved / rate * float(np.exp(rng.normal(0, 0.03)))
        read = round(moved * fraction / 4096) * 4096
        rows.append(Measurement(seq=len(rows) + int(fraction * 100) * 100, test="rnd", op="mixed", kind="pattern",
                                access="random", size_bytes=1 << 30, granularity_bytes=4096, stride_bytes=0,
                                trial=trial, file="rnd/data.bin", bytes=moved, seconds=seconds, engine="direct",
                                requests=moved // 4096, read_fraction=fraction, read_bytes=read, write_bytes=moved - read,
                                read_requests=read // 4096, write_requests=(moved - read) // 4096))
    return rows


def test_a_mixed_points_reads_and_writes_add_up_to_its_rate_in_the_asked_ratio():
    rows = Table.from_rows(_mixed_rows(0.7, 100e6) + _mixed_rows(0.3, 80e6, seed=1))
    result = pattern_result("rnd", "mixed", rows, 2000, 1, 0.95)
    assert [p.read_fraction for p in result.points] == [0.3, 0.7]
    for p, rate in zip(result.points, (80e6, 100e6)):
        mix = p.mix
        assert mix.read_rate.estimate + mix.write_rate.estimate == pytest.approx(p.throughput.estimate, rel=1e-9)
        assert mix.read_rate.estimate / mix.write_rate.estimate == pytest.approx(
            p.read_fraction / (1 - p.read_fraction), rel=1e-3)
        assert mix.read_share_bytes == pytest.approx(p.read_fraction, abs=1e-4)
        assert mix.read_rate.low < mix.read_rate.estimate < mix.read_rate.high
        assert abs(p.throughput.estimate / rate - 1) < 0.05
    assert result.to_json()["points"][0]["mix"]["read_fraction"] == 0.3


def test_compare_keys_a_mixed_point_by_its_read_share():
    reads = [m._replace(op="read", read_fraction=None, read_bytes=None, write_bytes=None, seq=m.seq + 10_000)
             for m in _mixed_rows(0.7, 90e6, seed=2)]
    points = by_point(Table.from_rows(_mixed_rows(0.7, 100e6) + _mixed_rows(0.3, 80e6, seed=1) + reads))
    assert sorted((k.op, k.read_fraction) for k in points) == [("mixed", 0.3), ("mixed", 0.7), ("read", None)]
    assert {label(k) for k in points} == {"rnd mixed 70/30 random 4 KiB", "rnd mixed 30/70 random 4 KiB",
                                          "rnd read random 4 KiB"}
    assert all(len(t) == 5 for t in points.values())


def test_quartets_mix_option_adds_a_mixed_column_to_the_disk_mark_table(tmp_path):
    from types import SimpleNamespace

    from rich.console import Console

    from stibium_py.plan.find import resolve_plan_path
    from stibium_py.kinds.pattern import in_flight

    text = resolve_plan_path("quartet").read_text().replace("# read_fraction: 0.7", "read_fraction: 0.7")
    e = _plan_text(tmp_path, text)
    assert {(o.op, o.read_fraction) for o in e.ops} == {("read", None), ("write", None), ("mixed", 0.7)}
    rows = _mixed_rows(0.7, 100e6)
    rows += [m._replace(op="read", read_fraction=None, seq=m.seq + 1000) for m in rows]
    flight = [m._replace(queue_depth=32, seq=m.seq + 5000) for m in rows]
    table = Table.from_rows(rows + flight)
    results = [pattern_result("rnd-4k", op, table.take(table.op == op), 500, 1, 0.95) for op in ("mixed", "read")]
    summary = SimpleNamespace(tests=results)
    assert in_flight.mark_columns(summary) == ["read", "write", "mixed 70/30"]
    console = Console(width=160, record=True)
    console.print(in_flight.mark_table_terminal(summary, 160))
    lines = console.export_text().splitlines()
    header = next(line for line in lines if line.lstrip().startswith("read") or " read " in line)
    assert "mixed 70/30" in header and any("RND4K Q32T1" in line and "reads 69" in line for line in lines)


def _plan_text(tmp_path: Path, text: str):
    path = tmp_path / "q.yaml"
    path.write_text(text)
    return load_and_expand(path)[2]


def test_a_mix_that_rounds_away_from_its_share_is_said():
    """A pass of 16 requests at 70/30 holds 11 reads and 5 writes: 68.75 % reads, said; a long pass is not."""
    from stibium_py.analysis.warnings import warnings
    short = [m._replace(read_bytes=11 * (4 << 20), write_bytes=5 * (4 << 20)) for m in _mixed_rows(0.7, 100e6)]
    found = warnings([pattern_result("rnd", "mixed", Table.from_rows(short), 200, 1, 0.95)], Table.from_rows(short), {})
    assert [(n.level, n.message) for n in found] == [
        ("info", "the mixed 70/30 point at 4 KiB Q1T1 read 68.8% of its bytes, not 70%: each pass of the requests "
                 "holds the share rounded to whole requests")]
    long = _mixed_rows(0.7, 100e6)
    assert not warnings([pattern_result("rnd", "mixed", Table.from_rows(long), 200, 1, 0.95)], Table.from_rows(long), {})
