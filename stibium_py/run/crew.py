"""Many clients (mpiexec): a check that runs on every rank or none goes on, the crew every rank joins (one
store seen by all, each clock placed on rank 0's, whose writes each rank's reads meet), and the plan read once
by rank 0 for all. One client is a crew of one (Solo), for which all of this is a plain call."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..machine import sysinfo
from ..errors import PathError, SizeError
from .helper import HelperError, raw_clock_ns
from ..plan import PlanError, load_plan
from .preflight import RunError
from ..clients.sharing import Place, read_shift
from ..rundir.store import iso, utc_now
from ..clients.team import Solo, Team
from .workdir import WorkDir
from .options import LoadedPlan


@dataclass(frozen=True)
class Crew:
    """This process's part in a run: its team (Solo: one client), its place (which files it touches), and its
    clock on rank 0's: rank 0's raw clock = ours + clock_offset_ns; base_ns is rank 0's raw clock when the
    run began, so that a row's run_start_s is seconds since then on one clock for every rank."""

    team: Team = field(default_factory=Solo)
    place: Place = Place()
    clock_offset_ns: int = 0
    base_ns: int = 0
    hosts: tuple[str, ...] = ()
    clocks: tuple[Any, ...] = ()             # team.ClientClock of every rank (rank 0's copy)

    def record(self, before: dict[str, Any]) -> dict[str, Any]:
        """run.json's clients: ranks, hosts, the read shift, and this launch's clocks after the earlier ones'
        (a resumed run is a new launch, with offsets of its own); each client's link to the store as the run
        found it at its start (before's). Empty with one client."""
        if not self.many:
            return {}
        launch = {"started_utc": iso(utc_now()), "clocks": [c.to_json() for c in self.clocks]}
        return {"ranks": self.team.size, "hosts": list(self.hosts), "read_shift": self.place.shift,
                "launches": [*before.get("launches", []), launch],
                **({"links": before["links"]} if "links" in before else {})}

    @property
    def many(self) -> bool:
        return self.team.size > 1

    @property
    def leads(self) -> bool:
        return self.team.rank == 0


def every_rank_or_none(team: Team, work: Callable[[], Any]) -> Any:
    """work() on every rank; where it fails on any, nothing goes on: rank 0 raises one error naming each rank
    that failed and why, the others end quietly with its exit status. One client: work() as it is."""
    if team.size == 1:
        return work()
    try:
        result, failure = work(), None
    except (RunError, PlanError, PathError, SizeError, HelperError, OSError) as e:
        code = e.exit_code if isinstance(e, RunError) else 1 if isinstance(e, (HelperError, OSError)) else 2
        result, failure = None, (code, str(e) if not isinstance(e, OSError) else f"{e.filename or ''}: {e.strerror}")
    failures = [(r, f) for r, f in enumerate(team.everyone(failure)) if f is not None]
    if failures:
        code = max(c for _, (c, _) in failures)
        if team.rank != 0:
            raise SystemExit(code)
        if [r for r, _ in failures] == [0]:
            raise RunError(failures[0][1][1], code)      # rank 0's own check (the plan, the run directory)
        ranks_of: dict[str, list[int]] = {}
        for r, (_, text) in failures:
            ranks_of.setdefault(text, []).append(r)
        said = "; ".join(f"rank{'s' if len(rs) > 1 else ''} {', '.join(map(str, rs))}: {text}"
                         for text, rs in ranks_of.items())
        raise RunError(said, code)
    return result


def read_plan_once(team: Team, plan_arg: str) -> LoadedPlan:
    """The plan, read and checked by rank 0 and handed to every rank (the other machines need not have the
    file); one client reads it as it is."""
    from ..plan.find import resolve_plan_path
    if team.size == 1:
        return LoadedPlan.read(resolve_plan_path(plan_arg))

    def read() -> tuple[str, str] | None:
        if team.rank:
            return None
        loaded = LoadedPlan.read(resolve_plan_path(plan_arg))
        return str(loaded.source), loaded.text

    source, text = team.share(every_rank_or_none(team, read))
    plan, text = load_plan(Path(source), text=text)
    return LoadedPlan(Path(source), plan, text)


# The bound within which every rank's clock must be placed on rank 0's (half the shortest of the round trips):
# a step's start and end are placed on one clock to this, and the aggregate's time of a step is from its first
# start to its last end. A local network's round trip is well under a millisecond; ranks on one machine's cores
# a few microseconds (docs/many-clients.md).
CLOCK_BOUND_NS = 5_000_000


def join_crew(team: Team, work: WorkDir, existing: bool = False) -> Crew:
    """Many clients: the test folder rank 0 created must be seen by every rank (one store), then each rank's
    clock is placed on rank 0's and every rank learns whose writes its reads meet."""
    token = f"{os.getpid()}-{time.time_ns()}"
    if team.rank == 0:
        try:
            work.mark(token) if existing else work.create(token=token)
        except OSError as e:
            team.share(None)
            raise RunError(f"cannot create the test folder {work.path}: {e.strerror}", 2) from None
    token = team.share(token if team.rank == 0 else None)
    if token is None:
        raise SystemExit(2)
    sees = team.everyone(work.shows(token))
    hosts = team.everyone(team.host)
    blind = [r for r, seen in enumerate(sees) if not seen]
    if blind:
        if team.rank != 0:
            raise SystemExit(2)
        work.remove()
        names = ", ".join(f"{r} ({hosts[r]})" for r in blind)
        raise RunError(f"rank{'s' if len(blind) > 1 else ''} {names} cannot see the test folder {work.path} that rank 0 "
                       f"created: the clients must share one store; give every rank the same shared folder with "
                       f"--target", 2)
    shift = read_shift(hosts)
    clocks = team.clocks(_raw_clock_or_fail, sysinfo.boot_id())
    loose = team.share([c for c in clocks or () if c.uncertainty_ns > CLOCK_BOUND_NS] if team.rank == 0 else None)
    if loose:
        if team.rank != 0:
            raise SystemExit(2)
        work.remove()
        names = ", ".join(f"{c.rank} ({c.host}: the shortest round trip took {c.round_trip_ns / 1e6:.1f} ms)"
                          for c in loose)
        raise RunError(f"the clock{'s' if len(loose) > 1 else ''} of rank{'s' if len(loose) > 1 else ''} {names} cannot "
                       f"be placed on rank 0's within {CLOCK_BOUND_NS / 1e6:g} ms, which the timeline and the aggregate "
                       f"need; run the clients over a faster network, or fewer ranks than cores", 2)
    base = team.share(raw_clock_ns() if team.rank == 0 else None)
    mine = team.share(clocks)[team.rank]
    return Crew(team, Place(team.rank, team.size, shift), mine.offset_ns, int(base or 0),
                hosts=tuple(hosts), clocks=tuple(clocks or ()))


def _raw_clock_or_fail() -> int:
    ns = raw_clock_ns()
    if ns is None:
        raise RunError("many clients need the helper's raw clock read from Python, which this platform does not "
                       "give; run one client per machine", 2)
    return ns
