"""What is checked of a tree test before anything is written (KindSpec.refusal): names, paths and inodes the
target's file system must allow for every tree at once."""

from __future__ import annotations

import os
from pathlib import Path

from ...plan.expand import ExpandedTest
from .shape import TreeShape


def tree_refusal(name: str, files: int, folders: int, name_bytes: int, path_bytes: int, inodes_free: int | None,
                 name_max: int | None, path_max: int | None) -> str | None:
    """Why a tree test cannot run on the target, or None: more files and folders at once than the file system has
    inodes left (None: it sets no count, as btrfs), names or paths longer than it allows."""
    if name_max is not None and name_bytes > name_max:
        return (f"tree test {name!r}: names of {name_bytes} bytes are longer than the target's file system allows "
                f"({name_max} bytes); lower name_bytes to {name_max} or less")
    if path_max is not None and path_bytes >= path_max:
        return (f"tree test {name!r}: its deepest path is {path_bytes} bytes, and the target allows {path_max - 1}; "
                f"lower depth or name_bytes, or choose a target with a shorter path")
    if inodes_free is not None and files + folders > inodes_free:
        return (f"tree test {name!r}: makes {files + folders:,} files and folders at once, but the target's file "
                f"system has {inodes_free:,} inodes free; lower files (or clients), or choose another --target")
    return None


# the run's test folder, at its longest: stibium-, the plan's name, the host's (up to 64), the time, .noindex
def _work_dir_bytes(plan_name: str) -> int:
    return len("stibium-") + len(plan_name) + 1 + 64 + len("-20261124T214718Z") + len(".noindex")


def refusal(test: ExpandedTest, target: Path, clients: int, plan_name: str) -> str | None:
    """Why the target cannot hold a tree test (tree_refusal), before anything is written; None where it can."""
    assert isinstance(test.tree, TreeShape)
    existing = target.expanduser().absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    st = os.statvfs(existing)
    inodes_free = st.f_favail if st.f_files else None
    limits: dict[str, int | None] = {}
    for key in ("PC_NAME_MAX", "PC_PATH_MAX"):
        try:
            limits[key] = os.pathconf(existing, key)
        except (OSError, ValueError):
            limits[key] = None
    shape = test.tree
    # the helper opens each file by its whole path: target, the run's folder, the tree's folder, the file
    path_bytes = len(os.fsencode(target.expanduser().absolute())) + 1 + _work_dir_bytes(plan_name) + 1 + \
        len(test.ops[0].file) + (len("client-0/") if clients > 1 else 0) + 1 + shape.longest_path()
    folders = sum(shape.fan_out ** level for level in range(1, shape.depth)) + shape.dirs + 2
    return tree_refusal(test.name, shape.files * clients, folders * clients, shape.name_bytes, path_bytes,
                        inodes_free, limits["PC_NAME_MAX"], limits["PC_PATH_MAX"])
