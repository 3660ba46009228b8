"""The run's test folder inside the target (`stibium-<run>`, `stibium-<run>.noindex` on macOS): created with a
marker file that says whose it is, and emptied at the end of exactly the files the plan names (and the
folder views the Finder leaves), so that clean-up can never touch anything else in the target."""

from __future__ import annotations

from pathlib import Path

from .plan import ExpandedTest
from .preflight import FOLDER_VIEW_FILES, WORK_MARKER

# macOS: Spotlight does not index a folder whose name ends in .noindex, so its indexer does not read the
# test files during a run (Apple's convention; it is the only per-folder switch a user without admin rights has)
NO_INDEX_SUFFIX = ".noindex"


def work_dir_name(base: str, platform: str) -> str:
    """The test folder's name: stibium-<base>, with .noindex on macOS."""
    return f"stibium-{base}" + (NO_INDEX_SUFFIX if platform == "darwin" else "")


class WorkDir:
    def __init__(self, path: Path, run_name: str):
        self.path = path
        self.run_name = run_name

    def create(self, parents: bool = False) -> None:
        self.path.mkdir(parents=parents)
        (self.path / WORK_MARKER).write_text(f"stibium test files of run {self.run_name}; safe to delete\n")

    def file(self, name: str) -> Path:
        """A test file's path, its folder created."""
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def holds_whole(self, name: str, size_bytes: int) -> bool:
        path = self.path / name
        return path.is_file() and not path.is_symlink() and path.stat().st_size == size_bytes

    def unlink(self, name: str) -> None:
        unlink(self.path / name)

    def remove_test_files(self, test: ExpandedTest) -> None:
        names = {o.file for o in test.ops} | ({test.layout_file} if test.layout_file else set())
        for name in names:
            self.unlink(name)
        for name in sorted({str(Path(n).parent) for n in names}, key=len, reverse=True):
            if name not in (".", ""):
                try:
                    (self.path / name).rmdir()
                except OSError:
                    pass

    def remove(self) -> None:
        """The folder itself, once its test files are gone (left in place if anything else is in it)."""
        for name in (WORK_MARKER, *FOLDER_VIEW_FILES):
            unlink(self.path / name)
        try:
            self.path.rmdir()
        except OSError:
            pass


def unlink(path: Path) -> None:
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
    except FileNotFoundError:
        pass
