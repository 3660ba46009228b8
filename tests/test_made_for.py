"""Whether a recorded test folder is one stibium made for the run (run/workdir.made_for, holds_marker): a run
directory comes from strangers, and a resume writes into and removes from the folder its run.json names. Each
refusal in its words, each acceptance at its edge."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stibium_py.run.workdir import WORK_MARKER, holds_marker, made_for

RUN = "plain-host-20261128T000000Z"
LINE = f"stibium test files of run {RUN}; safe to delete"


def _folder(tmp_path: Path, marker: bytes | None = LINE.encode() + b"\n", name: str = f"stibium-{RUN}") -> Path:
    target = tmp_path / "target"
    work = target / name
    work.mkdir(parents=True)
    if marker is not None:
        (work / WORK_MARKER).write_bytes(marker)
    return work


def test_the_folder_stibium_made_for_the_run_is_taken(tmp_path):
    work = _folder(tmp_path)
    (work / "f.dat").write_bytes(b"x")
    assert made_for(work, str(work.parent), RUN) is None
    assert holds_marker(work, RUN) is True
    # the marker's first line is the proof: what follows it, and bytes that are not UTF-8 after it, do not matter
    (work / WORK_MARKER).write_bytes(LINE.encode() + b"\n\xff\xfe more")
    assert made_for(work, str(work.parent), RUN) is None and holds_marker(work, RUN) is True
    # only the first line counts (a second and third line are not part of it), and a first line that is not UTF-8
    # is not this run's, said as such
    (work / WORK_MARKER).write_bytes(LINE.encode() + b"\nsecond\nthird\n")
    assert made_for(work, str(work.parent), RUN) is None and holds_marker(work, RUN) is True
    (work / WORK_MARKER).write_bytes(b"\xff" + LINE.encode() + b"\n")
    assert made_for(work, str(work.parent), RUN) == f"its {WORK_MARKER} marker is not this run's"
    assert holds_marker(work, RUN) is False
    # a marker of one line without its newline is the same line
    (work / WORK_MARKER).write_bytes(LINE.encode())
    assert made_for(work, str(work.parent), RUN) is None and holds_marker(work, RUN) is True


def test_a_target_named_as_the_run_was_given_it(tmp_path, monkeypatch):
    work = _folder(tmp_path)
    monkeypatch.chdir(work.parent)
    assert made_for(work, ".", RUN) is None                       # relative to where stibium started
    assert made_for(work, "../target", RUN) is None
    assert made_for(work, str(work.parent) + "/", RUN) is None
    # "/" names no folder by name: the folder is judged by what it holds (this run's marker), as any other
    assert made_for(work, "/", RUN) is None
    assert made_for(work, str(tmp_path / "other"), RUN) == "it is not directly inside the run's target"
    assert made_for(work, None, RUN) == "it is not directly inside the run's target"


@pytest.mark.parametrize("written", ["relative/stibium-x", "/a/../stibium-x", "/a/b/../../stibium-x"])
def test_a_path_not_written_plainly_is_refused(written):
    assert made_for(Path(written), "/a", RUN) == "not an absolute path written plainly"


@pytest.mark.parametrize("name", ["stibium-", "other-x", "stibium-a/b", "stibium-a b", "stibium-" + "a" * 251,
                                  "xstibium-a"])
def test_a_folder_not_named_as_stibium_names_its_folders_is_refused(tmp_path, name):
    work = tmp_path / "target" / name.replace("/", "_") if "/" in name else tmp_path / "target" / name
    if "/" in name:
        work = tmp_path / "target" / "stibium-a" / "b"
    assert made_for(work, str(work.parent), RUN) == "its name is not a stibium test folder's (stibium-<run>)"


def test_the_longest_name_stibium_makes_is_taken(tmp_path):
    work = tmp_path / "target" / ("stibium-" + "a" * 247)          # 255 bytes, the most a name has
    work.parent.mkdir()
    assert made_for(work, str(work.parent), RUN) is None          # not there: the resume makes it
    longer = work.parent / ("stibium-" + "a" * 250)                # the most the pattern takes, past the system's
    assert made_for(longer, str(work.parent), RUN) == "it cannot be examined (File name too long)"


def test_a_target_that_is_not_a_folder_here_is_refused(tmp_path):
    work = tmp_path / "gone" / f"stibium-{RUN}"
    assert made_for(work, str(work.parent), RUN) == "the run's target is not a folder here"
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    linked = tmp_path / "link" / f"stibium-{RUN}"
    assert made_for(linked, str(linked.parent), RUN) == "the run's target is not a folder here"


def test_what_is_not_the_run_s_folder_is_refused_in_words(tmp_path):
    work = _folder(tmp_path, marker=None)
    (work / "f.dat").write_bytes(b"x")
    assert made_for(work, str(work.parent), RUN) == f"it holds no {WORK_MARKER} marker"
    assert holds_marker(work, RUN) is False
    (work / WORK_MARKER).mkdir()
    assert made_for(work, str(work.parent), RUN) == f"its {WORK_MARKER} is not a file"
    assert holds_marker(work, RUN) is False
    os.rmdir(work / WORK_MARKER)
    (work / WORK_MARKER).symlink_to(work / "f.dat")
    assert made_for(work, str(work.parent), RUN) == f"its {WORK_MARKER} is not a file"
    assert holds_marker(work, RUN) is False
    os.unlink(work / WORK_MARKER)
    (work / WORK_MARKER).write_text("stibium test files of run another; safe to delete\n")
    assert made_for(work, str(work.parent), RUN) == f"its {WORK_MARKER} marker is not this run's"
    assert holds_marker(work, RUN) is False
    (work / WORK_MARKER).write_text("x" * 5000 + LINE)                 # the line past the first 4096 bytes
    assert made_for(work, str(work.parent), RUN) == f"its {WORK_MARKER} marker is not this run's"
    assert holds_marker(work, RUN) is False


def test_a_file_or_a_link_in_the_folder_s_place_is_refused(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    work = target / f"stibium-{RUN}"
    work.write_text("a file")
    assert made_for(work, str(target), RUN) == "it is not a folder"
    assert holds_marker(work, RUN) is False
    work.unlink()
    elsewhere = _folder(tmp_path / "b")
    work.symlink_to(elsewhere)
    assert made_for(work, str(target), RUN) == "it is not a folder"
    assert holds_marker(work, RUN) is False


def test_an_empty_folder_and_a_missing_one_are_the_run_s_to_make(tmp_path):
    work = _folder(tmp_path, marker=None)
    assert made_for(work, str(work.parent), RUN) is None
    assert holds_marker(work, RUN) is True            # emptied by a clean-up that could not remove it
    os.rmdir(work)
    assert made_for(work, str(work.parent), RUN) is None
    assert holds_marker(work, RUN) is False


def test_a_folder_that_cannot_be_read_is_said(tmp_path, monkeypatch):
    """As a folder of another user's is to a user who is not root (the tests run as root, who reads every folder:
    the listing fails as the system fails it)."""
    work = _folder(tmp_path)
    real = os.listdir

    def refused(path):
        if Path(path) == work:
            raise PermissionError(13, "Permission denied")
        return real(path)
    monkeypatch.setattr(os, "listdir", refused)
    assert made_for(work, str(work.parent), RUN) == "it cannot be examined (Permission denied)"
    assert holds_marker(work, RUN) is False
