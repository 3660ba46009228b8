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
