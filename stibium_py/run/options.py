"""What a run is given and what it hands back: the options of the command, the plan read once, how the run
ended (with its test files' removal where that goes on beside the report), and the facts of the plan's
expansion that run.json keeps."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..machine import memory
from .helper import CompiledHelper, HelperError, HelperFactory, find_helper
from ..plan import Expanded, ExpandedTest, Plan, load_plan
from ..plan.expand import PlanFiles
from .jobs import kept_files
from .preflight import RunError
from ..rundir.record import RunStatus


@dataclass(frozen=True)
class RunOptions:
    target: Path | None = None
    out_dir: Path = Path("reports")
    seed: int | None = None
    keep_files: bool = False
    allow_nonempty: bool = False
    # the target may be a file system's root or the home folder (`stibium verify`: the person names the drive)
    whole_drive: bool = False
    progress: bool = True
    run_name: str | None = None      # a run of a series: its fixed name inside out_dir (run-1, run-2, ...)
    # a complete run's test files removed in the background, beside the caller's report (Finished.removal);
    # the caller waits for it (Finished.wait_for_removal) before it ends or starts another run
    remove_beside_report: bool = False
    # called with the run directory when a run ends complete or interrupted, its run.json written (the history
    # records it: history/remember.py); never by a rank other than 0
    on_end: Callable[[Path], None] | None = None
    link_bytes_per_s: float | None = None     # --link-rate: a person's word for the link to a store across a network
    # resume: this machine's history database, asked whether a run was started here (None: not asked)
    history_db: Path | None = None


class Removal:
    """A complete run's test files being removed in a thread of their own. Unlinking is kernel work (a TRIM
    where the file system is mounted with discard) that needs no Python, so it goes on while the report is
    built; the run's status is written before it starts."""

    def __init__(self, remove: Callable[[], None]):
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._remove, args=(remove,), name="stibium-removal")
        self.thread.start()

    def _remove(self, remove: Callable[[], None]) -> None:
        try:
            remove()
        except BaseException as e:         # raised where the caller waits
            self.error = e

    def wait(self) -> None:
        self.thread.join()
        if self.error is not None:
            error, self.error = self.error, None
            raise error


@dataclass(frozen=True)
class Finished:
    """Where a run (or a series) is, and how it ended: complete, interrupted, waiting-for-reboot, failed."""

    path: Path
    status: RunStatus
    removal: Removal | None = None          # its test files still being removed (RunOptions.remove_beside_report)

    def wait_for_removal(self) -> None:
        if self.removal is not None:
            self.removal.wait()


@dataclass(frozen=True)
class LoadedPlan:
    """A plan read and checked once per command (plan.load_plan), with where it came from."""

    source: Path
    plan: Plan
    text: str
    # a run directory whose kept copies of the files the plan names (fio job files, replay traces) serve in place of
    # files beside the plan: a series resumed (its first run's: its plan and files come from that record, never from
    # a path a received run.json names), a run `history check --confirm` makes (the suspect run's), run --files-from
    files_from: Path | None = None

    @classmethod
    def read(cls, source: Path) -> "LoadedPlan":
        plan, text = load_plan(source)
        return cls(source, plan, text)

    def named_files(self) -> PlanFiles | None:
        """What reads the files the plan names: files_from's kept copies, or None for the files beside the plan."""
        return None if self.files_from is None else kept_files(self.files_from)


def test_facts(test: ExpandedTest) -> dict[str, Any]:
    """A test as run.json's `expanded.tests` keeps it (resume reads free_bytes back)."""
    return {"name": test.name, "kind": test.kind, "between": test.between, "layout_file": test.layout_file,
            "layout_bytes": test.layout_bytes, "files_bytes": test.files_bytes, "ops": len(test.ops),
            **({"free_bytes": test.free_bytes} if test.free_bytes is not None else {})}


def expanded_facts(expanded: Expanded, digest: str, keep_files: bool, clients: int) -> dict[str, Any]:
    """run.json's `expanded`: each test, the count and digest of the operations, and the bytes of every client."""
    return {"tests": [test_facts(t) for t in expanded.tests], "ops_count": len(expanded.ops), "ops_sha256": digest,
            "memory_shapes": len(memory.shapes_of(expanded.ops)), "bytes_written": expanded.bytes_written * clients,
            "space_needed_bytes": expanded.space_needed_bytes(keep_files) * clients}


def helpers_of(given: HelperFactory | None) -> HelperFactory:
    """The helper a run is given (a test's fake), else the compiled one found here, or one line saying why not."""
    if given is not None:
        return given
    try:
        return CompiledHelper(find_helper())
    except HelperError as e:
        raise RunError(str(e), 2) from None
