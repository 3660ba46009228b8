"""What a plan says of a replay test: its pydantic model, every key described (docs/plan-format.md is made from
it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...plan.model import TestBase, not_shared


class ReplayTest(TestBase):
    """A program's recorded file calls (a trace: stibium record, or trace import-fio) issued again on this target:
    its own app as the road test, each trial on a fresh copy of the files it met."""

    kind: Literal["replay"] = Field(description="replay: a recorded program's file calls issued again, timed")
    trace: str = Field(min_length=1, max_length=1024,
                       description="the trace, its path relative to the plan's folder, such as traces/build.trace "
                       "(docs/trace-format.md)")
    timing: Literal["as-fast", "as-recorded"] = Field(
        "as-fast", description="as-fast: each thread issues its next call when the last returns | as-recorded: "
        "each call at its recorded time after the replay's start (a call whose thread is behind goes at once, "
        "counted late)")
    think: Literal["drop", "keep"] | None = Field(
        None, description="as-fast: drop (the default: the program's time between calls left out, the disk's part "
        "alone) | keep (each thread waits the recorded time between its calls, as the program did)")
    trials: int = Field(6, ge=1, le=1000, description="replays, each on its own copy of the files (6, the fewest "
                        "whose range is a 95 % interval of the median)")
    between: Literal["evict", "none"] = Field(
        "evict", description="the files the program met, laid out before each trial: evict (their pages dropped, "
        "as after a reboot: the replay's first reads go to the disk) | none (left in memory as written)")

    _own_files = model_validator(mode="after")(lambda self: not_shared(self, "replay"))

    @model_validator(mode="after")
    def _consistent(self) -> "ReplayTest":
        if self.think is not None and self.timing != "as-fast":
            raise ValueError("think is for timing: as-fast (as-recorded keeps every call's recorded time); leave "
                             "think out")
        if self.clients.read_from != "own":
            raise ValueError("clients.read_from: other is for pattern and files tests; a replay works on its own "
                             "copy of the files")
        return self

    @property
    def spacing(self) -> str:
        """How the helper spaces each thread's calls: fast, think or recorded (docs/helper-protocol.md)."""
        return "recorded" if self.timing == "as-recorded" else "think" if self.think == "keep" else "fast"
