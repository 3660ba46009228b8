"""Running a plan: checks the target, drives the helper through every operation in order, keeps every
measurement, and leaves nothing of its own behind.

- options: what a run is given and hands back (RunOptions, LoadedPlan, Finished, Removal)
- start, resume, series: a run started, a run resumed, a series of runs
- crew: many clients (a check on every rank or none, the crew every rank joins, the plan read once)
- driver: the operations through the helper or fio, the rows kept, the ending (signals.py: SIGTERM, SIGHUP)
- orders: each kind's order of operations, handed to the driver by kind
- jobs: fio's job files beside the road test; progress: the bar and the drive's temperature; awake: a Mac kept
  awake while it measures

Test files live in a folder of their own inside the target (`stibium-<run>`); clean-up removes only the files
the plan names there; after a complete run it may go on in the background while the caller builds the report
(RunOptions.remove_beside_report). `resume` carries on from measurements.csv: completed operations are not
repeated."""

from .crew import read_plan_once
from .options import Finished, LoadedPlan, RunOptions
from .resume import resume_run
from .series import resume_series, start_series
from .start import start_run

__all__ = ["Finished", "LoadedPlan", "RunOptions", "read_plan_once", "resume_run", "resume_series", "start_run",
           "start_series"]
