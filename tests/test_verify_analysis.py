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
    return Measurement(seq=k if op == "write" else 10 + k, test="fill", op=op, kind="verify", access="sequential",
                       size_bytes=FILE, granularity_bytes=BLOCK, stride_bytes=0, trial=k, file=f"fill/v{k:06d}.bin",
                       bytes=FILE, seconds=0.5, started_s=started_s, engine="direct", block_bytes=BLOCK,
                       first_block=8 * k, **more)


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
