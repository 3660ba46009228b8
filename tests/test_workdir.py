"""The run's test folder (run/workdir.py) at its edges: its name on each platform, its marker and the clients'
token, the clean-up that removes exactly the plan's files and the folders it emptied (deepest first) and never a
file outside the test folder whatever a name says, the folder removed only when nothing but its marker is left,
and a folder on the way that is not one stopping the client with exit status 1."""

from __future__ import annotations

import os

import pytest

from stibium_py.errors import RunError
from stibium_py.run.workdir import NO_INDEX_SUFFIX, WorkDir, work_dir_name


def test_the_test_folder_s_name_hides_it_from_spotlight_on_a_mac_only():
    assert work_dir_name("r-1", "darwin") == "stibium-r-1" + NO_INDEX_SUFFIX == "stibium-r-1.noindex"
    assert work_dir_name("r-1", "linux") == "stibium-r-1"


def test_the_marker_names_the_run_and_the_clients_token_only_where_there_is_one(tmp_path):
    work = WorkDir(tmp_path / "a" / "b" / "stibium-r", "r")
    work.create(parents=True, token="tok-9")
    assert (work.path / ".stibium-run").read_text() == ("stibium test files of run r; safe to delete\n"
                                                       "clients: tok-9\n")
    assert work.shows("tok-9", wait_s=0.0) and not work.shows("tok-8", wait_s=0.2)
    plain = WorkDir(tmp_path / "stibium-q", "q")
    plain.create()
    assert (plain.path / ".stibium-run").read_text() == "stibium test files of run q; safe to delete\n"
    with pytest.raises(FileNotFoundError):
        WorkDir(tmp_path / "x" / "y" / "stibium-p", "p").create()      # parents only where asked
    assert not WorkDir(tmp_path / "none", "n").shows("tok", wait_s=0.0)


def test_a_name_that_climbs_out_of_the_test_folder_removes_nothing_outside_it(tmp_path):
    target = tmp_path / "target"
    work = WorkDir(target / "stibium-r", "r")
    work.create(parents=True)
    work.file("a/own.bin").write_bytes(b"x")
    for name in ("v1.bin", "v2.bin", "v3.bin", "v4.bin"):
        (target / name).write_bytes(b"someone else's")
    (tmp_path / "v5.bin").write_bytes(b"someone else's")
    work.remove_files({"../v1.bin", "a/../../v2.bin", "./../v3.bin", "..//v4.bin", "../../v5.bin", "a/own.bin"})
    assert sorted(p.name for p in target.iterdir()) == ["stibium-r", "v1.bin", "v2.bin", "v3.bin", "v4.bin"]
    assert (tmp_path / "v5.bin").exists() and not (work.path / "a").exists()


def test_clean_up_removes_every_folder_it_emptied_the_deepest_first(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    names = {"top.bin", "a/1.bin", "a/b/2.bin", "a/b/c/3.bin", "a/b/c/d/4.bin", "e/f/5.bin"}
    for name in names:
        work.file(name).write_bytes(b"x")
    work.remove_files(names)
    assert sorted(p.name for p in work.path.iterdir()) == [".stibium-run"]
    work.remove()
    assert not work.path.exists()


def test_clean_up_of_names_in_folders_already_gone_and_of_a_gone_test_folder_does_nothing(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    work.file("a/b/1.bin").write_bytes(b"x")
    work.remove_files({"a/b/1.bin", "x/y/2.bin", "a/b/c/3.bin", "4.bin"})
    assert sorted(p.name for p in work.path.iterdir()) == [".stibium-run"]
    gone = WorkDir(tmp_path / "stibium-gone", "g")
    gone.remove_files({"a/1.bin"})           # nothing to open: nothing done
    gone.remove()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stibium-r"]


def test_the_folder_goes_only_when_nothing_but_its_marker_is_left(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    (work.path / ".DS_Store").write_bytes(b"finder")            # the Finder's view files go with it
    work.remove()
    assert not work.path.exists()
    kept = WorkDir(tmp_path / "stibium-k", "k")
    kept.create()
    (kept.path / "late.bin").write_bytes(b"x")
    kept.remove()
    assert sorted(p.name for p in kept.path.iterdir()) == [".stibium-run", "late.bin"]
    assert (kept.path / ".stibium-run").read_text() == "stibium test files of run k; safe to delete\n"


def test_a_gone_test_folder_or_one_replaced_stops_the_client_with_status_1(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    with pytest.raises(RunError) as gone:
        work.file("a/1.bin")
    assert gone.value.exit_code == 1 and str(gone.value) == (
        f"the test folder {work.path} is gone (removed by another client's end of the run, or from outside); this "
        f"client stops")
    work.create()
    (work.path / "f").write_bytes(b"a file where a folder should be")
    with pytest.raises(RunError) as replaced:
        work.folder("f/g")
    assert replaced.value.exit_code == 1 and str(replaced.value).startswith(f"{work.path / 'f'} is not the run's folder")
    assert work.folder("h/i") == work.path / "h" / "i" and work.folder("h/i").is_dir()     # made once, then found


def test_a_whole_file_is_a_regular_file_of_its_size_and_not_a_link_to_one(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    work.file("a.bin").write_bytes(b"x" * 10)
    assert work.holds_whole("a.bin", 10) and not work.holds_whole("a.bin", 9)
    os.symlink(work.path / "a.bin", work.path / "link.bin")
    assert not work.holds_whole("link.bin", 10)
    (work.path / "dir").mkdir()
    assert not work.holds_whole("dir", (work.path / "dir").stat().st_size)
    assert not work.holds_whole("missing.bin", 0)


def test_a_token_written_a_moment_later_is_seen_and_a_marker_of_other_bytes_is_read_all_the_same(tmp_path):
    import threading
    import time
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    late = threading.Timer(0.3, lambda: work.mark("tok-1"))     # a network file system shows it late
    late.start()
    started = time.monotonic()
    assert work.shows("tok-1", wait_s=5.0) and time.monotonic() - started < 4.0
    late.join()
    (work.path / ".stibium-run").write_bytes(b"\xff\xfe not UTF-8\nclients: tok-2\n")
    assert work.shows("tok-2", wait_s=0.0) and not work.shows("tok-3", wait_s=0.0)


def test_the_finder_s_view_files_go_and_the_folder_and_its_marker_stay(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    (work.path / ".DS_Store").write_bytes(b"finder")
    work.remove_views()
    assert sorted(p.name for p in work.path.iterdir()) == [".stibium-run"]


def test_a_folder_left_with_a_file_keeps_its_marker_as_written_with_the_clients_token(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create(token="tok-5")
    (work.path / "late.bin").write_bytes(b"x")
    work.remove()
    assert (work.path / ".stibium-run").read_text() == ("stibium test files of run r; safe to delete\n"
                                                       "clients: tok-5\n")
    # a file that comes between the look and the removal: tests/test_targets.py (the marker written back)


def test_clean_up_removes_no_empty_folder_through_a_link_planted_on_the_way(tmp_path):
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    work.file("a/b/x.bin").write_bytes(b"x")
    victim = tmp_path / "victim"
    (victim / "b").mkdir(parents=True)                      # empty: an rmdir through the link would take it
    import shutil
    shutil.rmtree(work.path / "a")
    (work.path / "a").symlink_to(victim)
    work.remove_files({"a/b/x.bin"})
    assert (victim / "b").is_dir() and (work.path / "a").is_symlink()


def test_a_trial_folder_is_removed_whole_and_a_link_in_it_is_removed_itself(tmp_path):
    work = WorkDir(tmp_path / "w", "run")
    work.create()
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "f").write_text("kept")
    trial = work.folder("app/replay-0")
    (trial / "a" / "b").mkdir(parents=True)
    (trial / "a" / "b" / "f").write_text("x")
    (trial / "a" / "g").write_text("y")
    (trial / "a" / "to-outside").symlink_to(outside / "keep")
    work.remove_tree("app/replay-0")
    assert not trial.exists() and (tmp_path / "w" / "app").is_dir()
    assert (outside / "keep" / "f").read_text() == "kept"
    work.remove_tree("app/replay-0")                   # gone already: nothing to do


def test_a_folder_among_the_names_removed_is_removed_where_it_is_empty(tmp_path):
    work = WorkDir(tmp_path / "w", "run")
    work.create()
    (work.folder("app/replay-0/empty"))
    (work.folder("app/replay-0/full") / "f").write_text("x")
    work.remove_files({"app/replay-0/empty", "app/replay-0/full", "app/replay-0/full/f"})
    assert not (tmp_path / "w" / "app").exists()


def test_clean_up_opens_each_folder_once_and_a_missing_one_once(tmp_path, monkeypatch):
    """On a network file system each open of a folder is a round trip: a tree's clean-up opens each of its
    folders once from its parent, and looks for a folder that is not there (a copy the test did not make) once."""
    work = WorkDir(tmp_path / "w", "run")
    work.create()
    made = {f"t/tree-0/d{k:02}/f.bin" for k in range(20)}
    for name in made:
        work.file(name).write_bytes(b"x")
    never = {f"t/tree-0/copy/d{k:02}/f.bin" for k in range(20)}
    opened: list[str] = []
    real_open = os.open

    def counting_open(path, flags, *args, **kwargs):
        if flags & os.O_DIRECTORY:
            opened.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    work.remove_files(made | never)
    monkeypatch.undo()
    # the test folder, t, tree-0, its 20 folders, and copy (missing) once
    assert opened[:3] == [str(work.path), "t", "tree-0"]
    assert sorted(opened[3:]) == ["copy", *(f"d{k:02}" for k in range(20))]
    assert sorted(p.name for p in work.path.iterdir()) == [".stibium-run"]


def test_clean_up_never_asks_to_remove_a_name_that_is_no_folder_of_its_own(tmp_path, monkeypatch):
    """A stranger's `..`, `.` or empty part of a name is never handed to rmdir: the folder it would name is not the
    test folder's (rmdir("..") from a folder would name the folder above it)."""
    work = WorkDir(tmp_path / "w", "run")
    work.create()
    work.file("a/own.bin").write_bytes(b"x")
    removed: list[str] = []
    real_rmdir = os.rmdir

    def recording_rmdir(path, *args, **kwargs):
        removed.append(str(path))
        return real_rmdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", recording_rmdir)
    work.remove_files({"../v1.bin", "a/../../v2.bin", "./../v3.bin", "..//v4.bin", "a/own.bin"})
    monkeypatch.undo()
    assert removed == ["a"] and not (work.path / "a").exists()
