"""The order of each kind's operations: what the driver does for one test, step by step (its writes, what
comes between, its reads; a pattern test's layout, preconditioning and rounds; a sustained test's stream; a
tree's phases), handed to the driver by kind (ORDERS), with whether the test's files may wait for the end of
the run to be removed and whether it wears the drive. An order is a function of the driver's steps (Steps),
so a kind brings its own order without being a method of the driver."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Protocol

from rich.console import Console

from ..analysis.steady import steadiness
from ..helper import precondition_args, tree_args
from ..kinds import by_kind
from ..measurement import Measurement
from ..op import Op
from ..plan import ExpandedTest
from ..preflight import drop_caches
from ..record import RunRecord
from ..sharing import Place
from ..table import Table
from ..tree import TreeShape
from ..units import format_bytes
from ..workdir import WorkDir


class Steps(Protocol):
    """What an order asks of the driver (driver.Driver)."""

    done: set[int]
    run: RunRecord
    work: WorkDir
    place: Place
    crew: Any
    console: Console
    rounds: dict[str, list[Measurement]]
    temperature: Any
    temperature_said: bool
    skip: Callable[[list[Op]], None]

    def step(self) -> None: ...
    def measure(self, op: Op) -> None: ...
    def measure_phase(self, op: Op, tree: str, root: Path, list_path: Path, dropped: bool) -> None: ...
    def ensure_file(self, op: Op, test: ExpandedTest) -> None: ...
    def evict(self, op: Op, test: ExpandedTest) -> None: ...
    def helper_ok(self, args: list[str]) -> dict[str, Any]: ...


def files_order(d: Steps, test: ExpandedTest) -> str:
    """The writes, then `between` (none, evict, drop-caches, or a stop for a reboot), then the reads."""
    writes = [o for o in test.ops if o.op == "write"]
    reads = [o for o in test.ops if o.op == "read"]
    for op in writes:
        if op.seq not in d.done:
            d.measure(op)
    pending = [o for o in reads if o.seq not in d.done]
    if not pending:
        return "complete"
    if test.between == "reboot" and not d.run.rebooted:
        return "waiting-for-reboot"
    for op in pending:       # files lost to an interruption are laid out again, unmeasured
        d.ensure_file(op, test)
    d.step()
    if test.between == "evict":
        for op in pending:
            d.evict(op, test)
    elif test.between == "drop-caches":
        drop_caches()
    for op in pending:
        d.measure(op)
    return "complete"


def pattern_order(d: Steps, test: ExpandedTest) -> str:
    """The laid-out file (and, asked for, its preconditioning), then the trials, each read trial meeting an
    evicted file; a test by rounds stops at the first round that ends a steady window (asked before each round,
    so a resumed run stops where it would have)."""
    if test.precondition_bytes and not any(o.seq in d.done for o in test.ops):
        _precondition(d, test)
    this_round = None
    for op in test.ops:
        if op.seq in d.done:
            continue
        if op.steady_window and op.trial != this_round:
            this_round = op.trial
            if op.trial >= op.steady_window and _steady(d, test):
                d.skip([o for o in test.ops if o.trial >= op.trial and o.seq not in d.done])
                break
        if op.existing:
            d.ensure_file(op, test)
        if op.reads:
            d.step()
            d.evict(op, test)
        d.measure(op)
        if not op.existing:
            d.work.unlink(d.place.touch(op, test).file)
    return "complete"


def _steady(d: Steps, test: ExpandedTest) -> bool:
    """Whether the rounds so far end a window in which every point is steady (analysis/steady.py), judged
    on rank 0 over every rank's rows (their aggregate), the same verdict on every rank."""
    d.step()                         # many clients: every rank's rows reach rank 0
    found = None
    if d.crew.leads:
        rows = Table.from_rows(d.rounds[test.name]).valid()
        if d.crew.many:
            from ..analysis.clients import aggregate
            rows = aggregate(rows, d.crew.team.size)
        judged = steadiness(rows)
        found = judged is not None and judged.steady
        if found:
            first, last = judged.window_rounds
            d.console.print(f"{test.name}: steady over rounds {first}-{last}; the rounds stop there")
    return bool(d.crew.team.share(found))


def _precondition(d: Steps, test: ExpandedTest) -> None:
    """The span written twice sequentially (untimed, not a measurement) before the test's first measurement:
    SNIA PTS's workload-independent preconditioning, so that the measurements meet written flash."""
    first = test.ops[0]
    d.ensure_file(first, test)
    d.step()                         # many clients: a shared file is laid out before anyone writes it
    touch = d.place.touch(replace(first, op="write"), test)
    started = time.monotonic()
    for _ in range(2):
        d.helper_ok(precondition_args(d.work.file(touch.file), first.size_bytes, touch.offset_bytes,
                                      first.engine, first.fill, first.data_seed))
    if d.crew.leads:
        d.console.print(f"{test.name}: preconditioned: the span ({format_bytes(first.size_bytes)}) written "
                        f"twice sequentially in 128 KiB requests, {time.monotonic() - started:.1f} s")


def sustained_order(d: Steps, test: ExpandedTest) -> str:
    """The files one after another, each streamed in chunks with the drive's temperature beside each chunk;
    then, with read_back, each file evicted and read back the same way."""
    if not d.temperature_said:          # said once a run
        d.temperature_said = True
        if d.temperature.read() is None:
            d.console.print("The drive's temperature cannot be read on this machine (the system reports no "
                            "sensor for this disk, and smartctl is not installed or cannot ask it); the "
                            "temperature column stays empty.")
    for op in test.ops:
        if op.seq in d.done:
            continue
        if op.op == "read":
            d.ensure_file(op, test)
            d.step()
            d.evict(op, test)
        d.measure(op)
    return "complete"


def tree_order(d: Steps, test: ExpandedTest) -> str:
    """Each tree (a trial at a thread count) phase by phase, each phase one helper call over the tree's list;
    with between: drop-caches the kernel's caches emptied before each phase after create. A tree whose
    earlier phases an interruption left behind is made again, untimed, to the state its next phase meets;
    every tree is removed when its phases are done."""
    shape = test.tree
    assert shape is not None
    phases = [o.op for o in test.ops if o.file == test.ops[0].file]
    with tempfile.TemporaryDirectory(prefix="stibium-tree-") as folder:
        lists: dict[str, Path] = {}

        def listed(which: str) -> Path:       # plain (the names made), rename (old, new), renamed, copy
            if which not in lists:
                lists[which] = Path(folder) / f"{which}.tsv"
                lists[which].write_text(shape.list_text(renamed=which == "renamed", rename=which == "rename",
                                                        copy=which == "copy"))
            return lists[which]

        def list_for(phase: str) -> Path:
            return listed("rename" if phase == "rename" else "copy" if phase == "copy" else
                          "renamed" if phase == "delete" and "rename" in phases else "plain")

        trees: dict[str, list[Op]] = {}
        for op in test.ops:
            trees.setdefault(op.file, []).append(op)
        for ops in trees.values():
            pending = [o for o in ops if o.seq not in d.done]
            if not pending:
                continue
            tree = d.place.touch(pending[0], test).file
            root = d.work.path / tree
            if pending[0].op == "create":
                d.work.remove_files(_tree_files(tree, shape))     # what an interrupted create left
                root.mkdir(parents=True, exist_ok=True)           # the folders below it are the phase's
            else:
                _restore_tree(d, pending[0], tree, shape, phases, listed)
            for op in pending:
                if op.op == "copy":                # what an interrupted copy left
                    d.work.remove_files({f"{tree}/{p}" for p in shape.copies()})
                dropped = op.op != "create" and test.between == "drop-caches"
                if dropped:
                    d.step()
                    drop_caches()
                d.measure_phase(op, tree, root, list_for(op.op), dropped)
            if not d.run.keep_files:
                d.work.remove_files(_tree_files(tree, shape))  # the files (delete left the folders)
    return "complete"


def _tree_files(tree: str, shape: TreeShape) -> set[str]:
    """Every name a tree's files can have, made, renamed or copied, inside the run's test folder."""
    return {f"{tree}/{p}" for p in (*shape.paths(), *shape.paths(renamed=True), *shape.copies())}


def _restore_tree(d: Steps, op: Op, tree: str, shape: TreeShape, phases: list[str],
                  listed: Callable[[str], Path]) -> None:
    """The tree as the phase `op` meets it (its names before a rename, after it for the delete that follows
    one), made again untimed where an interruption lost it."""
    renamed = op.op == "delete" and "rename" in phases
    root = d.work.path / tree
    if all((root / p).is_file() for p in shape.paths(renamed)):
        return
    d.work.remove_files(_tree_files(tree, shape))
    root.mkdir(parents=True, exist_ok=True)
    d.helper_ok(tree_args(op, root, listed("plain"), phase="create"))
    if renamed:
        d.helper_ok(tree_args(op, root, listed("rename"), phase="rename"))


@dataclass(frozen=True)
class Order:
    """How the driver carries out one kind of test: its operations in order (the test's status back:
    complete, or waiting-for-reboot), whether its files may wait for the end of the run to be removed, and
    whether it wears the drive enough to say so before the run."""

    run: Callable[[Any, ExpandedTest], str]
    files_wait_for_end: bool
    wears_drive: bool


ORDERS = by_kind("runner: the order of a test's operations", {
    "files": Order(files_order, files_wait_for_end=True, wears_drive=False),
    "pattern": Order(pattern_order, files_wait_for_end=True, wears_drive=False),
    # a sustained test's files can fill most of the disk: they never wait for the end of the run
    "sustained": Order(sustained_order, files_wait_for_end=False, wears_drive=True),
    # each tree is removed when its phases are done (its files are many inodes, whatever their bytes)
    "tree": Order(tree_order, files_wait_for_end=False, wears_drive=False),
})
