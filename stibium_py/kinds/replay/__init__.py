"""A replay test: a program's recorded file calls (a trace: stibium record, trace import-fio) issued again on this
target, each trial on its own copy of the files the program met, timed by kind of call: the user's own app as the
road test (docs/methods.md, "Replays"). Compare sets its points (calls per second) side by side and its own times
(compare.py: the elapsed time and each kind's time in calls, B / A)."""

from __future__ import annotations

from ...registry import folder_spec
from .model import ReplayTest

SPEC = folder_spec(__name__, model=ReplayTest, spanned=False, plan_note=True, points=True, aggregated=False,
                   compare=True)
