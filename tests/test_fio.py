"""fio beside the road test: its JSON output read (json and json+, jobs[] and client_stats[], recorded from fio
3.33 on the machine the tests were written on: tests/fixtures/fio, with the job files that made them), imported
into a run directory whose report and compare work, damaged files refused in one line with nothing written, the
fio job made from a plan's measurement, and a pattern test with bench: fio run on a real disk."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from stibium_py.analysis.rates import PointKey, shape_matches
from stibium_py.cli import main
from stibium_py.errors import FioError
from stibium_py.fio.job import job_text
from stibium_py.fio.result import histogram_text, parse, shape, measured
from stibium_py.analysis.histogram import LatencyHistogram
from stibium_py.rundir.op import Op
from stibium_py.plan import PlanError
from stibium_py.rundir.csvread import read_measurements

FIXTURES = Path(__file__).parent / "fixtures" / "fio"
SHAPES = [FIXTURES / n for n in ("shapes.json", "shapes-2.json", "shapes-3.json")]
KiB, MiB = 1024, 1024**2


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def _run_dir(out: str) -> Path:
    return Path(re.search(r"run directory: (\S+)", out).group(1))


# -- reading fio's output

def test_each_job_is_read_with_its_shape_and_what_it_moved():
    result = parse((FIXTURES / "shapes.json").read_text(), "shapes.json")
    raw = _raw(FIXTURES / "shapes.json")
    assert result.version == "fio-3.33"
    assert [j.name for j in result.jobs] == ["seq-read-1m", "rand-write-4k-q4t2", "mixed-70-q8", "strided-read-64k"]
    shapes = {j.name: shape(j, "x") for j in result.jobs}
    seq, rnd, mix, strided = (shapes[n] for n in ("seq-read-1m", "rand-write-4k-q4t2", "mixed-70-q8",
                                                   "strided-read-64k"))
    assert (seq.op, seq.access, seq.granularity_bytes, seq.queue_depth, seq.threads, seq.direct) == \
        ("read", "sequential", MiB, 1, 1, True)
    assert (rnd.op, rnd.access, rnd.granularity_bytes, rnd.queue_depth, rnd.threads, rnd.ioengine) == \
        ("write", "random", 4 * KiB, 4, 2, "io_uring")
    assert (mix.op, mix.read_fraction, mix.threads) == ("mixed", 0.7, 2)
    assert (strided.access, strided.stride_bytes, strided.granularity_bytes) == ("strided", 64 * KiB, 4 * KiB)
    # the two clones of rand-write (numjobs=2 without group_reporting) are one job: their bytes and requests added,
    # the longest runtime
    clones = [e for e in raw["jobs"] if e["jobname"] == "rand-write-4k-q4t2"]
    assert len(clones) == 2
    got = measured(next(j for j in result.jobs if j.name == "rand-write-4k-q4t2"), "write")
    assert got["bytes"] == sum(c["write"]["io_bytes"] for c in clones) == 8 * MiB
    assert got["requests"] == sum(c["write"]["total_ios"] for c in clones) == 2048
    assert got["seconds"] == max(c["write"]["runtime"] for c in clones) / 1000
    # a job of one entry: fio's own numbers, its completion latency's percentiles
    entry = next(e for e in raw["jobs"] if e["jobname"] == "seq-read-1m")
    one = measured(result.jobs[0], "read")
    assert one["bytes"] == entry["read"]["io_bytes"] == 4 * MiB
    assert one["lat_p50_s"] == entry["read"]["clat_ns"]["percentile"]["50.000000"] / 1e9
    assert one["lat_p99_s"] == entry["read"]["clat_ns"]["percentile"]["99.000000"] / 1e9
    mixed_entry = next(e for e in raw["jobs"] if e["jobname"] == "mixed-70-q8")
    both = measured(result.jobs[2], "mixed")
    assert both["read_bytes"] + both["write_bytes"] == both["bytes"] == 8 * MiB
    assert both["read_requests"] == mixed_entry["read"]["total_ios"]


def test_json_plus_bins_become_the_latency_histogram_with_every_request():
    result = parse((FIXTURES / "shapes-plus.json").read_text(), "shapes-plus.json")
    raw = _raw(FIXTURES / "shapes-plus.json")
    entry = next(e for e in raw["jobs"] if e["jobname"] == "seq-read-1m")
    hist = LatencyHistogram.parse(measured(result.jobs[0], "read")["lat_hist_ns"])
    assert hist.n == entry["read"]["total_ios"]
    bins = sorted(int(v) for v in entry["read"]["clat_ns"]["bins"])
    # each bin holds fio's value (the middle of its bucket), and is 1/64 of its power of two wide
    for value, lo, hi in zip(bins, hist.lo_ns, hist.hi_ns):
        assert lo <= value < hi
        assert hi - lo == max(1, 1 << (value.bit_length() - 7)) if value >= 128 else hi - lo == 1
    assert histogram_text({"100": 2, "1000000": 3}) == "100-101:2 995904-1004096:3"


def test_client_stats_are_one_row_a_client_and_the_sum_over_them_is_left_out():
    result = parse((FIXTURES / "clients.json").read_text(), "clients.json")
    assert result.clients == ["127.0.0.1:8766", "127.0.0.1:8765"]       # one host, two fio servers: by port
    assert [(j.name, j.host) for j in result.jobs] == [
        ("seq-read-1m", "127.0.0.1:8766"), ("seq-read-1m", "127.0.0.1:8765"),
        ("rand-read-4k", "127.0.0.1:8766"), ("rand-read-4k", "127.0.0.1:8765")]


@pytest.mark.parametrize("mangle, message", [
    (lambda t: t[: len(t) // 2], "x.json: cut short at line {line}: the JSON ends before it closes; was fio stopped "
                                 "while writing it? Run the jobs again"),
    (lambda t: t.replace('"jobs" : [', '"jobs" : [,', 1), "x.json: damaged JSON at line 12 (Expecting value); "
                                                          "give the file as fio wrote it"),
    (lambda t: '{"a": 1}', "x.json: JSON, but not fio's output (it has no 'fio version'); give the file fio wrote "
                           "with --output-format=json or json+"),
    (lambda t: "fio: some note\n", "x.json: no JSON in it; give the file fio wrote with --output-format=json or json+"),
    (lambda t: t.replace('"fio-3.33"', '"fio-2.21"', 1), "x.json: fio-2.21's output is not read; stibium reads fio "
                                                         "3.x (--output-format=json or json+): run the jobs again "
                                                         "with fio 3"),
    (lambda t: t.replace('"total_ios" : 4,', '"total_ios" : "four",', 1),
     "x.json: jobs[0].read.total_ios is 'four', not a whole number; give the file as fio wrote it"),
])
def test_a_damaged_file_is_refused_in_one_line(mangle, message):
    text = (FIXTURES / "shapes.json").read_text()
    bad = mangle(text)
    with pytest.raises(FioError) as e:
        parse(bad, "x.json")
    assert str(e.value) == message.format(line=bad.count("\n") + 1)


def test_notes_fio_writes_before_its_json_are_passed_over():
    text = "fio: file hash not empty on exit\n" + (FIXTURES / "shapes.json").read_text()
    assert len(parse(text, "x").jobs) == 4


@pytest.mark.parametrize("options, message", [
    ({"rw": "trim"}, "x: job 'j': rw=trim has no stibium point (stibium measures reads, writes and their mixes); "
                     "leave the job out of the file"),
    ({"rw": "randread:8"}, "x: job 'j': rw=randread:8: a random job's :N (offsets drawn every N requests) has no "
                           "stibium point; leave it out"),
    ({"rw": "read", "bssplit": "4k/50:64k/50"}, "x: job 'j': bssplit: a range of request sizes has no stibium point "
                                                "(one granularity a point); give the job one bs"),
    ({"rw": "rw", "bs": "4k,64k"}, "x: job 'j': bs=4k,64k: its reads and writes differ in size; a stibium point has "
                                   "one granularity"),
    ({"rw": "read", "bs": "4q"}, "x: job 'j': bs: '4q' is not a size stibium reads (such as 4k or 1m); give the job "
                                 "one size"),
])
def test_a_job_without_a_stibium_point_is_refused(options, message):
    raw = _raw(FIXTURES / "shapes.json")
    raw["jobs"] = [raw["jobs"][0]]
    raw["jobs"][0]["jobname"] = "j"
    raw["jobs"][0]["job options"] = options
    raw["global options"] = {}
    with pytest.raises(FioError) as e:
        shape(parse(json.dumps(raw), "x").jobs[0], "x")
    assert str(e.value) == message


def test_sizes_read_as_fio_reads_them():
    from stibium_py.fio.result import fio_bytes
    assert [fio_bytes(t, {}, "x") for t in ("4k", "4K", "1m", "4KiB", "512", "2g")] == \
        [4096, 4096, MiB, 4096, 512, 2 * 1024**3]
    assert [fio_bytes(t, {"kb_base": "1000"}, "x") for t in ("4k", "4KiB")] == [4000, 4096]


# -- importing

def test_an_import_is_a_run_directory_whose_report_has_every_job_a_trial_a_file(tmp_path):
    code, out = _cli("import", "fio", *map(str, SHAPES), "--out", str(tmp_path))
    assert code == 0, out
    run_dir = _run_dir(out)
    assert sorted(p.name for p in run_dir.iterdir()) == ["fio", "measurements.csv", "report.html", "run.json",
                                                         "summary.json"]
    # the files kept as fio wrote them: what stibium does not read stays at hand
    kept = sorted((run_dir / "fio").iterdir())
    assert [p.read_bytes() for p in kept] == [p.read_bytes() for p in SHAPES]
    rows, damaged = read_measurements(run_dir)
    assert damaged == 0 and len(rows) == 12 and set(rows.instrument) == {"fio"}
    assert set(rows.instrument_version) == {"fio-3.33"}
    assert sorted(set(rows.trial.tolist())) == [0, 1, 2]
    summary = json.loads((run_dir / "summary.json").read_text())
    tests = {t["name"]: t for t in summary["tests"]}
    assert set(tests) == {"seq-read-1m", "rand-write-4k-q4t2", "mixed-70-q8", "strided-read-64k"}
    # the median over the three files of each job's bytes over its runtime
    rates = sorted(_raw(p)["jobs"][0]["read"]["io_bytes"] / (_raw(p)["jobs"][0]["read"]["runtime"] / 1000)
                   for p in SHAPES)
    assert tests["seq-read-1m"]["points"][0]["throughput_bytes_per_s"]["estimate"] == pytest.approx(rates[1])
    assert all(t["instrument"] == "fio" for t in tests.values())
    run = json.loads((run_dir / "run.json").read_text())
    assert run["imported"]["version"] == "fio-3.33" and run["status"] == "complete"
    assert "measured by fio alone, not by stibium's helper (an imported result" in " ".join(out.split())


def test_an_import_of_clients_is_their_aggregate_as_many_clients_are(tmp_path):
    code, out = _cli("import", "fio", str(FIXTURES / "clients.json"), "--out", str(tmp_path))
    assert code == 0, out
    run_dir = _run_dir(out)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["clients"]["ranks"] == 2
    rows, _ = read_measurements(run_dir)
    assert sorted(set(rows.host)) == ["127.0.0.1:8765", "127.0.0.1:8766"]
    summary = json.loads((run_dir / "summary.json").read_text())
    raw = _raw(FIXTURES / "clients.json")
    mine = [c for c in raw["client_stats"] if c["jobname"] == "seq-read-1m"]
    point = next(t for t in summary["tests"] if t["name"] == "seq-read-1m")["points"][0]
    # IOR's aggregate: all bytes over the longest client's time (they start together on the server's go)
    assert point["throughput_bytes_per_s"]["estimate"] == pytest.approx(
        sum(c["read"]["io_bytes"] for c in mine) / (max(c["read"]["runtime"] for c in mine) / 1000))


@pytest.mark.parametrize("make, message", [
    (lambda d: _write(d / "cut.json", (FIXTURES / "shapes.json").read_text()[:5000]),
     "{d}/cut.json: cut short at line 208: the JSON ends before it closes; was fio stopped while writing it? Run "
     "the jobs again"),
    (lambda d: d / "none.json", "{d}/none.json: no such file; give the file fio wrote with --output-format=json or "
                                "json+"),
    (lambda d: _write(d / "other.json", (FIXTURES / "shapes.json").read_text().replace('"bs" : "1m"', '"bs" : "64k"', 1)),
     "{d}/other.json: job 'seq-read-1m' is not the job of the same name in {f} (its rw, bs, iodepth or numjobs "
     "differ); import the results of one job file together"),
])
def test_a_refused_import_writes_nothing_and_says_why_in_one_line(tmp_path, make, message):
    bad = make(tmp_path)
    out_dir = tmp_path / "reports"
    code, out = _cli("import", "fio", str(SHAPES[0]), str(bad), "--out", str(out_dir))
    assert code == 2
    assert out == "stibium: " + message.format(d=tmp_path, f=SHAPES[0]) + "\n"
    assert not out_dir.exists() or not any(out_dir.iterdir())


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _edited(d: Path, edit) -> Path:
    """shapes.json with one edit (a function of the parsed JSON), written to d/edited.json."""
    data = _raw(SHAPES[0])
    edit(data)
    return _write(d / "edited.json", json.dumps(data))


def _job0(data: dict) -> dict:
    return data["jobs"][0]


@pytest.mark.parametrize("make, message", [
    (lambda d: _write(d / "deep.json", '{"fio version": "fio-3.33", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"),
     "{d}/deep.json: nested deeper than 64 levels; give the file as fio wrote it"),
    (lambda d: _write(d / "deep.json", '{"fio version": "fio-3.33", "x": ' + "[" * 200 + "]" * 200 + "}"),
     "{d}/deep.json: nested deeper than 64 levels; give the file as fio wrote it"),
    (lambda d: _write(d / "big.json", (FIXTURES / "shapes.json").read_text().replace('"timestamp" : ',
                                                                                     '"timestamp" : 1e400, "t" : ', 1)),
     "{d}/big.json: holds the number 1e400, too large for a float; give the file as fio wrote it"),
    (lambda d: _write(d / "nan.json", (FIXTURES / "shapes.json").read_text().replace('"timestamp" : ',
                                                                                     '"timestamp" : NaN, "t" : ', 1)),
     "{d}/nan.json: holds NaN, which is not a number; give the file as fio wrote it"),
    (lambda d: _edited(d, lambda x: _job0(x)["job options"].update(bs="99999999999999999999p")),
     "{d}/edited.json: job 'seq-read-1m': bs: '99999999999999999999p' is larger than fio takes (at most 2^63 bytes); "
     "give the file as fio wrote it"),
    (lambda d: _edited(d, lambda x: _job0(x)["read"]["clat_ns"].update(bins={"abc": 1})),
     "{d}/edited.json: jobs[0].read.clat_ns.bins is not a table of latencies (ns) and counts; give the file as fio "
     "wrote it"),
    (lambda d: _edited(d, lambda x: _job0(x)["read"].update(runtime=-53)),
     "{d}/edited.json: jobs[0].read.runtime is -53; fio writes a number at least 0 there: give the file as fio wrote "
     "it"),
    (lambda d: _edited(d, lambda x: _job0(x)["read"].update(runtime=0)),
     "{d}/edited.json: jobs[0].read.runtime is 0 where the job moved 4194304 bytes; give the file as fio wrote it"),
    (lambda d: _edited(d, lambda x: _job0(x)["job options"].update(bs="0")),
     "{d}/edited.json: job 'seq-read-1m': bs=0: a request of 0 bytes; fio writes a request size of at least 1 byte "
     "there: give the file as fio wrote it"),
    (lambda d: _edited(d, lambda x: _job0(x)["job options"].update(iodepth="-8")),
     "{d}/edited.json: job 'seq-read-1m': iodepth is '-8'; fio writes a number from 1 to 2147483647 there: give the "
     "file as fio wrote it"),
    (lambda d: _edited(d, lambda x: _job0(x)["job options"].update(numjobs="0")),
     "{d}/edited.json: job 'seq-read-1m': numjobs is '0'; fio writes a number from 1 to 2147483647 there: give the "
     "file as fio wrote it"),
])
def test_an_import_of_json_no_fio_writes_is_refused_in_one_line(tmp_path, make, message):
    bad = make(tmp_path)
    out_dir = tmp_path / "reports"
    code, out = _cli("import", "fio", str(bad), "--out", str(out_dir))
    assert code == 2
    assert out == "stibium: " + message.format(d=tmp_path) + "\n"
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_an_import_whose_out_is_a_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "afile").write_text("mine\n")
    code, out = _cli("import", "fio", str(SHAPES[0]), "--out", str(tmp_path / "afile"))
    assert code == 2
    assert out == f"stibium: output folder {tmp_path / 'afile'} is a file, not a folder; choose another with --out\n"
    assert (tmp_path / "afile").read_text() == "mine\n"


def test_compare_matches_an_imported_jobs_points_by_their_shape():
    seq = PointKey("seq-1m", "read", "pattern", "sequential", MiB, 0, 8, 1)
    rnd = PointKey("rnd-4k", "read", "pattern", "random", 4 * KiB, 0, 32, 1)
    twin = seq._replace(instrument="fio")
    job = PointKey("SEQ1M-Q8T1", "read", "pattern", "sequential", MiB, 0, 8, 1, None, "fio")
    other = PointKey("rand", "read", "pattern", "random", 4 * KiB, 0, 1, 1, None, "fio")
    # a fio job matches the bench's twin of its shape first, and nothing without a partner of its shape
    assert shape_matches([seq, twin, rnd], [job, other]) == {job: twin}
    # with no twin, the road test's point of its shape
    assert shape_matches([seq, rnd], [job]) == {job: seq}
    # two of one shape on a side: no guess
    assert shape_matches([seq, seq._replace(test="again")], [job]) == {}


# -- the fio job of a plan's measurement

def _op(**kw) -> Op:
    base = dict(seq=7, test="t", kind="pattern", op="read", access="random", size_bytes=64 * MiB,
                granularity_bytes=4 * KiB, stride_bytes=0, trial=0, file="t/data.bin", bytes=16 * MiB,
                engine="direct", fill="random", sync="none", seed=2**40 + 5, data_seed=1, existing=True)
    return Op(**{**base, **kw})


def test_the_fio_job_makes_the_same_requests_as_the_helper():
    text = job_text(_op(queue_depth=32, threads=4), Path("/d/t:x/data.bin"), "io_uring")
    lines = text.splitlines()
    for want in ("filename=/d/t\\:x/data.bin", "rw=randread", "bs=4096", "iodepth=32", "numjobs=4",
                 "ioengine=io_uring", "direct=1", "group_reporting=1", "thread=1", f"randseed={(2**40 + 5) % 2**32}",
                 # each of the four threads its part: a quarter of the requests in a quarter of the span
                 f"size={16 * MiB}", f"io_size={4 * MiB}", "offset=0", f"offset_increment={16 * MiB}",
                 "scramble_buffers=0", "[stibium-7]"):
        assert want in lines, want
    assert "end_fsync=1" not in lines
    seq = job_text(_op(access="sequential", op="write", sync="fsync", threads=2, fill="0x41", bytes=8 * MiB),
                   Path("/f"), "psync").splitlines()
    for want in ("rw=write", f"size={4 * MiB}", f"offset_increment={4 * MiB}", "end_fsync=1", "buffer_pattern=65"):
        assert want in seq, want
    strided = job_text(_op(access="strided", stride_bytes=60 * KiB, bytes=MiB), Path("/f"), "psync").splitlines()
    assert "rw=read:61440" in strided and f"size={255 * 64 * KiB + 4 * KiB}" in strided
    timed = job_text(_op(op="mixed", read_fraction=0.7, duration_s=2.5, warmup_s=0.5), Path("/f"), "io_uring")
    for want in ("rw=randrw", "rwmixread=70", "time_based=1", "runtime=2500ms", "ramp_time=500ms"):
        assert want in timed.splitlines(), want


@pytest.mark.parametrize("extra, message", [
    ("    stonewall: 1s\n", "tests[0]: bench: fio cannot take a stonewall: fio's runtime stops a "
                          "job, but it cannot go on to the count another client reached; leave out stonewall or bench"),
    ("    read_fraction: 0.333\n", "tests[0] (t).read_fraction[0]: fio takes the read share in whole percent "
                                  "(rwmixread); 0.333 is not, as bench: fio needs"),
    ("    threads: 3\n", "tests[0] (t).bytes: bench: fio gives each of the 3 threads the same whole requests; 1048576 "
                        "bytes is not a multiple of 4096 x 3 bytes: change bytes or granularities"),
])
def test_a_bench_the_fio_job_cannot_match_is_refused(tmp_path, extra, message):
    from stibium_py.plan import load_and_expand
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\ntests:\n  - name: t\n    kind: pattern\n    op: read\n    granularities: [4KiB]\n"
                    "    bytes: 1MiB\n    bench: fio\n" + extra)
    with pytest.raises(PlanError) as e:
        load_and_expand(plan)
    assert str(e.value).split(": ", 1)[1] == message


PLAN = """name: twin
tests:
  - name: t
    kind: pattern
    op: [read, write]
    access: [sequential, random]
    granularities: [64KiB]
    queue_depth: [1, 4]
    threads: [1, 2]
    bytes: 2MiB
    span: 4MiB
    trials: 2
    bench: fio
"""


def test_a_run_with_a_bench_measures_every_point_by_fio_too_on_the_same_file(disk_dir):
    plan = disk_dir / "twin.yaml"
    plan.write_text(PLAN)
    code, out = _cli("run", str(plan), "--target", str(disk_dir / "target"), "--out", str(disk_dir / "reports"))
    assert code == 0, out
    run_dir = _run_dir(out)
    rows, _ = read_measurements(run_dir)
    points = 2 * 2 * 2 * 2
    assert len(rows) == 2 * points * 2 and not any(rows.error)
    fio = rows.instrument == "fio"
    assert fio.sum() == points * 2
    # fio moved the bytes the plan asked, on the laid-out file the helper used
    assert set(rows.bytes[fio].tolist()) == {2 * MiB}
    assert set(rows.file[fio].tolist()) == set(rows.file[~fio].tolist()) == {"t/data.bin"}
    assert set(rows.io_method[fio & (rows.queue_depth == 1)].tolist()) == {"psync"}
    reads = fio & (rows.op == "read")
    assert np.isfinite(rows.resident_before[reads].astype(float)).all()     # the residency read before each read
    jobs = [json.loads(line) for line in (run_dir / "fio.jsonl").read_text().splitlines()]
    assert sorted(j["seq"] for j in jobs) == sorted(rows.seq[fio].tolist())
    summary = json.loads((run_dir / "summary.json").read_text())
    pairs = [b for t in summary["tests"] for b in t.get("bench", [])]
    assert len(pairs) == points
    assert all(b["ratio"]["estimate"] == pytest.approx(b["bench_bytes_per_s"]["estimate"] /
                                                       b["road_bytes_per_s"]["estimate"]) for b in pairs)
    assert "bench (fio-3" in out and "against road (helper)" in out
    assert "The bench beside the road test" in (run_dir / "report.html").read_text()


def test_a_bench_without_fio_is_refused_before_the_run_starts(disk_dir, monkeypatch):
    plan = disk_dir / "twin.yaml"
    plan.write_text(PLAN)
    empty = disk_dir / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, out = _cli("run", str(plan), "--target", str(disk_dir / "target"), "--out", str(disk_dir / "reports"))
    assert code == 2
    assert out == ("stibium: bench: fio needs fio, which is not installed (Debian/Ubuntu: apt-get install fio; macOS: "
                   "brew install fio); install it or leave bench out of the plan\n")
    assert not (disk_dir / "reports").exists() and not (disk_dir / "target").exists()


# -- a plan's own job file

JOB_FILE = """\
[global]
filename=data.bin
direct=1
size=4m
ioengine=psync
stonewall

[like-the-road]
rw=read
bs=64k
io_size=2m

[its-own]
rw=randread
bs=16k
io_size=1m
"""

JOB_PLAN = """\
name: own-job
tests:
  - name: t
    kind: pattern
    op: read
    access: sequential
    granularities: [64KiB]
    bytes: 2MiB
    span: 4MiB
    trials: 2
    bench: fio
    bench_job: jobs/mine.fio
"""


def _job_plan(disk_dir: Path, job: str) -> Path:
    (disk_dir / "jobs").mkdir(exist_ok=True)
    (disk_dir / "jobs" / "mine.fio").write_text(job)
    plan = disk_dir / "own.yaml"
    plan.write_text(JOB_PLAN)
    return plan


def test_a_plan_s_own_job_file_runs_as_it_is_once_a_trial_each_job_a_row(disk_dir):
    plan = _job_plan(disk_dir, JOB_FILE)
    code, out = _cli("run", str(plan), "--target", str(disk_dir / "target"), "--out", str(disk_dir / "reports"))
    assert code == 0, out
    run_dir = _run_dir(out)
    rows, _ = read_measurements(run_dir)
    fio = rows.instrument == "fio"
    assert (~fio).sum() == 2 and fio.sum() == 4 and not any(rows.error)
    # each trial one run of the file: its two jobs share the operation's seq, each a row of its own shape
    assert sorted(rows.seq[fio].tolist())[::2] == sorted(rows.seq[fio].tolist())[1::2]
    got = sorted(zip(rows.access[fio].tolist(), rows.granularity_bytes[fio].tolist(), rows.bytes[fio].tolist()))
    assert got == [("random", 16 * KiB, MiB)] * 2 + [("sequential", 64 * KiB, 2 * MiB)] * 2
    # its relative file name is the test's folder: the file the road test reads, its residency read before
    assert set(rows.file[fio].tolist()) == {"data.bin"}
    assert np.isfinite(rows.resident_before[fio].astype(float)).all()
    # the job file as it was checked (its options, without blank lines and comments), kept for resume and beside
    # every output: what fio ran
    checked = "".join(line + "\n" for line in JOB_FILE.splitlines() if line)
    assert (run_dir / "fio-jobs" / "t.fio").read_text() == checked
    jobs = [json.loads(line) for line in (run_dir / "fio.jsonl").read_text().splitlines()]
    assert [j["job"] for j in jobs] == [checked] * 2
    summary = json.loads((run_dir / "summary.json").read_text())
    (test,) = [t for t in summary["tests"] if t["name"] == "t"]
    (pair,) = test["bench"]
    assert (pair["access"], pair["granularity_bytes"]) == ("sequential", 64 * KiB)
    (lone,) = test["bench_alone"]
    assert (lone["access"], lone["granularity_bytes"]) == ("random", 16 * KiB)
    said = " ".join(out.split())
    assert "t read random 16 KiB: bench (fio-3" in said
    assert "a job of the plan's job file: the road test measured no point of its shape" in said


@pytest.mark.parametrize("job, message", [
    (None, "test t: bench_job jobs/mine.fio: no such file; give the job file's path relative to the plan's folder"),
    ("[a]\nrw=reed\n", "jobs/mine.fio:2: rw=reed: not a value of the form fio documents for rw; mend it"),
    ("[a]\nbogus=1\n", "jobs/mine.fio:2: bogus: not one of the options a plan's job file may use (docs/fio.md lists "
                        "them); leave it out"),
    ("[a]\nrw=rw\nrwmixread=150\n", "jobs/mine.fio: fio refuses it: rwmixread: max value out of range: 150 (100 max); "
                                    "mend the job file (fio --parse-only FILE says the same)"),
    ("[global]\nbs=4k\n", "jobs/mine.fio: it has no job (a [section] other than [global]); give a job file fio runs"),
    ("[trims]\nrw=trim\nsize=1m\n", "jobs/mine.fio: job 'trims': rw=trim has no stibium point (stibium measures "
                                     "reads, writes and their mixes); leave the job out of the file"),
])
def test_a_job_file_fio_or_stibium_cannot_read_is_refused_before_the_run(disk_dir, job, message):
    plan = _job_plan(disk_dir, job or "")
    path = disk_dir / "jobs" / "mine.fio"
    if job is None:
        path.unlink()
    code, out = _cli("run", str(plan), "--target", str(disk_dir / "target"), "--out", str(disk_dir / "reports"))
    assert code == 2
    assert out == f"stibium: {message}\n"
    assert not (disk_dir / "reports").exists() and not (disk_dir / "target").exists()


def test_a_job_file_needs_bench_fio(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text(JOB_PLAN.replace("    bench: fio\n", ""))
    code, out = _cli("plan", "show", str(plan))
    assert code == 2
    assert "bench_job is the job file fio runs as the bench; it needs bench: fio" in out


def test_fio_s_showcmd_line_reads_as_the_jobs_with_the_global_options_under_each():
    from stibium_py.fio.job import planned_jobs
    jobs = planned_jobs("fio --size=1m --bs=4k --filename=x.bin --name=a --rw=randread --iodepth=4 --time_based "
                        "--name=b --rw=write --filename=/tmp/y\\:z \n")
    assert [(j.name, j.options) for j in jobs] == [
        ("a", {"size": "1m", "bs": "4k", "filename": "x.bin", "name": "a", "rw": "randread", "iodepth": "4",
               "time_based": ""}),
        ("b", {"size": "1m", "bs": "4k", "filename": "/tmp/y\\:z", "name": "b", "rw": "write"})]


def test_the_files_a_job_file_names_are_read_as_fio_reads_them_without_comments():
    from stibium_py.fio.job import checked_job_file, find_fio
    job = (b"[global]\nfilename=data.bin     ; the test's file\n[a]\nrw=read\n[b]\nrw=read\n filename = q.bin \n"
           b"[c]\nrw=read\nfilename=x:y.1 # a comment\n")
    assert checked_job_file(find_fio(), job, "j.fio").files == ("data.bin", "q.bin", "x", "y.1")


def test_resume_runs_the_job_file_the_run_read_not_one_edited_since(disk_dir):
    plan = _job_plan(disk_dir, JOB_FILE)
    code, out = _cli("run", str(plan), "--target", str(disk_dir / "target"), "--out", str(disk_dir / "reports"))
    assert code == 0, out
    run_dir = _run_dir(out)
    lines = (run_dir / "measurements.csv").read_text().splitlines(keepends=True)
    first_fio = next(i for i, line in enumerate(lines) if ",fio," in line)
    (run_dir / "measurements.csv").write_text("".join(lines[:first_fio]))   # stopped before fio's first run
    run = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**run, "status": "interrupted"}))
    (disk_dir / "jobs" / "mine.fio").write_text("[a]\nrw=trim\n")            # edited since: not what resume runs
    code, out = _cli("resume", str(run_dir))
    assert code == 0, out
    rows, _ = read_measurements(run_dir)
    fio = rows.instrument == "fio"
    assert fio.sum() == 4 and not any(rows.error)
    assert sorted(set(rows.granularity_bytes[fio].tolist())) == [16 * KiB, 64 * KiB]


def test_resume_holds_an_edited_kept_job_copy_to_the_allow_list_and_runs_nothing(disk_dir):
    plan = _job_plan(disk_dir, JOB_FILE)
    code, out = _cli("run", str(plan), "--target", str(disk_dir / "target"), "--out", str(disk_dir / "reports"))
    assert code == 0, out
    run_dir = _run_dir(out)
    run = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**run, "status": "interrupted"}))
    marker = disk_dir / "marker"
    (run_dir / "fio-jobs" / "t.fio").write_text(f"[a]\nrw=read\nsize=4k\nexec_prerun=touch {marker}\n")
    rows_before = (run_dir / "measurements.csv").read_bytes()
    code, out = _cli("resume", str(run_dir))
    assert code == 2
    assert out == (f"stibium: {run_dir}/fio-jobs/t.fio:4: exec_prerun: not allowed in a plan's job file (it runs a "
                   f"command)\n")
    assert not marker.exists() and (run_dir / "measurements.csv").read_bytes() == rows_before
