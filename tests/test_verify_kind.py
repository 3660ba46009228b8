"""Verify tests (`kind: verify`): what a plan may say, the expansion into a write and a read back of each file of the
fill, the order (every write, then every file out of the page cache, then each read back with its residency just
before), a run cut short and resumed (no file written whole is written again), the verdict the same on the terminal,
the page and summary.json, and the rows of a stranger's measurements.csv read strictly. On the fake helper, whose
sign finds the bad blocks a test names; the compiled helper's sign is tested in test_verify.py and on the truth
devices (tests/truth/test_truth_verify.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from rich.console import Console

from stibium_py.errors import RunError
from stibium_py.kinds.verify.analysis import verify_result
from stibium_py.kinds.verify.order import signature_id
from stibium_py.results.pipeline import load_run
from stibium_py.plan.expand import expand
from stibium_py.plan.load import load_plan
from stibium_py.report.publish import publish_run
from stibium_py.units import format_bytes
from stibium_py.run import LoadedPlan, RunOptions, resume_run, start_run
from stibium_py.kinds.verify.earlier.verdict import sentence_of
from stibium_py.kinds.verify.order import block_bytes_for

from fake_helper import FakeHelpers

MiB = 1 << 20


def _plan(test: str) -> str:
    return f"name: v\ntests:\n  - name: fill\n    kind: verify\n{test}"


SMALL = "    bytes: 10MiB\n    file_size: 4MiB\n    chunk: 1MiB\n"


def _expand(tmp_path: Path, text: str, free: int | None = None):
    path = tmp_path / "v.yaml"
    path.write_text(text)
    plan, _ = load_plan(path)
    return expand(plan, None, free)


def test_a_verify_test_is_a_write_of_each_file_then_a_read_back_of_each_in_the_fill_s_order(tmp_path):
    expanded = _expand(tmp_path, _plan(SMALL))
    ops = expanded.tests[0].ops
    assert [(o.op, o.trial, o.bytes, o.file) for o in ops] == [
        ("write", 0, 4 * MiB, "fill/v000000.bin"), ("write", 1, 4 * MiB, "fill/v000001.bin"),
        ("write", 2, 2 * MiB, "fill/v000002.bin"), ("read", 0, 4 * MiB, "fill/v000000.bin"),
        ("read", 1, 4 * MiB, "fill/v000001.bin"), ("read", 2, 2 * MiB, "fill/v000002.bin")]
    assert {(o.engine, o.chunk_bytes, o.fill) for o in ops} == {("direct", MiB, "random")}
    assert expanded.tests[0].files_bytes == 10 * MiB


def test_a_fill_is_whole_64_kib_of_its_bytes_or_its_share_at_most_max_bytes_and_the_room_the_run_leaves(tmp_path):
    """Whole 64 KiB, not whole chunks: `bytes: 10MB` fills 9,961,472 bytes (whole 4 MiB chunks would leave 8,388,608),
    its last file shorter than a chunk."""
    KiB64 = 64 << 10
    decimal = _expand(tmp_path, _plan("    bytes: 10MB\n    file_size: 4MiB\n")).tests[0]
    assert [o.bytes for o in decimal.ops if o.op == "write"] == [4 * MiB, 4 * MiB, 1_572_864]
    assert decimal.files_bytes == 9_961_472 == 10_000_000 // KiB64 * KiB64
    share = _plan("    fraction_of_free: 0.5\n    file_size: 4MiB\n    chunk: 1MiB\n")
    assert _expand(tmp_path, share, free=201 * MiB + 5).tests[0].files_bytes == 100 * MiB + 8 * KiB64
    # at most what leaves the run's margin (5 % of the fill and 64 MB) free: a fill preflight lets run
    most = _plan("    fraction_of_free: 0.98\n    chunk: 1MiB\n")
    free = 1000 * MiB
    filled = _expand(tmp_path, most, free=free).tests[0].files_bytes
    assert filled == (free - 64 * 10**6) * 100 // 105 // KiB64 * KiB64
    from stibium_py.plan.expand import space_wanted
    assert space_wanted(filled) <= free < space_wanted(filled + KiB64)
    capped = _plan("    fraction_of_free: 0.5\n    max_bytes: 3MiB\n    chunk: 1MiB\n")
    assert _expand(tmp_path, capped, free=100 * MiB).tests[0].files_bytes == 3 * MiB


@pytest.mark.parametrize("test, message", [
    ("    chunk: 1MiB\n", "give exactly one of bytes or fraction_of_free"),
    ("    bytes: 1MiB\n    fraction_of_free: 0.5\n", "give exactly one of bytes or fraction_of_free"),
    ("    bytes: 1MiB\n    max_bytes: 1MiB\n", "max_bytes caps fraction_of_free; with bytes, lower bytes instead"),
    ("    bytes: 1MiB\n    chunk: 100KiB\n", "102400 bytes is not whole 64 KiB from 64 KiB to 64 MiB"),
    ("    bytes: 1MiB\n    chunk: 128MiB\n", "134217728 bytes is not whole 64 KiB from 64 KiB to 64 MiB"),
    ("    bytes: 60KiB\n    chunk: 1MiB\n", "the fill holds less than 64 KiB; give more bytes"),
    ("    fraction_of_free: 0.99\n", "less than or equal to 0.98"),
    ("    bytes: 1MiB\n    engine: buffered\n", "a verify writes signed blocks uncached and ends each file with a "
     "full sync: engine is not its to choose; leave it out"),
])
def test_a_verify_test_a_plan_cannot_run_is_refused_with_what_to_give(tmp_path, test, message):
    from stibium_py.errors import PlanError
    with pytest.raises(PlanError) as e:
        _expand(tmp_path, _plan(test), free=1 << 30)
    assert message in str(e.value)


@pytest.mark.parametrize("bsize, chunk, block", [
    (4096, MiB, 4096), (16384, MiB, 16384), (16384, 64 << 10, 16384),   # ext4's, APFS's on Apple Silicon
    (131072, 64 << 10, 4096),                   # a block that does not divide the chunk: 4 KiB
    (131072, MiB, 131072), (1 << 20, 4 * MiB, 1 << 20), (1 << 20, None, 1 << 20),
    (2 << 20, 4 * MiB, 4096),                   # over 1 MiB (a network file system's transfer size): 4 KiB
    (1024, MiB, 4096), (6144, MiB, 4096),       # under 4 KiB, or not whole 4 KiB: 4 KiB
    (12288, MiB, 4096), (12288, None, 12288)])  # 12 KiB divides no chunk of whole 64 KiB; alone it stands
def test_the_fill_s_block_is_the_file_system_s_in_whole_4_kib_where_it_divides_the_chunk(bsize, chunk, block):
    assert block_bytes_for(bsize, chunk) == block


def test_bytes_read_back_whose_counts_are_not_believed_are_neither_good_nor_bad_nor_unread():
    assert sentence_of(100, 60, 60, 0, 0, 0, unknown=40) == (
        "60 of 100 bytes read back as written; what 40 bytes read back as is not known (their counts in the record "
        "do not add up)")
    assert sentence_of(100, 50, 40, 0, 2, 0, unknown=40) == (
        "not finished: 90 of 100 bytes read back so far, 40 of them as written; what 40 bytes read back as is not "
        "known (their counts in the record do not add up); resume it to check the rest")
    assert sentence_of(100, 60, 50, 0, 2, 0, unknown=40) == (
        "only 50 of 100 bytes (50 B of 100 B) read back as written; 2 blocks came back corrupted; what 40 bytes read "
        "back as is not known (their counts in the record do not add up)")
    assert sentence_of(100, 100, 100, 0, 0, 0) == "all 100 bytes read back as written"


def test_each_run_and_each_client_signs_with_an_id_of_its_own_that_resume_keeps():
    one = signature_id(1700000000.25, "/mnt/t", 0)
    assert one == signature_id(1700000000.25, "/mnt/t", 0)          # the same run, resumed
    assert len({one, signature_id(1700000000.5, "/mnt/t", 0), signature_id(1700000000.25, "/mnt/t", 1)}) == 3
    assert 1 <= one < 1 << 63


def _run(tmp_path: Path, text: str, helpers: FakeHelpers) -> Path:
    path = tmp_path / "v.yaml"
    path.write_text(text)
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    finished = start_run(LoadedPlan.read(path), options, Console(quiet=True), helpers)
    assert finished.status == "complete"
    return finished.path


def _signs(helpers: FakeHelpers) -> list[list[str]]:
    return [c for s in helpers.sessions for c in s.calls if c[0] in ("sign", "evict", "residency")]


def test_every_file_is_written_then_every_one_evicted_then_each_read_back_after_its_residency(tmp_path):
    helpers = FakeHelpers()
    run = _run(tmp_path, _plan(SMALL), helpers)
    calls = [(c[0], c[c.index("--op") + 1] if "sign" == c[0] else "", Path(c[c.index("--path") + 1]).name)
             for c in _signs(helpers)]
    assert calls == [("sign", "write", "v000000.bin"), ("sign", "write", "v000001.bin"),
                     ("sign", "write", "v000002.bin"), ("evict", "", "v000000.bin"), ("evict", "", "v000001.bin"),
                     ("evict", "", "v000002.bin"), ("residency", "", "v000000.bin"), ("sign", "read", "v000000.bin"),
                     ("residency", "", "v000001.bin"), ("sign", "read", "v000001.bin"),
                     ("residency", "", "v000002.bin"), ("sign", "read", "v000002.bin")]
    first = [c for c in _signs(helpers) if c[0] == "sign"]
    block = int(first[0][first[0].index("--block") + 1])
    # each file's first block is its place in the fill; every file of one run signs with one id
    assert [int(c[c.index("--first") + 1]) for c in first[:3]] == [0, 4 * MiB // block, 8 * MiB // block]
    assert len({c[c.index("--run") + 1] for c in first}) == 1
    rows = load_run(run).measurements
    assert len(rows.take(rows.chunk >= 0)) == 20           # a row a chunk: 4 + 4 + 2, written and read
    assert not list((tmp_path / "t").rglob("*.bin"))      # the fill removed at the end


def test_the_verdict_is_said_first_and_the_same_on_the_terminal_the_page_and_in_summary_json(tmp_path):
    helpers = FakeHelpers(bad={300: {"kind": "moved", "holds": 44}, 301: {"kind": "moved", "holds": 45},
                               2000: {"kind": "corrupt", "bits": 3},
                               2100: {"kind": "unreadable", "errno": 5, "error": "Input/output error"}})
    run = _run(tmp_path, _plan(SMALL), helpers)
    console = Console(record=True, width=200)
    summary = publish_run(run, console).to_json()
    said = console.export_text()
    read = next(t for t in summary["tests"] if t["op"] == "read")
    block = read["block_bytes"]
    total = 10 * MiB
    ok = total - 4 * block
    verdict = (f"only {ok:,} of {total:,} bytes ({ok / 1e6:.1f} MB of {total / 1e6:.1f} MB) read back as written; "
               f"{2 * block:,} bytes hold other blocks of the fill: this drive writes over what it holds, and keeps "
               f"about {ok / 1e6:.1f} MB (a fake capacity); 1 block came back corrupted; 1 block could not be read")
    assert read["verdict"] == verdict
    assert (read["moved_blocks"], read["corrupt_blocks"], read["unreadable_blocks"]) == (2, 1, 1)
    assert read["first_bad_block"] == 300 and read["period_blocks"] == 256
    assert f"fill: {verdict}" in " ".join(said.split())
    lines = said.splitlines()
    assert lines.index(next(l for l in lines if l.startswith("fill: only"))) < \
        lines.index(next(l for l in lines if "written:" in l))          # the verdict first, then the details
    page = (run / "report.html").read_text()
    assert f"<b>fill: {verdict}</b>" in page
    assert "the first bad block: byte " + f"{300 * block:,}" in page
    warning = next(w for w in summary["warnings"] if w["test"] == "fill (read)")
    assert warning["message"] == verdict and warning["level"] == "warning"


def test_a_verify_cut_short_is_resumed_without_writing_again_what_was_written_whole(tmp_path):
    path = tmp_path / "v.yaml"
    path.write_text(_plan(SMALL))
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    with pytest.raises(RunError) as e:
        start_run(LoadedPlan.read(path), options, Console(quiet=True), FakeHelpers(interrupt_at=4))
    assert e.value.exit_code == 130
    run = next((tmp_path / "r").iterdir())
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    # the fill stays for the resume (every other kind's files go when a run is cut)
    assert sorted(p.name for p in (tmp_path / "t").rglob("*.bin")) == ["v000000.bin", "v000001.bin", "v000002.bin"]
    helpers = FakeHelpers()
    finished = resume_run(run, RunOptions(progress=False), Console(quiet=True), helpers)
    assert finished.status == "complete"
    signs = [(c[c.index("--op") + 1], Path(c[c.index("--path") + 1]).name) for c in _signs(helpers) if c[0] == "sign"]
    # the three files were written and the first read back before the cut: only the rest is read now
    assert signs == [("read", "v000001.bin"), ("read", "v000002.bin")]
    result = verify_result("fill", "read", *_ops(run))
    assert (result.files, result.written_bytes, result.ok_blocks * result.block_bytes) == (3, 10 * MiB, 10 * MiB)
    assert result.sentence() == f"all {10 * MiB:,} bytes read back as written"


def _ops(run: Path):
    rows = load_run(run).measurements
    valid = rows.valid()
    return valid.take(valid.op == "read"), valid.take(valid.op == "write")


def test_a_run_cut_before_any_read_says_what_was_written_and_that_none_was_read_back(tmp_path):
    path = tmp_path / "v.yaml"
    path.write_text(_plan(SMALL))
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    with pytest.raises(RunError):
        start_run(LoadedPlan.read(path), options, Console(quiet=True), FakeHelpers(interrupt_at=2))
    run = next((tmp_path / "r").iterdir())
    console = Console(record=True, width=200)
    publish_run(run, console)
    said = " ".join(console.export_text().split())
    assert f"fill: not finished: {8 * MiB:,} bytes written, none read back yet; resume the run to check them" in said


def _rewrite(run: Path, change) -> None:
    path = run / "measurements.csv"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        change(row)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_a_stranger_s_counts_that_do_not_add_up_or_bad_lists_that_do_not_parse_are_not_believed(tmp_path):
    run = _run(tmp_path, _plan(SMALL), FakeHelpers(bad={5: {"kind": "corrupt", "bits": 1}}))

    def tamper(row: dict[str, str]) -> None:
        if row["op"] == "read" and row["chunk"] == "" and row["trial"] == "1":
            row["ok_blocks"] = str(int(row["ok_blocks"]) + 7)           # more blocks than the file has
        if row["op"] == "read" and row["chunk"] == "" and row["trial"] == "0":
            row["bad_blocks"] = '[{"block": 5, "kind": "corrupt", "bits": 1, "path": "/etc/passwd"}]'
    _rewrite(run, tamper)
    result = verify_result("fill", "read", *_ops(run))
    assert (result.rejected_files, result.unlisted_files, result.files) == (1, 1, 2)
    assert result.corrupt_blocks == 1 and result.bad == []              # the count stands, the list is not read
    summary = publish_run(run, Console(quiet=True)).to_json()
    messages = [w["message"] for w in summary["warnings"] if w["test"] == "fill (read)"]
    assert "the counts of 1 file in measurements.csv do not add up to their blocks and were left out" in messages
    assert "the list of bad blocks of 1 file could not be read (their counts stand)" in messages
    # the rejected file was read back: the verdict says its bytes are not known, not that they were not read back
    total, unknown = 10 * MiB, 4 * MiB
    ok = total - unknown - result.block_bytes
    assert (result.unknown_bytes, result.read_bytes) == (unknown, total)
    assert result.sentence() == (
        f"only {ok:,} of {total:,} bytes ({format_bytes(ok)} of {format_bytes(total)}) read back as written; 1 block "
        f"came back corrupted; what {unknown:,} bytes read back as is not known (their counts in the record do not "
        f"add up)")
    assert not [m for m in messages if "not read back" in m]


def test_a_verify_s_verdict_comes_before_the_summary_table_where_it_is_the_run_s_answer(tmp_path):
    """A run of verify tests only (as `stibium verify` makes): the verdict, the answer the run was made for, is
    the first thing after the progress, before the table of rates; beside other kinds' tests it follows the table
    as every kind's lines do."""
    import shutil
    from dataclasses import replace
    from stibium_py.report.build import terminal
    from stibium_py.results.pipeline import summarize_run
    run = tmp_path / "r"
    shutil.copytree(Path(__file__).parent / "fixtures" / "run-every-kind", run)
    _, _, summary = summarize_run(run)

    def said(s) -> list[str]:
        return [x if isinstance(x, str) else "TABLE" for x in terminal(s, 120)]
    verdict = "v: all 15,990,784 bytes read back as written"
    every = said(summary)
    assert every.index("TABLE") < every.index(verdict)
    alone = said(replace(summary, tests=[t for t in summary.tests if t.kind == "verify"], warnings=[]))
    assert alone.index(verdict) == 0 and alone.index(verdict) < alone.index("TABLE")
