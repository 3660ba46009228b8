"""The helper's phase engine for trees of files (`stibium-helper tree`, helper/sb_tree.c): each phase done
whole in one invocation on a real file system, its counts and bytes what the disk shows, one latency per
operation in its histogram, and its refusals in one line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import run_helper

# a small tree: 3 folders deep at most, 24 files of 1-9000 bytes
FILES = [(f"a/b{k % 3}/c{k % 2}/f{k}.txt", 1 + 373 * k) for k in range(24)]


def _write_list(path: Path, rows: list[tuple[str, int]] | list[tuple[str, str]], sizes: bool = True) -> Path:
    lines = [f"{size}\t{name}\n" for name, size in rows] if sizes else [f"0\t{old}\t{new}\n" for old, new in rows]
    path.write_text("".join(lines))
    return path


def _tree(helper: Path, root: Path, listing: Path, phase: str, *more: str) -> dict:
    rc, out, err = run_helper(helper, "tree", "--path", str(root), "--list", str(listing), "--phase", phase, *more)
    assert rc == 0, err
    return out


def _hist_count(text: str) -> int:
    return sum(int(b.split(":")[1]) for b in text.split())


@pytest.mark.parametrize("threads", ["1", "4"])
@pytest.mark.parametrize("sync", ["none", "each", "end"])
def test_create_writes_every_file_with_its_bytes(helper, disk_dir, tmp_path, threads, sync):
    root = disk_dir / "tree"
    root.mkdir()
    out = _tree(helper, root, _write_list(tmp_path / "l", FILES), "create", "--threads", threads, "--sync", sync,
                "--data-seed", "7")
    assert out["ops"] == out["files"] == len(FILES) and out["bytes"] == sum(s for _, s in FILES)
    assert out["dirs_made"] == len({str(Path(n).parent) for n, _ in FILES} | {"a"} | {f"a/b{k}" for k in range(3)})
    assert {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()} == dict(FILES)
    assert _hist_count(out["lat_hist_ns"]) == len(FILES) and 0 < out["lat_p50_s"] <= out["lat_max_s"]
    assert out["seconds"] * 1e9 == pytest.approx(out["end_ns"] - out["start_ns"], abs=2)
    assert (out["sync_seconds"] > 0) == (sync == "end") and out["sync"] == sync
    first = (root / FILES[1][0]).read_bytes()
    assert len(set(first)) > 100          # random data, not zeros


def test_stat_list_read_rename_delete_each_do_what_they_say(helper, disk_dir, tmp_path):
    root = disk_dir / "tree"
    root.mkdir()
    listing = _write_list(tmp_path / "l", FILES)
    _tree(helper, root, listing, "create")
    stat = _tree(helper, root, listing, "stat", "--threads", "3")
    assert stat["ops"] == len(FILES) and stat["bytes"] == 0 and _hist_count(stat["lat_hist_ns"]) == len(FILES)

    folders = {"."} | {str(p) for n, _ in FILES for p in Path(n).parents if str(p) != "."}
    listed = _tree(helper, root, listing, "list")
    held = sum(len(os.listdir(root / f)) for f in folders)
    assert listed["ops"] == len(folders) and listed["names"] == held

    read = _tree(helper, root, listing, "read", "--threads", "2")
    assert read["ops"] == len(FILES) and read["bytes"] == sum(s for _, s in FILES)
    assert read["evicted"] is True and read["pages"] >= len(FILES)
    assert 0 <= read["resident_before"] <= 1 and read["resident_pages"] <= read["pages"]

    renames = [(n, n.replace(".txt", ".old")) for n, _ in FILES]
    moved = _tree(helper, root, _write_list(tmp_path / "r", renames, sizes=False), "rename")
    assert moved["ops"] == len(FILES)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*.old")) == sorted(new for _, new in renames)

    gone = _tree(helper, root, _write_list(tmp_path / "d", [(new, 0) for _, new in renames]), "delete", "--threads", "4")
    assert gone["ops"] == len(FILES) and not [p for p in root.rglob("*") if p.is_file()]


def test_a_read_without_eviction_meets_the_cached_pages(helper, disk_dir, tmp_path):
    root = disk_dir / "tree"
    root.mkdir()
    listing = _write_list(tmp_path / "l", [("f.bin", 1 << 20)])
    _tree(helper, root, listing, "create")
    (root / "f.bin").read_bytes()                                   # into the page cache
    warm = _tree(helper, root, listing, "read", "--evict", "off")
    assert warm["evicted"] is False and warm["resident_before"] > 0.9
    cold = _tree(helper, root, listing, "read")
    assert cold["resident_before"] < 0.1 and cold["bytes"] == 1 << 20


@pytest.mark.parametrize("content,args,message", [
    ("10\t/etc/passwd\n", ("--phase", "create"), "line 1: not SIZE<TAB>PATH[<TAB>NEWPATH] with relative paths"),
    ("10\ta/../../x\n", ("--phase", "create"), "line 1: not SIZE<TAB>PATH[<TAB>NEWPATH] with relative paths"),
    ("ten\tx\n", ("--phase", "create"), "line 1: not SIZE<TAB>PATH[<TAB>NEWPATH] with relative paths"),
    ("", ("--phase", "stat"), "names no file"),
])
def test_a_bad_list_is_refused_in_one_line_and_nothing_is_written(helper, disk_dir, tmp_path, content, args, message):
    listing = tmp_path / "l"
    listing.write_text(content)
    root = disk_dir / "tree"
    root.mkdir()
    rc, out, err = run_helper(helper, "tree", "--path", str(root), "--list", str(listing), *args)
    assert rc == 1 and message in out["error"] and len(err.strip().splitlines()) == 1
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("args,message", [
    (("--phase", "move"), "--phase is create, stat, list, read, rename, delete or copy, not 'move'"),
    (("--phase", "copy"), "--phase copy needs a new name on each line of the list (SIZE<TAB>PATH<TAB>NEWPATH)"),
    (("--phase", "stat", "--sync", "each"), "--sync goes with --phase create only"),
    (("--phase", "read", "--threads", "65"), "--threads is 1 to 64, not '65'"),
    (("--phase", "rename"), "--phase rename needs a new name on each line of the list"),
])
def test_bad_flags_are_usage_errors(helper, disk_dir, tmp_path, args, message):
    listing = _write_list(tmp_path / "l", [("x", 1)])
    rc, out, _ = run_helper(helper, "tree", "--path", str(disk_dir), "--list", str(listing), *args)
    assert rc == 2 and out["usage"] is True and out["error"].startswith(message)


def test_a_failing_operation_names_its_file(helper, disk_dir, tmp_path):
    listing = _write_list(tmp_path / "l", [("here", 1), ("missing", 1)])
    (disk_dir / "here").write_bytes(b"x")
    rc, out, _ = run_helper(helper, "tree", "--path", str(disk_dir), "--list", str(listing), "--phase", "stat")
    assert rc == 1 and out["error"] == f"cannot stat {disk_dir}/missing: No such file or directory"
    rc, out, _ = run_helper(helper, "tree", "--path", str(disk_dir), "--list", str(listing), "--phase", "create")
    assert rc == 1 and out["error"] == f"cannot create {disk_dir}/here: File exists"


def test_copy_makes_every_file_again_with_its_bytes_and_says_how(helper, disk_dir, tmp_path):
    root = disk_dir / "tree"
    root.mkdir()
    _tree(helper, root, _write_list(tmp_path / "l", FILES), "create", "--sync", "end")
    copies = [f"{name}\tcopy/{name}" for name, _ in FILES]
    (tmp_path / "c").write_text("".join(f"{size}\t{line}\n" for (_, size), line in zip(FILES, copies)))
    out = _tree(helper, root, tmp_path / "c", "copy", "--threads", "3")
    assert out["ops"] == len(FILES) and out["bytes"] == sum(size for _, size in FILES)
    for name, _ in FILES:
        assert (root / "copy" / name).read_bytes() == (root / name).read_bytes()
    # a file system that clones says so for every file; one that does not names what copied the bytes
    assert 0 <= out["cloned"] <= len(FILES)
    assert ("copy_method" in out) == (out["cloned"] < len(FILES))
    assert out.get("copy_method", "copy_file_range") in ("copy_file_range", "read/write")
    assert _hist_count(out["lat_hist_ns"]) == len(FILES)
    rc, again, _ = run_helper(helper, "tree", "--path", str(root), "--list", str(tmp_path / "c"), "--phase", "copy")
    assert rc == 1 and again["error"] == f"cannot create the copy {root}/copy/{FILES[0][0]}: File exists"


class _Watch:
    """inotify on one folder (Linux): the names created, closed after writing and moved, in order."""

    MASKS = {0x100: "create", 0x8: "close_write", 0x40: "moved_from", 0x80: "moved_to"}

    def __init__(self, folder: Path):
        import ctypes
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0 and self.libc.inotify_add_watch(self.fd, str(folder).encode(), sum(self.MASKS)) >= 0

    def events(self) -> list[tuple[str, str]]:
        import struct
        data = b""
        while True:
            try:
                data += os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
        out, i = [], 0
        while i < len(data):
            _, mask, _, length = struct.unpack_from("iIII", data, i)
            name = data[i + 16:i + 16 + length].rstrip(b"\0").decode()
            out += [(what, name) for bit, what in self.MASKS.items() if mask & bit]
            i += 16 + length
        os.close(self.fd)
        return out


@pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's (the macOS path is the same call to Apple's "
                                                    "Foundation, compiled by the Darwin checks)")
@pytest.mark.parametrize("engine", ["foundation", "posix"])
def test_the_foundation_engine_saves_atomically_and_posix_writes_in_place(helper, disk_dir, tmp_path, engine):
    """Foundation's atomic save: each file written under a temporary name, closed, then renamed over its own
    name; the POSIX path creates the name itself and moves nothing."""
    root = disk_dir / "tree"
    (root / "d").mkdir(parents=True)
    files = [("d/a.dat", 5000), ("d/b.dat", 70000)]
    watch = _Watch(root / "d")
    out = _tree(helper, root, _write_list(tmp_path / "l", files), "create", "--engine", engine, "--sync", "each")
    events = watch.events()
    assert out["engine"] == engine and out["ops"] == 2 and out["bytes"] == 75000
    for name, size in files:
        assert (root / name).stat().st_size == size
    final = [n for what, n in events if what == "moved_to"]
    if engine == "posix":
        assert events == [("create", "a.dat"), ("close_write", "a.dat"), ("create", "b.dat"), ("close_write", "b.dat")]
        return
    for name in ("a.dat", "b.dat"):
        temp = next(n for what, n in events if what == "create" and n != name and n.startswith(name))
        mine = [e for e in events if e[1] in (temp, name)]
        assert mine[:4] == [("create", temp), ("close_write", temp), ("moved_from", temp), ("moved_to", name)]
        assert mine[4:] == [("close_write", name)]          # sync each: the saved file opened, synced, closed
    assert final == ["a.dat", "b.dat"]


def test_the_foundation_engine_does_every_phase_on_one_thread(helper, disk_dir, tmp_path):
    root = disk_dir / "tree"
    root.mkdir()
    listing = _write_list(tmp_path / "l", FILES)
    folders = {str(p) for n, _ in FILES for p in Path(n).parents if str(p) != "."}
    created = _tree(helper, root, listing, "create", "--engine", "foundation")
    assert created["dirs_made"] == len(folders) and created["bytes"] == sum(size for _, size in FILES)
    assert _tree(helper, root, listing, "stat", "--engine", "foundation")["ops"] == len(FILES)
    listed = _tree(helper, root, listing, "list", "--engine", "foundation")
    assert (listed["ops"], listed["names"]) == (len(folders) + 1, len(FILES) + len(folders))
    read = _tree(helper, root, listing, "read", "--engine", "foundation")
    assert read["bytes"] == created["bytes"] and read["resident_before"] == 0.0
    copies = tmp_path / "c"
    copies.write_text("".join(f"{size}\t{name}\tcopy/{name}\n" for name, size in FILES))
    copied = _tree(helper, root, copies, "copy", "--engine", "foundation")
    assert copied["copy_method"] == "NSFileManager copyItemAtPath:toPath:" and "cloned" not in copied
    assert all((root / "copy" / n).read_bytes() == (root / n).read_bytes() for n, _ in FILES)
    moves = tmp_path / "m"
    moves.write_text("".join(f"0\t{name}\t{name}.moved\n" for name, _ in FILES))
    assert _tree(helper, root, moves, "rename", "--engine", "foundation")["ops"] == len(FILES)
    gone = _write_list(tmp_path / "g", [(f"{n}.moved", s) for n, s in FILES])
    assert _tree(helper, root, gone, "delete", "--engine", "foundation")["ops"] == len(FILES)
    assert not [p for p in root.rglob("*") if p.is_file() and "copy" not in p.parts]
    rc, out, _ = run_helper(helper, "tree", "--path", str(root), "--list", str(listing), "--phase", "stat",
                            "--engine", "foundation", "--threads", "2")
    assert rc == 2 and out["error"].startswith("--engine foundation runs on one thread, as an app's own code saves")


@pytest.mark.parametrize("sync", ["none", "each", "end"])
def test_the_calls_a_file_made_are_counted(helper, disk_dir, tmp_path, sync):
    """Files of 1 byte to 9 KB in a folder that is there: open, one write, close, and an fsync with sync each; sync
    at the end opens, syncs and closes each file again. stat is one call; read an open, the read of the bytes,
    the read that meets the end, a close."""
    root = disk_dir / "tree"
    (root / "d").mkdir(parents=True)
    files = [(f"d/f{k}", 1 + 1000 * k) for k in range(10)]
    listing = _write_list(tmp_path / "l", files)
    out = _tree(helper, root, listing, "create", "--sync", sync)
    assert out["calls"] == len(files) * (3 + (sync == "each") + 3 * (sync == "end"))
    assert _tree(helper, root, listing, "stat")["calls"] == len(files)
    assert _tree(helper, root, listing, "read")["calls"] == len(files) * 4
