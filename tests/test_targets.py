"""Targets stibium must refuse before it writes anything, each with one line and
exit status 2; and bad plans given to `stibium run` leave nothing behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main

PLAN = "name: p\ntests:\n  - name: f\n    kind: files\n    sizes: [{size}]\n    repeats: 2\n"


def _run(d: Path, target: Path, size: str = "1MB", *extra: str) -> tuple[int, str]:
    plan = d / "p.yaml"
    plan.write_text(PLAN.format(size=size))
    result = CliRunner().invoke(main, ["run", str(plan), "--target", str(target), "--out", str(d / "reports"), *extra])
    return result.exit_code, result.output.strip()


def test_the_root_of_a_file_system_is_refused(disk_dir):
    code, out = _run(disk_dir, Path("/"))
    assert code == 2
    assert out == "stibium: target / is the root of a file system; use a folder inside it, such as /stibium-test"
    assert not (disk_dir / "reports").exists()


def test_the_home_folder_itself_is_refused(disk_dir, monkeypatch):
    home = disk_dir / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    code, out = _run(disk_dir, home)
    assert code == 2
    assert out == f"stibium: target {home} is your home folder itself; use a folder inside it, such as {home / 'stibium-test'}"


def test_a_folder_inside_a_file_is_refused(disk_dir):
    (disk_dir / "afile").write_text("x")
    code, out = _run(disk_dir, disk_dir / "afile" / "sub")
    assert code == 2
    assert out == (f"stibium: target {disk_dir / 'afile' / 'sub'} has a part that is a file, not a folder "
                   f"({disk_dir / 'afile'}); choose a folder with --target")


def test_a_nonempty_folder_is_allowed_when_asked(disk_dir):
    t = disk_dir / "t"
    t.mkdir()
    (t / "mine.txt").write_text("keep")
    code, out = _run(disk_dir, t, "1MB", "--allow-nonempty")
    assert code == 0, out
    assert [p.name for p in t.iterdir()] == ["mine.txt"] and (t / "mine.txt").read_text() == "keep"


def test_a_folder_holding_only_the_finders_view_files_counts_as_empty(disk_dir):
    # the Finder writes .DS_Store into a folder a user has opened; a Mac user's empty disk folder was refused
    t = disk_dir / "t"
    t.mkdir()
    (t / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (t / ".localized").write_bytes(b"")
    code, out = _run(disk_dir, t, "1MB")
    assert code == 0, out
    assert sorted(p.name for p in t.iterdir()) == [".DS_Store", ".localized"]   # the user's, left alone
    (t / "mine.txt").write_text("keep")
    code, out = _run(disk_dir, t, "1MB")
    assert (code, out) == (2, f"stibium: target {t} holds files stibium did not create (mine.txt, ...); use an "
                              f"empty folder or pass --allow-nonempty")


def test_the_test_folder_is_kept_from_spotlight_on_macos_and_its_view_files_removed(tmp_path):
    from stibium_py.run.workdir import WorkDir, work_dir_name
    assert work_dir_name("quick-host-20261124", "darwin") == "stibium-quick-host-20261124.noindex"
    assert work_dir_name("quick-host-20261124", "linux") == "stibium-quick-host-20261124"
    work = WorkDir(tmp_path / "stibium-r.noindex", "r")
    work.create()
    (work.path / ".DS_Store").write_bytes(b"Bud1")     # the user looked into the folder during the run
    work.remove()
    assert not work.path.exists()


def test_a_mac_is_kept_awake_for_the_run_and_only_a_mac():
    from stibium_py.run.awake import keep_awake_command
    assert keep_awake_command("darwin", 4242, "/usr/bin/caffeinate") == ["/usr/bin/caffeinate", "-i", "-w", "4242"]
    assert keep_awake_command("darwin", 4242, None) is None
    assert keep_awake_command("linux", 4242, "/usr/bin/caffeinate") is None


@pytest.fixture
def tiny_mount(mount_tmpfs):
    return mount_tmpfs("8m")


def test_not_enough_free_space_is_refused(disk_dir, tiny_mount):
    code, out = _run(disk_dir, tiny_mount / "t", "100MB")
    assert code == 2
    assert out.startswith(f"stibium: target {tiny_mount / 't'} has 8.39 MB free but the plan needs 200 MB plus a margin")
    assert out.endswith("free some space or choose another folder with --target")
    assert list(tiny_mount.iterdir()) == []


def test_a_read_only_file_system_is_refused(disk_dir, tiny_mount):
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_mount)], check=True)
    code, out = _run(disk_dir, tiny_mount / "t")
    assert code == 2
    assert out == f"stibium: target {tiny_mount / 't'} is on a read-only file system; choose another folder with --target"


BAD_PLANS = {
    "missing.yaml": None,
    "script.yaml": "name: <script>alert(1)</script>\ntests:\n  - name: f\n    kind: files\n    sizes: [1MB]\n",
    "negative.yaml": "name: n\ntests:\n  - name: f\n    kind: files\n    sizes: [-5]\n",
    "bigger.yaml": "name: b\ntests:\n  - name: p\n    kind: pattern\n    op: read\n    granularities: [1MiB]\n"
                   "    bytes: 1MiB\n    span: 512KiB\n",
    "latin1.yaml": b"name: \xe9t\xe9\n",
}


@pytest.mark.parametrize("name,expected", [
    ("missing.yaml", "stibium: {d}/missing.yaml: no such plan file"),
    ("script.yaml", "stibium: {d}/script.yaml:1: name: String should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]*$' "
                    "(got '<script>alert(1)</script>')"),
    ("negative.yaml", "stibium: {d}/negative.yaml:5: tests[0] (f).sizes[0]: -5 is negative; sizes are positive"),
    ("bigger.yaml", "stibium: {d}/bigger.yaml:8: tests[0] (p).span: the requests need 1048576 bytes but span is "
                    "524288; raise span or lower bytes"),
    ("latin1.yaml", "stibium: {d}/latin1.yaml: not UTF-8 text (byte 6 is 0xe9); save the plan as UTF-8"),
])
def test_bad_plans_leave_nothing_behind(disk_dir, name, expected):
    content = BAD_PLANS[name]
    if isinstance(content, bytes):
        (disk_dir / name).write_bytes(content)
    elif content is not None:
        (disk_dir / name).write_text(content)
    result = CliRunner().invoke(main, ["run", str(disk_dir / name), "--target", str(disk_dir / "t"),
                                       "--out", str(disk_dir / "reports")])
    assert result.exit_code == 2
    assert result.output.strip() == expected.format(d=disk_dir)
    assert not (disk_dir / "t").exists() and not (disk_dir / "reports").exists()


@pytest.mark.parametrize("platform,euid,purge,writable,message", [
    ("darwin", 501, "/usr/sbin/purge", False,
     'between: drop-caches needs `purge` run as root on macOS; run stibium as root with sudo "$(command -v stibium)" '
     'run ... (sudo does not search ~/.local/bin), or use between: evict'),
    ("darwin", 0, "/usr/sbin/purge", False, None),
    ("darwin", 0, None, False, "between: drop-caches needs macOS's `purge`, which is not on this Mac; use between: "
                               "evict"),
    ("linux", 1000, None, False,
     'between: drop-caches needs root on Linux (it writes /proc/sys/vm/drop_caches); run stibium as root with sudo '
     '"$(command -v stibium)" run ... (sudo does not search ~/.local/bin), or use between: evict'),
    ("linux", 0, None, True, None),
])
def test_drop_caches_says_how_to_run_as_root(platform, euid, purge, writable, message):
    from stibium_py.run.preflight import between_refusal
    assert between_refusal(platform, euid, purge, writable) == message


def test_another_clients_probe_file_is_not_foreign(tmp_path):
    """Clients on one host check one shared target at once: the helper's probe file of another client
    (`.stibium-probe-PID`, made and removed at once) may be there when this one lists it."""
    from stibium_py.run.preflight import foreign_entries
    (tmp_path / ".stibium-probe-27204").write_bytes(b"")
    assert foreign_entries(tmp_path) == []
    for name in (".stibium-probe-x", ".stibium-probe-1.bak", "stibium-probe-1"):
        (tmp_path / name).write_bytes(b"")
    assert sorted(foreign_entries(tmp_path)) == [".stibium-probe-1.bak", ".stibium-probe-x", "stibium-probe-1"]


def test_clean_up_follows_no_link_planted_in_the_test_folder(tmp_path):
    # someone with write access to a shared target replaces a folder of the run's test folder by a link to a
    # folder of theirs holding files of the same names: clean-up removes the run's own files and nothing there
    from stibium_py.run.workdir import WorkDir
    work = WorkDir(tmp_path / "target" / "stibium-r", "r")
    work.create(parents=True)
    for name in ("files/f-1.bin", "files/f-2.bin", "tree/a/b/x.dat", "top.bin"):
        work.file(name).write_bytes(b"run's own")
    victim = tmp_path / "victim"
    (victim / "b").mkdir(parents=True)
    for name in ("f-1.bin", "f-2.bin", "b/x.dat"):
        (victim / name).write_bytes(b"someone else's")
    import shutil
    shutil.rmtree(work.path / "files")
    (work.path / "files").symlink_to(victim)                 # a folder replaced by a link
    shutil.rmtree(work.path / "tree" / "a")
    (work.path / "tree" / "a").symlink_to(victim)            # a link on the way to a deeper folder
    work.remove_files({"files/f-1.bin", "files/f-2.bin", "tree/a/b/x.dat", "top.bin"})
    assert sorted(p.relative_to(victim).as_posix() for p in victim.rglob("*")) == ["b", "b/x.dat", "f-1.bin",
                                                                                    "f-2.bin"]
    assert all((victim / n).read_bytes() == b"someone else's" for n in ("f-1.bin", "f-2.bin", "b/x.dat"))
    assert not (work.path / "top.bin").exists()
    assert (work.path / "files").is_symlink() and (work.path / "tree" / "a").is_symlink()   # not ours: left


def test_clean_up_removes_the_run_s_files_and_emptied_folders(tmp_path):
    from stibium_py.run.workdir import WorkDir
    work = WorkDir(tmp_path / "stibium-r", "r")
    work.create()
    names = {"a/b/c/1.bin", "a/b/2.bin", "a/3.bin", "4.bin"}
    for name in names:
        work.file(name).write_bytes(b"x")
    (work.path / "a" / "b" / "kept.txt").write_bytes(b"not the run's")
    work.remove_files(names | {"gone/9.bin", "a/b/c/missing.bin", "../outside.bin"})
    assert sorted(p.relative_to(work.path).as_posix() for p in work.path.rglob("*")) == [
        ".stibium-run", "a", "a/b", "a/b/kept.txt"]


def test_a_test_folder_left_with_a_file_in_it_keeps_its_marker_and_stays_resumable(tmp_path, monkeypatch):
    """Clean-up that cannot empty the folder (another client wrote a file after rank 0 removed the run's, or a
    network mount still shows a removed one) leaves the folder with its marker: a resume must find it stibium's
    (a run of three hosts on sshfs was refused its resume for want of it)."""
    from stibium_py.run.workdir import WorkDir, made_for
    work = WorkDir(tmp_path / "t" / "stibium-r", "r")
    work.create(parents=True)
    (work.path / "late.bin").write_bytes(b"x")
    work.remove()
    assert sorted(p.name for p in work.path.iterdir()) == [".stibium-run", "late.bin"]
    assert made_for(work.path, str(tmp_path / "t"), "r") is None
    # a file that comes in between the look and the removal of the folder: the marker is written back
    (work.path / "late.bin").unlink()
    real_rmdir = Path.rmdir

    def rmdir_after_a_late_file(self):
        (self / "later.bin").write_bytes(b"x")
        real_rmdir(self)
    monkeypatch.setattr(Path, "rmdir", rmdir_after_a_late_file)
    work.remove()
    assert sorted(p.name for p in work.path.iterdir()) == [".stibium-run", "later.bin"]
    assert (work.path / ".stibium-run").read_text() == "stibium test files of run r; safe to delete\n"
    assert made_for(work.path, str(tmp_path / "t"), "r") is None
    monkeypatch.undo()
    (work.path / "later.bin").unlink()
    work.remove()
    assert not work.path.exists()


def test_a_file_is_not_made_through_a_folder_someone_replaced_by_a_link(tmp_path):
    """A folder on the way replaced by a link (a shared target) stops the client before anything is written through
    it (the helper refuses such a path too: test_helper.py); a tree's own folder, which the helper's tree phases
    open plain paths below, the same."""
    from stibium_py.errors import RunError
    from stibium_py.run.workdir import WorkDir
    work = WorkDir(tmp_path / "target" / "stibium-r", "r")
    work.create(parents=True)
    work.file("files/f-1.bin").write_bytes(b"run's own")
    victim = tmp_path / "victim"
    victim.mkdir()
    import shutil
    shutil.rmtree(work.path / "files")
    (work.path / "files").symlink_to(victim)
    with pytest.raises(RunError) as e:
        work.file("files/f-2.bin")
    assert str(e.value) == (f"{work.path / 'files'} is not the run's folder (someone replaced it by a link or a file "
                            f"during the run); this client stops and writes nothing there")
    (work.path / "top").write_bytes(b"")
    with pytest.raises(RunError):
        work.file("top/f.bin")
    assert work.folder("trees/t-0") == work.path / "trees" / "t-0"
    shutil.rmtree(work.path / "trees" / "t-0")
    (work.path / "trees" / "t-0").symlink_to(victim)
    with pytest.raises(RunError):
        work.folder("trees/t-0")
    assert list(victim.iterdir()) == []


def test_a_start_refused_after_the_target_was_made_leaves_no_folder(tmp_path):
    """The target's folders a start made (it creates a missing target, as mkdir -p does) are removed again when the
    start is refused before anything is measured; the folders that were there stay."""
    from rich.console import Console
    from stibium_py.run.helper import HelperResult
    from stibium_py.run.preflight import RunError
    from stibium_py.run import LoadedPlan, RunOptions, start_run
    from fake_helper import FakeHelpers

    class Refusing(FakeHelpers):
        def once(self, args):
            return HelperResult(1, {"error": "cannot examine the target (a stand-in for the helper's refusal)"})
    plan = tmp_path / "p.yaml"
    plan.write_text(PLAN.format(size="1MB"))
    (tmp_path / "mine").mkdir()
    target = tmp_path / "mine" / "a" / "b"
    with pytest.raises(RunError) as e:
        start_run(LoadedPlan.read(plan), RunOptions(target=target, out_dir=tmp_path / "r", progress=False),
                  Console(quiet=True), Refusing())
    assert str(e.value) == f"target {target}: cannot examine the target (a stand-in for the helper's refusal)"
    assert list((tmp_path / "mine").iterdir()) == [] and not (tmp_path / "r").exists()
