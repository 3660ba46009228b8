"""How the clients of a run share the store, as a test's `clients:` asks: which file (and which part of it)
each rank touches in each operation, which file it lays out beforehand, and whose writes its reads meet.
Pure: the same on every rank, so that every rank knows every other rank's files (rank 0 removes them all).

- per-client (IOR's N-N): every rank has its own copy of each test file, in a folder of its own
  (client-<rank>/).
- shared (IOR's N-1): one file of N segments, each as large as the test's span; rank r's requests fall in
  segment r. Rank 0 lays the whole file out.
- read_from: other (IOR's -C): rank r reads what rank (r + shift) mod N wrote, with shift chosen so that the
  writer is on another machine wherever the ranks' hosts allow (`read_shift`); no client's own cache can
  then serve the read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..rundir.op import Op
from ..plan import ExpandedTest


def client_file(name: str, rank: int) -> str:
    """A per-client test file: the plan's name in the rank's own folder."""
    return f"client-{rank}/{name}"


def read_shift(hosts: Sequence[str]) -> int:
    """The smallest shift s (1 <= s < N) that sends every rank's reads to a rank on another host; 1 where no
    shift does (one host, or hosts of unequal rank counts)."""
    n = len(hosts)
    for s in range(1, n):
        if all(hosts[r] != hosts[(r + s) % n] for r in range(n)):
            return s
    return 1


@dataclass(frozen=True)
class Touch:
    """What one rank's operation touches: the file, where its requests begin, and whose writes a read meets
    (None for a write, or for one client)."""

    file: str
    offset_bytes: int
    written_by: int | None


@dataclass(frozen=True)
class Place:
    """One rank's place in the team: its rank, the team's size, the read shift."""

    rank: int = 0
    size: int = 1
    shift: int = 1

    @property
    def alone(self) -> bool:
        return self.size == 1

    def owner(self, op: Op, test: ExpandedTest) -> int:
        """The rank whose file or segment the operation touches."""
        if op.op == "write" or test.read_from == "own":      # a mixed one reads (and writes) another's
            return self.rank
        return (self.rank + self.shift) % self.size

    def touch(self, op: Op, test: ExpandedTest) -> Touch:
        if self.alone:
            return Touch(op.file, 0, None)
        owner = self.owner(op, test)
        written_by = owner if op.reads else None
        if test.sharing == "shared":
            return Touch(op.file, owner * op.size_bytes, written_by)
        return Touch(client_file(op.file, owner), 0, written_by)

    def lays_out(self, op: Op, test: ExpandedTest) -> tuple[str, int] | None:
        """The file this rank lays out before the operation (its own), and its size; None where another rank
        does (a shared file is laid out by rank 0, whole)."""
        if self.alone:
            return op.file, op.size_bytes
        if test.sharing == "shared":
            return (op.file, self.size * op.size_bytes) if self.rank == 0 else None
        return client_file(op.file, self.rank), op.size_bytes

    def files(self, test: ExpandedTest) -> set[str]:
        """Every rank's files of the test."""
        names = {o.file for o in test.ops} | ({test.layout_file} if test.layout_file else set())
        if test.tree is not None:       # a tree's folder holds its files, made or renamed
            every = (*test.tree.paths(), *test.tree.paths(renamed=True), *test.tree.copies())
            names = {f"{tree}/{p}" for tree in names for p in every}
        if self.alone or test.sharing == "shared":
            return names
        return {client_file(n, r) for n in names for r in range(self.size)}
