"""What a plan says of a tree test: its pydantic model, every key described (docs/plan-format.md is made from it)."""

from __future__ import annotations

from typing import Literal, Union

from pydantic import Field, StrictInt, model_validator

from ...plan.model import LogUniform, Size, TestBase, not_shared
from .shape import TREE_PHASES

MAX_TREE_FILES = 1_000_000
TreePhase = Literal[TREE_PHASES]  # type: ignore[valid-type]


class TreeTest(TestBase):
    """A tree of files, phase by phase: created and written, stat-ed, listed, read, copied, renamed, deleted; each
    phase of each trial one measurement (a whole phase in one helper invocation), files per second its rate."""

    kind: Literal["tree"] = Field(description="tree: a folder tree of many files, phase by phase")
    files: int = Field(ge=1, le=MAX_TREE_FILES, description="files in the tree, such as 10000")
    file_size: Union[Size, list[Size], LogUniform] = Field(
        description="each file's size: one size (16KB), a list each file draws from ([4KB, 16KB]), or {from, to}: "
        "drawn log-uniformly between the two")
    dirs: int = Field(1, ge=1, le=MAX_TREE_FILES, description="folders the files are spread over, in turn")
    depth: int = Field(1, ge=1, le=16, description="levels of folders above each file (the fan-out follows from "
                       "dirs: 256 folders at depth 2 are 16 folders of 16)")
    name_bytes: int = Field(12, ge=8, le=1024, description="the length of every file's name in bytes, such as 12 "
                            "(IMG_0001.JPG) or 60 (a mail store's); longer than the target allows is refused")
    threads: Union[StrictInt, list[StrictInt]] = Field(
        1, description="threads, each with its own run of the files (a run of folders), 1 to 64, or a list")
    trials: int = Field(6, ge=1, le=1000, description="repeats of every phase at every thread count, each on a "
                        "tree of its own (6, the fewest whose range is a 95 % interval of the median)")
    phases: list[TreePhase] = Field(
        list(TREE_PHASES), description="create | stat | list | read | copy | rename | delete, run in this order on "
        "each trial's tree; create is needed (the others work on its files). copy: the tree copied file by file as "
        "the platform copies (a clone where the file system can: the report says how many)")
    sync: Literal["each", "end", "none"] | None = Field(  # type: ignore[assignment]
        None, description="create: each (every file synced before its close, as an app that saves safely) | end "
        "(every file synced after the last one is written, inside the timed phase; the default) | none")
    engine: Literal["posix", "foundation"] | None = Field(  # type: ignore[assignment]
        None, description="posix (the default): open, write, close, stat, readdir, rename, unlink, as C code calls "
        "them | foundation: what a Mac app calls, NSData writeToFile:atomically: (a temporary file renamed over the "
        "name) and NSFileManager, on one thread (on Linux: GNUstep Base)")
    between: Literal["none", "drop-caches"] = Field(
        "none", description="before each phase after create: none (the phase meets the folders and inodes the one "
        "before left in memory) | drop-caches (the kernel's caches emptied; root)")

    _own_files = model_validator(mode="after")(lambda self: not_shared(self, "tree"))

    @model_validator(mode="after")
    def summarise(self) -> "TreeTest":
        if self.fill not in (None, "random"):
            raise ValueError("a tree's files hold random data (fill: random); leave fill out")
        if self.clients.read_from != "own":
            raise ValueError("clients.read_from: other is for pattern and files tests; a tree's phases work on "
                             "the client's own tree")
        if len(set(self.phases)) != len(self.phases):
            raise ValueError("each phase once: phases lists one twice")
        if "create" not in self.phases:
            raise ValueError("phases needs create: the other phases work on the files it makes")
        if list(self.phases) != sorted(self.phases, key=TREE_PHASES.index):
            raise ValueError(f"phases run in the order {', '.join(TREE_PHASES)}; list them in it")
        threads = [self.threads] if isinstance(self.threads, int) else self.threads
        if self.engine == "foundation" and max(threads, default=1) > 1:
            raise ValueError("the foundation engine saves on one thread, as an app's own code does; use threads: 1 "
                             "(or engine: posix for more)")
        if self.dirs > self.files:
            raise ValueError(f"dirs ({self.dirs}) is more than files ({self.files}): every folder holds a file")
        return self

