"""Each warning's premise held against the rows it speaks of: where the premise is false, no word; where it is
true, the exact text (stibium_py/analysis/warnings.py, cache.py, pipeline.held_to_plan)."""

from __future__ import annotations

import numpy as np

from stibium_py.analysis.cache import PAGE_CACHE, RESIDENT_THRESHOLD, classify, suspects
from stibium_py.analysis.warnings import warnings
from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.table import Table


def _mixed_rows(syscalls: int, largest: int, warmup_requests: int | None) -> Table:
    return Table.from_rows([Measurement(seq=i, test="m", op="mixed", kind="pattern", access="random",
                                        size_bytes=1 << 20, granularity_bytes=4096, stride_bytes=0, trial=i, file="m/data.bin",
                                        bytes=40960, seconds=0.01, requests=10, syscalls=syscalls,
                                        largest_syscall_bytes=largest, warmup_requests=warmup_requests,
                                        read_fraction=0.7) for i in range(3)])


def _split_notices(rows: Table) -> list[str]:
    return [w.message for w in warnings([], rows, {}) if "more than one call" in w.message]


def test_a_warm_up_s_calls_are_not_requests_split_in_pieces():
    # 10 measured requests and 6 of the warm-up, each a whole 4 KiB call: nothing was split
    assert _split_notices(_mixed_rows(16, 4096, 6)) == []


def test_calls_of_a_whole_request_each_are_not_requests_split_in_pieces():
    assert _split_notices(_mixed_rows(20, 4096, None)) == []


def test_requests_moved_in_smaller_calls_are_said_exactly():
    assert _split_notices(_mixed_rows(20, 2048, None)) == [
        "3 measurements moved each request in more than one call (the largest 2,048 bytes), smaller than the "
        "granularity the plan names"]


def test_page_cache_residency_is_judged_at_its_threshold():
    """1 % of the file's pages resident before a read: above it a page-cache suspect, at or below it not."""
    n = 20
    r = np.zeros(n)
    y = np.full(n, 0.01)
    rates = np.full(n, 1e8)
    for resident, flagged in ((RESIDENT_THRESHOLD * 1.1, True), (RESIDENT_THRESHOLD, False),
                              (RESIDENT_THRESHOLD * 0.5, False), (0.5, True)):
        before = np.zeros(n)
        before[7] = resident
        found = suspects(r, y, y, rates, before, None)
        assert (7 in found) is flagged, resident
        if flagged:
            assert found[7] == [f"resident: {resident:.0%} of the file was in the page cache before the read"]
            assert classify(found, before)[7] == PAGE_CACHE
        assert set(found) <= {7}


def test_advice_the_plan_follows_already_is_not_given(tmp_path):
    from dataclasses import replace
    from stibium_py.analysis.warnings import PRECONDITION_ADVICE, Notice
    from stibium_py.results.pipeline import held_to_plan, summarize_run
    from synthetic import make_run
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    record, rows, summary = summarize_run(run)
    todo = f"raise steady.max_rounds, {PRECONDITION_ADVICE}, or quote these rates as not steady"
    said = replace(summary, warnings=[Notice("warning", "p (write)", "not steady after 25 rounds", todo)])
    for precondition, expected in ((True, "raise steady.max_rounds, or quote these rates as not steady"),
                                   (False, todo)):
        plan = {"name": "x", "tests": [{"name": "p", "kind": "pattern", "precondition": precondition}]}
        held = held_to_plan(said, replace(record, plan=replace(record.plan, as_given=plan)), rows, run)
        assert [w.what_to_do for w in held.warnings if w.test == "p (write)"] == [expected]
