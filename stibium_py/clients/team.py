"""The clients of a run: one process (`Solo`), or the ranks of an MPI job (`MpiTeam`) started by `mpiexec` or
`srun` (clients/mpi.py, which joins them: `join`), each driving its own helper against one shared store. MPI is the launcher and the only channel:
stibium opens no port and runs no daemon; MPI's own launch and authentication (ssh keys, Slurm) decide who
may start it.

Every collective step here is made of point-to-point messages to and from rank 0, waited for in Python
(`_poll`): a rank blocked in a C collective would not see SIGINT or SIGTERM until it returned, and a rank
waiting for a dead peer would never return; polling lets every rank act on a signal at once. SIGINT (a
user's Ctrl-C) waits for the end of the collective it lands in (`_whole`): a rank that left one half way and
began the next (the stopping step) would wait for messages its peers had already sent for the first.

Clocks: each rank's raw monotonic clock (the helper's) is placed on rank 0's by Cristian's method: the
offset of the round trip with the shortest time, with half that time as its uncertainty (`clock_offset`).
"""

from __future__ import annotations

import os
import pickle
import socket
from dataclasses import asdict, dataclass
from typing import Any, Callable, Protocol, Sequence


# Environment variables an MPI launcher sets in every rank: the job's size (Open MPI, MPICH/Intel MPI's PMI,
# Slurm's PMIx). Without one of them above 1, stibium runs alone and never imports MPI.
SIZE_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS")
CLOCK_ROUNDS = 40                # round trips per rank to place its clock on rank 0's
# A rank not heard from for this long (by default; `--client-silence` sets it), or for SILENCE_FACTOR times as long as
# the waiting rank's own part of the step took where that is longer, is taken for lost: a host whose network was
# cut, or whose machine stopped, sends nothing and its TCP connections may stay open for hours, so without a
# bound every other rank would wait for it for ever. A rank other than 0 waits twice as long for rank 0's answer,
# so that rank 0, which keeps the run's record, is the one that decides.
SILENCE_S = 120.0
SILENCE_FACTOR = 10.0
_SPIN_S = 0.002                   # poll without sleeping this long, then sleep between polls
_NAP_S = 0.0002


def launched_size(environ: dict[str, str]) -> int:
    """How many ranks the launcher started, from its environment; 1 when none did."""
    for name in SIZE_VARIABLES:
        try:
            n = int(environ.get(name, ""))
        except ValueError:
            continue
        if n >= 1:
            return n
    return 1


@dataclass(frozen=True)
class ClientClock:
    """A rank's raw clock placed on rank 0's: rank 0's time = this rank's time + offset_ns, within
    +- uncertainty_ns (half the shortest round trip). The offset is always the one measured; the boot id can
    only confirm it: a rank on rank 0's machine (the same boot) whose measured offset lies within its
    uncertainty reads the same clock (same_clock: its offset is 0 exactly, measured_offset_ns shows what the
    method found). A rank of the same boot whose offset lies beyond (a time namespace, as containers and
    checkpoint/restore give a process) keeps its measured offset."""

    rank: int
    host: str
    pid: int
    offset_ns: int
    uncertainty_ns: int
    round_trip_ns: int
    measured_offset_ns: int
    same_clock: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def clock_offset(samples: Sequence[tuple[int, int, int]]) -> tuple[int, int, int]:
    """Cristian's method: from (sent, rank 0's time, received) round trips, the offset of the one with the
    shortest round trip (rank 0's time minus the midpoint), half that round trip as the uncertainty, and
    the round trip."""
    sent, theirs, received = min(samples, key=lambda s: s[2] - s[0])
    rtt = received - sent
    return theirs - (sent + received) // 2, (rtt + 1) // 2, rtt


class Silent(Exception):
    """Ranks not heard from within the bound (`SILENCE_S`): rank 0 names the ranks it waited for; another rank
    names rank 0. The rows of the ranks that did answer have been handed on (step's receive) before it is
    raised."""

    def __init__(self, ranks: list[int], waited_s: float, bound_s: float, partial: list[Any] | None = None,
                 lost: str | None = None):
        super().__init__(f"ranks {ranks} silent for {waited_s:.1f} s")
        self.ranks, self.waited_s, self.bound_s = ranks, waited_s, bound_s
        self.partial = partial or []        # rank 0 in a step: what the ranks that answered sent (None: silent)
        self.lost = lost                    # MPI's words where it reported a peer gone (else the bound passed)


class _Late(Exception):
    """A wait passed its deadline (inside MpiTeam)."""


class _Lost(Exception):
    """MPI reported an error while a rank waited: a peer's process or connection is gone (inside MpiTeam)."""


class Team(Protocol):
    rank: int
    size: int
    host: str

    def share(self, value: Any) -> Any:
        """Rank 0's value, on every rank."""

    def everyone(self, value: Any) -> list[Any]:
        """Every rank's value, in rank order, on every rank."""

    def step(self, rows: list[Any], stopping: tuple[str, str] | None,
             receive: Callable[[list[list[Any]]], None], value: Any = None) -> tuple[tuple[str, str] | None, list[Any]]:
        """A barrier that carries each rank's rows to rank 0 (given to receive, in rank order) and returns
        None where every rank goes on, else the run's status and why (`verdict`) where any rank is stopping;
        with every rank's value, in rank order (a stonewall's counts: one step, so that a rank stopping while
        the others exchange values meets them in the same kind of message)."""

    def clocks(self, read_ns: Callable[[], int], boot_id: str | None = None) -> list[ClientClock] | None:
        """Each rank's clock on rank 0's (rank 0's own offset 0), on rank 0; boot_id tells a rank on rank 0's
        machine, whose clock is rank 0's."""

    def silent(self) -> list[int]:
        """Rank 0, stopped inside a step: the ranks that have not reached it."""

    def abort(self, code: int) -> None:
        """End every rank at once (a rank stopped by the launcher, whose peers may be gone)."""


class Solo:
    """One client: the collective steps are the identity."""

    rank = 0
    size = 1

    def __init__(self) -> None:
        self.host = socket.gethostname()

    def share(self, value: Any) -> Any:
        return value

    def everyone(self, value: Any) -> list[Any]:
        return [value]

    def step(self, rows: list[Any], stopping: tuple[str, str] | None,
             receive: Callable[[list[list[Any]]], None], value: Any = None) -> tuple[tuple[str, str] | None, list[Any]]:
        receive([rows])
        return stopping, [value]

    def clocks(self, read_ns: Callable[[], int], boot_id: str | None = None) -> list[ClientClock]:
        return [ClientClock(0, self.host, os.getpid(), 0, 0, 0, 0, True)]

    def silent(self) -> list[int]:
        return []

    def abort(self, code: int) -> None:
        raise SystemExit(code)


def verdict(stops: list[tuple[str, str] | None]) -> tuple[str, str] | None:
    """What the ranks' stops add up to: None where none stops; failed where any failed, else interrupted;
    every stopping rank's reason."""
    said = [s for s in stops if s is not None]
    if not said:
        return None
    status = "failed" if any(st == "failed" for st, _ in said) else "interrupted"
    return status, "; ".join(dict.fromkeys(reason for _, reason in said))


_joined: list[Team] = []      # the team of many this process joined, for end_every_rank


def joined_many() -> bool:
    """Whether this process is one of many ranks."""
    return bool(_joined) and _joined[0].size > 1


def end_every_rank(code: int) -> None:
    """Where this process is one of many ranks, end them all at once (MPI_Abort): for a failure of ours outside
    the steps in which ranks stop together, after which the others would wait for this one for ever."""
    if joined_many():
        _joined[0].abort(code)


def pickled_bytes(value: Any) -> int:
    """The size of a value as it travels between ranks (for the overhead figures)."""
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
