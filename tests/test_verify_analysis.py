"""A verify's numbers from its rows, field by field (kinds/verify/analysis.py): what was written, what read back as
written, moved, corrupted or unreadable, the first bad blocks and where, the chunks' rates of each file's last
attempt, and the rows a stranger's file could have changed (counts that do not add up, a list of bad blocks that
does not read), each said."""

from __future__ import annotations

import json

import pytest

from stibium_py.kinds.verify.analysis import add_warnings, first_bad_line, verify_result
from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.table import Table

BLOCK = 4096
FILE = 8 * BLOCK


def _file(op: str, k: int, started_s: float = 0.0, **more) -> Measurement:
    more = {"block_bytes": BLOCK, **more}
    return Measurement(seq=k if op == "write" else 10 + k, test="fill", op=op, kind="verify", access="sequential",
                       size_bytes=FILE, granularity_bytes=BLOCK, stride_bytes=0, trial=k, file=f"fill/v{k:06d}.bin",
                       bytes=FILE, seconds=0.5, started_s=started_s, engine="direct", first_block=8 * k, **more)


def _chunk(op: str, k: int, chunk: int, seconds: float, started_s: float = 0.0) -> Measurement:
    return Measurement(seq=k if op == "write" else 10 + k, test="fill", op=op, kind="verify", access="sequential",
                       size_bytes=FILE, granularity_bytes=BLOCK, stride_bytes=0, trial=k, file=f"fill/v{k:06d}.bin",
                       bytes=4 * BLOCK, seconds=seconds, started_s=started_s, engine="direct", chunk=chunk,
                       bytes_done=(chunk + 1) * 4 * BLOCK)


def _writes() -> Table:
    return Table.from_rows([
        _chunk("write", 0, 0, 9.0, started_s=1.0),          # an attempt cut short, done again: not counted
        _chunk("write", 0, 0, 0.25, started_s=2.0), _chunk("write", 0, 1, 0.125, started_s=2.0),
        _file("write", 0, started_s=2.0, sync_seconds=0.01, direct_honoured=True),
        _chunk("write", 1, 0, 0.5, started_s=3.0), _chunk("write", 1, 1, 0.25, started_s=3.0),
        _file("write", 1, started_s=3.0, sync_seconds=0.02, direct_honoured=True)])


def test_a_write_is_its_files_their_syncs_and_each_chunk_s_rate_along_the_fill():
    w = verify_result("fill", "write", _writes(), None)
    assert (w.files, w.bytes, w.seconds, w.sync_seconds, w.block_bytes, w.direct_honoured) == \
        (2, 2 * FILE, 1.0, pytest.approx(0.03), BLOCK, True)
    # each chunk of each file's last attempt: where it ended in the fill, its rate
    assert w.rates == [(4 * BLOCK, 4 * BLOCK / 0.25), (8 * BLOCK, 4 * BLOCK / 0.125),
                       (12 * BLOCK, 4 * BLOCK / 0.5), (16 * BLOCK, 4 * BLOCK / 0.25)]
    assert w.to_json() == {"name": "fill", "op": "write", "kind": "verify", "files": 2, "bytes": 2 * FILE,
                           "block_bytes": BLOCK, "seconds": 1.0, "direct_honoured": True,
                           "chunk_rate_bytes_per_s": {"median": 65536.0, "min": 32768.0,
                                                      "max": 131072.0},
                           "sync_seconds": pytest.approx(0.03)}
    assert w.rate_text() == "a median 65.5 KB/s a chunk (slowest 32.8 KB/s, fastest 131 KB/s)"


def test_a_read_back_counts_each_class_of_block_and_finds_the_first_bad_ones():
    bad0 = [{"block": 2, "kind": "moved", "holds": 6}, {"block": 5, "kind": "corrupt", "copy_of": 5, "bits": 3}]
    bad1 = [{"block": 9, "kind": "unreadable", "errno": 5, "error": "Input/output error"}]
    reads = Table.from_rows([
        _file("read", 0, ok_blocks=6, moved_blocks=1, corrupt_blocks=1, unreadable_blocks=0, period_blocks=4,
              bad_blocks=json.dumps(bad0), resident_before=0.0, direct_honoured=True),
        _file("read", 1, ok_blocks=7, moved_blocks=0, corrupt_blocks=0, unreadable_blocks=1, period_blocks=0,
              bad_blocks=json.dumps(bad1), resident_before=0.005, direct_honoured=None)])
    r = verify_result("fill", "read", reads, _writes())
    assert (r.files, r.bytes, r.written_bytes, r.checked_blocks, r.ok_bytes, r.read_bytes) == \
        (2, 2 * FILE, 2 * FILE, 16, 13 * BLOCK, 2 * FILE)
    assert (r.ok_blocks, r.moved_blocks, r.corrupt_blocks, r.unreadable_blocks, r.period_blocks) == (13, 1, 1, 1, 4)
    assert (r.resident_max, r.direct_honoured, r.unlisted_files, r.rejected_files, r.unknown_bytes) == \
        (0.005, None, 0, 0, 0)
    assert [b.block for b in r.bad] == [2, 5, 9] and r.bad_files == [("fill/v000000.bin", 0), ("fill/v000000.bin", 0),
                                                    ("fill/v000001.bin", 8)]
    assert r.where(2) == "byte 36,864 of the fill (fill/v000001.bin, byte 4,096)"
    assert first_bad_line(r) == "the first bad block: byte 8,192 of the fill (fill/v000000.bin, byte 8,192), it " \
                                "holds block 6, written after it"
    said = r.to_json()
    assert said["verdict"] == r.sentence() and said["first_bad_block"] == 2
    assert {k: said[k] for k in ("written_bytes", "ok_bytes", "ok_blocks", "moved_blocks", "corrupt_blocks",
                                 "unreadable_blocks", "period_blocks", "resident_before_max", "unlisted_files",
                                 "rejected_files", "unknown_bytes", "chunk_rate_bytes_per_s")} == {
        "written_bytes": 2 * FILE, "ok_bytes": 13 * BLOCK, "ok_blocks": 13, "moved_blocks": 1, "corrupt_blocks": 1,
        "unreadable_blocks": 1, "period_blocks": 4, "resident_before_max": 0.005, "unlisted_files": 0,
        "rejected_files": 0, "unknown_bytes": 0, "chunk_rate_bytes_per_s": None}
    assert said["bad"] == [{**bad0[0], "file": "fill/v000000.bin"}, {**bad0[1], "file": "fill/v000000.bin"},
                           {**bad1[0], "file": "fill/v000001.bin"}]
    notices = []
    add_warnings(r, lambda *n: notices.append(n))
    assert notices == [("warning", "fill (read)", r.sentence(), "copy off what matters on this drive and do not "
                        "trust it with data: return it if it is new; the report lists the first bad blocks")]


def test_rows_a_stranger_changed_are_left_out_or_said_not_believed():
    reads = Table.from_rows([
        _file("read", 0, ok_blocks=8, moved_blocks=0, corrupt_blocks=0, unreadable_blocks=0, period_blocks=0,
              bad_blocks="[]", resident_before=0.5),
        _file("read", 1, ok_blocks=9, moved_blocks=0, corrupt_blocks=0, unreadable_blocks=0, period_blocks=0,
              bad_blocks="[]"),                                                     # 9 blocks of a file of 8
        _file("read", 2, ok_blocks=8, moved_blocks=0, corrupt_blocks=0, unreadable_blocks=0, period_blocks=0,
              bad_blocks='[{"block": 1, "kind": "lost"}]'),                          # a class the helper never says
        _file("read", 3, ok_blocks=8, moved_blocks=-1, corrupt_blocks=1, unreadable_blocks=0, period_blocks=0,
              bad_blocks="[]")])                                                    # a negative count
    written = Table.from_rows([_file("write", k) for k in range(5)])                 # a fifth file never read
    r = verify_result("fill", "read", reads, written)
    assert (r.files, r.rejected_files, r.unknown_bytes, r.unlisted_files, r.ok_blocks, r.written_bytes) == \
        (2, 2, 2 * FILE, 1, 16, 5 * FILE)
    notices = []
    add_warnings(r, lambda *n: notices.append(n))
    assert notices == [
        ("warning", "fill (read)", "32.8 KB of what was written were not read back", "resume the run to read back "
         "the rest"),
        ("warning", "fill (read)", "up to 50% of a file was still in the page cache after it was emptied: those "
         "blocks were read from memory, not the drive", "run on a local disk whose file system honours eviction"),
        ("warning", "fill (read)", "the counts of 2 files in measurements.csv do not add up to their blocks and "
         "were left out", "the file was changed after the run; run the verify again"),
        ("info", "fill (read)", "the list of bad blocks of 1 file could not be read (their counts stand)", "the "
         "file was changed after the run")]


def test_a_block_the_helper_never_uses_is_not_believed():
    """The fill's block is whole 4 KiB up to 1 MiB: a file that says another block is not counted."""
    odd = _file("read", 0, ok_blocks=4, moved_blocks=0, corrupt_blocks=0, unreadable_blocks=0,
                bad_blocks="[]")._replace(blocks=None)
    r = verify_result("fill", "read", Table.from_rows([odd._replace(block_bytes=6000, ok_blocks=FILE // 6000)]),
                      None)
    assert (r.block_bytes, r.files, r.rejected_files) == (BLOCK, 0, 1)
    one = verify_result("fill", "read", Table.from_rows([_file("read", 0, ok_blocks=8, moved_blocks=0,
                                                                corrupt_blocks=0, unreadable_blocks=0)]), None)
    assert (one.rejected_files, one.unlisted_files, one.ok_blocks) == (0, 0, 8)   # no list: none bad
    notices = []
    add_warnings(one, lambda *n: notices.append(n))
    assert notices == []


def _clean(k: int, **more) -> Measurement:
    return _file("read", k, ok_blocks=8, moved_blocks=0, corrupt_blocks=0, unreadable_blocks=0, period_blocks=0,
                 bad_blocks="[]", **more)


def test_the_summary_of_a_read_meets_its_own_test_s_writes_only():
    from stibium_py.analysis.settings import SUMMARY
    from stibium_py.analysis.summary import SummaryContext
    from stibium_py.kinds.verify.analysis import summarise
    mine = [_file("write", k) for k in range(3)]
    other_test = [_file("write", 5)._replace(test="other")]
    other_kind = [_file("write", 6)._replace(kind="pattern")]
    reads = Table.from_rows([_clean(0), _clean(1)])
    valid = Table.from_rows([*mine, *other_test, *other_kind, *reads.rows()])
    ctx = SummaryContext(SUMMARY, None, {}, None, {}, valid)
    (read,) = summarise("fill", "read", reads, ctx)()
    assert read.written_bytes == 3 * FILE and "not finished" in read.sentence()
    (write,) = summarise("fill", "write", Table.from_rows(mine), ctx)()
    assert (write.files, write.written_bytes) == (3, 0)
    (alone,) = summarise("fill", "read", reads, SummaryContext(SUMMARY, None, {}, None, {}, None))()
    assert alone.written_bytes == 0 and alone.sentence() == "all 65,536 bytes read back as written"


def test_files_are_taken_in_their_order_and_the_fill_s_block_is_whole_4_kib_to_1_mib():
    rows = [_clean(1)._replace(rank=1), _clean(0)._replace(rank=1), _clean(0)._replace(rank=0)]
    bad = [_clean(0)._replace(bad_blocks=json.dumps([{"block": 3, "kind": "unreadable", "errno": 5}]),
                              ok_blocks=7, unreadable_blocks=1, rank=r) for r in (1, 0)]
    r = verify_result("fill", "read", Table.from_rows([*bad]), None)
    assert [f for f, _ in r.bad_files] == ["fill/v000000.bin", "fill/v000000.bin"] and r.unreadable_blocks == 2
    assert verify_result("fill", "read", Table.from_rows(rows), None).files == 3
    for block, taken in ((4096, 4096), (8192, 8192), (1 << 20, 1 << 20), (2 << 20, 4096), (6144, 4096),
                         (4097, 4096)):
        m = _file("read", 0, block_bytes=block, ok_blocks=FILE // block if FILE % block == 0 else 1,
                  moved_blocks=0, corrupt_blocks=0, unreadable_blocks=0, bad_blocks="[]")
        m = m._replace(size_bytes=max(FILE, block), bytes=max(FILE, block),
                       blocks=m.blocks._replace(ok_blocks=max(FILE, block) // block))
        assert verify_result("fill", "read", Table.from_rows([m]), None).block_bytes == taken, block


def test_a_chunk_s_rate_is_where_it_ended_in_the_fill_and_a_chunk_of_no_time_or_bytes_has_none():
    rows = [_chunk("write", 1, 0, 0.5), _chunk("write", 1, 1, 0.0), _chunk("write", 1, 1, 0.25)._replace(bytes=0),
            _chunk("write", 1, 2, 0.25)._replace(bytes_done=None),
            _file("write", 0)._replace(seconds=None, sync_seconds=None), _file("write", 1)]
    w = verify_result("fill", "write", Table.from_rows(rows), None)
    assert w.rates == [(FILE, 4 * BLOCK / 0.25), (FILE + 4 * BLOCK, 4 * BLOCK / 0.5)]
    assert (w.seconds, w.sync_seconds) == (0.5, 0.0)
    # a chunk of one byte (a stranger's row) is still a rate
    one = [_chunk("write", 0, 0, 0.5)._replace(bytes=1), _file("write", 0)]
    assert verify_result("fill", "write", Table.from_rows(one), None).rates == [(4 * BLOCK, 2.0)]
    assert w.to_json()["seconds"] == 0.5 and verify_result("fill", "write", Table.from_rows([]), None).rate_text() == ""


def test_whether_uncached_i_o_was_honoured_is_false_where_any_file_says_so():
    files = [_file("write", 0, direct_honoured=True), _file("write", 1, direct_honoured=False)]
    assert verify_result("fill", "write", Table.from_rows(files), None).direct_honoured is False
    assert verify_result("fill", "write", Table.from_rows(files[:1]), None).direct_honoured is True
    unknown = [files[0], _file("write", 1, direct_honoured=None)]
    assert verify_result("fill", "write", Table.from_rows(unknown), None).direct_honoured is None


def test_the_bad_blocks_kept_are_the_first_64_and_a_longer_list_is_not_believed():
    listed = [{"block": k, "kind": "unreadable", "errno": 5} for k in range(64)]
    full = _clean(0)._replace(ok_blocks=0, unreadable_blocks=8)
    r = verify_result("fill", "read", Table.from_rows([full._replace(bad_blocks=json.dumps(listed)),
                                                       _clean(1)._replace(ok_blocks=0, unreadable_blocks=8,
                                                                          bad_blocks=json.dumps(listed[:8]))]), None)
    assert len(r.bad) == 64 and r.unlisted_files == 0                    # the first 64 of the fill, no more
    longer = verify_result("fill", "read", Table.from_rows([full._replace(bad_blocks=json.dumps(
        listed + [{"block": 64, "kind": "unreadable", "errno": 5}])), full._replace(trial=1, seq=12,
        file="fill/v000001.bin", bad_blocks="not json")]), None)
    assert (len(longer.bad), longer.unlisted_files) == (0, 2)
    notices = []
    add_warnings(longer, lambda *n: notices.append(n))
    assert notices[-1][2] == "the list of bad blocks of 2 files could not be read (their counts stand)"


def test_a_file_in_the_page_cache_is_said_only_past_1_percent():
    notices = []
    for resident in (0.01, 0.011):
        r = verify_result("fill", "read", Table.from_rows([_clean(0, resident_before=resident)]), None)
        add_warnings(r, lambda *n: notices.append(n))
    assert [n[2][:9] for n in notices] == ["up to 1% "]


def test_a_chunk_s_place_in_the_fill_counts_whole_files_of_the_first_file_s_size():
    """The last file of a fill is shorter: its chunks' places are after every whole file before it."""
    short = _file("write", 1)._replace(size_bytes=FILE // 2, bytes=FILE // 2)
    rows = [_file("write", 0), short, _chunk("write", 1, 0, 0.5)]
    assert verify_result("fill", "write", Table.from_rows(rows), None).rates == [(FILE + 4 * BLOCK, 4 * BLOCK / 0.5)]


def test_a_read_s_time_and_a_file_of_another_block_and_bytes_not_believed_in_the_verdict():
    other_block = _clean(1, block_bytes=8192)._replace(blocks=_clean(1).blocks._replace(block_bytes=8192,
                                                                                        ok_blocks=FILE // 8192))
    r = verify_result("fill", "read", Table.from_rows([_clean(0), other_block, _clean(2)._replace(seconds=None)]),
                      None)
    assert (r.files, r.rejected_files, r.seconds, r.unknown_bytes) == (2, 1, 0.5, FILE)
    from stibium_py.kinds.verify.earlier.verdict import sentence_of
    assert r.sentence() == sentence_of(3 * FILE, 2 * FILE, 2 * FILE, 0, 0, 0, FILE)


def test_each_client_s_file_of_one_step_is_taken_in_rank_order():
    rows = [_clean(0)._replace(rank=1, first_block=100, ok_blocks=7, unreadable_blocks=1,
                               bad_blocks=json.dumps([{"block": 101, "kind": "unreadable", "errno": 5}])),
            _clean(0)._replace(rank=0, first_block=0, ok_blocks=7, unreadable_blocks=1,
                               bad_blocks=json.dumps([{"block": 1, "kind": "unreadable", "errno": 5}]))]
    r = verify_result("fill", "read", Table.from_rows(rows), None)
    assert [b.block for b in r.bad] == [1, 101] and [f for _, f in r.bad_files] == [0, 100]
    # by rank as a number, though client-10's file name sorts before client-2's
    named = [rows[0]._replace(rank=10, file="client-10/fill/v000000.bin"),
             rows[1]._replace(rank=2, file="client-2/fill/v000000.bin")]
    r = verify_result("fill", "read", Table.from_rows(named), None)
    assert [b.block for b in r.bad] == [1, 101] and r.bad_files[0][0] == "client-2/fill/v000000.bin"


def test_without_the_first_file_s_row_a_chunk_s_place_counts_files_of_the_first_one_there():
    rows = [_file("write", 1), _chunk("write", 1, 0, 0.5)]
    assert verify_result("fill", "write", Table.from_rows(rows), None).rates == [(FILE + 4 * BLOCK, 4 * BLOCK / 0.5)]
