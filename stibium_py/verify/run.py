"""Carrying out a verify: lay the fill out as files (layout), write each file's signed blocks uncached (the helper's
`sign --op write`, a full sync at its end), empty the page cache of every file and prove it (the helper's evict,
its residency after), read each file back uncached and check every block (`sign --op read`), then remove the
files unless asked to keep them. Every step is recorded in the run directory as it ends, so that a verify cut by
a signal or a failure goes on with `stibium verify TARGET --resume RUN`: the files written are not written
again (a file cut in the middle is written again whole), the files checked are not read again."""

from __future__ import annotations

import datetime as dt
import os
import secrets
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import RunError
from ..helper import HelperFactory, HelperResult
from ..run.signals import Interrupted, catch_ending_signals, restore
from ..store import new_run_dir
from .state import BAD_KEPT, FileResult, FileState, VerifyState, append_chunks, read_state, write_state

FILE_BYTES = 1 << 30            # a file of the fill: a cut verify writes at most this much again
CHUNK_BYTES = 4 << 20           # a request, and a point of the rate curves
MIN_MARGIN_BYTES = 64 << 20     # left free: a full file system misbehaves (its own metadata needs room)
MARGIN_SHARE = 0.02
MAX_BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class VerifyOptions:
    size_bytes: int | None = None           # the fill; None: the free space less the margin
    margin_bytes: int | None = None         # None: 2 % of the file system, at least 64 MiB
    file_bytes: int = FILE_BYTES
    chunk_bytes: int = CHUNK_BYTES
    keep: bool = False
    out_dir: Path = Path("reports")
    stop_after: str | None = None           # tests: "write" ends the verify (interrupted) after its writes


def block_bytes_for(bsize: int, chunk_bytes: int | None = None) -> int:
    """The fill's block from the file system's (statvfs f_bsize): whole 4096 bytes (uncached requests), at most
    1 MiB, dividing the chunk where it is given; else 4096 (a network file system's f_bsize is its transfer size,
    not a block of the drive)."""
    block = bsize - bsize % 4096
    fits = 4096 <= block <= MAX_BLOCK_BYTES and (chunk_bytes is None or chunk_bytes % block == 0)
    return block if fits else 4096


def block_bytes_of(target: Path, chunk_bytes: int | None = None) -> int:
    """The fill's block on target's file system (block_bytes_for)."""
    return block_bytes_for(os.statvfs(target).f_bsize, chunk_bytes)


def layout(total_bytes: int, block_bytes: int, chunk_bytes: int, file_bytes: int) -> list[FileState]:
    """The fill as files of whole chunks (the last one of whole 16 KiB blocks' worth of chunks or less), each
    with its first block's index among all the fill's."""
    whole = total_bytes - total_bytes % max(block_bytes, 16384)
    per_file = max(chunk_bytes, file_bytes - file_bytes % chunk_bytes)
    files, first, left = [], 0, whole
    while left > 0:
        size = min(per_file, left)
        blocks = size // block_bytes
        files.append(FileState(name=f"v{len(files):06d}.bin", first_block=first, blocks=blocks))
        first += blocks
        left -= blocks * block_bytes
    return files


def fill_size(target: Path, options: VerifyOptions) -> int:
    """The bytes to fill: the asked size, or the free space less the margin; refused where it cannot fit."""
    usage = shutil.disk_usage(target)
    margin = options.margin_bytes if options.margin_bytes is not None else max(MIN_MARGIN_BYTES,
                                                                               int(usage.total * MARGIN_SHARE))
    room = usage.free - margin
    if options.size_bytes is not None:
        if options.size_bytes > room:
            raise RunError(f"{target}: {options.size_bytes:,} bytes do not fit: {usage.free:,} are free and "
                           f"{margin:,} stay free (the margin); give a smaller --size or --margin", 2)
        return options.size_bytes
    if room < options.chunk_bytes:
        raise RunError(f"{target}: {usage.free:,} bytes are free, less the margin of {margin:,} there is nothing "
                       f"to fill; free some space, or give a smaller --margin", 2)
    return room


def start(target: Path, options: VerifyOptions, helpers: HelperFactory,
          say: Callable[[str], None]) -> tuple[Path, VerifyState]:
    """A new verify of target: its run directory and record, then the verify carried out."""
    target = target.resolve()
    if not target.is_dir():
        raise RunError(f"{target}: not a folder; give the folder (a mounted drive) to verify", 2)
    total = fill_size(target, options)
    block = block_bytes_of(target)
    chunk = options.chunk_bytes - options.chunk_bytes % block or block
    files = layout(total, block, chunk, options.file_bytes)
    if not files:
        raise RunError(f"{target}: the fill of {total:,} bytes holds no whole block; give a larger --size", 2)
    run = secrets.randbits(63) or 1
    host = name_word(socket.gethostname().split(".")[0], 255)
    state = VerifyState(target=str(target), folder=f"stibium-verify-{run:016x}", run=run, seed=secrets.randbits(62),
                        block_bytes=block, chunk_bytes=chunk, files=files, started_epoch_s=time.time(), host=host,
                        keep=options.keep)
    run_dir = new_run_dir(options.out_dir, "verify", host, dt.datetime.now(dt.timezone.utc))
    write_state(run_dir, state)
    return run_dir, carry_on(run_dir, state, helpers, say, options.stop_after)


def resume(target: Path, run_dir: Path, helpers: HelperFactory, say: Callable[[str], None],
           keep: bool = False) -> VerifyState:
    """A verify cut short, carried on: its target must be the one named again on the command line (a person's
    word, not the run directory's, says where a verify may write and delete), and whether its files stay after it
    is the person's word too (--keep), not the record's."""
    state = read_state(run_dir)
    if Path(state.target) != target.resolve():
        raise RunError(f"{run_dir} verified {state.target}, not {target.resolve()}; give its own target to resume "
                       f"it", 2)
    if state.status == "complete":
        raise RunError(f"{run_dir} is complete; start a new verify of {state.target}", 2)
    return carry_on(run_dir, state.model_copy(update={"status": "running", "stopped_by": None, "keep": keep}),
                    helpers, say, None)


def _folder(state: VerifyState) -> Path:
    folder = Path(state.target) / state.folder
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise RunError(f"{folder} is not a folder of this verify's (a link or a file); remove it and resume", 2)
    folder.mkdir(exist_ok=True)
    return folder


def name_word(text: str, limit: int) -> str:
    """A name as verify.json holds it (state.py: ASCII letters, digits, . _ -): every other character, a host's or a
    FUSE file system's non-ASCII letter included, as _."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in text)[:limit]


def _sign(helper: Any, state: VerifyState, f: FileState, op: str, path: Path, attempt: int,
          rows: list[dict[str, object]]) -> HelperResult:
    def row(r: dict[str, Any]) -> None:
        rows.append({"phase": op, "file": f.name, "attempt": attempt, "chunk": r.get("chunk"),
                     "chunk_bytes": r.get("chunk_bytes"),
                     "fill_bytes_done": f.first_block * state.block_bytes + int(r.get("bytes_done", 0)),
                     "start_ns": r.get("start_ns"), "end_ns": r.get("end_ns")})
    args = ["sign", "--path", str(path), "--op", op, "--blocks", str(f.blocks), "--first", str(f.first_block),
            "--block", str(state.block_bytes), "--chunk", str(state.chunk_bytes), "--run", str(state.run),
            "--seed", str(state.seed)]
    # the wait is for each line of the answer, a chunk's row: ten minutes for 4 MiB is a drive that has stopped
    return helper.call(args, timeout_s=600.0, on_row=row)


def _attempt(run_dir: Path, state: VerifyState, helper: Any, folder: Path, i: int,
             op: str) -> tuple[VerifyState, HelperResult]:
    """File i written or read back once more: the attempt counted in the record first (its chunk rows carry it,
    so that the curves draw each file's last attempt), the chunk rows kept whatever happens."""
    f = state.files[i]
    attempt = f.attempts.get(op, 0) + 1
    state = _update(state, i, attempts={**f.attempts, op: attempt})
    write_state(run_dir, state)
    rows: list[dict[str, object]] = []
    if op == "write":
        # a write attempt writes the file whole: the name is removed first, so that a file left there, a hard link
        # to a file of the person's among them (a received folder), is never truncated or written over
        try:
            os.unlink(folder / f.name)
        except FileNotFoundError:
            pass
    try:
        return state, _sign(helper, state, state.files[i], op, folder / f.name, attempt, rows)
    finally:
        append_chunks(run_dir, rows)


def _update(state: VerifyState, i: int, **changed: Any) -> VerifyState:
    files = list(state.files)
    files[i] = files[i].model_copy(update=changed)
    return state.model_copy(update={"files": files})


def carry_on(run_dir: Path, state: VerifyState, helpers: HelperFactory, say: Callable[[str], None],
             stop_after: str | None) -> VerifyState:
    """Every step not yet done, each recorded as it ends; a signal or a failure leaves the record resumable."""
    previous = catch_ending_signals()
    folder = _folder(state)
    try:
        with helpers.session() as helper:
            try:
                state = _write(run_dir, state, helper, folder, say)
                if stop_after == "write":
                    raise Interrupted("stop after writing (a test's)")
                state = _evict(run_dir, state, helper, folder, say)
                state = _read(run_dir, state, helper, folder, say)
            except (KeyboardInterrupt, Interrupted) as e:
                helper.kill()
                why = e.signal_name if isinstance(e, Interrupted) else "SIGINT"
                # the record as its last step left it (each step writes it as it ends)
                state = read_state(run_dir).model_copy(update={"status": "interrupted", "stopped_by": why})
                write_state(run_dir, state)
                return state
            except RunError as e:
                state = read_state(run_dir).model_copy(update={"status": "failed", "stopped_by": str(e)[:300]})
                write_state(run_dir, state)
                raise RunError(f"{e}; once that is mended, carry the verify on with `stibium verify {state.target} "
                               f"--resume {run_dir}`", e.exit_code) from None
    finally:
        restore(previous)
    if not state.keep:
        shutil.rmtree(folder, ignore_errors=True)
    state = state.model_copy(update={"status": "complete", "removed": not state.keep})
    write_state(run_dir, state)
    return state


def _write(run_dir: Path, state: VerifyState, helper: Any, folder: Path, say: Callable[[str], None]) -> VerifyState:
    for i, f in enumerate(state.files):
        if f.written:
            continue
        state, result = _attempt(run_dir, state, helper, folder, i, "write")
        if not result.ok:
            raise RunError(f"writing {folder / f.name}: {result.error}", 1)
        state = _update(state, i, written=True, write_seconds=float(result.data.get("seconds", 0.0)),
                        sync_seconds=float(result.data.get("sync_seconds", 0.0)))
        if i == 0 or state.direct_honoured is None:     # one file system: its first file's answer
            honoured = result.data.get("direct_honoured")
            fs_type = name_word(str(result.data.get("fs_type", "")), 31)
            state = state.model_copy(update={"direct_honoured": honoured if isinstance(honoured, bool) else None,
                                             "fs_type": fs_type})
        write_state(run_dir, state)
        say(f"written {i + 1} of {len(state.files)} files ({(f.first_block + f.blocks) * state.block_bytes:,} bytes)")
    return state


def _evict(run_dir: Path, state: VerifyState, helper: Any, folder: Path, say: Callable[[str], None]) -> VerifyState:
    """Every file out of the page cache, and how many of its pages stayed (0 on every file: proven empty)."""
    if state.evicted:
        return state
    resident = 0
    for f in state.files:
        result = helper.call(["evict", "--path", str(folder / f.name)], timeout_s=600)
        if not result.ok:
            raise RunError(f"emptying the page cache of {folder / f.name}: {result.error}", 1)
        resident += int(result.data.get("resident_after_pages", 0))
    state = state.model_copy(update={"evicted": True, "resident_pages_after": resident})
    write_state(run_dir, state)
    say("the page cache emptied of every file" + ("" if not resident else f" but {resident:,} pages"))
    return state


def _read(run_dir: Path, state: VerifyState, helper: Any, folder: Path, say: Callable[[str], None]) -> VerifyState:
    for i, f in enumerate(state.files):
        if f.checked is not None:
            continue
        state, result = _attempt(run_dir, state, helper, folder, i, "read")
        if not result.ok:
            raise RunError(f"reading {folder / f.name} back: {result.error}", 1)
        d = result.data
        checked = FileResult.model_validate({
            "ok": int(d["ok"]), "moved": int(d["moved"]), "corrupt": int(d["corrupt"]),
            "unreadable": int(d["unreadable"]), "period_blocks": int(d.get("period_blocks", 0)),
            "bad": list(d.get("bad", []))[:BAD_KEPT], "seconds": float(d.get("seconds", 0.0))})
        state = _update(state, i, checked=checked)
        write_state(run_dir, state)
        say(f"read back {i + 1} of {len(state.files)} files")
    return state
