"""Streamed measurements (--chunk): the helper writes a row for every chunk of bytes moved while it
moves them, for sustained writes. The chunks' bytes add up, their clock is continuous (each chunk starts
when the previous one's row was written out, and says how long that took), and the time between chunks
is that writing alone: microseconds, stated in docs/helper-protocol.md as under a millisecond."""

from __future__ import annotations

import json
import subprocess

import pytest

from stibium_py.run.helper import Helper

MiB = 2**20
GAP_BOUND_NS = 5_000_000      # the stated bound of a row's writing out: a median of 41 us and at most 1.6 ms over
                              # 232 rows of an 8 GB run on 2 vCPUs (the helper can lose its core while it writes)


def _stream(helper, *args) -> tuple[list[dict], dict]:
    proc = subprocess.run([str(helper), *args], capture_output=True, text=True)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, lines[-1]
    return lines[:-1], lines[-1]


def _check(rows: list[dict], answer: dict, chunk: int, total: int, in_flight: bool = False) -> None:
    assert [r["chunk"] for r in rows] == list(range(len(rows))) and answer["chunks"] == len(rows)
    assert sum(r["chunk_bytes"] for r in rows) == total == answer["bytes"]
    assert all(r["chunk_bytes"] == chunk for r in rows[:-1]) and 0 < rows[-1]["chunk_bytes"] <= chunk
    assert [r["bytes_done"] for r in rows] == [sum(x["chunk_bytes"] for x in rows[:k + 1]) for k in range(len(rows))]
    assert rows[0]["gap_ns"] == 0 and answer["start_ns"] <= rows[0]["start_ns"]
    for before, after in zip(rows, rows[1:]):
        # continuous: the next chunk begins where the previous one's row was written out; with requests in
        # flight where the previous one ended (the others stayed in flight while the row was written)
        assert after["start_ns"] == before["end_ns"] + after["gap_ns"]
        assert after["gap_ns"] == 0 if in_flight else 0 < after["gap_ns"] < GAP_BOUND_NS
    assert rows[-1]["end_ns"] <= answer["end_ns"]
    # every row's writing out: the gaps the rows carry, and the last row's, after the last request
    gaps_ns = sum(r["gap_ns"] for r in rows)
    if in_flight:
        assert 0 < answer["chunk_gaps_seconds"] * 1e9 < len(rows) * GAP_BOUND_NS
    else:
        assert gaps_ns <= answer["chunk_gaps_seconds"] * 1e9 + 2 <= gaps_ns + GAP_BOUND_NS
    for r in rows:
        assert r["seconds"] * 1e9 == pytest.approx(r["end_ns"] - r["start_ns"], abs=1)
        assert 0 < r["lat_p50_s"] <= r["lat_p99_s"] <= r["lat_max_s"]
        assert r["lat_max_s"] <= r["seconds"] or in_flight


@pytest.mark.parametrize("op", ["write", "read"])
def test_chunk_rows_add_up_and_their_clock_is_continuous(helper, disk_dir, op):
    path = disk_dir / "f"
    if op == "read":
        subprocess.run([str(helper), "write", "--path", str(path), "--bytes", "40MiB", "--granularity", "8MiB"],
                       check=True, capture_output=True)
    rows, answer = _stream(helper, op, "--path", str(path), "--bytes", "40MiB", "--granularity", "1MiB",
                           "--chunk", "6MiB", *(["--existing"] if op == "write" and path.exists() else []))
    _check(rows, answer, 6 * MiB, 40 * MiB)
    assert len(rows) == 7 and rows[-1]["chunk_bytes"] == 4 * MiB


def test_the_batch_helper_hands_each_row_over_as_it_arrives(helper, disk_dir):
    rows: list[dict] = []
    with Helper(helper) as h:
        result = h.call(["write", "--path", str(disk_dir / "f"), "--bytes", "16MiB", "--granularity", "1MiB",
                         "--chunk", "4MiB"], timeout_s=60, on_row=rows.append)
        after = h.call(["info"], timeout_s=60)      # the batch goes on with the next command
    assert result.ok and after.ok and "clock" in after.data
    _check(rows, result.data, 4 * MiB, 16 * MiB)


def test_chunk_rows_with_requests_in_flight_count_every_completion_once(helper, disk_dir, method):
    """Queue depth 4 on each of 2 threads: the completions of all 8 workers count into one chunk after
    another, the bytes add up, the clock runs on from the first submission; a request's latency can be
    longer than a chunk here (it was in flight while the chunk before it ended)."""
    rows, answer = _stream(helper, "write", "--path", str(disk_dir / "f"), "--bytes", "48MiB", "--granularity",
                           "1MiB", "--chunk", "4MiB", "--queue-depth", "4", "--threads", "2", "--io-method", method)
    assert answer["io_method"] == method and answer["queue_depth"] == 4 and answer["threads"] == 2
    _check(rows, answer, 4 * MiB, 48 * MiB, in_flight=True)
    assert len(rows) == 12 and sum(r["requests"] for r in rows) == answer["requests"] == 48
    assert (disk_dir / "f").stat().st_size == 48 * MiB
