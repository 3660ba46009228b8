"""A replay test as operations (Op): one a trial, each replaying the whole trace on its own copy of the files. The
trace is read here, beside the plan, as a stranger's file is (beside.read_beside, trace.model.trace_of), so that a
plan whose trace is missing, malformed or too large for a replay is refused before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...beside import Named
from ...errors import PlanError, TraceError
from ...plan.expand import ExpandedTest, check_count
from ...plan.model import Where
from ...rundir.op import Op
from ...trace.model import MAX_CALLS, TRACE_CAP_BYTES, trace_from
from .model import ReplayTest
from .script import Script, ScriptError, script_of


class _Refused(PlanError):
    """read_beside's refusal, made the plan's (Where.error) with its place in the plan."""


@dataclass(frozen=True)
class Replaying:
    """What every trial of a replay test replays, and how."""

    script: Script
    spacing: str                # the helper's --timing: fast, think or recorded
    timing: str                 # as the plan says it, with think: as-fast, as-fast-think or as-recorded
    trace: str                  # the trace's path, as the plan gives it


TRACE = Named("trace", "give a trace that stibium record wrote", f"a trace holds at most {MAX_CALLS:,} calls",
              _Refused)


def expand_test(test: ReplayTest, where: Where, s: dict[str, Any], seq0: int, free_bytes: int | None) -> ExpandedTest:
    at = where / "trace"
    files = s.get("files")
    if files is None:
        raise at.error("a replay test's trace is read beside the plan, and this plan was given without its folder; "
                       "run it from its file (stibium run PLAN)")
    try:
        data = files(test.name, test.trace, test.trace, TRACE_CAP_BYTES, TRACE)
        trace = trace_from(data, test.trace)
        script = script_of(trace)
    except (_Refused, TraceError, ScriptError) as e:
        raise at.error(str(e)) from None
    if script.calls == 0:
        raise at.error(f"{test.trace}: no call the replay can make ({script.left_out} mappings, whose reads and "
                       f"writes no call shows); record the program again, or give another trace")
    check_count(test.trials, where / "trials")
    # its granularity: the bytes its writes ask a call on average, so that the run's estimate of its time
    # (plan.expand.estimated_s) counts its calls
    per_call = max(1, -(-script.write_bytes // script.calls))
    ops = [Op(seq=seq0 + t, test=test.name, kind="replay", op="replay", access="", size_bytes=script.layout_bytes,
              granularity_bytes=per_call, stride_bytes=0, trial=t, file=f"{test.name}/replay-{t}",
              bytes=script.write_bytes, engine="posix", fill=s["fill"], sync="none", seed=s["seed"],
              data_seed=s["seed"], existing=False, threads=script.threads) for t in range(test.trials)]
    return ExpandedTest(name=test.name, kind="replay", ops=ops, between=test.between,
                        layout_bytes=script.layout_bytes * test.trials,
                        files_bytes=script.layout_bytes + script.write_bytes, kept_bytes=data,
                        tree=TrialFolder(tuple(f.path for f in trace.files if f.path != ".")),
                        replay=Replaying(script, test.spacing, _timing(test), test.trace))


@dataclass(frozen=True)
class TrialFolder:
    """What a trial's folder can hold (plan.expand.Folders): every file and folder of the trace, by its path there;
    what a run cut by a signal removes (the folders once emptied)."""

    every: tuple[str, ...]

    def paths(self, renamed: bool = False) -> list[str]:
        return list(self.every)

    def copies(self) -> list[str]:
        return []


def _timing(test: ReplayTest) -> str:
    return "as-fast-think" if test.spacing == "think" else test.timing
