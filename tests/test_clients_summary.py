"""What the report and summary.json say of a run's clients (analysis/clients.py): each client's rate per point
with its interval and straggler flag, when the first and last client finished, the timeline's steps, the
summary's facts from run.json's clients record, and their JSON. Rows made by hand, no MPI: the runs under mpiexec
(tests/test_mpi.py) show the same tables come out of real ranks; these hold every number of them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from stibium_py.analysis.clients import (TIMELINE_STEPS, ClientPoint, ClientRate, ClientsSummary, aggregate,
                                         client_points, ranks_of, straggler_notices, summarize_clients, timeline)
from stibium_py.analysis.rates import label, median_rate
from stibium_py.analysis.settings import Settings
from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.table import Table

MiB = 1 << 20


def _row(seq: int, rank: int, seconds: float, start_s: float, end_s: float | None = None, *, host="h",
         test="p", op="write", **more) -> Measurement:
    return Measurement(seq=seq, test=test, op=op, kind="pattern", access="sequential", size_bytes=MiB,
                       granularity_bytes=65536, stride_bytes=0, trial=seq, file=f"client-{rank}/p/data.bin",
                       bytes=MiB, seconds=seconds, started_s=start_s, engine="direct", run_start_s=start_s,
                       run_end_s=start_s + seconds if end_s is None else end_s, rank=rank, host=host, **more)


# four clients, three steps: ranks 0-2 at about 100 MiB/s, rank 3 at a quarter of it; given out of rank order
SECONDS = {0: [0.010, 0.011, 0.009], 1: [0.010, 0.0105, 0.0095], 2: [0.012, 0.010, 0.011], 3: [0.040, 0.042, 0.038]}
HOSTS = {0: "bay-1", 1: "bay-2", 2: None, 3: "bay-4"}


def _four() -> list[Measurement]:
    return [_row(seq, rank, SECONDS[rank][seq], 10.0 * seq + 0.001 * rank, host=HOSTS[rank])
            for rank in (2, 0, 3, 1) for seq in range(3)]


def test_each_client_s_rate_is_the_median_of_its_own_steps_with_its_interval_and_flag():
    s = Settings(confidence=0.9)
    (point,) = client_points(Table.from_rows(_four()), s)
    assert [c.rank for c in point.clients] == [0, 1, 2, 3]
    assert [c.host for c in point.clients] == ["bay-1", "bay-2", "", "bay-4"]
    for c in point.clients:
        want = median_rate(np.full(3, float(MiB)), np.array(SECONDS[c.rank]), 0, 0, 0.9).rate
        assert (c.rate, c.low, c.high, c.n) == (pytest.approx(want.estimate), pytest.approx(want.low),
                                                pytest.approx(want.high), 3)
    assert point.clients[0].rate == pytest.approx(MiB / 0.010)
    assert [c.straggler for c in point.clients] == ["", "", "", "low mild"]
    assert point.slowest is point.clients[3]
    assert point.key.test == "p" and point.key.op == "write"


def test_a_client_s_interval_follows_the_confidence_asked():
    wide = client_points(Table.from_rows(_four()), Settings(confidence=0.99))[0].clients[0]
    narrow = client_points(Table.from_rows(_four()), Settings(confidence=0.5))[0].clients[0]
    want = median_rate(np.full(3, float(MiB)), np.array(SECONDS[0]), 0, 0, 0.5).rate
    assert (narrow.low, narrow.high) == (pytest.approx(want.low), pytest.approx(want.high))
    assert narrow.high - narrow.low < wide.high - wide.low


def test_when_the_first_and_the_last_client_finished_is_the_median_over_the_steps():
    # step k starts at 10 k s (rank r 1 ms later); each client's end is its start plus its seconds
    (point,) = client_points(Table.from_rows(_four()), Settings())
    firsts = [min(0.001 * r + SECONDS[r][k] for r in range(4)) for k in range(3)]
    lasts = [max(0.001 * r + SECONDS[r][k] for r in range(4)) for k in range(3)]
    assert point.first_done_s == pytest.approx(float(np.median(firsts)))
    assert point.last_done_s == pytest.approx(float(np.median(lasts)))
    assert point.last_done_s == pytest.approx(0.003 + 0.040)
    # a step with a client of no clock is left out of the median; with none left, nothing is said
    rows = _four()
    rows[0] = rows[0]._replace(run_end_s=None)              # rank 2's step 0
    (some,) = client_points(Table.from_rows(rows), Settings())
    assert some.first_done_s == pytest.approx(float(np.median(firsts[1:])))
    bare = [m._replace(run_start_s=None) for m in _four()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no mean of nothing
        (none,) = client_points(Table.from_rows(bare), Settings())
    assert math.isnan(none.first_done_s) and math.isnan(none.last_done_s)
    assert none.to_json()["first_done_s"] is None and none.to_json()["last_done_s"] is None


def test_a_failed_measurement_counts_for_no_client_and_each_point_is_its_own():
    rows = _four() + [_row(0, 0, 0.5, 40.0, error="EIO")]
    rows += [_row(seq, r, 0.02, 50.0 + seq, op="read") for r in range(4) for seq in range(3)]
    points = {p.key.op: p for p in client_points(Table.from_rows(rows), Settings())}
    write, read = points["write"], points["read"]
    assert [c.n for c in write.clients] == [3, 3, 3, 3] and write.clients[0].rate == pytest.approx(MiB / 0.010)
    assert read.key.op == "read" and [c.rate for c in read.clients] == pytest.approx([MiB / 0.02] * 4)
    assert [c.straggler for c in read.clients] == [""] * 4 and read.slowest.rank == 0


def test_a_point_whose_rates_are_none_has_no_slowest():
    empty = ClientPoint(client_points(Table.from_rows(_four()), Settings())[0].key,
                        [ClientRate(0, "h", math.nan, math.nan, math.nan, 0, "")], 0.0, 0.0)
    assert empty.slowest is None


def test_the_clients_json_holds_each_client_s_numbers_and_the_stragglers():
    (point,) = client_points(Table.from_rows(_four()), Settings())
    said = point.to_json()
    assert said["label"] and said["test"] == "p" and said["op"] == "write"
    assert (said["first_done_s"], said["last_done_s"]) == (point.first_done_s, point.last_done_s)
    c = point.clients[3]
    assert said["clients"][3] == {"rank": 3, "host": "bay-4", "rate_bytes_per_s": c.rate, "low": c.low,
                                  "high": c.high, "n": 3, "straggler": "low mild"}
    assert said["clients"][0]["straggler"] is None
    nan = ClientRate(5, "x", math.nan, math.nan, 2.0, 1, "").to_json()
    assert (nan["rate_bytes_per_s"], nan["low"], nan["high"], nan["straggler"]) == (None, None, 2.0, None)
    summary = ClientsSummary(4, ["bay-1"], 1, [{"rank": 0}], [point], [(0, "p", "write", 0.0, 1.0)])
    assert summary.stragglers == [(point, c)]
    assert summary.to_json() == {"ranks": 4, "hosts": ["bay-1"], "read_shift": 1, "clocks": [{"rank": 0}],
                                 "points": [said], "stragglers": [{"point": said["label"], "rank": 3,
                                                                   "host": "bay-4"}]}


def test_the_summary_takes_its_facts_from_the_clients_record_and_the_clocks_of_the_last_launch():
    record = {"ranks": 4, "hosts": ["bay-1", "bay-2"], "read_shift": 2,
              "launches": [{"clocks": [{"rank": 0, "offset_s": 0.5}]}, {"clocks": [{"rank": 0, "offset_s": 0.1}]}]}
    got = summarize_clients(Table.from_rows(_four()), record, Settings())
    assert (got.ranks, got.hosts, got.read_shift, got.clocks) == (4, ["bay-1", "bay-2"], 2,
                                                                  [{"rank": 0, "offset_s": 0.1}])
    assert got.points == client_points(Table.from_rows(_four()), Settings())
    assert got.timeline == timeline(Table.from_rows(_four()))
    bare = summarize_clients(Table.from_rows(_four()), {}, Settings())
    assert (bare.ranks, bare.hosts, bare.read_shift, bare.clocks) == (1, [], 1, [])
    assert summarize_clients(Table.from_rows(_four()), {"launches": []}, Settings()).clocks == []
    assert summarize_clients(Table.from_rows(_four()), {"launches": [{}]}, Settings()).clocks == []


def test_the_timeline_is_each_client_s_steps_in_the_order_measured_without_chunks_or_failures():
    rows = [_row(0, 1, 0.5, 1.0), _row(0, 0, 0.4, 1.1), _row(1, 0, 0.2, 2.0, error="EIO"), _row(1, 1, 0.3, 2.0),
            _row(2, 0, 0.1, 3.0, chunk=0), _row(2, 0, 0.3, 3.0, test="s", op="read"),
            _row(3, 0, 0.1, math.nan), _row(3, 1, 0.1, 4.0, end_s=math.inf)]
    assert timeline(Table.from_rows(rows)) == [(1, "p", "write", 1.0, 1.5), (0, "p", "write", 1.1, 1.5),
                                               (1, "p", "write", 2.0, 2.3), (0, "s", "read", 3.0, 3.3)]


def test_the_timeline_keeps_the_first_steps_of_a_long_run():
    rows = [_row(seq, r, 0.01, float(seq)) for seq in range(TIMELINE_STEPS + 5) for r in range(2)]
    got = timeline(Table.from_rows(rows))
    assert len(got) == 2 * TIMELINE_STEPS and got[-1][3] == float(TIMELINE_STEPS - 1)


def test_a_straggler_notice_names_the_client_its_rate_and_the_others_median():
    (point,) = client_points(Table.from_rows(_four()), Settings())
    summary = ClientsSummary(4, [], 1, [], [point])
    (notice,) = straggler_notices(summary)
    others = float(np.median([c.rate for c in point.clients[:3]]))
    assert notice.level == "warning" and notice.test == "p (write)"
    assert notice.message == (f"{label(point.key)}: rank 3 (bay-4) is a straggler (low mild): "
                              f"{point.clients[3].rate / 1e6:.3g} MB/s against the other clients' median of "
                              f"{others / 1e6:.3g} MB/s; it counts in the aggregate")
    assert notice.what_to_do == ("look at rank 3's machine and its path to the store (its link, its mount options, "
                             "other load on it)")


def test_the_ranks_are_the_clients_that_measured_in_order_and_none_for_one_client():
    assert ranks_of(Table.from_rows(_four())) == [0, 1, 2, 3]
    assert ranks_of(Table.from_rows([m._replace(rank=None) for m in _four()])) == []


def test_a_client_of_one_measurement_is_named_by_its_host():
    rows = _four() + [_row(0, 4, 0.010, 0.0, host="bay-5")]
    (point,) = client_points(Table.from_rows(rows), Settings())
    assert (point.clients[4].rank, point.clients[4].host, point.clients[4].n) == (4, "bay-5", 1)


def test_a_straggler_is_judged_on_the_client_s_rate_not_on_the_low_end_of_its_interval():
    # rank 0's median step is as fast as the others', but one step of ten times as long pulls its interval down
    seconds = {0: [0.010, 0.010, 0.100, 0.0101, 0.0099], **{r: [0.010, 0.0102, 0.0098, 0.0101, 0.0099]
                                                             for r in (1, 2, 3)}}
    rows = [_row(seq, r, seconds[r][seq], float(seq)) for r in range(4) for seq in range(5)]
    (point,) = client_points(Table.from_rows(rows), Settings(confidence=0.9))
    assert point.clients[0].low < 0.5 * point.clients[1].low
    assert [c.straggler for c in point.clients] == [""] * 4


def test_a_step_with_no_residency_latency_or_stonewall_is_aggregated_without_a_warning():
    rows = [_row(0, r, 0.01, 1.0) for r in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no maximum of nothing
        (step,) = aggregate(Table.from_rows(rows), 2).rows()
    assert (step.resident_before, step.lat_min_s, step.lat_max_s) == (None, None, None)
    assert (step.stonewall_requests, step.wearout_requests, step.stonewall_seconds) == (None, None, None)


def test_a_straggler_s_rate_and_the_others_median_are_said_to_three_figures():
    key = client_points(Table.from_rows(_four()), Settings())[0].key
    rates = [123_500_050.0, 123_500_050.0, 123_500_050.0, 1_235_000.5]
    point = ClientPoint(key, [ClientRate(r, f"h{r}", x, x, x, 3, "low severe" if r == 3 else "")
                              for r, x in enumerate(rates)], 0.0, 0.0)
    (notice,) = straggler_notices(ClientsSummary(4, [], 1, [], [point]))
    assert "1.24 MB/s against the other clients' median of 124 MB/s" in notice.message


def test_a_stonewalled_step_keeps_the_least_done_by_it_and_the_most_after_it_whatever_the_first_row():
    rows = [_row(0, r, 0.5, 1.0, stonewall_s=0.5, stonewall_requests=done, wearout_requests=after,
                 stonewall_seconds=took) for r, done, after, took in ((0, 12, 3, 0.4), (1, 10, 5, 0.6), (2, 11, 4, 0.5))]
    (step,) = aggregate(Table.from_rows(rows), 3).rows()
    assert (step.stonewall_requests, step.wearout_requests, step.stonewall_seconds) == (10, 5, 0.6)
