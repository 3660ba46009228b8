"""The order the driver carries out a replay test's operations in: each trial on a folder of its own, the files the
program met laid out (untimed; their pages dropped with between: evict), the calls replayed and timed in one helper
call, the folder removed after."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...plan.expand import ExpandedTest
from ...rundir.measurement import Measurement
from ...rundir.op import Op
from ...run.orders import Order, Steps
from ...units import format_seconds
from .expand import Replaying
from .rows import from_replay_answer, replay_args


def order(d: Steps, test: ExpandedTest) -> str:
    replaying = test.replay
    assert isinstance(replaying, Replaying)
    script = replaying.script
    with tempfile.TemporaryDirectory(prefix="stibium-replay-") as folder:
        script_path = Path(folder) / "script.txt"
        script_path.write_text(script.text)
        for planned in test.ops:
            if planned.seq in d.done:
                continue
            op = replace(planned, file=d.place.touch(planned, test).file)   # many clients: each its own copy
            d.work.remove_tree(op.file)          # what an interrupted trial left
            root = d.work.folder(op.file)
            d.helper_ok(replay_args(op, root, script_path, "layout", replaying.spacing, test.between == "evict"))
            d.work.folder(op.file)               # not a link: the helper's calls open plain paths below it
            def rows(ok: bool, answer: dict[str, Any], started_s: float, op: Op = op) -> list[Measurement]:
                return from_replay_answer(op, ok, answer, started_s, script, replaying.timing, replaying.spacing)
            d.measure_with(op, replay_args(op, root, script_path, "run", replaying.spacing, False), None, rows,
                           what=f"replay {op.trial} of {replaying.trace}",
                           rate_said=lambda m: f"{script.calls:,} calls in {format_seconds(m.seconds)}"
                           if m.seconds else "")
            if not d.run.keep_files:
                d.work.remove_tree(op.file)
    return "complete"


# each trial's folder is removed when it is done (a replay may leave many files of any name)
ORDER = Order(order, files_wait_for_end=False, wears_drive=False, kept_when_cut=False)
