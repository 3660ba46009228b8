"""Running: a plan (`stibium run`), a verify (`stibium verify`, a plan of one verify test) and a resume; each writes
a run directory and ends with its report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import PlanError, RunError
# the registry, dataclasses and the run's modules are imported in the commands' bodies: a completion TAB imports
# this module for its options and wants no more than click (docs/performance.md)
from .names import short_help
from .common import (console, user_errors, history_options, silence_option, quiet_option, complete_plan, recorder,
                     after_run, check_run_dir)


@click.command(short_help=short_help("run"))
@click.argument("plan", shell_complete=complete_plan)
@click.option("--target", type=click.Path(path_type=Path), help="Folder for the test files (overrides the plan's target).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Folder that receives the run directory.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed for every random choice (overrides defaults.seed).")
@click.option("--keep-files", is_flag=True, help="Leave the test files in the target.")
@click.option("--allow-nonempty", is_flag=True, help="Use a target folder that holds other files.")
@click.option("--runs", type=click.IntRange(1, 100), help="Complete runs of the plan, one after another (overrides "
              "the plan's runs); two or more let compare see the variance between runs.")
@click.option("--dry-run", is_flag=True, help="Check and show the plan, write nothing.")
@click.option("--open", "open_report", is_flag=True, help="Open the report in a browser at the end.")
@click.option("--link-rate", help="The rate of the slowest link between this machine and a store across a network, "
              "such as 1Gb/s or 110MB/s (default: the interface's negotiated speed, where the system states one); "
              "reads faster than it are named as answered on this side of the link.")
@click.option("--files-from", type=click.Path(path_type=Path), metavar="RUN_DIR",
              help="Read the files the plan names (a replay's trace, a fio job file) from this run directory's kept "
              "copies (traces/TEST.trace, fio-jobs/TEST.fio) instead of beside the plan.")
@silence_option
@history_options
@quiet_option
@user_errors
def run(plan: str, target: Path | None, out_dir: Path, seed: int | None, keep_files: bool, allow_nonempty: bool,
        runs: int | None, dry_run: bool, open_report: bool, link_rate: str | None, files_from: Path | None,
        client_silence: float, history_path: str | None, no_history: bool) -> None:
    """Run PLAN (a plan file or a built-in plan's name) and write a run directory."""
    from ..plan import expand_at
    from ..run.preflight import preflight
    from ..machine.link import parse_rate
    from ..run import RunOptions, read_plan_once, start_series
    from ..clients.mpi import join
    try:
        link_bytes_per_s = parse_rate(link_rate) if link_rate is not None else None
    except ValueError as e:
        raise RunError(f"--link-rate: {e}", 2) from None
    team = join(silence_s=client_silence)      # many clients under mpiexec or srun; else one
    if team.size > 1:
        console.as_log()
    if team.rank:
        console.quiet = True       # rank 0 speaks for the run
    loaded = read_plan_once(team, plan)
    if files_from is not None:
        check_run_dir(files_from)
        from dataclasses import replace
        loaded = replace(loaded, files_from=files_from)
    options = RunOptions(target=target, out_dir=out_dir, seed=seed, keep_files=keep_files,
                         allow_nonempty=allow_nonempty, remove_beside_report=True,
                         on_end=None if no_history or team.rank else recorder(history_path),
                         link_bytes_per_s=link_bytes_per_s)
    if dry_run and team.rank:
        return
    if dry_run:
        expanded = expand_at(loaded.source, loaded.plan, loaded.text, seed, target,
                             files=loaded.named_files())
        preflight(expanded, (target or Path(loaded.plan.target)).expanduser(), expanded.space_needed_bytes(keep_files),
                  allow_nonempty, out_dir)
        show_plan(loaded.plan, expanded, brief=True)
        click.echo("dry run: nothing was written")
        return
    finished = start_series(loaded, options, runs, console, team=team)
    if not team.rank:
        after_run(finished, open_report)


@click.command(short_help=short_help("resume"))
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--open", "open_report", is_flag=True, help="Open the report in a browser at the end.")
@click.option("--target", type=click.Path(path_type=Path),
              help="The folder to measure in, where this machine does not show the run as its own (a run directory "
                   "from elsewhere): its record never chooses where to write.")
@click.option("--keep-files", is_flag=True, help="Leave the test files in place at the end (a record's word does not).")
@click.option("--allow-nonempty", is_flag=True,
              help="A series' runs to come may start in a target that holds other files (a record's word does not).")
@silence_option
@history_options
@quiet_option
@user_errors
def resume(run_dir: Path, open_report: bool, target: Path | None, keep_files: bool, allow_nonempty: bool,
           client_silence: float, history_path: str | None, no_history: bool) -> None:
    """Finish RUN_DIR (or a series of runs) after an interruption or a reboot, without repeating completed
    operations. It writes in the test folder the run recorded only where this machine shows the run as its own
    (the folder's marker, or the history); else give the folder with --target."""
    from ..run import RunOptions, resume_run, resume_series
    from ..run.crew import every_rank_or_none
    from ..rundir.store import is_series
    from ..clients.mpi import join
    team = join(silence_s=client_silence)
    from ..history.where import where_here
    options = RunOptions(remove_beside_report=True, on_end=None if no_history or team.rank else recorder(history_path),
                         target=target, keep_files=keep_files, allow_nonempty=allow_nonempty,
                         history_db=where_here(history_path).local)
    if team.size > 1:
        console.as_log()
    if team.rank:
        console.quiet = True

    def series_or_run() -> bool | None:
        """Rank 0 reads the folder and tells the others what it is (they need not see it)."""
        if team.rank:
            return None
        check_run_dir(run_dir)
        return is_series(run_dir)
    resume = resume_series if team.share(every_rank_or_none(team, series_or_run)) else resume_run
    finished = resume(run_dir, options, console, team=team)
    if not team.rank:
        after_run(finished, open_report)


def show_plan(parsed: Any, expanded: Any, brief: bool) -> None:
    from ..report.plan_show import plan_lines
    for line in plan_lines(parsed, expanded, brief, console.width):
        console.print(line, highlight=False)


@click.command(short_help=short_help("verify"))
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--size", help="Bytes to fill, such as 64GB (GB is 1000^3 bytes, GiB 1024^3; default: the free space "
              "less the run's margin, 5 % of the fill and 64 MB).")
@click.option("--file-size", default="1GiB", show_default=True,
              help="Bytes in each file of the fill, in whole 4 MiB requests (rounded down, one at the least).")
@click.option("--keep", is_flag=True, help="Leave the fill's files in the target.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Folder for the verify's run directory.")
@click.option("--resume", "resume_dir", type=click.Path(path_type=Path),
              help="Carry on a verify that was cut short (its run directory; TARGET must be its own).")
@history_options
@quiet_option
@user_errors
def verify(target: Path, size: str | None, file_size: str, keep: bool, out_dir: Path, resume_dir: Path | None,
           history_path: str | None, no_history: bool) -> None:
    """Fill TARGET's free space with files whose every block is signed, written uncached, then read every block
    back uncached and check it: the bytes that read back right, blocks holding another block (a fake capacity),
    corrupted and unreadable ones. A plan of one verify test, run as every plan is (resumable, in the history);
    its files go in a folder of its own in TARGET, removed at the end unless --keep. Exit status 1 where a byte
    did not read back as written."""
    from .. import registry
    command = registry.part(registry.VERIFY, "command")
    from ..run import RunOptions, resume_run, start_series
    from ..history.where import where_here
    options = RunOptions(target=target, out_dir=out_dir, keep_files=keep, allow_nonempty=True, whole_drive=True,
                         remove_beside_report=True, on_end=None if no_history else recorder(history_path),
                         history_db=where_here(history_path).local)
    if resume_dir is not None:
        if size is not None:
            raise RunError("--resume carries on with the verify's own size and files; drop --size", 2)
        check_run_dir(resume_dir)
        if registry.part(registry.VERIFY, "earlier").holds(resume_dir):
            raise RunError(f"{resume_dir} is a verify of an earlier stibium, which this one reads but does not carry "
                           f"on; `stibium report {resume_dir}` shows its verdict; start a new verify of {target}", 2)
        from ..rundir.store import is_series, read_run_json
        if is_series(resume_dir) or not command.is_verify(read_run_json(resume_dir).plan.as_given):
            raise RunError(f"{resume_dir} is a run of a plan with other tests than a verify; carry it on with "
                           f"`stibium resume {resume_dir}`", 2)
        finished = resume_run(resume_dir, options, console)
    else:
        size_bytes = None if size is None else command.size_given("--size", size)
        file_bytes = command.size_given("--file-size", file_size)
        command.files_checked(size_bytes, file_bytes)
        try:
            finished = start_series(command.verify_plan(size_bytes, file_bytes), options, None, console)
        except PlanError as e:
            raise command.in_command_words(e) from None
    summary = after_run(finished, False)
    if summary is not None and not command.kept_everything(summary):
        sys.exit(1)
