"""Joining the clients of a run (`join`: one process, or the ranks of an MPI job, mpi4py imported only where a
launcher started many), and the ranks of an MPI job as a Team (mpi4py's COMM_WORLD): steps every rank begins
together, what rank 0 shares with the others, each rank's clock placed on rank 0's, and a rank that stops
answering taken for lost after the silence bound (team.SILENCE_S) instead of waited for for ever. A SIGINT during a collective is held until the
collective is whole on this rank (sigint_after), so the stopping step is whole on every rank."""

from __future__ import annotations

import functools
import os
import signal
import socket
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

from ..errors import RunError
from .team import (CLOCK_ROUNDS, SILENCE_FACTOR, SILENCE_S, ClientClock, Silent, Solo, Team, _Late, _Lost, _NAP_S,
                   _SPIN_S, _joined, clock_offset, launched_size, verdict)

_TAG_UP, _TAG_DOWN, _TAG_CLOCK = 71, 72, 73


F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def sigint_after() -> Iterator[list[int]]:
    """SIGINT noted, not raised, while the block runs (the caller raises it after). Only where SIGINT raises
    KeyboardInterrupt: a process that ignores it (started with SIGINT ignored, as a shell's background job
    is) goes on ignoring it; inside a block that already defers it (a collective made of others), and where
    no handler can be set (not the main thread), the block runs as it is."""
    caught: list[int] = []
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield caught
        return
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    except ValueError:
        yield caught
        return
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


def _whole(collective: F) -> F:
    """A collective run to its end on this rank before a SIGINT that came during it is raised: every message
    of it is sent and received, so the step that follows (the stopping step) is whole on every rank. The
    price: a Ctrl-C that lands while rank 0 waits takes effect when the slowest rank reaches the step."""
    @functools.wraps(collective)
    def run(*args: Any, **kwargs: Any) -> Any:
        with sigint_after() as caught:
            value = collective(*args, **kwargs)
        if caught:
            raise KeyboardInterrupt
        return value
    return run  # type: ignore[return-value]


class MpiTeam:
    """The ranks of an MPI job (mpi4py's COMM_WORLD)."""

    def __init__(self, comm: Any, silence_s: float = SILENCE_S):
        self.comm = comm
        self.awaiting: list[int] = []     # rank 0, inside a step: the ranks it has not heard from yet
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.host = socket.gethostname()
        self.silence_s = silence_s
        self._work_began = time.monotonic()     # when this rank left its last step (its own part began)
        from mpi4py import MPI
        self._mpi_error = MPI.Exception

    def _poll(self, ready: Callable[[], Any], deadline: float) -> Any:
        """Poll until ready() gives something other than None (a signal is seen between polls); _Late after the
        deadline (time.monotonic()), _Lost where MPI reports a peer gone."""
        started = time.monotonic()
        while True:
            try:
                value = ready()
            except self._mpi_error as e:
                raise _Lost(str(e)) from None
            if value is not None:
                return value
            now = time.monotonic()
            if now > deadline:
                raise _Late
            if now - started > _SPIN_S:
                time.sleep(_NAP_S)

    def _deadline(self, bound_s: float | None = None) -> float:
        return time.monotonic() + (self.silence_s if bound_s is None else bound_s)

    def _send(self, value: Any, dest: int, tag: int, deadline: float) -> None:
        request = self.comm.isend(value, dest=dest, tag=tag)
        self._poll(lambda: True if request.test()[0] else None, deadline)

    def _receive(self, source: int, tag: int, deadline: float) -> Any:
        """A whole pickled value of any size: probe for the message, then receive it."""
        return self._poll(lambda: self.comm.improbe(source=source, tag=tag), deadline).recv()

    def _up(self, value: Any, bound_s: float | None = None) -> list[Any] | None:
        """Every rank's value to rank 0, waited for; rank 0 raises Silent for the ranks not heard from within the
        bound, or gone (MPI reports their connection closed), with what the others sent as its `partial` (in
        rank order, None for the silent)."""
        began = time.monotonic()
        bound = self.silence_s if bound_s is None else bound_s
        if self.rank:
            try:
                self._send(value, 0, _TAG_UP, self._deadline(2 * bound))
            except (_Late, _Lost) as e:
                raise Silent([0] if isinstance(e, _Late) else [], time.monotonic() - began, 2 * bound,
                             lost=str(e) if isinstance(e, _Lost) else None) from None
            return None
        out: list[Any] = [value]
        deadline = self._deadline(bound)
        self.awaiting = list(range(1, self.size))
        lost: list[int] = []
        said = None
        for r in range(1, self.size):
            try:
                out.append(self._receive(r, _TAG_UP, deadline))
                self.awaiting.remove(r)
            except _Lost as e:                 # this rank failed; the others are still waited for
                out.append(None)
                lost.append(r)
                said = str(e)
            except _Late:
                late = Silent([], time.monotonic() - began, bound, out)
                for q in range(r, self.size):      # the ranks that did answer, after the first silent one
                    try:
                        message = self.comm.improbe(source=q, tag=_TAG_UP)
                    except self._mpi_error:
                        message = None
                    out.append(message.recv() if message is not None else None)
                    if message is None:
                        late.ranks.append(q)
                if lost:                           # a failure reported is said before a silence
                    raise Silent(lost, late.waited_s, bound, out, lost=said) from None
                raise late from None
        if lost:
            raise Silent(lost, time.monotonic() - began, bound, out, lost=said)
        return out

    def _down(self, value: Any, bound_s: float | None = None) -> Any:
        """Rank 0's value to every rank, waited for (another rank waits twice the bound: rank 0 decides first)."""
        began = time.monotonic()
        bound = self.silence_s if bound_s is None else bound_s
        if self.rank:
            try:
                return self._receive(0, _TAG_DOWN, self._deadline(2 * bound))
            except (_Late, _Lost) as e:
                raise Silent([0] if isinstance(e, _Late) else [], time.monotonic() - began, 2 * bound,
                             lost=str(e) if isinstance(e, _Lost) else None) from None
        requests = [self.comm.isend(value, dest=r, tag=_TAG_DOWN) for r in range(1, self.size)]
        try:
            self._poll(lambda: True if all(q.test()[0] for q in requests) else None, self._deadline(bound))
        except (_Late, _Lost) as e:
            raise Silent([r for r, q in zip(range(1, self.size), requests) if not _done(q, self._mpi_error)],
                         time.monotonic() - began, bound, lost=str(e) if isinstance(e, _Lost) else None) from None
        return value

    @_whole
    def share(self, value: Any) -> Any:
        return self._down(value)

    @_whole
    def everyone(self, value: Any) -> list[Any]:
        return self._down(self._up(value))

    @_whole
    def step(self, rows: list[Any], stopping: tuple[str, str] | None,
             receive: Callable[[list[list[Any]]], None], value: Any = None) -> tuple[tuple[str, str] | None, list[Any]]:
        own_s = time.monotonic() - self._work_began
        bound = max(self.silence_s, SILENCE_FACTOR * own_s)
        try:
            got = self._up((rows, stopping, value), bound)
        except Silent as e:
            if self.rank == 0:             # the rows of every rank that answered are kept
                receive([g[0] for g in e.partial if g is not None])
            raise
        found = None
        if got is not None:
            receive([r for r, _, _ in got])
            found = verdict([s for _, s, _ in got]), [v for _, _, v in got]
        answer = self._down(found, bound)
        self._work_began = time.monotonic()
        return answer

    @_whole
    def clocks(self, read_ns: Callable[[], int], boot_id: str | None = None) -> list[ClientClock] | None:
        same = self.share((self.host, boot_id)) == (self.host, boot_id) and boot_id is not None
        mine = None
        for r in range(1, self.size):
            if self.rank == 0:
                for _ in range(CLOCK_ROUNDS):
                    self._receive(r, _TAG_CLOCK, self._deadline())
                    self._send(read_ns(), r, _TAG_CLOCK, self._deadline())
            elif self.rank == r:
                samples = []
                for _ in range(CLOCK_ROUNDS):
                    sent = read_ns()
                    self._send(0, 0, _TAG_CLOCK, self._deadline(2 * self.silence_s))
                    theirs = self._receive(0, _TAG_CLOCK, self._deadline(2 * self.silence_s))
                    samples.append((sent, theirs, read_ns()))
                mine = clock_offset(samples)
        offset, uncertainty, rtt = mine or (0, 0, 0)
        same = same and abs(offset) <= uncertainty          # the boot id confirms the measurement, never replaces it
        found = self._up(ClientClock(self.rank, self.host, os.getpid(), 0 if same else offset, 0 if same else uncertainty,
                                     rtt, offset, same))
        self._down(None)
        return found

    def silent(self) -> list[int]:
        """Rank 0, stopped inside a step: the ranks that have not reached it (no message waiting from them)."""
        return [r for r in self.awaiting if not self.comm.iprobe(source=r, tag=_TAG_UP)]

    def abort(self, code: int) -> None:
        self.comm.Abort(code)


def _done(request: Any, error: type) -> bool:
    try:
        return bool(request.test()[0])
    except error:
        return False


def join(environ: dict[str, str] | None = None, silence_s: float = SILENCE_S) -> Team:
    """The team this process belongs to: MPI's when a launcher started more than one rank, else Solo. Under a
    launcher without mpi4py, one line says what to install. silence_s: how long a rank may be silent before it
    is taken for lost (SILENCE_S)."""
    size = launched_size(dict(os.environ if environ is None else environ))
    if size <= 1:
        return Solo()
    # Open MPI: a peer's failure reported to the ranks that wait for it (its fault-tolerance layer, ULFM), which
    # the steps below turn into a stop that names it, instead of an abort of every process in MPI's C code (over
    # TCP the default ended rank 0 without a word when another rank was killed); a person's own setting stays
    os.environ.setdefault("OMPI_MCA_mpi_ft_enable", "1")
    try:
        from mpi4py import MPI
    except ImportError:
        raise RunError(f"started as one of {size} MPI ranks, but mpi4py is not installed; install it with "
                       f"pip install 'stibium[mpi]' (or run without mpiexec for one client)", 2) from None
    comm = MPI.COMM_WORLD
    if comm.Get_size() <= 1:
        return Solo()
    # a peer lost (its process killed, its connection closed) is an error this rank sees and acts on, naming it,
    # not one that ends the process in MPI's C code before the run's record says what happened (Open MPI's
    # default, MPI_ERRORS_ARE_FATAL: a rank of four over TCP ended without a word when another was killed);
    # errors outside a communicator are raised on MPI_COMM_SELF (MPI 4.0, section 9.3)
    for c in (comm, MPI.COMM_SELF):
        c.Set_errhandler(MPI.ERRORS_RETURN)
    team = MpiTeam(comm, silence_s)
    _joined[:] = [team]
    return team
