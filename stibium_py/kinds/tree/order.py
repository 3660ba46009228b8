"""The order the driver carries out a tree test's operations in: a function of the driver's steps (run/orders.Steps)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

from .rows import from_tree_answer, tree_args
from ...rundir.op import Op
from ...plan.expand import ExpandedTest
from ...run.preflight import drop_caches
from ...run.orders import Order, Steps
from .shape import TreeShape, rate_unit
from ...units import format_per_s


def order(d: Steps, test: ExpandedTest) -> str:
    """Each tree (a trial at a thread count) phase by phase, each phase one helper call over the tree's list;
    with between: drop-caches the kernel's caches emptied before each phase after create. A tree whose
    earlier phases an interruption left behind is made again, untimed, to the state its next phase meets;
    every tree is removed when its phases are done."""
    shape = test.tree
    assert isinstance(shape, TreeShape)
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
                d.work.folder(tree)                               # the folders below it are the phase's
            else:
                _restore_tree(d, pending[0], tree, shape, phases, listed)
            for op in pending:
                if op.op == "copy":                # what an interrupted copy left
                    d.work.remove_files({f"{tree}/{p}" for p in shape.copies()})
                dropped = op.op != "create" and test.between == "drop-caches"
                if dropped:
                    d.step()
                    drop_caches()
                d.work.folder(tree)             # not a link: the helper's tree phases open plain paths below it
                _measure_phase(d, replace(op, file=tree), root, list_for(op.op), dropped)
            if not d.run.keep_files:
                d.work.remove_files(_tree_files(tree, shape))  # the files (delete left the folders)
    return "complete"



def _measure_phase(d: Steps, op: Op, root: Path, list_path: Path, dropped: bool) -> None:
    """One phase of a tree (its op's file the tree's folder): one helper call, one row."""
    d.measure_with(op, tree_args(op, root, list_path), None,
                   lambda ok, answer, started_s: from_tree_answer(op, ok, answer, started_s, dropped),
                   what=f"{op.op} of the tree {op.file}", rate_said=lambda m: (
                       format_per_s(op.phase.files / m.seconds, rate_unit(op.op)) if op.phase and m.seconds else ""))


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
    d.work.folder(tree)
    d.helper_ok(tree_args(op, root, listed("plain"), phase="create"))
    if renamed:
        d.helper_ok(tree_args(op, root, listed("rename"), phase="rename"))


# each tree is removed when its phases are done (its files are many inodes, whatever their bytes)
ORDER = Order(order, files_wait_for_end=False, wears_drive=False, kept_when_cut=False)
