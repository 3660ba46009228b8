"""`history check --confirm N`: a drive's latest run found slower is run again, its plan on its target, before a
step is called. Only a run this machine's history shows as started here is run again (its folder, start and
host: the rule `stibium resume` follows), as a run directory from elsewhere never chooses where to write. Each
run is a `stibium run` of its own (a run directory beside the suspect's, recorded in the same history), so that
it is measured as the suspect was, and what it prints is its own."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from ..errors import HistoryError
from .actions import Slower
from .where import Where


def rerun_here(where: Where, console: Any) -> Callable[[Slower], None]:
    def rerun(s: Slower) -> None:
        run = s.latest_run
        run_dir = Path(run.path)
        if not run_dir.is_absolute() or not (run_dir / "run.json").is_file() or not _started_here(where, run, run_dir):
            raise HistoryError(f"history check --confirm: the latest run of {s.drive.drive.label} ({run.name}) is not "
                               f"one this machine ran and still holds, so it is not run again here; run its plan on "
                               f"that drive, then `stibium history check` again", 2)
        from ..rundir.store import read_run_json
        record = read_run_json(run_dir)
        if not record.plan.text or not record.target:
            raise HistoryError(f"{run_dir}: its record keeps no plan text or target to run again; run the plan by hand, "
                               f"then `stibium history check` again", 2)
        console.print(f"history check: {s.drive.drive.label} looks slower at {run.name}; running "
                      f"{record.plan.name or 'its plan'} again to confirm", highlight=False, markup=False)
        env = dict(os.environ)
        env["STIBIUM_HISTORY"] = where.team.url if where.team is not None else str(where.local)
        with tempfile.TemporaryDirectory(prefix="stibium-confirm-") as folder:
            # the plan as the run kept it, and the files it names (a replay's trace, a fio job file) as the run
            # directory keeps them: never the path its record names, which may have changed or be another's
            plan = Path(folder) / "plan.yaml"
            plan.write_text(record.plan.text)
            done = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", record.target,
                                   "--out", str(run_dir.parent), "--files-from", str(run_dir), "--quiet"], env=env,
                                  check=False)
        if done.returncode != 0:
            raise HistoryError(f"history check --confirm: the run made to confirm {run.name} failed (exit "
                               f"{done.returncode}, above); nothing was called", 1)
    return rerun


def _started_here(where: Where, run: Any, run_dir: Path) -> bool:
    from ..machine import sysinfo
    from .db import History
    if not where.local.is_file():
        return False
    with History(where.local, create=False) as history:
        return history.started_here(str(run_dir.resolve()), run.started_utc, sysinfo.machine_facts()["hostname"])
