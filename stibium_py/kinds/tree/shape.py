"""A tree of files as a tree test shapes it (plan/model.py `TreeTest`): its folders, its files' names and sizes,
every size drawn from the seed, and the lists the helper's `tree` command reads (docs/helper-protocol.md). Pure:
the expansion counts its bytes from it, the runner writes its lists and removes exactly its files."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

EXTENSION = ".dat"
# a tree test's phases, in the order they run on each tree
TREE_PHASES = ("create", "stat", "list", "read", "copy", "rename", "delete")
COPY_FOLDER = "copy"          # the copy phase's copies: the tree again inside this folder of the tree


def rate_unit(phase: str) -> str:
    """What a phase's rate counts per second: names (list reads folders and counts what they hold), else files."""
    return "names" if phase == "list" else "files"


@dataclass(frozen=True)
class TreeShape:
    """What a tree is made of: files spread in turn over `dirs` folders `depth` levels deep, each name
    `name_bytes` long, each size one of `choices` (drawn) or log-uniform between `low_bytes` and `high_bytes`."""

    files: int
    dirs: int
    depth: int
    name_bytes: int
    choices: tuple[int, ...]         # the sizes a file draws from (one: every file that size); empty: log-uniform
    low_bytes: int
    high_bytes: int
    seed: int

    @property
    def fan_out(self) -> int:
        """Folders in each folder above the files: the smallest f with f ** depth >= dirs."""
        f = max(1, math.ceil(self.dirs ** (1 / self.depth)))
        while f ** self.depth < self.dirs:
            f += 1
        while f > 1 and (f - 1) ** self.depth >= self.dirs:
            f -= 1
        return f

    @property
    def shortest_name(self) -> int:
        """The shortest name that holds every file's number: f, the digits, the extension."""
        return 1 + len(str(self.files - 1)) + len(EXTENSION)

    @cached_property
    def sizes(self) -> np.ndarray:
        """Each file's size in bytes, by file number."""
        rng = np.random.default_rng(self.seed)
        if len(self.choices) == 1:
            return np.full(self.files, self.choices[0], dtype=np.int64)
        if self.choices:
            return np.asarray(self.choices, dtype=np.int64)[rng.integers(0, len(self.choices), self.files)]
        drawn = np.exp(rng.uniform(np.log(self.low_bytes), np.log(self.high_bytes), self.files))
        return np.clip(np.rint(drawn), self.low_bytes, self.high_bytes).astype(np.int64)

    @property
    def total_bytes(self) -> int:
        return int(self.sizes.sum())

    def folder(self, k: int) -> str:
        """The k-th folder (0 <= k < dirs): its digits in base fan_out, one level each."""
        fan = self.fan_out
        width = len(str(fan - 1))
        digits = []
        for _ in range(self.depth):
            k, d = divmod(k, fan)
            digits.append(f"d{d:0{width}d}")
        return "/".join(reversed(digits))

    def name(self, j: int, renamed: bool = False) -> str:
        """File j's name: f (r once renamed), its number, padded to name_bytes, the extension."""
        digits = f"{j:0{len(str(self.files - 1))}d}"
        stem = ("r" if renamed else "f") + digits
        return stem + "_" * (self.name_bytes - len(stem) - len(EXTENSION)) + EXTENSION

    def order(self) -> list[int]:
        """The files in list order: folder by folder (file j lives in folder j mod dirs), so that each thread's
        run of the list is a run of folders, as a checkout or an import writes them."""
        return [j for k in range(self.dirs) for j in range(k, self.files, self.dirs)]

    def paths(self, renamed: bool = False) -> list[str]:
        """Every file's path inside the tree, in list order."""
        folders = [self.folder(k) for k in range(self.dirs)]
        return [f"{folders[j % self.dirs]}/{self.name(j, renamed)}" for j in self.order()]

    def copies(self) -> list[str]:
        """Every file's copy (the copy phase's), in list order."""
        return [f"{COPY_FOLDER}/{p}" for p in self.paths()]

    def list_text(self, renamed: bool = False, rename: bool = False, copy: bool = False) -> str:
        """The helper's list: SIZE<TAB>PATH per file (renamed: the names after the rename); with rename, each
        line's new name after a second tab, with copy its copy's."""
        sizes = self.sizes
        order = self.order()
        old = self.paths(renamed)
        if rename or copy:
            new = self.paths(renamed=True) if rename else self.copies()
            return "".join(f"{sizes[j]}\t{a}\t{b}\n" for j, a, b in zip(order, old, new))
        return "".join(f"{sizes[j]}\t{a}\n" for j, a in zip(order, old))

    def longest_path(self) -> int:
        """Bytes of the longest path inside the tree (a copy's: its folder, the folders, slashes, the name)."""
        return len(COPY_FOLDER) + 1 + len(self.folder(0)) + 1 + self.name_bytes
