"""Plan parsing, validation messages and expansion (orders, ranges, seeds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stibium_py.plan import PlanError, builtin_plans, load_and_expand, load_plan, resolve_plan_path
from stibium_py.plan.expand import expand

FILES = """\
name: t
tests:
  - name: files
    kind: files
    sizes: [10KB, 100KB, 1MB]
    repeats: 3
    write_order: {write_order}
    read_order: {read_order}
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "plan.yaml"
    p.write_text(text)
    return p


def _expanded(tmp_path, text, seed=None):
    return load_and_expand(_write(tmp_path, text), seed)[2]


def test_as_listed_and_cycle_orders(tmp_path):
    e = _expanded(tmp_path, FILES.format(write_order="as-listed", read_order="as-written"))
    writes = [(o.size_bytes, o.trial) for o in e.ops if o.op == "write"]
    assert writes == [(s, r) for s in (10_000, 100_000, 1_000_000) for r in range(3)]
    reads = [(o.size_bytes, o.trial) for o in e.ops if o.op == "read"]
    assert reads == writes
    e = _expanded(tmp_path, FILES.format(write_order="cycle", read_order="directory"))
    writes = [(o.size_bytes, o.trial) for o in e.ops if o.op == "write"]
    assert writes == [(s, r) for r in range(3) for s in (10_000, 100_000, 1_000_000)]
    reads = [o.file for o in e.ops if o.op == "read"]
    assert reads == sorted(reads)


def test_random_orders_follow_the_seed(tmp_path):
    text = FILES.format(write_order="random", read_order="random")
    a = _expanded(tmp_path, text)
    b = _expanded(tmp_path, text)
    c = _expanded(tmp_path, text, seed=99)
    assert a.ops == b.ops
    assert [o.file for o in a.ops] != [o.file for o in c.ops]
    assert sorted(o.file for o in a.ops) == sorted(o.file for o in c.ops)
    assert [o.seq for o in a.ops] == list(range(18))


def test_ranges_count_and_factor(tmp_path):
    e = _expanded(tmp_path, "name: r\ntests:\n  - name: f\n    kind: files\n    sizes: {from: 10KB, to: 2GB, count: 14}\n")
    sizes = sorted({o.size_bytes for o in e.ops})
    assert len(sizes) == 14 and sizes[0] == 10_000 and sizes[-1] == 2 * 10**9
    e = _expanded(tmp_path, "name: r\ntests:\n  - name: p\n    kind: pattern\n    op: read\n"
                            "    granularities: {from: 4KiB, to: 1MiB, factor: 2}\n    bytes: 1MiB\n    trials: 1\n")
    assert sorted({o.granularity_bytes for o in e.ops}) == [4096 * 2**i for i in range(9)]


def test_pattern_expansion_counts_and_space(tmp_path):
    text = """\
name: p
tests:
  - name: pat
    kind: pattern
    op: [read, write]
    access: [random, strided]
    granularities: [4KiB, 64KiB]
    strides: [0, 4KiB]
    bytes: 1MiB
    span: 4MiB
    trials: 2
"""
    e = _expanded(tmp_path, text)
    # random: 2 granularities; strided: 2 granularities x 2 strides; x 2 ops x 2 trials
    assert len(e.ops) == (2 + 4) * 2 * 2
    assert e.space_needed_bytes() == 4 * 2**20
    assert e.bytes_written == 4 * 2**20 + sum(o.bytes for o in e.ops if o.op == "write")
    assert all(o.existing for o in e.ops)
    assert len({o.seed for o in e.ops}) == len(e.ops)  # every trial its own random order


def test_builtin_plans_are_valid():
    plans = builtin_plans()
    assert {"quick", "articles-140", "articles-first", "articles-400", "access-patterns", "transfer-sweep",
            "quartet", "mac-disk-mark"} <= set(plans)
    for name, path in plans.items():
        plan, text = load_plan(path)
        assert plan.name == name
        assert text.startswith("#"), f"{name} needs a header comment"
        load_and_expand(path)


@pytest.mark.parametrize("text,message", [
    ("name: q\ntests: []\n", "plan.yaml:2: tests: List should have at least 1 item after validation, not 0 (got [])"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizse: [1KB]\n",
     "plan.yaml:5: tests[0].sizse: unknown key 'sizse'; did you mean 'sizes'? allowed: between, clients, engine, fill, "
     "kind, name, read_order, repeats, seed, sizes, sync, units, write_order"),
    # a misspelt key of a sustained test: the key's line and path, as for the other kinds (issue #26)
    ("name: q\ntests:\n  - name: s\n    kind: sustained\n    bytes: 8MiB\n    granularty: 1MiB\n",
     "plan.yaml:6: tests[0].granularty: unknown key 'granularty'; did you mean 'granularity'? allowed: bytes, chunk, "
     "clients, engine, file_size, fill, fraction_of_free, granularity, kind, max_bytes, name, queue_depth, read_back, seed, "
     "sync, threads, units"),
    ("name: q\ntests:\n  - name: p\n    kind: pattern\n    op: read\n    granularities: [4KiB]\n    bytes: 1MiB\n"
     "    trails: 3\n",
     "plan.yaml:8: tests[0].trails: unknown key 'trails'; did you mean 'trials'? allowed: access, arrivals, bench, bench_job, bytes, clients, "
     "duration, engine, fill, granularities, kind, layout, name, op, precondition, queue_depth, rate, read_fraction, "
     "seed, slo, span, "
     "steady, stonewall, strides, sync, threads, trials, units, warmup"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizes: [1KB, 10XB]\n",
     "plan.yaml:5: tests[0] (a).sizes[1]: unknown unit 'XB' in '10XB'; use B, KB, MB, GB, TB or KiB, MiB, GiB, TiB"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizes: [0]\n",
     "plan.yaml:5: tests[0] (a).sizes[0]: a size must be positive, not 0"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizes: [1KB]\n    between: sometimes\n",
     "plan.yaml:6: tests[0].between: must be 'none', 'evict', 'drop-caches' or 'reboot' (not 'sometimes')"),
    ("name: q\n  bad: [\n", "plan.yaml:2: not valid YAML: mapping values are not allowed here"),
    ("name: q\ntests:\n  - name: a\n    kind: pattern\n    op: read\n    granularities: [4KiB]\n    bytes: 1MiB\n"
     "    span: 512KiB\n",
     "plan.yaml:8: tests[0] (a).span: the requests need 1048576 bytes but span is 524288; raise span or lower bytes"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizes: [1KB]\n  - name: a\n    kind: files\n    sizes: [2KB]\n",
     "plan.yaml:2: tests: two tests are named 'a'; names must be unique"),
    ("name: q\ntests:\n  - name: a\n    kind: pattern\n    op: read\n    access: random\n    granularities: [4KiB]\n"
     "    strides: [4KiB]\n    bytes: 1MiB\n",
     "plan.yaml:8: tests[0] (a).strides: a stride needs strided access; add 'strided' to access or use strides: [0]"),
    ("name: q\ntests:\n  - name: a\n    kind: disk\n", "plan.yaml:3: tests[0]: kind must be 'files', 'pattern', 'replay', 'stream', 'sustained', 'tree' or 'verify', not 'disk'"),
    ("- just\n- a list\n", "plan.yaml: a plan is a mapping with name, tests and other keys; see `stibium plan show quick`"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizes: {from: 1KB, to: 2GB, count: 20000}\n",
     "plan.yaml:5: tests[0].sizes.count: Input should be less than or equal to 10000 (got 20000)"),
    ("name: q\ntests:\n  - name: a\n    kind: pattern\n    op: read\n    granularities: {from: 4KiB, to: 1MiB, "
     "factor: 1.0000001}\n    bytes: 1MiB\n",
     "plan.yaml:6: tests[0] (a).granularities.factor: 1.0000001 gives 55451778 sizes between from and to; at most "
     "10000: use a larger factor"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizes: {from: 1KB, to: 2GB, count: 9000}\n"
     "    repeats: 100000\n",
     "plan.yaml:6: tests[0] (a).repeats: the test expands to 1,800,000,000 measurements; at most 1,000,000 in one test"),
    ("name: q\ntests:\n  - name: a\n    kind: files\n    sizes: [1KB]\n    repeats: two\n",
     "plan.yaml:6: tests[0].repeats: Input should be a valid integer, unable to parse string as an integer (got 'two')"),
])
def test_invalid_plans_get_one_line(tmp_path, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    Path("plan.yaml").write_text(text)
    with pytest.raises(PlanError) as e:
        load_and_expand(Path("plan.yaml"))
    assert str(e.value) == message


def test_plan_names_resolve_with_a_suggestion(tmp_path):
    assert resolve_plan_path("quick").name == "quick.yaml"
    with pytest.raises(PlanError) as e:
        resolve_plan_path("quik")
    assert str(e.value) == "quik: not a plan file or a built-in plan; did you mean 'quick'? `stibium plans` lists the built-in ones"


def test_expand_is_pure(tmp_path):
    plan, _ = load_plan(_write(tmp_path, FILES.format(write_order="random", read_order="random")))
    assert expand(plan).ops == expand(plan).ops


@pytest.mark.parametrize("target, ok", [("./stibium-test", True), ("sub/dir", True), ("stibium-test", True),
                                        ("/etc/x", False), ("~/Documents", False), ("../up", False),
                                        ("a/../../b", False), ("", False), ("C:/x", False)])
def test_a_plan_s_target_stays_below_the_folder_stibium_runs_in(tmp_path, target, ok):
    plan = tmp_path / "p.yaml"
    plan.write_text(f"name: t\ntarget: '{target}'\ntests:\n  - name: f\n    kind: files\n    sizes: [1MB]\n")
    if ok:
        assert load_plan(plan)[0].target == target
        return
    with pytest.raises(PlanError) as e:
        load_plan(plan)
    assert str(e.value) == (f"{plan}:2: target: a plan's target is a folder below the one stibium runs in, such as "
                            f"./stibium-test (not absolute, no ~ or ..); give a disk elsewhere with --target")


def test_every_built_in_plan_s_description_says_what_plan_show_computes():
    """A description's counts of files (files, messages, photos) are the files its tests write, and quick's
    'about 1 GB written and as much read' holds within a tenth."""
    import re
    for name in builtin_plans():
        plan, _, expanded = load_and_expand(resolve_plan_path(name))
        stated = re.search(r"\b(\d[\d,]*) (?:files|messages|photos)\b", plan.description)
        if stated:
            files = sum(len({o.file for o in t.ops if o.op == "write"}) for t in expanded.tests if t.kind == "files")
            files += sum(t.tree.files for t in expanded.tests if t.kind == "tree" and t.tree is not None)
            assert files == int(stated.group(1).replace(",", "")), name
    _, _, quick = load_and_expand(resolve_plan_path("quick"))
    read = sum(o.bytes for o in quick.ops if o.op == "read")
    assert abs(quick.bytes_written - 1e9) < 0.1e9 and abs(read - quick.bytes_written) < 0.1 * quick.bytes_written


def test_a_refusal_of_one_of_a_list_of_words_names_no_type_of_the_validator(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: t\ntests:\n  - name: f\n    kind: pattern\n    op: read\n    access: sideways\n"
                    "    granularities: [4KiB]\n    bytes: 1MiB\n")
    with pytest.raises(PlanError) as e:
        load_plan(plan)
    assert str(e.value) == f"{plan}:6: tests[0].access: must be 'sequential', 'strided' or 'random' (not 'sideways')"
