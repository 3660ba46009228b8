"""The helper's `replay` command (helper/sb_replay.c) on scripts made from traces written by hand: what it leaves on
the disk, what it counts, the order it keeps across threads and the times it keeps."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from stibium_py.kinds.replay.script import script_of
from stibium_py.run.helper import find_helper
from stibium_py.trace.model import Call, Trace, TraceFile

FILES = (TraceFile(".", True, 0), TraceFile("d", True, 0), TraceFile("d/old", False, 100_000),
         TraceFile("d/new.tmp", False, None), TraceFile("d/new", False, None), TraceFile("d/e", True, None))


def _replay(tmp: Path, calls: list[Call], phase: str, *extra: str, files: tuple[TraceFile, ...] = FILES,
            text: str | None = None) -> tuple[int, dict[str, Any]]:
    script = tmp / "script.txt"
    script.write_text(text if text is not None else script_of(Trace(files, tuple(calls), "t", "Linux", "p", 0)).text)
    root = tmp / "root"
    root.mkdir(exist_ok=True)
    done = subprocess.run([str(find_helper()), "replay", "--path", str(root), "--script", str(script), "--phase",
                           phase, *extra], capture_output=True, text=True, timeout=60)
    return done.returncode, json.loads(done.stdout)


def _by_kind(answer: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k["call"]: k for k in answer["kinds"]}


SAVE = [Call(0, 0, 5, "open", 2, handle=0, result=3),                  # the laid-out file read whole
        Call(0, 10, 5, "read", 2, handle=0, bytes=65536, result=65536),
        Call(0, 20, 5, "read", 2, handle=0, bytes=65536, result=34464),
        Call(0, 30, 5, "close", 2, handle=0),
        Call(0, 40, 5, "open", 3, handle=1, result=3),                  # saved safely: a new file, synced, renamed
        Call(0, 50, 5, "write", 3, handle=1, offset=-1, bytes=4096, result=4096),
        Call(0, 60, 5, "write", 3, handle=1, offset=8192, bytes=4096, result=4096),
        Call(0, 70, 5, "fsync", 3, handle=1),
        Call(0, 80, 5, "close", 3, handle=1),
        Call(0, 90, 5, "rename", 3, 4),
        Call(0, 100, 5, "stat", 4),
        Call(0, 110, 5, "mkdir", 5),
        Call(0, 120, 5, "rmdir", 5),
        Call(0, 130, 5, "unlink", 2)]


def test_layout_makes_the_files_that_existed_with_their_sizes_and_fill(tmp_path):
    code, answer = _replay(tmp_path, SAVE, "layout", "--fill", "0x41", "--evict", "on")
    assert code == 0 and (answer["files"], answer["bytes"]) == (1, 100_000)
    assert (tmp_path / "root/d/old").read_bytes() == b"A" * 100_000
    assert sorted(p.name for p in (tmp_path / "root/d").iterdir()) == ["old"]


def test_a_replay_does_what_the_program_did_and_counts_each_kind(tmp_path):
    _replay(tmp_path, SAVE, "layout", "--fill", "0x41")
    code, answer = _replay(tmp_path, SAVE, "run", "--timing", "fast", "--fill", "0x42")
    assert code == 0, answer
    assert sorted(p.name for p in (tmp_path / "root/d").iterdir()) == ["new"]
    assert (tmp_path / "root/d/new").read_bytes() == b"B" * 4096 + b"\0" * 4096 + b"B" * 4096
    kinds = _by_kind(answer)
    assert {k: v["count"] for k, v in kinds.items()} == {"open": 2, "close": 2, "read": 2, "write": 2, "fsync": 1,
                                                       "rename": 1, "stat": 1, "mkdir": 1, "rmdir": 1, "unlink": 1}
    assert (kinds["read"]["bytes"], kinds["write"]["bytes"], answer["bytes"]) == (100_000, 8192, 108_192)
    assert answer["mismatched"] == 0 and answer["calls"] == 14 and answer["late"] == 0
    assert 0 < answer["in_calls_s"] <= answer["seconds"]
    assert len(answer["slowest"]) == 10 and answer["slowest"][0][1] >= answer["slowest"][-1][1]


def test_a_call_that_comes_out_otherwise_than_recorded_is_counted_with_its_error(tmp_path):
    calls = [Call(0, 0, 5, "stat", 2), Call(0, 10, 5, "stat", 4),         # d/new never made: ENOENT here
             Call(0, 20, 5, "stat", 3, result=-1, error="ENOENT")]       # failed there, and here: as recorded
    _replay(tmp_path, calls, "layout")
    code, answer = _replay(tmp_path, calls, "run", "--timing", "fast")
    assert code == 0 and answer["mismatched"] == 1 and answer["first_mismatch"] == 1
    assert answer["first_mismatch_strerror"] == "No such file or directory"
    assert _by_kind(answer)["stat"]["mismatched"] == 1


def test_a_thread_waits_for_another_thread_s_open_of_the_file_it_writes(tmp_path):
    # thread 0 stats 300 times before it opens the file; thread 1 writes to that open file at once: without the
    # wait each write would meet no open file (EBADF), a mismatch
    calls = [Call(0, k, 1, "stat", 2) for k in range(300)]
    calls += [Call(0, 400, 5, "open", 3, handle=0, result=3)]
    calls += [Call(1, 500 + k, 5, "write", 3, handle=0, bytes=512, result=512) for k in range(20)]
    calls += [Call(0, 700, 5, "close", 3, handle=0)]
    _replay(tmp_path, calls, "layout")
    for _ in range(5):
        code, answer = _replay(tmp_path, calls, "run", "--timing", "fast")
        assert code == 0 and answer["mismatched"] == 0 and answer["threads"] == 2
        assert answer["waited_s"] > 0
    assert (tmp_path / "root/d/new.tmp").stat().st_size == 20 * 512     # each trial wrote it again from 0


def test_as_recorded_keeps_the_recorded_times_and_think_the_recorded_gaps(tmp_path):
    calls = [Call(0, k * 30_000_000, 1000, "stat", 2) for k in range(4)]          # every 30 ms
    _replay(tmp_path, calls, "layout")
    code, answer = _replay(tmp_path, calls, "run", "--timing", "recorded")
    assert code == 0 and answer["late"] == 0
    assert 0.090 <= answer["seconds"] < 0.090 + 0.020
    assert 0.085 <= answer["think_s"] <= answer["seconds"]
    code, answer = _replay(tmp_path, calls, "run", "--timing", "think")   # each gap after the last call's end
    assert code == 0 and 0.090 - 4e-6 <= answer["think_s"] < 0.090 + 0.020
    code, answer = _replay(tmp_path, calls, "run", "--timing", "fast")
    assert code == 0 and answer["think_s"] == 0 and answer["seconds"] < 0.020


def test_a_script_that_names_a_path_outside_its_folder_is_refused(tmp_path):
    text = "stibium-replay 1 1 0 0 1 1\nF 0 10 ../x\nC 0 15 0 -1 -1 -1 -1 0 0 0 0 -1 -1 -1 -1 0 0\n"
    code, answer = _replay(tmp_path, [], "layout", text=text)
    assert code != 0 and answer["error"] == "the script names the path '../x', which is not a plain relative path"
    assert not (tmp_path / "x").exists()


def test_a_listing_reads_the_folder_s_names_through_its_open_file(tmp_path):
    calls = [Call(0, 0, 5, "open", 1, handle=0, result=3), Call(0, 10, 5, "list", 1, handle=0, bytes=32768,
                                                                 result=100),
             Call(0, 20, 5, "close", 1, handle=0)]
    _replay(tmp_path, calls, "layout")
    code, answer = _replay(tmp_path, calls, "run", "--timing", "fast")
    assert code == 0 and answer["mismatched"] == 0 and _by_kind(answer)["list"]["count"] == 1


def test_many_threads_in_one_chain_each_wait_for_the_last(tmp_path):
    # 300 threads each stat the same file once, each after the last (its file's order across threads): every
    # thread released together, each waiting for the call before it on its own condition
    calls = [Call(t, t * 10, 5, "stat", 2) for t in range(300)]
    _replay(tmp_path, calls, "layout")
    code, answer = _replay(tmp_path, calls, "run", "--timing", "fast")
    assert code == 0 and (answer["threads"], answer["calls"], answer["mismatched"]) == (300, 300, 0)
    assert _by_kind(answer)["stat"]["count"] == 300 and answer["waited_s"] > 0


def _resident_pages(path: Path) -> int:
    done = subprocess.run([str(find_helper()), "residency", "--path", str(path)], capture_output=True, text=True,
                          check=True)
    return int(json.loads(done.stdout)["resident_pages"])


def test_a_program_s_advice_to_the_cache_is_given_again(disk_dir):
    """posix_fadvise as the program gave it: after a read of the whole file, its pages are in the cache; the
    recorded DONTNEED drops them (the helper's residency counts the file's pages in memory), and each advice is
    counted."""
    advised = [Call(0, 0, 5, "open", 2, handle=0, result=3),
               Call(0, 10, 5, "advise_sequential", 2, handle=0, offset=0, bytes=0),
               Call(0, 20, 5, "read", 2, handle=0, offset=0, bytes=100_000, result=100_000),
               Call(0, 30, 5, "advise_willneed", 2, handle=0, offset=0, bytes=4096),    # cached already
               Call(0, 40, 5, "advise_random", 2, handle=0, offset=0, bytes=0),
               Call(0, 50, 5, "advise_normal", 2, handle=0, offset=0, bytes=0),
               Call(0, 60, 5, "advise_noreuse", 2, handle=0, offset=0, bytes=0),
               Call(0, 70, 5, "advise_dontneed", 2, handle=0, offset=8192, bytes=4096),
               Call(0, 80, 5, "advise_dontneed", 2, handle=0, offset=0, bytes=0),
               Call(0, 90, 5, "close", 2, handle=0)]
    _replay(disk_dir, advised, "layout", "--evict", "on")
    code, answer = _replay(disk_dir, advised, "run", "--timing", "fast")
    assert code == 0 and answer["mismatched"] == 0, answer
    assert {k: v["count"] for k, v in _by_kind(answer).items() if k.startswith("advise_")} == {
        "advise_sequential": 1, "advise_dontneed": 2, "advise_random": 1, "advise_willneed": 1, "advise_normal": 1,
        "advise_noreuse": 1}
    assert _resident_pages(disk_dir / "root/d/old") == 0
    # without the last DONTNEED the read's pages stay: the advice, not the layout's eviction, dropped them
    code, answer = _replay(disk_dir, [c for c in advised if c.start_ns < 70] + [advised[-1]], "run", "--timing",
                           "fast")
    assert code == 0 and _resident_pages(disk_dir / "root/d/old") > 0
