"""What a tracer's lines are read into (strace's, fs_usage's): the calls kept, the files they name relative to the
recorded folder, how each file was used, and the calls on files outside it; and the one rule by which a path is a
file of the folder or outside it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .model import Call, TraceFile


@dataclass
class Parsed:
    """What a trace's builder needs of strace's lines: the calls, the files they name (relative to the folder),
    how each file was used (as a folder or not), the calls on files outside the folder."""

    calls: list[Call] = field(default_factory=list)
    paths: dict[str, int] = field(default_factory=dict)         # relative path -> file index
    names: list[str] = field(default_factory=list)              # file index -> relative path
    folders: set[str] = field(default_factory=set)
    outside: int = 0
    first_s: float | None = None        # strace's clock at the first call kept


def file_in(out: Parsed, root: str, path: str, folder: bool) -> int | None:
    """The index of a file inside the folder `root` (its parents counted as folders), None outside it."""
    path = os.path.normpath(path)
    if path == root:
        rel = "."
    elif path.startswith(root.rstrip("/") + "/"):
        rel = path[len(root.rstrip("/")) + 1:]
    else:
        return None
    if folder:
        out.folders.add(rel)
    parts = rel.split("/")
    for k in range(1, len(parts)):
        out.folders.add("/".join(parts[:k]))
    if rel not in out.paths:
        out.paths[rel] = len(out.names)
        out.names.append(rel)
    return out.paths[rel]


def files_of(parsed: Parsed, sizes: dict[str, int]) -> tuple[tuple[TraceFile, ...], dict[str, str]]:
    """The trace's files in the order the calls named them, then the folders above them that no call named (a file
    made in a folder that was there: the replay makes that folder first), each name replaced by a token (the same
    name, the same token: n1, n2...), the folders kept as they nest; sizes: each relative path's size before the
    program ran (folders as 0; a path not in it did not exist). Also the map from each real relative path to its
    token."""
    tokens: dict[str, str] = {}
    anonymous: dict[str, str] = {}
    above = sorted(f for f in parsed.folders if f not in parsed.paths)
    for rel in (*parsed.paths, *above):
        if rel == ".":
            anonymous[rel] = "."
            continue
        anonymous[rel] = "/".join(tokens.setdefault(part, f"n{len(tokens) + 1}") for part in rel.split("/"))
    # the recorded folder itself is a folder however the calls used it (a stat of "." says nothing of its kind)
    files = tuple(TraceFile(anonymous[rel], rel in parsed.folders or rel == ".", sizes.get(rel))
                  for rel in (*parsed.paths, *above))
    return files, anonymous
