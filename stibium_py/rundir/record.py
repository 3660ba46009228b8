"""run.json as a typed record: what was run, where, on what, and how it ended (docs/run-directory.md).

`RunRecord` owns its JSON: `to_json` writes the current format, `from_json` reads every format stibium
has written and migrates it, so a run directory from an earlier version still reports, compares and
resumes. The platform facts (machine, target, helper) stay open dictionaries: what a platform can tell
differs, and a missing fact reads as absent rather than failing the run.

Versions:
- stibium-run/1: the expanded operations were stored one by one (`expanded.ops`, ~330 bytes each: a
  run of a million measurements wrote a run.json of hundreds of MB).
- stibium-run/2: `expanded.ops_count` and `expanded.ops_sha256` (the digest of the operations) in their
  place; resume checks the digest. A /1 file is migrated on reading: its digest is computed from its list.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from enum import Enum
from dataclasses import dataclass, field
from typing import Any

from ..errors import RecordError
from ..machine.memory import MemoryRead, Shape

RUN_FORMAT = "stibium-run/2"
READABLE_RUN_FORMATS = ("stibium-run/1", RUN_FORMAT)
SERIES_FORMAT = "stibium-series/1"


def ops_digest(ops: list[dict[str, Any]]) -> str:
    """The SHA-256 of the expanded operations in their canonical JSON (keys sorted, no spaces)."""
    text = json.dumps(ops, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class RunStatus(str, Enum):
    """How a run (or a series) stands. A str: run.json and series.json hold its value, today's words, and it
    compares equal to them; printed, it is its value."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    WAITING_FOR_REBOOT = "waiting-for-reboot"

    # its value where it is printed or formatted: Python 3.12 made a mixed-in Enum's format its name
    __str__ = str.__str__
    __format__ = str.__format__


@dataclass(frozen=True)
class PlanRecord:
    name: str | None = None
    description: str | None = None
    source: str | None = None            # the plan file's path when the run started
    text: str | None = None              # the plan file's text, so a resume does not depend on the file
    as_given: dict[str, Any] | None = None   # the validated plan, defaults not filled in

    @property
    def ceiling_bytes_per_s(self) -> float | None:
        return (self.as_given or {}).get("ceiling_bytes_per_s")


@dataclass(frozen=True)
class RunRecord:
    format: str = RUN_FORMAT
    stibium_version: str | None = None
    helper_version: str | None = None
    helper: dict[str, Any] = field(default_factory=dict)      # the helper's `info` answer
    plan: PlanRecord = field(default_factory=PlanRecord)
    seed: int | None = None
    expanded: dict[str, Any] = field(default_factory=dict)    # tests, ops_count, ops_sha256, bytes
    target: str | None = None
    target_device: int | None = None
    work_dir: str | None = None
    keep_files: bool = False
    machine: dict[str, Any] = field(default_factory=dict)
    target_facts: dict[str, Any] = field(default_factory=dict)
    clock: dict[str, Any] = field(default_factory=dict)
    started_utc: str | None = None
    started_epoch_s: float | None = None
    ended_utc: str | None = None
    ended_epoch_s: float | None = None
    status: RunStatus = RunStatus.RUNNING      # a record built with its words holds the Enum (__post_init__)
    pid: int | None = None
    cleanup: str | None = None
    rebooted: bool = False
    resumed_utc: tuple[str, ...] = ()
    memory_reads: tuple[MemoryRead, ...] = ()     # what memory does for the run's read shapes (memory.py)
    stopped_by: str | None = None   # an interrupted or failed run: what stopped it (a signal, which rank, why)
    # many clients (mpiexec): ranks, hosts, the read shift, and each launch's clock offsets (team.ClientClock)
    clients: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)       # keys of a newer format, kept as they are

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", RunStatus(self.status))     # the Enum, whether given it or its words

    # -- reading and writing
    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("plan", "extra")}
        out["plan"] = dataclasses.asdict(self.plan)
        out["resumed_utc"] = list(self.resumed_utc)
        out["memory_reads"] = [m.to_json() for m in self.memory_reads]
        out["format"] = RUN_FORMAT
        return {**self.extra, **out}

    @classmethod
    def from_json(cls, data: Any, where: str) -> "RunRecord":
        if not isinstance(data, dict) or data.get("format") not in READABLE_RUN_FORMATS:
            raise RecordError(f"{where}: not a stibium run.json ({' or '.join(READABLE_RUN_FORMATS)}); was it "
                              f"written by stibium?")
        data = _migrate(dict(data))
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in data.items() if k in names and k != "extra"}
        plan = known.pop("plan", None) or {}
        if not isinstance(plan, dict):
            raise RecordError(f"{where}: its plan section is damaged; restore it from a copy of the run")
        plan_names = {f.name for f in dataclasses.fields(PlanRecord)}
        for key in ("helper", "expanded", "machine", "target_facts", "clock", "clients"):
            if known.get(key) is not None and not isinstance(known[key], dict):
                raise RecordError(f"{where}: its {key} section is damaged; restore it from a copy of the run")
        known = {k: v for k, v in known.items() if v is not None}     # a null reads as the field's default
        _held_to_types(known, plan, where)
        for key in ("helper", "machine", "target_facts", "clock"):
            if key in known:
                known[key] = facts_held(known[key])
        known["resumed_utc"] = tuple(known.get("resumed_utc") or ())
        reads = known.get("memory_reads")
        parsed = (MemoryRead.from_json(r) for r in (reads if isinstance(reads, list) else ()))
        known["memory_reads"] = tuple(m for m in parsed if m is not None)       # a damaged record is left out
        return cls(**known, plan=PlanRecord(**{k: v for k, v in plan.items() if k in plan_names}),
                   extra={k: v for k, v in data.items() if k not in names})

    # -- facts the views and compare read
    @property
    def ranks(self) -> int:
        """Clients of the run: 1 unless it ran under MPI with more."""
        try:
            return max(int(self.clients.get("ranks", 1)), 1)
        except (TypeError, ValueError):
            return 1

    @property
    def hostname(self) -> str | None:
        """The machine's name as the record gives it; None where it is not text (a stranger's record)."""
        name = self.machine.get("hostname")
        return name if isinstance(name, str) else None

    @property
    def boot_id(self) -> str | None:
        return self.machine.get("boot_id")

    @property
    def memory_rates(self) -> dict[Shape, float]:
        """The median memory rate of each read shape the run measured."""
        return {m.shape: m.rate_bytes_per_s for m in self.memory_reads}



@dataclass(frozen=True)
class SeriesRecord:
    """series.json: a series of repeated runs (run-1, run-2, ... beside it), what started them and how far
    it got; what a resume needs to start the runs that have not begun."""
    plan: str
    runs: int
    source: str | None = None       # the plan file's path (a resume starts the remaining runs from it)
    target: str | None = None
    started_utc: str | None = None
    status: RunStatus = RunStatus.RUNNING      # running, then the status of the run it stopped at, or complete
    seed: int | None = None
    keep_files: bool = False
    allow_nonempty: bool = False
    extra: dict[str, Any] = field(default_factory=dict)       # keys of a newer format, kept as they are

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", RunStatus(self.status))     # the Enum, whether given it or its words

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        return {**self.extra, "format": SERIES_FORMAT, **out}

    @classmethod
    def from_json(cls, data: Any, where: str) -> "SeriesRecord":
        if not isinstance(data, dict) or data.get("format") != SERIES_FORMAT:
            raise RecordError(f"{where}: not a {SERIES_FORMAT} file; was it written by stibium?")
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in data.items() if k in names and v is not None}
        for key, type_ in (("plan", str), ("runs", int)):
            if not isinstance(known.get(key), type_) or isinstance(known.get(key), bool):
                raise RecordError(f"{where}: its {key} is missing or damaged; restore it from a copy of the series")
        if not 1 <= known["runs"] <= MAX_SERIES_RUNS:
            raise RecordError(f"{where}: its runs is {_shown(known['runs'])}, not a count from 1 to {MAX_SERIES_RUNS} "
                              f"(as stibium run --runs takes); restore it from a copy of the series")
        for key, kind in (("source", str), ("target", str), ("started_utc", str), ("status", str), ("seed", int),
                          ("keep_files", bool), ("allow_nonempty", bool)):
            value = known.get(key)
            if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))
                                      or (kind is int and not 0 <= value <= MAX_COUNT)):
                raise RecordError(f"{where}: its {key} is {_shown(value)}, not "
                                  f"{ {str: 'text', int: 'a whole number of 0 or more', bool: 'true or false'}[kind]}; "
                                  f"restore it from a copy of the series")
        return cls(**known, extra={k: v for k, v in data.items() if k not in names and k != "format"})


RUN_STATUSES = tuple(s.value for s in RunStatus)
MAX_SERIES_RUNS = 100          # stibium run --runs takes 1 to 100
MAX_COUNT = (1 << 63) - 1      # SQLite's largest integer: a count past it is no count stibium wrote
MAX_RANKS = 10_000             # many clients: more ranks than any run here had, and few enough to list
_TEXT = "text"
_COUNT = "a whole number of 0 or more"
_SECONDS = "a time in seconds of 0 or more"
_FLAG = "true or false"
# run.json's scalar fields and what each must be: a run directory comes from strangers, and a count or a time of
# the wrong type or sign would reach the analysis and the words of a report
_FIELD_KINDS = {**dict.fromkeys(("stibium_version", "helper_version", "target", "work_dir", "started_utc",
                                 "ended_utc", "cleanup", "stopped_by"), _TEXT),
                **dict.fromkeys(("seed", "target_device", "pid"), _COUNT),
                **dict.fromkeys(("started_epoch_s", "ended_epoch_s"), _SECONDS),
                **dict.fromkeys(("keep_files", "rebooted"), _FLAG)}


def _held_to_types(known: dict[str, Any], plan: dict[str, Any], where: str) -> None:
    """run.json's fields of the types and signs stibium writes, else one line naming the first that is not."""
    def fits(value: Any, kind: str) -> bool:
        if kind == _TEXT:
            return isinstance(value, str)
        if kind == _FLAG:
            return isinstance(value, bool)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            return False
        if kind == _SECONDS:
            return value < 1e12          # seconds since 1970 or of a run: a 32,000-year run is not one
        return isinstance(value, int) and value <= MAX_COUNT

    checks = [(key, known[key], kind) for key, kind in _FIELD_KINDS.items() if key in known]
    checks += [(f"plan.{key}", plan[key], _TEXT) for key in ("name", "description", "source", "text")
               if plan.get(key) is not None]
    for key, value in (("expanded.ops_count", known.get("expanded", {}).get("ops_count")),
                       ("expanded.memory_shapes", known.get("expanded", {}).get("memory_shapes")),
                       ("clients.ranks", known.get("clients", {}).get("ranks"))):
        if value is not None:
            checks.append((key, value, _COUNT))
    for key, value, kind in checks:
        if not fits(value, kind):
            raise RecordError(f"{where}: its {key} is {_shown(value)}, not {kind}; restore it from a copy of the run")
    _clients_held(known.get("clients", {}), where)
    if known.get("status", "running") not in RUN_STATUSES:
        raise RecordError(f"{where}: its status is {_shown(known['status'])}, not one of {', '.join(RUN_STATUSES)}; "
                          f"restore it from a copy of the run")
    resumed = known.get("resumed_utc", ())
    if not isinstance(resumed, (list, tuple)) or not all(isinstance(r, str) for r in resumed):
        raise RecordError(f"{where}: its resumed_utc is not a list of times; restore it from a copy of the run")
    as_given = plan.get("as_given")
    if as_given is not None and not isinstance(as_given, dict):
        raise RecordError(f"{where}: its plan.as_given is not a table; restore it from a copy of the run")
    if as_given:
        ceiling = as_given.get("ceiling_bytes_per_s")
        for key, bad in (("defaults", as_given.get("defaults") is not None and not isinstance(as_given["defaults"], dict)),
                         ("tests", as_given.get("tests") is not None and not (
                             isinstance(as_given["tests"], list) and all(isinstance(t, dict) for t in as_given["tests"]))),
                         ("ceiling_bytes_per_s", ceiling is not None and (
                             isinstance(ceiling, bool) or not isinstance(ceiling, (int, float)) or not 0 < ceiling < 1e18))):
            if bad:
                raise RecordError(f"{where}: its plan.as_given.{key} is {_shown(as_given[key])}, not what a plan holds "
                                  f"there; restore it from a copy of the run")
    digest = known.get("expanded", {}).get("ops_sha256")
    if digest is not None and not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
        raise RecordError(f"{where}: its expanded.ops_sha256 is {_shown(digest)}, not a SHA-256 digest; restore it "
                          f"from a copy of the run")


# facts whose value is a record or a list (the stack below the file system, the drive, the link, the helper's
# engines): every other fact is a scalar
CONTAINER_FACTS = {"stack", "drive", "link", "target", "engine_capabilities", "engines", "layers", "temperature"}
_COUNT_ENDINGS = ("_bytes", "_ns", "_count", "_numer", "_denom", "_pages", "_blocks", "_mbit")
FLAG_FACTS = {"direct_accepted", "direct_honoured", "translated"}


def facts_held(facts: dict[str, Any]) -> dict[str, Any]:
    """A facts section (machine, target, clock, helper) with each fact of the type its name says, and of a record's
    own facts (a drive's) the same: a count (ram_bytes, clock_resolution_ns) a whole number from 0 to MAX_COUNT, a
    time or a rate (..._s, ..._per_s) a number from 0 to 1e18, a flag (FLAG_FACTS) true or false, a name or a word text; a record or list only
    where the fact is one (CONTAINER_FACTS). A fact of another type reads as absent, as a missing one does: a
    stranger's run.json cannot bring a string to a sum or a list to a sentence."""
    out: dict[str, Any] = {}
    for key, value in facts.items():
        if value is None:                      # absent, said as such
            out[key] = None
            continue
        if key in CONTAINER_FACTS:
            if isinstance(value, dict):        # a link is read by its own strict reader (link.Link.from_json)
                out[key] = facts_held(value) if key in ("drive", "target") else value
            elif isinstance(value, list):
                out[key] = value
            continue
        if isinstance(value, (dict, list)):
            continue
        if key.endswith(_COUNT_ENDINGS) or key in ("cpu_count", "timebase_numer", "timebase_denom"):
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
                out[key] = value
        elif key.endswith("_s"):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e18:
                out[key] = value
        elif key in FLAG_FACTS:
            if isinstance(value, bool):
                out[key] = value
        elif isinstance(value, (str, bool, int, float)):
            out[key] = value
    return out


def _clients_held(clients: dict[str, Any], where: str) -> None:
    """run.json's clients section of the shapes and sizes stibium writes (a count of ranks, a host per rank, each
    launch's clocks a record per rank), else one line: its lists are walked and drawn rank by rank."""
    def refuse(key: str, what: str) -> RecordError:
        return RecordError(f"{where}: its clients.{key} is {_shown(clients[key])}, not {what}; restore it from a copy "
                           f"of the run")
    ranks = clients.get("ranks")
    if ranks is not None and not 1 <= ranks <= MAX_RANKS:
        raise refuse("ranks", f"a count of clients from 1 to {MAX_RANKS:,}")
    read_shift = clients.get("read_shift")
    if read_shift is not None and (isinstance(read_shift, bool) or not isinstance(read_shift, int)
                                   or not 0 <= read_shift <= MAX_RANKS):
        raise refuse("read_shift", f"a whole number from 0 to {MAX_RANKS:,}")
    hosts = clients.get("hosts")
    if hosts is not None and (not isinstance(hosts, list) or len(hosts) > MAX_RANKS
                              or not all(isinstance(h, str) for h in hosts)):
        raise refuse("hosts", f"a list of at most {MAX_RANKS:,} host names")
    launches = clients.get("launches")
    if launches is not None and (not isinstance(launches, list) or len(launches) > MAX_RANKS
                                 or not all(isinstance(a, dict) and isinstance(a.get("clocks", []), list)
                                            and len(a.get("clocks", [])) <= MAX_RANKS
                                            and all(isinstance(c, dict) for c in a.get("clocks", []))
                                            for a in launches)):
        raise refuse("launches", "a list of launches, each with a record per client's clock")


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _migrate(data: dict[str, Any]) -> dict[str, Any]:
    """A stibium-run/1 record as stibium-run/2: its list of operations becomes their count and digest."""
    if data.get("format") == "stibium-run/1":
        expanded = dict(data.get("expanded") or {})
        ops = expanded.pop("ops", None)
        if isinstance(ops, list):
            expanded["ops_count"] = len(ops)
            expanded["ops_sha256"] = ops_digest(ops)
        data["expanded"] = expanded
        data["format"] = RUN_FORMAT
    return data
