"""Requests in flight in plans, rows, analysis, report and compare: queue_depth and threads expand into
measurements of their own, older plans and files keep their meaning, the queue-depth knee is where
throughput stops growing within its interval, and a small run with requests in flight ends in the
disk-mark table."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.analysis.estimate import Estimate
from stibium_py.kinds.pattern.result import queue_depth_knee
from stibium_py.rundir.measurement import COLUMNS
from stibium_py.cli import main
from stibium_py.plan import PlanError, load_and_expand
from stibium_py.rundir.record import ops_digest
from stibium_py.rundir.csvread import read_measurements

PLAN = """\
name: inflight
tests:
  - name: rnd
    kind: pattern
    op: [read, write]
    access: random
    granularities: [4KiB]
    bytes: {bytes}
    span: 1MiB
    trials: 3
{extra}"""


def _write(tmp_path: Path, extra: str = "", bytes_: str = "256KiB", name: str = "plan.yaml") -> Path:
    p = tmp_path / name
    p.write_text(PLAN.format(extra=extra, bytes=bytes_))
    return p


def test_each_queue_depth_and_thread_count_is_a_measurement_of_its_own(tmp_path):
    _, _, e = load_and_expand(_write(tmp_path, "    queue_depth: [1, 8, 32]\n    threads: [1, 4]\n"))
    assert len(e.ops) == 2 * 3 * 2 * 3
    combos = {(o.op, o.queue_depth, o.threads) for o in e.ops}
    assert combos == {(op, d, t) for op in ("read", "write") for d in (1, 8, 32) for t in (1, 4)}
    assert all(sum(1 for o in e.ops if (o.op, o.queue_depth, o.threads) == c) == 3 for c in combos)
    # a different offset order for each setting: the same blocks drawn again would be a repeat
    assert len({o.seed for o in e.ops}) == len(e.ops)


def test_a_plan_at_one_request_in_flight_keeps_its_digest_and_seeds(tmp_path):
    """Plans written before queue depth existed: the same offsets, and runs made then still resume."""
    _, _, before = load_and_expand(_write(tmp_path, "", name="a.yaml"))
    _, _, now = load_and_expand(_write(tmp_path, "    queue_depth: 1\n    threads: [1]\n", name="b.yaml"))
    assert [o.seed for o in before.ops] == [o.seed for o in now.ops]
    assert ops_digest(before.ops_as_dicts()) == ops_digest(now.ops_as_dicts())
    assert "queue_depth" not in before.ops_as_dicts()[0]


@pytest.mark.parametrize("extra,message", [
    ("    queue_depth: 0\n", "plan.yaml:11: tests[0] (rnd).queue_depth: must be a whole number from 1 to 256, not 0"),
    ("    queue_depth: [1, 300]\n",
     "plan.yaml:11: tests[0] (rnd).queue_depth[1]: must be a whole number from 1 to 256, not 300"),
    ("    threads: 65\n", "plan.yaml:11: tests[0] (rnd).threads: must be a whole number from 1 to 64, not 65"),
    ("    queue_depth: []\n",
     "plan.yaml:11: tests[0] (rnd).queue_depth: the list is empty; give at least one value, such as 1"),
    ("    queue_depth: 8\n    engine: foundation\n",
     "plan.yaml:3: tests[0] (rnd): the foundation engine moves one request at a time, as simple app code does; "
     "use engine: direct or buffered for queue_depth or threads above 1"),
    ("    queue_depth: 64\n    threads: 32\n",
     "plan.yaml:3: tests[0] (rnd): queue_depth 64 x threads 32 is 2048 requests in flight; at most 1024 (macOS "
     "needs a thread for each)"),
])
def test_bad_values_are_refused_in_one_line(tmp_path, extra, message):
    with pytest.raises(PlanError) as e:
        load_and_expand(_write(tmp_path, extra))
    assert str(e.value) == f"{tmp_path}/{message}"


def _est(value: float, half: float) -> Estimate:
    return Estimate(value, value - half, value + half, "test", 5)


def test_the_queue_depth_knee_is_where_throughput_stops_growing_within_its_interval():
    depths = [1, 4, 16, 32, 64]
    # grows to 16, then 32 and 64 lie within 16's interval
    assert queue_depth_knee(depths, [_est(100, 5), _est(350, 10), _est(800, 40), _est(830, 30), _est(820, 30)]) == 16
    # still growing at the deepest queue: the deepest is the knee (no plateau measured)
    assert queue_depth_knee(depths, [_est(100, 5), _est(200, 5), _est(300, 5), _est(400, 5), _est(500, 5)]) == 64
    # flat from the start: 1; order of the lists does not matter
    assert queue_depth_knee([32, 1, 8], [_est(100, 10), _est(100, 10), _est(105, 10)]) == 1
    assert queue_depth_knee([8], [_est(100, 10)]) is None


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def small_run() -> Path:
    """A run of random 4 KiB reads and writes at queue depths 1 and 4 on 1 and 2 threads, and sequential
    64 KiB ones at depths 1 and 8 (real requests on a real file system)."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="stibium-test-", dir="/var/tmp"))   # a disk, never tmpfs
    plan = _write(base, "    queue_depth: [1, 4]\n    threads: [1, 2]\n"
                        "  - name: seq\n    kind: pattern\n    op: [read, write]\n    access: sequential\n"
                        "    granularities: [64KiB]\n    bytes: 1MiB\n    queue_depth: [1, 8]\n    trials: 3\n")
    code, out = _run("run", str(plan), "--target", str(base / "target"), "--out", str(base / "reports"))
    assert code == 0, out
    run_dir = Path(re.search(r"run directory: (\S+)", out).group(1))
    (run_dir / "terminal.txt").write_text(out)
    yield run_dir
    shutil.rmtree(base, ignore_errors=True)


def test_rows_keep_the_queue_depth_threads_and_method(small_run, helper_info):
    with open(small_run / "measurements.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 * 2 * 3 + 2 * 2 * 3 and not any(r["error"] for r in rows)
    methods = {(r["queue_depth"], r["threads"]): r["io_method"] for r in rows if r["test"] == "rnd"}
    assert methods[("1", "1")] == "sync"
    parallel = "threads" if helper_info["platform"] == "darwin" else "io_uring"
    assert methods[("4", "1")] == methods[("4", "2")] == methods[("1", "2")] == parallel


def test_the_report_has_the_disk_mark_table_and_the_queue_depth_figures(small_run):
    out = (small_run / "terminal.txt").read_text()
    assert "disk-mark table" in out
    for label in ("SEQ64K Q8T1", "SEQ64K Q1T1", "RND4K Q4T2", "RND4K Q4T1", "RND4K Q1T2", "RND4K Q1T1"):
        assert label in out
    # CrystalDiskMark's order: sequential first, more in flight first
    order = [out.index(lab) for lab in ("SEQ64K Q8T1", "SEQ64K Q1T1", "RND4K Q4T2", "RND4K Q4T1", "RND4K Q1T1")]
    assert order == sorted(order)
    page = (small_run / "report.html").read_text()
    assert "Disk-mark table" in page and "RND4K Q4T2" in page
    assert "throughput and IOPS against queue depth" in page and "per-request latency against queue depth" in page
    import json
    summary = json.loads((small_run / "summary.json").read_text())
    rnd = [t for t in summary["tests"] if t["name"] == "rnd"]
    assert {(p["queue_depth"], p["threads"]) for t in rnd for p in t["points"]} == {(1, 1), (4, 1), (1, 2), (4, 2)}
    # a queue-depth knee for each op and thread count (two depths each); where it lies depends on the disk
    knees = {(t["op"], k["threads"]) for t in rnd for k in t["queue_depth_knees"]}
    assert knees == {(op, threads) for op in ("read", "write") for threads in (1, 2)}


def test_compare_matches_on_queue_depth_and_threads(small_run, tmp_path):
    other = tmp_path / small_run.name
    shutil.copytree(small_run, other)
    code, out = _run("compare", str(small_run), str(other), "--json")
    assert code == 0, out
    import json
    rows = json.loads(out)["rows"]
    keys = {(r["test"], r["op"], r["queue_depth"], r["threads"]) for r in rows}
    assert len(keys) == len(rows) == 2 * 4 + 2 * 2
    assert all(abs(r["ratio"]["estimate"] - 1) < 1e-12 for r in rows)


def test_a_file_made_before_queue_depth_existed_reads_one_request_in_flight(small_run, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(small_run, old)
    with open(small_run / "measurements.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    dropped = COLUMNS[COLUMNS.index("queue_depth"):]        # it and every column added after it
    with open(old / "measurements.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[c for c in rows[0] if c not in dropped])
        w.writeheader()
        for r in rows:
            if r["queue_depth"] == r["threads"] == "1":
                w.writerow({k: v for k, v in r.items() if k not in dropped})
    table, _ = read_measurements(old)
    assert len(table) == sum(1 for r in rows if r["queue_depth"] == r["threads"] == "1")
    assert set(table.queue_depth) == {1} and set(table.threads) == {1}
    assert all(m.queue_depth == 1 and m.threads == 1 and m.io_method is None for m in table.rows())


@pytest.mark.parametrize("plan,labels", [
    ("quartet", {"SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"}),
    ("mac-disk-mark", {"SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q64T1", "RND4K Q1T1"}),
])
def test_the_disk_mark_plans_measure_the_published_sets(plan, labels):
    """quartet is CrystalDiskMark's default set, mac-disk-mark AmorphousDiskMark's: each label read and
    written, 5 trials, in a 1 GiB file."""
    from stibium_py.plan import resolve_plan_path

    _, _, e = load_and_expand(resolve_plan_path(plan))
    short = {"sequential": "SEQ", "random": "RND"}
    size = {2**20: "1M", 128 * 2**10: "128K", 4 * 2**10: "4K"}
    got: dict[tuple[str, str], int] = {}
    for o in e.ops:
        key = (f"{short[o.access]}{size[o.granularity_bytes]} Q{o.queue_depth}T{o.threads}", o.op)
        got[key] = got.get(key, 0) + 1
        assert o.size_bytes == 2**30
    assert got == {(label, op): 5 for label in labels for op in ("read", "write")}
