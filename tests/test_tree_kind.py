"""Tree tests (`kind: tree`): the tree a plan shapes (names, folders, sizes drawn from the seed), the expansion into
one measurement per phase, the refusals in one line, a real run on a real file system (every phase's counts and
bytes, nothing left behind, the summary and the report), a resumed run that makes its tree again untimed, and
compare of two runs."""

from __future__ import annotations

import csv
import os
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stibium_py.kinds.tree.result import COLD, tree_result
from stibium_py.errors import MeasurementError
from stibium_py.rundir.measurement import Measurement
from stibium_py.kinds.tree.rows import from_tree_answer
from stibium_py.plan import PlanError, load_and_expand
from stibium_py.kinds.tree.preflight import tree_refusal
from stibium_py.rundir.table import Table
from stibium_py.kinds.tree.shape import TreeShape

PLAN = """\
name: tree-small
tests:
  - name: src
    kind: tree
    files: 120
    file_size: {from: 1KB, to: 20KB}
    dirs: 9
    depth: 2
    threads: [1, 3]
    trials: 2
"""
PHASES = ["create", "stat", "list", "read", "copy", "rename", "delete"]


def _plan(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


def _refusal(tmp_path: Path, monkeypatch, text: str) -> str:
    monkeypatch.chdir(tmp_path)
    Path("plan.yaml").write_text(text)
    with pytest.raises(PlanError) as e:
        load_and_expand(Path("plan.yaml"))
    return str(e.value)


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stibium_py", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)


def _run_plan(tmp_path: Path, text: str, target: Path, out: str = "r") -> subprocess.CompletedProcess:
    """`stibium run` of a plan's text into tmp_path/out, its test files in target."""
    return _run(tmp_path, "run", str(_plan(tmp_path, text)), "--target", str(target), "--out", str(tmp_path / out))


def _rows(run_dir: Path) -> list[dict]:
    with open(run_dir / "measurements.csv", newline="") as f:
        return list(csv.DictReader(f))


# -- the tree's shape

def test_a_tree_spreads_its_files_over_its_folders_with_names_of_the_length_asked():
    shape = TreeShape(files=1000, dirs=100, depth=2, name_bytes=20, choices=(), low_bytes=1000, high_bytes=64000, seed=3)
    paths = shape.paths()
    assert len(set(paths)) == 1000
    folders = {p.rsplit("/", 1)[0] for p in paths}
    assert len(folders) == 100 and shape.fan_out == 10
    assert all(p.count("/") == 2 for p in paths)
    assert {len(p.rsplit("/", 1)[1]) for p in paths} == {20}
    renamed = shape.paths(renamed=True)
    assert [p.rsplit("/", 1)[0] for p in renamed] == [p.rsplit("/", 1)[0] for p in paths]
    assert not set(renamed) & set(paths)
    # the list goes folder by folder: each folder's files together
    seen = [p.rsplit("/", 1)[0] for p in paths]
    assert seen == sorted(seen, key=seen.index) and len([k for k in range(1, 1000) if seen[k] != seen[k - 1]]) == 99


def test_fan_out_is_the_smallest_that_holds_the_folders():
    for dirs, depth, fan in ((1, 1, 1), (1, 3, 1), (16, 2, 4), (17, 2, 5), (400, 2, 20), (1000, 3, 10), (7, 1, 7)):
        shape = TreeShape(files=dirs, dirs=dirs, depth=depth, name_bytes=12, choices=(1,), low_bytes=0, high_bytes=0,
                          seed=1)
        assert shape.fan_out == fan, (dirs, depth)
        assert len({shape.folder(k) for k in range(dirs)}) == dirs


def test_log_uniform_sizes_have_the_geometric_mean_as_median_and_stay_in_bounds():
    # log-uniform between 1 KB and 64 KB: the median is sqrt(1000 * 64000) = 8000. The sample median's log has a
    # standard error of ln(64) / (2 sqrt(20000)) = 1.5 %; within 6 % is four of them (a uniform draw's median,
    # 32,500, is far outside)
    shape = TreeShape(files=20000, dirs=1, depth=1, name_bytes=12, choices=(), low_bytes=1000, high_bytes=64000,
                      seed=11)
    sizes = shape.sizes
    assert sizes.min() >= 1000 and sizes.max() <= 64000
    assert abs(np.log(np.median(sizes) / 8000)) < 0.06
    # a quarter of the files in each quarter of the log range (each share's standard error 0.3 %)
    quarters = np.histogram(np.log(sizes), bins=np.linspace(np.log(1000), np.log(64000), 5))[0] / 20000
    assert np.all(np.abs(quarters - 0.25) < 0.02)


def test_a_list_of_sizes_is_drawn_from_evenly_and_the_same_seed_draws_the_same():
    shape = TreeShape(files=9000, dirs=3, depth=1, name_bytes=12, choices=(4096, 16384, 65536), low_bytes=0,
                      high_bytes=0, seed=5)
    counts = {int(v): int(c) for v, c in zip(*np.unique(shape.sizes, return_counts=True))}
    assert set(counts) == {4096, 16384, 65536} and all(abs(c / 3000 - 1) < 0.1 for c in counts.values())
    again = TreeShape(files=9000, dirs=3, depth=1, name_bytes=12, choices=(4096, 16384, 65536), low_bytes=0,
                      high_bytes=0, seed=5)
    assert np.array_equal(shape.sizes, again.sizes)


def test_the_list_texts_name_every_file_with_its_size_and_its_new_name():
    shape = TreeShape(files=5, dirs=2, depth=1, name_bytes=10, choices=(123,), low_bytes=0, high_bytes=0, seed=1)
    assert shape.list_text() == ("123\td0/f0____.dat\n123\td0/f2____.dat\n123\td0/f4____.dat\n"
                                 "123\td1/f1____.dat\n123\td1/f3____.dat\n")
    assert shape.list_text(rename=True).splitlines()[0] == "123\td0/f0____.dat\td0/r0____.dat"
    assert shape.list_text(renamed=True).splitlines()[-1] == "123\td1/r3____.dat"


# -- the expansion

def test_each_trial_and_thread_count_is_a_tree_of_its_own_with_its_phases_in_order(tmp_path):
    _, _, expanded = load_and_expand(_plan(tmp_path, PLAN))
    (test,) = expanded.tests
    assert len(test.ops) == 2 * 2 * 7
    trees: dict[str, list] = {}
    for o in test.ops:
        trees.setdefault(o.file, []).append(o)
    assert len(trees) == 4
    for ops in trees.values():
        assert [o.op for o in ops] == PHASES
        assert len({(o.trial, o.threads) for o in ops}) == 1
        assert [o.seq for o in ops] == list(range(ops[0].seq, ops[0].seq + 7))      # a tree's phases together
    total = test.tree.total_bytes
    assert all(o.bytes == (total if o.op in ("create", "read", "copy") else 0) for o in test.ops)
    assert all(o.phase.files == 120 and o.kind == "tree" and o.size_bytes == total for o in test.ops)
    assert {o.sync for o in test.ops if o.op == "create"} == {"end"}
    # the space: whole 4 KiB blocks per file and a block per folder, twice (the copy phase's copy)
    assert test.files_bytes == 2 * (int(np.sum(-(-test.tree.sizes // 4096))) + 9) * 4096


@pytest.mark.parametrize("extra, message", [
    ("    phases: [stat, list]\n", "plan.yaml:3: tests[0]: phases needs create: the other phases work on the files it "
                                   "makes"),
    ("    phases: [create, read, stat]\n", "plan.yaml:3: tests[0]: phases run in the order create, stat, list, read, "
                                           "copy, rename, delete; list them in it"),
    ("    phases: [create, stat, stat]\n", "plan.yaml:3: tests[0]: each phase once: phases lists one twice"),
    ("    fill: '0x41'\n", "plan.yaml:3: tests[0]: a tree's files hold random data (fill: random); leave fill out"),
    ("    engine: foundation\n    threads: [1, 4]\n", "plan.yaml:3: tests[0]: the foundation engine saves on one "
                                                     "thread, as an app's own code does; use threads: 1 (or engine: "
                                                     "posix for more)"),
    ("    clients: {layout: shared}\n", "plan.yaml:3: tests[0]: clients.layout: shared is one file in segments, for "
                                        "pattern tests; a tree test gives each client its own files (clients.layout: "
                                        "per-client)"),
])
def test_plans_a_tree_cannot_run_are_refused_in_one_line(tmp_path, monkeypatch, extra, message):
    text = "name: q\ntests:\n  - name: t\n    kind: tree\n    files: 10\n    file_size: 4KB\n" + extra
    assert _refusal(tmp_path, monkeypatch, text) == message


@pytest.mark.parametrize("body, message", [
    ("    files: 1001\n    name_bytes: 8\n", "plan.yaml:7: tests[0] (t).name_bytes: 1001 files need names of at "
                                            "least 9 bytes (f, the file's number, 4 for .dat); raise name_bytes"),
    ("    files: 10000\n    name_bytes: 8\n", "plan.yaml:7: tests[0] (t).name_bytes: 10000 files need names of at "
                                             "least 9 bytes (f, the file's number, 4 for .dat); raise name_bytes"),
    ("    files: 3\n    threads: [1, 4]\n", "plan.yaml:7: tests[0] (t).threads: 4 threads for 3 files: every thread "
                                           "needs a file; lower threads or raise files"),
])
def test_trees_the_expansion_cannot_make_are_refused_at_their_key(tmp_path, monkeypatch, body, message):
    text = "name: q\ntests:\n  - name: t\n    kind: tree\n    file_size: 4KB\n" + body
    assert _refusal(tmp_path, monkeypatch, text) == message


def test_more_folders_than_files_is_refused(tmp_path, monkeypatch):
    text = "name: q\ntests:\n  - name: t\n    kind: tree\n    files: 10\n    dirs: 11\n    file_size: 4KB\n"
    assert _refusal(tmp_path, monkeypatch, text) == ("plan.yaml:3: tests[0]: dirs (11) is more than files (10): every "
                                                     "folder holds a file")


# -- the target's refusals

def test_names_longer_than_the_file_system_allows_are_refused():
    assert tree_refusal("t", 10, 2, 300, 400, 10**6, 255, 4096) == (
        "tree test 't': names of 300 bytes are longer than the target's file system allows (255 bytes); lower "
        "name_bytes to 255 or less")


def test_paths_longer_than_the_system_allows_are_refused():
    assert tree_refusal("t", 10, 2, 200, 4096, 10**6, 255, 4096) == (
        "tree test 't': its deepest path is 4096 bytes, and the target allows 4095; lower depth or name_bytes, or "
        "choose a target with a shorter path")


def test_more_files_than_free_inodes_are_refused_and_a_file_system_without_a_count_is_not():
    assert tree_refusal("t", 10000, 402, 16, 100, 10000, 255, 4096) == (
        "tree test 't': makes 10,402 files and folders at once, but the target's file system has 10,000 inodes "
        "free; lower files (or clients), or choose another --target")
    assert tree_refusal("t", 10000, 402, 16, 100, None, 255, 4096) is None
    assert tree_refusal("t", 10000, 402, 16, 100, 10402, None, None) is None


def test_a_run_with_names_too_long_for_the_target_stops_before_writing(tmp_path, disk_dir):
    text = ("name: q\ntests:\n  - name: t\n    kind: tree\n    files: 10\n    file_size: 4KB\n"
            "    name_bytes: 1024\n")
    proc = _run_plan(tmp_path, text, disk_dir / "t")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("stibium: tree test 't': names of 1024 bytes are longer than the target's file "
                                  "system allows (")
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (disk_dir / "t").exists() and not (tmp_path / "r").exists()


def test_a_tree_larger_than_the_free_space_stops_before_writing(tmp_path, disk_dir):
    text = "name: q\ntests:\n  - name: t\n    kind: tree\n    files: 100000\n    file_size: 2GB\n"
    proc = _run_plan(tmp_path, text, disk_dir / "t")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"stibium: target {disk_dir / 't'} has ") and "but the plan needs 400 TB" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (disk_dir / "t").exists() and not (tmp_path / "r").exists()


# -- the answer and the analysis

def test_an_answer_of_another_phase_or_file_count_is_refused(tmp_path):
    _, _, expanded = load_and_expand(_plan(tmp_path, PLAN))
    op = expanded.ops[1]                         # stat
    answer = {"phase": "stat", "files": 120, "threads": op.threads, "engine": "posix", "ops": 120, "bytes": 0,
              "seconds": 0.01}
    assert from_tree_answer(op, True, answer, 0.0).tree.entries == 120
    with pytest.raises(MeasurementError, match="the helper measured phase='read' where the plan asked for 'stat'"):
        from_tree_answer(op, True, {**answer, "phase": "read"}, 0.0)
    with pytest.raises(MeasurementError, match="the helper measured files=119 where the plan asked for 120"):
        from_tree_answer(op, True, {**answer, "files": 119}, 0.0)
    with pytest.raises(MeasurementError, match="keys this stibium does not know \\(surprise\\)"):
        from_tree_answer(op, True, {**answer, "surprise": 1}, 0.0)


def _phase_rows(phase: str, seconds: list[float], dropped: bool, threads: int = 1) -> Table:
    return Table.from_rows([Measurement(seq=i, test="t", op=phase, kind="tree", access="", size_bytes=1000,
                                        granularity_bytes=0, stride_bytes=0, trial=i, file=f"t/tree-{i}", bytes=0,
                                        seconds=s, requests=100, entries=100, threads=threads,
                                        caches_dropped=dropped) for i, s in enumerate(seconds)])


def test_a_phase_rate_is_the_median_of_files_per_second_with_the_range_of_six_trials():
    seconds = [0.010, 0.011, 0.009, 0.0125, 0.0105, 0.0095]
    e = tree_result("t", "stat", _phase_rows("stat", seconds, False), 1000, 1, 0.95)
    (p,) = e.points
    rates = sorted(100 / s for s in seconds)
    assert p.rate.estimate == pytest.approx(np.median(rates))
    # six trials: [min, max] is a 96.9 % interval, narrowed to 95 % between the outer two order statistics
    assert rates[0] < p.rate.low < rates[1] and rates[-2] < p.rate.high < rates[-1]
    assert e.warm.startswith("metadata warm")
    assert tree_result("t", "stat", _phase_rows("stat", seconds, True), 1000, 1, 0.95).warm == COLD


# -- a real run

def _one_run(tmp_path: Path, disk_dir: Path, name: str = "r") -> Path:
    proc = _run_plan(tmp_path, PLAN, disk_dir / "t", name)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = (tmp_path / name).iterdir()
    return run_dir


def test_a_run_measures_every_phase_of_every_tree_and_leaves_nothing_behind(tmp_path, disk_dir):
    run_dir = _one_run(tmp_path, disk_dir)
    rows = _rows(run_dir)
    assert len(rows) == 28 and all(not r["error"] for r in rows)
    _, _, expanded = load_and_expand(_plan(tmp_path, PLAN))
    total = expanded.tests[0].tree.total_bytes
    for r in rows:
        assert float(r["seconds"]) > 0
        if r["op"] == "list":
            # the root, its 3 folders and their 9: every folder read once; the names: 120 files and 12 folders
            assert (r["requests"], r["entries"]) == ("13", "132")
        else:
            assert r["requests"] == r["entries"] == "120"
        assert int(r["bytes"]) == (total if r["op"] in ("create", "read", "copy") else 0)
        if r["op"] == "read":
            assert float(r["resident_before"]) == 0.0
        assert sum(int(b.split(":")[1]) for b in r["lat_hist_ns"].split()) == int(r["requests"])
    assert not (disk_dir / "t").exists() or not any((disk_dir / "t").iterdir())
    summary = json.loads((run_dir / "summary.json").read_text())
    trees = [t for t in summary["tests"] if t["kind"] == "tree"]
    assert [t["op"] for t in trees] == PHASES
    assert all([p["threads"] for p in t["points"]] == [1, 3] and all(p["trials"] == 2 for p in t["points"])
               for t in trees)
    html = (run_dir / "report.html").read_text()
    assert "src: a tree of files" in html and "files per second by phase against threads" in html


def test_compare_of_two_tree_runs_matches_each_phase_and_thread_count(tmp_path, disk_dir):
    a = _one_run(tmp_path, disk_dir, "a")
    b = _one_run(tmp_path, disk_dir, "b")
    proc = _run(tmp_path, "compare", str(a), str(b), "--out", str(tmp_path / "cmp.html"), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    keys = [(p["op"], p["threads"]) for p in result["rows"]]
    assert keys == [(phase, t) for phase in PHASES for t in (1, 3)]       # the phases in the order they ran
    assert all(p["kind"] == "tree" for p in result["rows"])
    html = (tmp_path / "cmp.html").read_text()
    assert "src stat: files per second against threads, both runs" in html
    assert "src list: names per second against threads, both runs" in html
    table = _run(tmp_path, "compare", str(a), str(b), "--out", str(tmp_path / "cmp2.html"))
    assert table.returncode == 0 and "src" in table.stdout and "create" in table.stdout


@pytest.mark.parametrize("kept", [2, 4, 6, 12])
def test_resume_makes_the_tree_again_untimed_and_measures_each_phase_once(tmp_path, disk_dir, kept):
    """A run cut after `kept` rows (after a tree's stat; before its copy; before its delete, which meets the
    renamed names; in the second tree's copy): its files are gone (an interrupted run removes them), so resume makes the tree again,
    untimed, in the state the next phase meets, and measures every phase left exactly once."""
    run_dir = _one_run(tmp_path, disk_dir)
    rows = _rows(run_dir)
    kept_rows = rows[:kept]
    with open(run_dir / "measurements.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept_rows)
    record = json.loads((run_dir / "run.json").read_text())
    record["status"] = "interrupted"
    (run_dir / "run.json").write_text(json.dumps(record))
    proc = _run(tmp_path, "resume", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    after = _rows(run_dir)
    assert sorted(int(r["seq"]) for r in after) == list(range(28))
    assert all(not r["error"] for r in after)
    assert all(r["requests"] == "120" for r in after if r["op"] in ("rename", "delete", "read", "stat", "copy"))
    assert not any((disk_dir / "t").rglob("*.dat"))


@pytest.fixture
def reflink_dir(disk_dir):
    """A folder on XFS with reflink (a loop device over a sparse image in the temporary folder), unmounted and
    removed afterwards: a file system whose copies clone, as APFS's do (root, mkfs.xfs from xfsprogs)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a loop device")
    image, mnt = disk_dir / "xfs.img", disk_dir / "xfs"
    with open(image, "wb") as f:
        f.truncate(400 * 2**20)                   # xfsprogs makes no file system under 300 MB
    subprocess.run(["mkfs.xfs", "-q", "-m", "reflink=1", str(image)], check=True)
    mnt.mkdir()
    subprocess.run(["mount", "-o", "loop", str(image), str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        image.unlink()


def test_a_copy_on_a_file_system_that_clones_says_it_cloned(tmp_path, reflink_dir):
    text = ("name: clones\ntests:\n  - name: c\n    kind: tree\n    files: 40\n    file_size: [8KB, 64KB]\n"
            "    dirs: 4\n    trials: 2\n    phases: [create, copy, delete]\n")
    proc = _run_plan(tmp_path, text, reflink_dir / "t")
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = (tmp_path / "r").iterdir()
    copies = [r for r in _rows(run_dir) if r["op"] == "copy"]
    assert len(copies) == 2 and all(r["cloned"] == "40" and r["io_method"] == "" for r in copies)
    summary = json.loads((run_dir / "summary.json").read_text())
    (point,) = next(t for t in summary["tests"] if t["op"] == "copy")["points"]
    assert point["cloned"] == 40
    said = " ".join(proc.stdout.split())                  # the terminal wraps its lines
    assert "c copy: " in said and "cloned 40 of 40 files (no bytes moved)" in said
    notes = [w for w in summary["warnings"] if w["test"] == "c (copy)"]
    assert notes and notes[0]["message"].startswith("the file system cloned the copies (up to 40 of 40 a trial)")
    assert not any(reflink_dir.rglob("*.dat"))


def test_a_run_with_the_foundation_engine_measures_every_phase_as_a_mac_app_calls(tmp_path, disk_dir):
    text = PLAN.replace("    threads: [1, 3]\n", "    engine: foundation\n")
    proc = _run_plan(tmp_path, text, disk_dir / "t")
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = (tmp_path / "r").iterdir()
    rows = _rows(run_dir)
    assert len(rows) == 2 * 7 and all(not r["error"] and r["engine"] == "foundation" for r in rows)
    copies = [r for r in rows if r["op"] == "copy"]
    assert all(r["cloned"] == "" and r["io_method"] == "NSFileManager copyItemAtPath:toPath:" for r in copies)
    assert {r["requests"] for r in rows if r["op"] != "list"} == {"120"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert {t["engine"] for t in summary["tests"]} == {"foundation"}
    assert re.search(r"^src +create \(foundation\) ", proc.stdout, re.M), proc.stdout   # the tree phases' row
    assert "NSData writeToFile:atomically: (written to a temporary name" in (run_dir / "report.html").read_text()
    assert not any((disk_dir / "t").rglob("*.dat"))


def test_keep_files_keeps_every_tree_and_counts_their_space(tmp_path, disk_dir):
    _, _, expanded = load_and_expand(_plan(tmp_path, PLAN))
    (test,) = expanded.tests
    assert expanded.space_needed_bytes(keep_files=True) == 4 * test.files_bytes       # four trees, each kept
    assert expanded.space_needed_bytes() == test.files_bytes
    proc = _run(tmp_path, "run", str(tmp_path / "plan.yaml"), "--target", str(disk_dir / "t"), "--out",
                str(tmp_path / "r"), "--keep-files")
    assert proc.returncode == 0, proc.stderr
    # every tree's folder stays, with what its phases left: the copies (its own files the delete phase removed)
    assert len(list((disk_dir / "t").rglob("tree-*-t*"))) == 4
    assert len(list((disk_dir / "t").rglob("copy/*/*/*.dat"))) == 4 * 120
    assert not [p for p in (disk_dir / "t").rglob("*.dat") if "copy" not in p.parts]


def test_a_trees_synced_creates_on_a_mac_are_said_to_leave_the_drives_cache_unflushed():
    """A tree's create syncs with fsync(2) (each or at the end), which on macOS leaves the data in the drive's
    cache (xnu's fsync(2) man page), as the writes of other tests with sync: fsync."""
    from stibium_py.analysis.durability import flushes_drive_cache, unflushed_count
    assert flushes_drive_cache("darwin", "each") is False and flushes_drive_cache("darwin", "end") is False
    assert flushes_drive_cache("linux", "end") is True and flushes_drive_cache("darwin", "none") is False
    ops, syncs = ["create", "stat", "create", "create"], ["end", None, "each", "none"]
    assert unflushed_count("darwin", ops, syncs) == 2 and unflushed_count("linux", ops, syncs) == 0
