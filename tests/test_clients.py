"""Many clients without MPI: how clients share the store (sharing.py), the team's pure parts (team.py), the
aggregate and the stragglers (analysis/clients.py). The runs under mpiexec are in test_mpi.py."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from stibium_py.analysis.clients import aggregate, stragglers
from stibium_py.errors import RunError
from stibium_py.rundir.measurement import Measurement
from stibium_py.rundir.op import Op
from stibium_py.plan import ExpandedTest
from stibium_py.clients.sharing import Place, client_file, read_shift
from stibium_py.rundir.table import Table
from stibium_py.clients.team import Solo, clock_offset, launched_size, verdict
from stibium_py.clients.mpi import join


def _op(op: str = "write", file: str = "p/data.bin", size: int = 1 << 20, kind: str = "pattern") -> Op:
    return Op(seq=0, test="p", kind=kind, op=op, access="sequential", size_bytes=size, granularity_bytes=65536,
              stride_bytes=0, trial=0, file=file, bytes=size, engine="direct", fill="random", sync="fsync", seed=1,
              data_seed=1, existing=True)


def _test(sharing: str = "per-client", read_from: str = "own") -> ExpandedTest:
    return ExpandedTest(name="p", kind="pattern", ops=[_op()], layout_file="p/data.bin", layout_bytes=1 << 20,
                        sharing=sharing, read_from=read_from)


def test_the_read_shift_sends_reads_to_another_host_where_the_hosts_allow():
    assert read_shift(["a", "a", "b", "b"]) == 2          # ranks packed by host
    assert read_shift(["a", "b", "a", "b"]) == 1          # ranks dealt round robin
    assert read_shift(["a", "a", "a", "a"]) == 1          # one host: the next rank
    assert read_shift(["a", "a", "a", "b"]) == 1          # no shift crosses for every rank


def test_per_client_files_and_reads_from_another_client():
    test = _test(read_from="other")
    for rank in range(4):
        place = Place(rank, 4, 1)
        write, read = place.touch(_op("write"), test), place.touch(_op("read"), test)
        assert write.file == client_file("p/data.bin", rank) == f"client-{rank}/p/data.bin"
        assert write.offset_bytes == 0 and write.written_by is None
        assert read.file == f"client-{(rank + 1) % 4}/p/data.bin" and read.written_by == (rank + 1) % 4
        assert place.lays_out(_op("read"), test) == (f"client-{rank}/p/data.bin", 1 << 20)   # its own, for another
    assert Place(0, 4, 1).files(test) == {f"client-{r}/p/data.bin" for r in range(4)}


def test_a_shared_file_in_segments_laid_out_by_rank_zero():
    test = _test(sharing="shared", read_from="other")
    for rank in range(4):
        place = Place(rank, 4, 1)
        assert place.touch(_op("write"), test).offset_bytes == rank << 20
        read = place.touch(_op("read"), test)
        assert (read.file, read.offset_bytes, read.written_by) == ("p/data.bin", ((rank + 1) % 4) << 20, (rank + 1) % 4)
        assert place.lays_out(_op("write"), test) == (("p/data.bin", 4 << 20) if rank == 0 else None)
    assert Place(2, 4, 1).files(test) == {"p/data.bin"}


def test_one_client_touches_the_plans_files_as_before():
    place, test = Place(), _test(sharing="shared", read_from="other")
    touch = place.touch(_op("read"), test)
    assert (touch.file, touch.offset_bytes, touch.written_by) == ("p/data.bin", 0, None)
    assert place.lays_out(_op("read"), test) == ("p/data.bin", 1 << 20)


def test_cristians_method_finds_a_known_offset_within_half_the_shortest_round_trip():
    rng = np.random.default_rng(7)
    offset = 123_456_789
    samples = []
    for _ in range(40):
        there, back = rng.integers(5_000, 80_000, 2)      # one-way delays, ns, unequal
        sent = int(rng.integers(0, 10**9))
        samples.append((sent, sent + int(there) + offset, sent + int(there) + int(back)))
    found, uncertainty, rtt = clock_offset(samples)
    assert abs(found - offset) <= uncertainty
    assert rtt == min(received - sent for sent, _, received in samples) and uncertainty == (rtt + 1) // 2


def test_the_launchers_environment_says_how_many_ranks():
    assert launched_size({}) == 1
    assert launched_size({"OMPI_COMM_WORLD_SIZE": "4"}) == 4
    assert launched_size({"PMI_SIZE": "8"}) == 8
    assert launched_size({"SLURM_NTASKS": "x", "PMIX_SIZE": "2"}) == 2
    assert isinstance(join({}), Solo)


def test_many_ranks_without_mpi4py_get_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(RunError) as e:
        join({"OMPI_COMM_WORLD_SIZE": "4"})
    assert str(e.value) == ("started as one of 4 MPI ranks, but mpi4py is not installed; install it with pip install "
                            "'stibium[mpi]' (or run without mpiexec for one client)")
    assert e.value.exit_code == 2


def test_the_ranks_stops_add_up_to_one_verdict():
    assert verdict([None, None]) is None
    assert verdict([None, ("interrupted", "SIGINT at rank 1")]) == ("interrupted", "SIGINT at rank 1")
    assert verdict([("interrupted", "x"), ("failed", "y")]) == ("failed", "x; y")


def _row(seq: int, rank: int, start_s: float, end_s: float, nbytes: int = 1 << 20, **more) -> Measurement:
    return Measurement(seq=seq, test="p", op="write", kind="pattern", access="sequential", size_bytes=nbytes,
                       granularity_bytes=65536, stride_bytes=0, trial=seq, file=f"client-{rank}/p/data.bin",
                       bytes=nbytes, seconds=end_s - start_s, started_s=start_s, engine="direct",
                       run_start_s=start_s, run_end_s=end_s, rank=rank, host="h", **more)


def test_the_aggregate_is_all_bytes_from_the_first_start_to_the_last_end():
    rows = [_row(0, r, 1.0 + 0.01 * r, 1.5 + 0.1 * r) for r in range(4)]
    rows += [_row(1, r, 3.0, 3.25) for r in range(4)]
    rows += [_row(2, r, 5.0, 5.2) for r in range(3)] + [_row(2, 3, 5.0, 5.2, error="cut short")]
    agg = aggregate(Table.from_rows(rows), 4)
    assert len(agg) == 2                                   # the step rank 3 did not finish is left out
    assert agg.col("bytes").tolist() == [4 << 20, 4 << 20]
    assert agg.col("seconds").tolist() == pytest.approx([1.8 - 1.0, 0.25])
    assert math.isnan(agg.col("rank")[0])


@pytest.mark.parametrize("clients, detected, false_alarms", [(4, 0.982, 0.0), (8, 1.0, 0.002)])
def test_a_slow_client_is_a_straggler_and_even_ones_are_not(clients, detected, false_alarms):
    """Simulation, seed 5, 1000 draws of clients with 5 % noise: one at half the rate is flagged (and no
    other) in 98.2 % of draws among four clients and in every draw among eight; among even clients, no
    draw of four and 0.2 % of draws of eight flag anyone (the figures of analysis/clients.py)."""
    rng = np.random.default_rng(5)
    found, alarms = 0, 0
    for _ in range(1000):
        rates = 100e6 * rng.lognormal(0, 0.05, clients)
        alarms += bool(stragglers(rates).any())
        rates[2] *= 0.5
        flags = stragglers(rates)
        found += flags[2] != "" and not np.delete(flags, 2).any()
    print(f"{clients} clients: half-rate client flagged in {found / 1000:.1%}, even clients in {alarms / 1000:.1%}")
    assert found / 1000 == pytest.approx(detected) and alarms / 1000 == pytest.approx(false_alarms)


def test_two_clients_have_no_odd_one_out():
    assert not stragglers(np.array([100e6, 50e6])).any()


class _Sent:
    def test(self):
        return True, None


class _Message:
    def __init__(self, value):
        self.value = value

    def recv(self):
        return self.value


class _HalfwayComm:
    """Rank 0 of two, as mpi4py's COMM_WORLD: the user's Ctrl-C comes while rank 0 waits for rank 1's rows
    (its first look finds nothing); rank 1's rows come at the second."""

    def __init__(self):
        self.looks, self.sent = 0, []

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 2

    def improbe(self, source, tag):
        import os
        import signal
        self.looks += 1
        if self.looks == 1:
            os.kill(os.getpid(), signal.SIGINT)
            return None
        return _Message((["rank 1's row"], None, None))

    def isend(self, value, dest, tag):
        self.sent.append((dest, value))
        return _Sent()


def test_a_sigint_in_the_middle_of_a_step_is_raised_at_its_end():
    # a step is a sequence of messages: a rank that left one half way and began the stopping step waited for
    # ever for messages the others had sent for the first. The test sets SIGINT's disposition itself (a
    # shell's background job inherits it ignored) and restores it.
    import signal
    from stibium_py.clients.mpi import MpiTeam
    received = []
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        comm = _HalfwayComm()
        with pytest.raises(KeyboardInterrupt):
            MpiTeam(comm).step(["rank 0's row"], None, received.append)
        assert received == [[["rank 0's row"], ["rank 1's row"]]]     # every rank's rows came in
        assert comm.sent == [(1, (None, [None, None]))]                 # and rank 1 had its answer
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        # a process that ignores SIGINT goes on ignoring it: the step just ends
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        comm = _HalfwayComm()
        assert MpiTeam(comm).step(["rank 0's row"], None, received.append) == (None, [None, None])
        assert comm.sent == [(1, (None, [None, None]))]
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_a_sigint_in_a_collective_made_of_others_is_raised_once_at_the_end():
    import signal
    from stibium_py.clients.mpi import MpiTeam
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        comm = _HalfwayComm()
        with pytest.raises(KeyboardInterrupt):
            MpiTeam(comm).everyone("rank 0's value")
        assert comm.sent == [(1, ["rank 0's value", (["rank 1's row"], None, None)])]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_an_internal_error_on_one_of_many_ranks_ends_every_rank(monkeypatch):
    # a failure of ours outside the steps where ranks stop together: the other ranks would wait for this one for
    # ever (mpi4py's MPI_Finalize at exit waits too), so every rank is ended at once (MPI_Abort), after the line
    from click.testing import CliRunner
    from stibium_py.clients import team
    from stibium_py.cli import main

    class Many:
        size, rank = 4, 2

        def __init__(self):
            self.aborted = []

        def abort(self, code):
            self.aborted.append(code)
            raise SystemExit(code)
    many = Many()
    monkeypatch.setattr(team, "_joined", [many])
    monkeypatch.setattr("stibium_py.commands.results.builtin_plans", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    done = CliRunner().invoke(main, ["plans"])
    assert many.aborted == [1] and done.exit_code == 1
    assert done.output == ("stibium: internal error: RuntimeError: boom; run again with STIBIUM_DEBUG=1 for the "
                           "traceback and report it\n")
    monkeypatch.setattr(team, "_joined", [])          # one process: the line and the exit status alone
    done = CliRunner().invoke(main, ["plans"])
    assert done.exit_code == 1 and done.output.count("internal error") == 1


def test_a_step_s_aggregate_keeps_each_field_as_all_clients_together_make_it():
    """Field by field: sums of bytes and counts (none where a client's count is missing), the time from the first
    start to the last end on rank 0's clock, the page cache's evidence at its worst, the requests' latencies
    merged from every client's histogram, the extremes of the clients' extremes, and no client's own fields."""
    a = _row(0, 0, 1.0, 1.5, requests=16, syscalls=20, cached_bytes=0, direct_honoured=True, resident_before=0.0,
             lat_min_s=0.001, lat_max_s=0.004, lat_hist_ns="1000000-2000000:10 3000000-4000000:6",
             lat_mean_s=0.002, io_seconds=0.4, sync_seconds=0.1, open_seconds=0.01, close_seconds=0.02,
             start_ns=5, end_ns=9, offset_bytes=0, written_by=1)
    b = _row(0, 1, 1.2, 1.9, requests=16, syscalls=None, cached_bytes=4096, direct_honoured=False,
             resident_before=0.25, lat_min_s=0.0005, lat_max_s=0.006, lat_hist_ns="1000000-2000000:12 "
             "5000000-6000000:4", lat_mean_s=0.003, start_ns=6, end_ns=10, offset_bytes=1 << 20, written_by=0)
    (step,) = aggregate(Table.from_rows([a, b]), 2).rows()
    assert (step.bytes, step.seconds, step.started_s, step.run_start_s, step.run_end_s) == \
        (2 << 20, pytest.approx(0.9), 1.0, 1.0, 1.9)
    assert (step.size_bytes, step.file, step.rank, step.host, step.written_by, step.offset_bytes) == \
        (1 << 20, "(all clients)", None, None, None, None)
    assert (step.requests, step.syscalls, step.cached_bytes) == (32, None, 4096)
    assert (step.direct_honoured, step.resident_before) == (False, 0.25)
    assert (step.lat_min_s, step.lat_max_s) == (0.0005, 0.006)
    assert step.lat_hist_ns == "1000000-2000000:22 3000000-4000000:6 5000000-6000000:4"
    # of 32 requests: the 16th and 28th in the first bin and the third, the 32nd in the last (bins' upper bounds)
    assert (step.lat_p50_s, step.lat_p90_s, step.lat_p99_s, step.lat_p999_s) == (0.002, 0.006, 0.006, 0.006)
    assert (step.lat_mean_s, step.io_seconds, step.sync_seconds, step.open_seconds, step.close_seconds,
            step.start_ns, step.end_ns) == (None,) * 7
    # where no client has a histogram the latencies are not made up, and where one lacks residency it is left out
    c, d = a._replace(lat_hist_ns=None, resident_before=None, direct_honoured=None), \
        b._replace(lat_hist_ns=None, resident_before=0.5)
    (bare,) = aggregate(Table.from_rows([c, d]), 2).rows()
    assert (bare.lat_p50_s, bare.lat_p99_s, bare.lat_hist_ns, bare.direct_honoured, bare.resident_before) == \
        (None, None, None, None, 0.5)
    e, f = a._replace(resident_before=None, direct_honoured=True), b._replace(resident_before=None,
                                                                              direct_honoured=True)
    (honest,) = aggregate(Table.from_rows([e, f]), 2).rows()
    assert (honest.resident_before, honest.direct_honoured) == (None, True)


def test_a_files_step_s_size_is_every_client_s_file_and_a_tree_s_counts_are_summed():
    files = [_row(0, r, 1.0, 2.0, nbytes=(r + 1) << 20)._replace(kind="files", access="") for r in range(2)]
    (step,) = aggregate(Table.from_rows(files), 2).rows()
    assert (step.size_bytes, step.bytes) == (3 << 20, 3 << 20)     # a files test's rate is fitted on the size
    trees = [_row(0, r, 1.0, 2.0, nbytes=0, entries=100 + r, dirs_made=3, cloned=r)._replace(kind="tree", op="create")
             for r in range(2)]
    (phase,) = aggregate(Table.from_rows(trees), 2).rows()
    assert (phase.tree.entries, phase.tree.dirs_made, phase.tree.cloned) == (201, 6, 1)


def test_a_stonewalled_step_keeps_the_least_done_by_it_and_the_most_after_it():
    rows = [_row(0, r, 1.0, 2.0, stonewall_s=0.5, stonewall_requests=10 + r, wearout_requests=5 - r,
                 stonewall_seconds=0.5 + 0.01 * r) for r in range(3)]
    (step,) = aggregate(Table.from_rows(rows), 3).rows()
    assert (step.stonewall_requests, step.wearout_requests, step.stonewall_seconds) == (10, 5, 0.52)
    plain = aggregate(Table.from_rows([_row(0, r, 1.0, 2.0) for r in range(2)]), 2).rows()[0]
    assert (plain.stonewall_requests, plain.wearout_requests, plain.stonewall_seconds) == (None, None, None)


def test_a_step_without_every_client_s_clock_or_of_none_valid_is_left_out():
    rows = [_row(0, 0, 1.0, 2.0), _row(0, 1, 1.0, 2.0)._replace(run_end_s=None)]
    assert len(aggregate(Table.from_rows(rows), 2)) == 0
    assert len(aggregate(Table.from_rows([_row(0, 0, 1.0, 2.0, error="x")]), 1)) == 0
    # steps come out in the order they were measured (their first rows' in the file), not by their seq: a resumed
    # run measures a cut step again after later ones
    later, again = [_row(5, r, 9.0, 9.5) for r in range(2)], [_row(2, r, 1.0, 1.5) for r in range(2)]
    assert aggregate(Table.from_rows([later[0], again[0], later[1], again[1]]), 2).col("seq").tolist() == [5, 2]


def test_a_straggler_is_said_in_tukey_s_words_and_a_rate_of_no_time_is_not_one():
    flags = stragglers(np.array([100e6, 101e6, 99e6, 1e6]))
    assert flags.tolist() == ["", "", "", "low mild"]
    assert stragglers(np.array([100e6, 101e6, 99e6, 100e6, 1e6])).tolist() == ["", "", "", "", "low severe"]
    # any positive rate counts, however low; a rate of zero or none is no client's rate to judge
    assert stragglers(np.array([100e6, 100e6, 100e6, 1.0])).tolist() == ["", "", "", "low mild"]
    assert stragglers(np.array([100e6, 101e6, 99e6, 100e6, 0.0])).tolist() == [""] * 5
    assert stragglers(np.array([100e6, np.nan, 98e6, 30e6])).tolist() == [""] * 4
    # three clients: the fences of three points hold every point, so none is flagged however far
    assert stragglers(np.array([100e6, 100e6, 1e3])).tolist() == [""] * 3


def test_a_step_s_own_fields_are_its_first_row_s_and_its_times_every_client_s():
    a = _row(0, 0, 1.0, 1.5, syscalls=20, span_bytes=1 << 20, io_method="sync", lat_hist_ns="1000-2000:0")
    b = _row(0, 1, 0.8, 1.4, syscalls=22, span_bytes=1 << 20, io_method="io_uring", lat_hist_ns="1000-2000:0")
    b = b._replace(started_s=0.7)
    (step,) = aggregate(Table.from_rows([a, b]), 2).rows()
    assert (step.started_s, step.run_start_s, step.run_end_s, step.seconds) == (0.7, 0.8, 1.5, pytest.approx(0.7))
    assert (step.syscalls, step.span_bytes, step.io_method) == (42, 1 << 20, "sync")
    # histograms of no request make no latencies
    assert (step.lat_p50_s, step.lat_hist_ns) == (None, None)


def test_a_kind_whose_rows_are_each_client_s_passes_them_through_beside_the_steps():
    frames = [_row(1, r, 2.0, 2.1)._replace(kind="stream", chunk=0, fps=25.0, streams=1, stream=0,
                                            buffer_frames=2) for r in range(2)]
    steps = [_row(0, r, 1.0, 1.5) for r in range(2)]
    out = aggregate(Table.from_rows([*steps, *frames]), 2)
    assert out.col("kind").tolist() == ["pattern", "stream", "stream"]
    assert out.col("file").tolist() == ["(all clients)", "client-0/p/data.bin", "client-1/p/data.bin"]
    only = aggregate(Table.from_rows(frames), 2)
    assert only.col("file").tolist() == ["client-0/p/data.bin", "client-1/p/data.bin"]


def test_a_sustained_step_is_each_chunk_and_the_file_s_row_apart():
    rows = []
    for r in range(2):
        rows += [_row(0, r, 1.0 + c, 1.9 + c, chunk=c) for c in range(2)] + [_row(0, r, 1.0, 2.9)]
    out = aggregate(Table.from_rows(rows), 2)
    assert out.col("chunk").tolist()[:2] == [0, 1] and math.isnan(out.col("chunk")[2])
    assert out.col("seconds").tolist() == pytest.approx([0.9, 0.9, 1.9])


def test_a_step_some_client_did_not_finish_leaves_the_later_steps_in():
    rows = [_row(0, r, 1.0, 1.5) for r in range(2)] + [_row(1, 0, 2.0, 2.5)] + [_row(2, r, 3.0, 3.5) for r in range(2)]
    assert aggregate(Table.from_rows(rows), 2).col("seq").tolist() == [0, 2]


def test_a_step_s_latencies_come_from_one_request_and_a_damaged_histogram_makes_none():
    one = [_row(0, 0, 1.0, 1.5, lat_hist_ns="1000-2000:1"), _row(0, 1, 1.0, 1.5)]
    (step,) = aggregate(Table.from_rows(one), 2).rows()
    assert (step.lat_p50_s, step.lat_p999_s, step.lat_hist_ns) == (2e-6, 2e-6, "1000-2000:1")
    damaged = [_row(0, 0, 1.0, 1.5, lat_hist_ns="1000-2000:1"), _row(0, 1, 1.0, 1.5, lat_hist_ns="1000:x")]
    (step,) = aggregate(Table.from_rows(damaged), 2).rows()
    assert (step.lat_p50_s, step.lat_hist_ns) == (None, None)
