"""The run's test folder inside the target (`stibium-<run>`, `stibium-<run>.noindex` on macOS): created with a
marker file that says whose it is, and emptied at the end of exactly the files the plan names (and the
folder views the Finder leaves), so that clean-up can never touch anything else in the target."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

from ..errors import RunError
from .preflight import FOLDER_VIEW_FILES, WORK_MARKER

# macOS: Spotlight does not index a folder whose name ends in .noindex, so its indexer does not read the
# test files during a run (Apple's convention; it is the only per-folder switch a user without admin rights has)
NO_INDEX_SUFFIX = ".noindex"


def work_dir_name(base: str, platform: str) -> str:
    """The test folder's name: stibium-<base>, with .noindex on macOS."""
    return f"stibium-{base}" + (NO_INDEX_SUFFIX if platform == "darwin" else "")


def made_for(work: Path, target: str | None, run_name: str) -> str | None:
    """Why `work` (a run.json's work_dir) is not the test folder stibium makes for the run `run_name`, or None
    where it is: a folder stibium-<name> directly inside a folder that exists and that the recorded target names,
    the path written as it resolves (no .., no link on the way), and, where the folder exists, a folder (not a
    link) that is empty or holds the marker of exactly this run (the marker is what proves stibium made it). A run directory comes from strangers: before a resume writes into or removes
    anything in a test folder, the folder must be one stibium made for that run."""
    text = str(work)
    if not work.is_absolute() or os.path.normpath(text) != text:
        return "not an absolute path written plainly"
    if not re.fullmatch(r"stibium-[A-Za-z0-9._-]{1,250}", work.name):
        return "its name is not a stibium test folder's (stibium-<run>)"
    # the target as the run was given it (it may have been relative to where stibium started): the folder it names
    # ("." and "/" name no folder by name: "" after normpath)
    if target is None or Path(os.path.normpath(os.path.expanduser(target))).name not in ("", work.parent.name):
        return "it is not directly inside the run's target"
    if not work.parent.is_dir() or os.path.realpath(work.parent) != str(work.parent):
        return "the run's target is not a folder here"
    try:
        mode = os.lstat(work).st_mode
    except FileNotFoundError:
        return None                      # gone: the resume makes it again, inside the target
    except OSError as e:
        return f"it cannot be examined ({e.strerror})"
    if not stat.S_ISDIR(mode):
        return "it is not a folder"
    marker = work / WORK_MARKER
    try:
        if not os.listdir(work):
            return None                  # empty: nothing in it to lose; the resume marks it and uses it
    except FileNotFoundError:
        return None                      # gone after all (a network mount's cache still showed it)
    except OSError as e:
        return f"it cannot be examined ({e.strerror})"
    try:
        if not stat.S_ISREG(os.lstat(marker).st_mode):
            return f"its {WORK_MARKER} is not a file"
        with open(marker, "rb") as f:
            first = f.read(4096).split(b"\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return f"it holds no {WORK_MARKER} marker"
    if first != _marker_line(run_name):
        return f"its {WORK_MARKER} marker is not this run's"
    return None


def holds_marker(work: Path, run_name: str) -> bool:
    """Whether `work` is a folder (not a link) holding the marker of exactly the run `run_name`, or empty (a clean-up
    that emptied it but could not remove it): the sign, left on this machine's disk and not in the run directory,
    that stibium started that run here."""
    try:
        if not stat.S_ISDIR(os.lstat(work).st_mode):
            return False
        if not os.listdir(work):
            return True
        if not stat.S_ISREG(os.lstat(work / WORK_MARKER).st_mode):
            return False
        fd = os.open(work / WORK_MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            first = f.read(4096).split(b"\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return False
    return first == _marker_line(run_name)


def _marker_line(run_name: str) -> str:
    return f"stibium test files of run {run_name}; safe to delete"


class WorkDir:
    def __init__(self, path: Path, run_name: str):
        self.path = path
        self.run_name = run_name

    def create(self, parents: bool = False, token: str = "") -> None:
        """The folder and its marker; with many clients the marker carries a token that every rank must read
        back (shows), the proof that they share one store."""
        self.path.mkdir(parents=parents)
        self.mark(token)

    def mark(self, token: str = "") -> None:
        (self.path / WORK_MARKER).write_text(_marker_line(self.run_name) + "\n"
                                             + (f"clients: {token}\n" if token else ""))

    def shows(self, token: str, wait_s: float = 3.0) -> bool:
        """Whether this machine sees the marker with the token (a network file system may show a new file a
        moment later: asked again for up to wait_s)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                if f"clients: {token}\n" in (self.path / WORK_MARKER).read_text(errors="replace"):
                    return True
            except OSError:
                pass
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    def file(self, name: str) -> Path:
        """A test file's path, its folders below the test folder created; the test folder itself never: where it
        is gone (another client's rank 0 ended the run and removed it, while this rank was cut off), the run
        cannot go on here, and a file made anew would be left behind."""
        self.folder(str(Path(name).parent))
        return self.path / name

    def folder(self, name: str) -> Path:
        """A folder below the test folder, made where missing, each folder on its way checked as file() says."""
        folder = self.path
        for part in Path(name).parts:
            folder = folder / part
            try:
                folder.mkdir(exist_ok=True)
            except FileNotFoundError:
                raise RunError(f"the test folder {self.path} is gone (removed by another client's end of the run, or "
                               f"from outside); this client stops", 1) from None
            except FileExistsError:     # a file, or a link to one, where the run's folder should be
                pass
            # A folder on the way that someone replaced by a link (a shared target) would lead the helper's writes
            # outside the test folder: said here in stibium's words, before the helper refuses the path itself
            # (it opens test files by paths in which no name may be a link: helper/sb_nolinks.c).
            if folder.is_symlink() or not folder.is_dir():
                raise RunError(f"{folder} is not the run's folder (someone replaced it by a link or a file during "
                               f"the run); this client stops and writes nothing there", 1)
        return folder

    def holds_whole(self, name: str, size_bytes: int) -> bool:
        path = self.path / name
        return path.is_file() and not path.is_symlink() and path.stat().st_size == size_bytes

    def unlink(self, name: str) -> None:
        unlink(self.path / name)

    def remove_files(self, names: set[str]) -> None:
        """Test files by name (sharing.Place.files: every rank's files of a test), then their emptied folders. The
        names of a folder that is not there are skipped with one look at it: a tree test names tens of thousands
        of files in every folder its trees could have (made, renamed, copied), most of them gone already."""
        # Every folder is opened from the test folder down, one name at a time, without following a link
        # (O_NOFOLLOW), and each file removed by its name in the folder so opened (unlinkat): a folder of the
        # test folder that someone replaced by a link during the run (a shared target) leads nowhere outside it.
        # The folders are visited in the order of their names' parts, so that a folder's subfolders come right
        # after it: each is opened once from its parent, held open while they are visited, and removed (once
        # emptied) as the walk leaves it. On a network file system every open of a folder is a round trip;
        # opening each from the test folder down again took a tree test of 59 folders about 540 of them a trial
        # (docs/performance.md).
        by_folder: dict[tuple[str, ...], list[str]] = {}
        for name in names:
            folder, _, leaf = name.rpartition("/")
            by_folder.setdefault(tuple(folder.split("/")) if folder else (), []).append(leaf)
        base = _open_folder(None, str(self.path))
        if base is None:
            return
        walk: list[tuple[str, int | None]] = []      # the folders from the test folder down, open (None: missing)

        def here() -> int | None:
            return walk[-1][1] if walk else base

        def leave() -> None:
            # removed where it is empty, even where it could not be opened (no link is followed by rmdir)
            name, fd = walk.pop()
            if fd is not None:
                os.close(fd)
            parent = here()
            if parent is not None and name not in NOT_NAMES:
                try:
                    os.rmdir(name, dir_fd=parent)
                except OSError:
                    pass

        try:
            for parts in sorted(by_folder):
                kept = 0
                while kept < min(len(walk), len(parts)) and walk[kept][0] == parts[kept]:
                    kept += 1
                while len(walk) > kept:
                    leave()
                for name in parts[kept:]:
                    at = here()
                    walk.append((name, None if at is None else _open_folder(at, name)))
                at = here()
                if at is not None:
                    for leaf in by_folder[parts]:
                        _unlink_at(at, leaf)
            while walk:
                leave()
        finally:
            for _, fd in walk:
                if fd is not None:
                    os.close(fd)
            os.close(base)

    def remove_tree(self, name: str) -> None:
        """A folder below the test folder and everything in it, whatever the names (a replay's trial folder: what the
        program's calls made), walked by descriptors from the test folder down without following a link: a link
        found in it is removed itself, never what it points to."""
        parent, _, leaf = name.rpartition("/")
        base = _open_folder(None, str(self.path))
        if base is None:
            return
        try:
            at = _open_folder(base, parent) if parent else base
            if at is not None:
                try:
                    _remove_below(at, leaf)
                finally:
                    if at != base:
                        os.close(at)
        finally:
            os.close(base)

    def remove_views(self) -> None:
        """The folder views the Finder leaves (.DS_Store), the folder and its marker kept."""
        for name in FOLDER_VIEW_FILES:
            unlink(self.path / name)

    def remove(self) -> None:
        """The folder itself, once its test files are gone. Where anything else is left in it (a file another
        client made after rank 0's clean-up, a removed file a network mount still shows as .fuse_hidden...), the
        folder stays with its marker: a resume must still find it stibium's, and a later run's preflight too."""
        for name in FOLDER_VIEW_FILES:
            unlink(self.path / name)
        try:
            left = [n for n in os.listdir(self.path) if n != WORK_MARKER]
        except OSError:
            return
        if left:
            return
        unlink(self.path / WORK_MARKER)
        try:
            self.path.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            # a file came in between (another client still writing): the marker back, as above
            try:
                self.mark()
            except OSError:
                pass


# parts of a path that name no folder of the test folder: never opened or removed (a stranger's `../x`)
NOT_NAMES = ("", ".", "..")
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def _open_folder(at: int | None, relative: str) -> int | None:
    """A folder opened name by name from the folder open at `at` (or `relative` whole, where at is None: the test
    folder itself, which must not be a link either), following no link; None where a name is missing, not a
    folder, or a link."""
    if at is None:
        try:
            return os.open(relative, _FOLDER_FLAGS)
        except OSError:
            return None
    fd = at
    for name in relative.split("/"):
        if name in NOT_NAMES:
            nxt = None
        else:
            try:
                nxt = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
            except OSError:         # missing, not a folder, or a link (ELOOP, or ENOTDIR on macOS)
                nxt = None
        if fd != at:
            os.close(fd)
        if nxt is None:
            return None
        fd = nxt
    return fd


def _remove_below(at: int, name: str) -> None:
    """The name in the folder open at `at`: a folder emptied name by name, then removed; anything else (a link
    among them) unlinked."""
    try:
        fd = os.open(name, _FOLDER_FLAGS, dir_fd=at)
    except FileNotFoundError:
        return
    except OSError:                 # not a folder, or a link (ELOOP; ENOTDIR on macOS)
        _unlink_at(at, name)
        return
    try:
        for entry in os.listdir(fd):
            _remove_below(fd, entry)
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=at)
    except OSError:
        pass


def _unlink_at(folder_fd: int, name: str) -> None:
    """A test file gone from the folder open at folder_fd (a link itself, not what it points to); a folder among the
    names (a replay's: what the program made) removed where it is empty, else left for the pass over the emptied
    folders."""
    try:
        os.unlink(name, dir_fd=folder_fd)
    except FileNotFoundError:
        pass
    except (IsADirectoryError, PermissionError):       # a folder: EISDIR on Linux, EPERM on macOS
        try:
            is_folder = stat.S_ISDIR(os.lstat(name, dir_fd=folder_fd).st_mode)
        except OSError:
            return
        if not is_folder:
            raise
        try:
            os.rmdir(name, dir_fd=folder_fd)
        except OSError:
            pass


def unlink(path: Path) -> None:
    """A test file gone (a link itself, not what it points to); one call, whether it is there or not (a tree's
    clean-up tries tens of thousands of names, most of them made under another name)."""
    try:
        os.unlink(path)
    except (FileNotFoundError, IsADirectoryError):
        pass
