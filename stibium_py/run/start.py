"""Starting a run: everything checked on every rank before anything is written, the run directory and the test
folder made, run.json's record, then the driver."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from .. import __version__, registry
from ..machine import sysinfo
from .helper import HelperFactory, device_block_of
from ..machine.link import link_of
from ..plan import Expanded, expand_at
from ..paths import missing_folders, remove_empty
from ..plan.expand import expand, kept_files_of, read_from
from .preflight import RunError, preflight
from ..rundir.record import PlanRecord, RunRecord, RunStatus, ops_digest
from ..rundir.store import iso, new_run_dir, utc_now, write_run_json
from ..clients.team import Solo, Team
from ..units import format_bytes
from .workdir import WorkDir, work_dir_name
from .crew import Crew, every_rank_or_none, join_crew
from .driver import drive
from .jobs import beside, bench_checked, keep_job_files, kept, with_job_files
from .options import Finished, LoadedPlan, RunOptions, expanded_facts, helpers_of


def start_run(loaded: LoadedPlan, options: RunOptions, console: Console, helper: HelperFactory | None = None,
              team: Team | None = None) -> Finished:
    """Check everything, create the run directory and the test folder, and run. With many clients (team),
    every rank checks its own machine before anything is written, and the test folder rank 0 creates must
    be seen by every rank; rank 0 alone writes the run directory."""
    team = team or Solo()
    leads = team.rank == 0
    plan, text, plan_path = loaded.plan, loaded.text, loaded.source
    target = (options.target or Path(plan.target)).expanduser()
    if leads:
        expanded = expand_at(plan_path, plan, text, options.seed, options.target, clients=team.size,
                             files=loaded.named_files())
        free = next((t.free_bytes for t in expanded.tests if t.free_bytes is not None), None)
    free = team.share(free if leads else None)
    sent = team.share(kept_files_of(expanded) if leads else None)       # a replay's trace, read by rank 0 alone
    if not leads:
        expanded = expand(plan, options.seed, free, read_from(sent))
    # the operations' digest: with many clients every rank's is compared before anything else is checked (one plan
    # must give every rank the same operations); alone, it is taken after the checks, so that a plan refused for its
    # space or its target costs no digest (a verify of 100 TB: 186,000 operations listed and hashed, 5.0 of the 8.6 s
    # its refusal took under cProfile)
    shared_digest = ops_digest(expanded.ops_as_dicts()) if team.size > 1 else None
    helpers = helpers_of(helper)

    made: list[Path] = []        # the target's folders this rank made, the deepest first: gone again on a refusal

    def check() -> dict[str, Any]:
        """This rank's machine: the plan's operations, the target, the space, the memory, the helper."""
        if shared_digest is not None and team.share(shared_digest) != shared_digest:
            raise RunError(f"this rank expanded the plan into other operations than rank 0; install the same "
                           f"stibium ({__version__}) on every machine", 2)
        preflight(expanded, target, expanded.space_needed_bytes(options.keep_files) * team.size,
                  options.allow_nonempty, options.out_dir if leads else None, clients=team.size,
                  whole_drive=options.whole_drive)
        jobs = bench_checked(expanded, None if not leads else beside(plan_path) if loaded.files_from is None
                             else kept(loaded.files_from))
        made.extend(missing_folders(target))
        target.mkdir(parents=True, exist_ok=True)
        facts = sysinfo.target_facts(target)
        found = link_of(facts.get("device"), facts.get("fs_type"), options.link_bytes_per_s)
        if found is None and options.link_bytes_per_s is not None:
            raise RunError(f"--link-rate is the rate of the link to a store across a network, and {target} is on "
                           f"{facts.get('fs_type') or 'a file system'} of this machine; leave --link-rate out", 2)
        if found is not None:
            facts["link"] = found.to_json()
        block = device_block_of(facts)
        info = helpers.once(["info", "--path", str(target)] + (["--device-block", str(block)] if block else []))
        if not info.ok:
            raise RunError(f"target {target}: {info.error}", 2)
        return {"facts": facts, "info": info.data, "jobs": jobs}

    try:
        mine = every_rank_or_none(team, check)
    except (RunError, SystemExit):
        remove_empty(made)
        raise
    facts, info = mine["facts"], mine["info"]
    digest = shared_digest if shared_digest is not None else ops_digest(expanded.ops_as_dicts())
    links = team.everyone(facts.get("link"))        # each client's link to the store (link.py), rank 0's first
    expanded = with_job_files(expanded, team.share(mine["jobs"] if leads else None))
    started = utc_now()
    machine = sysinfo.machine_facts()
    run_dir, work = Path(), Path()
    made_out = missing_folders(options.out_dir) if leads else []
    if leads:
        if options.run_name:
            run_dir = options.out_dir / options.run_name
            run_dir.mkdir(parents=True)
            work = target.resolve() / work_dir_name(f"{options.out_dir.name}-{options.run_name}", sys.platform)
        else:
            run_dir = new_run_dir(options.out_dir, plan.name, machine["hostname"], started)
            work = target.resolve() / work_dir_name(run_dir.name, sys.platform)
    if team.size == 1:
        crew = Crew()
        WorkDir(work, run_dir.name).create()
    else:
        # each rank's test folder is its own target's, by rank 0's name: machines may mount one store at
        # different paths (/Volumes/share on a Mac, /mnt/share on Linux)
        run_name, work_name = team.share((run_dir.name, work.name))
        work = target.resolve() / work_name
        try:
            crew = join_crew(team, WorkDir(work, run_name))
        except (RunError, SystemExit):
            if leads:
                run_dir.rmdir()
            remove_empty(made_out + made)       # a refused start leaves nothing it made
            raise
        if not leads:
            return follow(expanded, work, crew, helpers, console)
    run = RunRecord(
        stibium_version=__version__,
        helper_version=info.get("helper_version"),
        helper=info,
        plan=PlanRecord(name=plan.name, description=plan.description, source=str(plan_path), text=text,
                        as_given=plan.model_dump(mode="json", by_alias=True)),
        seed=options.seed,
        expanded=expanded_facts(expanded, digest, options.keep_files, team.size),
        target=str(target),
        target_device=os.stat(target).st_dev,
        work_dir=str(work),
        keep_files=options.keep_files,
        machine=machine,
        target_facts={**facts, **info.get("target", {})},
        clock={k: info.get(k) for k in ("clock", "clock_resolution_ns", "timebase_numer", "timebase_denom")},
        started_utc=iso(started),
        started_epoch_s=time.time(),
        status=RunStatus.RUNNING,
        pid=os.getpid(),
        clients=crew.record({"links": links} if any(links) else {}),
    )
    write_run_json(run_dir, run)
    keep_job_files(run_dir, expanded)
    for test in expanded.tests:
        if registry.spec(test.kind).order.wears_drive:
            console.print(f"[yellow]{test.name} wears the drive:[/] {format_bytes(test.files_bytes)} of real writes "
                          f"to its flash, without a pause")
    return drive(run_dir, run, expanded, helpers, options.progress, console, crew, options.remove_beside_report,
                 options.on_end)


def follow(expanded: Expanded, work: Path, crew: Crew, helpers: HelperFactory, console: Console) -> Finished:
    """A rank other than 0: the same operations in step with rank 0, its rows sent to rank 0; no run
    directory of its own."""
    run = RunRecord(work_dir=str(work), started_epoch_s=time.time(), status=RunStatus.RUNNING)
    return drive(Path(), run, expanded, helpers, False, console, crew)
