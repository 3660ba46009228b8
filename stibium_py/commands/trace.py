"""`stibium record` and `stibium trace show`: what a person's program does to its files, recorded and summed."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import click

from .names import short_help
from .common import console, say, user_errors


@click.command(short_help=short_help("record"),
               context_settings={"ignore_unknown_options": True})
@click.option("--out", "out", type=click.Path(path_type=Path),
              help="Where to write the trace (default: PROGRAM-<UTC time>.trace in the current folder).")
@click.option("--folder", type=click.Path(path_type=Path), default=Path("."), show_default=True,
              help="The folder whose files are recorded; the program runs in it. Calls on files outside it are "
                   "counted, not kept.")
@click.option("--tracer", type=click.Choice(["auto", "strace", "ebpf"]), default="auto", show_default=True,
              help="Linux: the eBPF recorder (bpftrace, as root; about a tenth of strace's cost a call) or strace; "
                   "auto takes eBPF where it can run.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
@user_errors
def record(out: Path | None, folder: Path, tracer: str, command: tuple[str, ...]) -> None:
    """Run COMMAND (after --) under a recorder (Linux: bpftrace as root, else strace; macOS: fs_usage, as root) and
    write what it did to the files of FOLDER as a trace: calls, threads, times and sizes, with no file contents and
    no names (each name replaced by a token)."""
    from ..errors import TraceError
    from ..trace.model import write_trace
    from ..trace.record import record as run_recorded
    if not folder.is_dir():
        raise TraceError(f"record: --folder {folder}: not a folder; give the folder the program works in")
    target = out or Path(f"{Path(command[0]).name or 'program'}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
                         f".trace")
    if os.path.lexists(target):      # a link too, even one that leads nowhere: never written through
        raise TraceError(f"record: {target} exists; give another --out or remove it")
    done = run_recorded(list(command), folder, tracer)
    write_trace(done.trace, target)
    t = done.trace
    console.print(f"trace: {target} ({len(t.calls):,} call{'s' if len(t.calls) != 1 else ''} on {len(t.files):,} "
                  f"{'file or folder' if len(t.files) == 1 else 'files and folders'} by {t.threads} "
                  f"thread{'s' if t.threads != 1 else ''}; {t.outside:,} call{'s' if t.outside != 1 else ''} on files "
                  f"outside {folder} not kept)", markup=False, highlight=False)
    if done.exit_status:
        say(f"the program ended with exit status {done.exit_status}; the trace holds what it did until then")


@click.group(name="trace", short_help=short_help("trace"))
def trace_group() -> None:
    """Read a trace that stibium record wrote."""


@trace_group.command(name="show", short_help="What a trace holds: its calls by kind, bytes, threads and times.")
@click.argument("trace_path", metavar="TRACE", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@user_errors
def show(trace_path: Path, as_json: bool) -> None:
    """What TRACE holds: its calls by kind with their bytes and their time in the kernel, its threads and files, and
    the time spent in calls against the time between them."""
    from ..trace.model import read_trace
    from ..trace.summary import summarize
    from ..report.trace_view import summary_lines, summary_table
    summary = summarize(read_trace(trace_path))
    if as_json:
        click.echo(json.dumps(summary.to_json(), indent=2))
        return
    for line in summary_lines(summary):
        console.print(line, markup=False, highlight=False)
    console.print(summary_table(summary))


@trace_group.command(name="import-fio", short_help="fio's I/O log (write_iolog) as a trace.")
@click.argument("iolog", metavar="IOLOG", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), required=True, help="Where to write the trace.")
@user_errors
def import_fio(iolog: Path, out: Path) -> None:
    """fio's I/O log IOLOG (a job's write_iolog, version 2 or 3) as a trace: its opens, closes, reads, writes and
    syncs on one thread, its files named by tokens."""
    from ..errors import TraceError
    from ..trace.fio_iolog import read_iolog
    from ..trace.model import read_capped, write_trace
    if os.path.lexists(out):
        raise TraceError(f"trace import-fio: {out} exists; give another --out or remove it")
    try:
        text = read_capped(iolog, "fio's I/O log").decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(f"{iolog}: not UTF-8 text; give a log fio wrote with write_iolog") from None
    done = read_iolog(text, str(iolog))
    write_trace(done.trace, out)
    t = done.trace
    skipped = f"; {done.not_kept:,} of its trims, range syncs and waits not kept (no call of a trace does them)" \
        if done.not_kept else ""
    console.print(f"trace: {out} ({len(t.calls):,} call{'s' if len(t.calls) != 1 else ''} on {len(t.files):,} "
                  f"file{'s' if len(t.files) != 1 else ''}{skipped})", markup=False, highlight=False)


@trace_group.command(name="import-fs-usage", short_help="macOS's fs_usage output (fs_usage -w -f filesys) as a trace.")
@click.argument("log", metavar="LOG", type=click.Path(path_type=Path))
@click.option("--folder", "folder", type=str, required=True,
              help="The folder the program worked in, as the Mac named it (/Users/ann/Photos): the calls on files "
                   "below it are kept, relative paths are taken from it.")
@click.option("--out", "out", type=click.Path(path_type=Path), required=True, help="Where to write the trace.")
@user_errors
def import_fs_usage(log: Path, folder: str, out: Path) -> None:
    """The lines `sudo fs_usage -w -f filesys PROGRAM > LOG` wrote on a Mac while PROGRAM ran in FOLDER, as a trace:
    its calls on files below FOLDER by thread, named by tokens; the files it met first as existing ones, each as
    large as its reads reached (fs_usage does not list the folder before)."""
    from ..errors import TraceError
    from ..trace.fs_usage import parse, starting_sizes
    from ..trace.model import MAX_CALLS, Trace, read_capped, write_trace
    from ..trace.parsed import files_of
    if os.path.lexists(out):
        raise TraceError(f"trace import-fs-usage: {out} exists; give another --out or remove it")
    if not folder.startswith("/") or "\x00" in folder:
        raise TraceError(f"trace import-fs-usage: --folder {folder!r} is not an absolute path; give the folder as "
                         f"the Mac named it, such as /Users/ann/Photos")
    try:
        text = read_capped(log, "fs_usage log").decode("utf-8")
    except UnicodeDecodeError:
        raise TraceError(f"{log}: not UTF-8 text; give the lines fs_usage -w printed") from None
    read = parse(text.splitlines(), folder)
    calls = read.parsed.calls
    if not calls:
        raise TraceError(f"{log}: no call on a file below {folder}; give the lines fs_usage -w -f filesys printed "
                         f"while the program ran there, and the folder it worked in")
    if len(calls) > MAX_CALLS:
        raise TraceError(f"{log}: {len(calls):,} calls, more than a trace holds ({MAX_CALLS:,}); record a shorter "
                         f"run of the program")
    files, _ = files_of(read.parsed, starting_sizes(read))
    span = max(c.start_ns + c.took_ns for c in calls)
    write_trace(Trace(files, tuple(calls), "fs_usage", "Darwin", read.program, span, read.parsed.outside), out)
    left = (f"; {read.left_out:,} call{'s' if read.left_out != 1 else ''} left out (renames, whose new name fs_usage "
            f"does not print, and paths it cut)") if read.left_out else ""
    console.print(f"trace: {out} ({len(calls):,} call{'s' if len(calls) != 1 else ''} on {len(files):,} "
                  f"file{'s' if len(files) != 1 else ''} and folders; {read.parsed.outside:,} calls outside the "
                  f"folder not kept{left})", markup=False, highlight=False)
