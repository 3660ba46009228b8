"""`stibium verify` on drives of known faults. A fake drive of known capacity (Recipe C's disk saying 256 MiB and keeping 64 MiB, every
byte past 64 MiB written around over what its first 64 MiB held, its first 4 MiB its own): the bytes that read
back as written are exactly those a drive of that mapping keeps (each block's place on the disk from FIEMAP,
the last block written to each place the one that reads back), the rest hold other blocks of the fill, and the
verdict names the fake capacity. A drive whose bytes at known offsets read back flipped and whose reads of a
known range fail: exactly the blocks over them are corrupted (one bit) and unreadable (EIO), none else. The same
disk keeping every byte reads everything back."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import devices

MiB = 1 << 20
SIZE, KEEP, HEAD = 256 * MiB, 64 * MiB, 4 * MiB


def _kept_at(offset: int) -> int:
    """Where parallel_disk keeps a byte of the fake (its kept_at)."""
    return offset if offset < KEEP else HEAD + (offset - HEAD) % (KEEP - HEAD)


def _extents(path: Path) -> list[tuple[int, int, int]]:
    """A file's extents in blocks: (first logical, last logical, first physical), from filefrag."""
    out = subprocess.run(["filefrag", "-e", str(path)], capture_output=True, text=True, check=True).stdout
    return [(int(a), int(b), int(p)) for a, b, p in re.findall(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.", out, re.M)]


def _verify(tmp_path: Path, mount: Path) -> tuple[subprocess.CompletedProcess, Path]:
    (mount / "t").mkdir()
    done = subprocess.run([sys.executable, "-m", "stibium_py", "verify", str(mount / "t"), "--margin", "8MiB",
                           "--file-size", "32MiB", "--keep", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "400"})
    (run_dir,) = (tmp_path / "r").iterdir()
    return done, run_dir


def test_a_fake_drive_s_real_capacity_is_found_to_the_block_and_named(tmp_path):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0, parallel=8, size_bytes=SIZE, keep_bytes=KEEP) as device:
        done, run_dir = _verify(tmp_path, device.mount)
        state = json.loads((run_dir / "verify.json").read_text())
        places = _places(state, device.mount / "t" / state["folder"])
    block = state["block_bytes"]
    winner: dict[int, int] = {}                # a place on the disk -> the last block of the fill written there
    for index in sorted(places):
        winner[_kept_at(places[index])] = index
    kept = sum(1 for index, place in places.items() if winner[_kept_at(place)] == index)
    summary = json.loads((run_dir / "summary.json").read_text())
    total = sum(f["blocks"] for f in state["files"])
    assert done.returncode == 1, done.stderr
    assert len(places) == total and kept < total
    assert summary["ok_bytes"] == kept * block                       # to the block
    assert summary["moved_blocks"] == total - kept and summary["corrupt_blocks"] == summary["unreadable_blocks"] == 0
    assert summary["verdict"].startswith(f"only {kept * block:,} of {total * block:,} bytes")
    assert "this drive writes over what it holds" in summary["verdict"]
    assert summary["verdict"] in done.stdout.splitlines()           # the terminal says it too, in one line
    print(f"kept {kept:,} of {total:,} blocks: {summary['verdict']}")


def _places(state: dict, folder: Path) -> dict[int, int]:
    """Each block of the fill -> its first byte on the disk (FIEMAP)."""
    out = {}
    block = state["block_bytes"]
    for f in state["files"]:
        for first, last, physical in _extents(folder / f["name"]):
            for k in range(first, last + 1):
                if (k * 4096) % block == 0:
                    out[f["first_block"] + k * 4096 // block] = (physical + k - first) * 4096
    return out


FLIPS = (100 * MiB + 12_345, 150 * MiB + 3 * 4096 + 7)
EIO = (200 * MiB, 200 * MiB + 40 * 1024 + 100)


def test_each_corrupted_and_each_unreadable_block_is_found_and_no_other(tmp_path):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    faults = ",".join([*(f"flip@{o}" for o in FLIPS), f"eio@{EIO[0]}-{EIO[1]}"])
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0, parallel=8, size_bytes=SIZE, faults=faults) as device:
        done, run_dir = _verify(tmp_path, device.mount)
        state = json.loads((run_dir / "verify.json").read_text())
        places = _places(state, device.mount / "t" / state["folder"])
    block = state["block_bytes"]
    corrupt = {i for i, p in places.items() for o in FLIPS if p <= o < p + block}
    unreadable = {i for i, p in places.items() if p < EIO[1] and p + block > EIO[0]}
    assert len(corrupt) == 2 and len(unreadable) == 11                  # the faults fell in the fill's files
    summary = json.loads((run_dir / "summary.json").read_text())
    assert done.returncode == 1, done.stderr
    assert (summary["corrupt_blocks"], summary["unreadable_blocks"], summary["moved_blocks"]) == (2, 11, 0)
    assert summary["ok_bytes"] == (len(places) - 13) * block
    bad = summary["bad"]
    assert {b["block"] for b in bad if b["kind"] == "corrupt"} == corrupt
    assert all(b["bits"] == 1 for b in bad if b["kind"] == "corrupt")
    assert {b["block"] for b in bad if b["kind"] == "unreadable"} == unreadable
    assert {b["errno"] for b in bad if b["kind"] == "unreadable"} == {5}
    assert summary["verdict"].endswith("; 2 blocks came back corrupted; 11 blocks could not be read")


def test_the_same_drive_keeping_every_byte_reads_everything_back(tmp_path):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0, parallel=8, size_bytes=SIZE) as device:
        done, run_dir = _verify(tmp_path, device.mount)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert done.returncode == 0, done.stderr
    assert summary["verdict"] == f"all {summary['bytes']:,} bytes read back as written"
    assert summary["bytes"] > 200 * MiB


def test_a_verify_cut_by_a_signal_says_so_and_resumes_to_the_same_verdict_writing_no_file_twice(tmp_path):
    """SIGINT once the first file is written (a disk of 2 ms a request, so that the rest takes seconds): exit 130,
    the record interrupted and the way on said in one line; resumed on its target, the first file is not written
    again and every byte reads back."""
    import signal
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.002, parallel=1, size_bytes=SIZE) as device:
        target = device.mount / "t"
        target.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "stibium_py", "verify", str(target), "--size", "48MiB",
                                 "--file-size", "8MiB", "--out", str(tmp_path / "r")], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "400"})
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("written 1 of 6 files"):
                proc.send_signal(signal.SIGINT)
                break
        out, err = proc.communicate(timeout=300)
        (run_dir,) = (tmp_path / "r").iterdir()
        assert proc.returncode == 130, err
        assert err.splitlines() == [f"stibium: the verify was interrupted (SIGINT); carry it on with `stibium verify "
                                    f"{target} --resume {run_dir}`"]
        state = json.loads((run_dir / "verify.json").read_text())
        assert state["status"] == "interrupted" and state["files"][0]["written"]
        assert json.loads((run_dir / "summary.json").read_text())["verdict"].startswith("not finished: ")
        shown = subprocess.run([sys.executable, "-m", "stibium_py", "report", str(run_dir)], capture_output=True,
                               text=True, env={**os.environ, "COLUMNS": "400"}).stdout.splitlines()
        assert shown[0].startswith("not finished: ") and shown[1] == "this verify is interrupted (SIGINT)"
        done = subprocess.run([sys.executable, "-m", "stibium_py", "verify", str(target), "--resume", str(run_dir)],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "400"})
        assert done.returncode == 0, done.stderr
        state = json.loads((run_dir / "verify.json").read_text())
        assert state["status"] == "complete" and state["files"][0]["attempts"]["write"] == 1
        assert "all 50,331,648 bytes read back as written" in done.stdout.splitlines()
        assert not list(target.iterdir())


def test_a_plan_s_verify_test_finds_the_fake_capacity_to_the_block_and_says_it_first(tmp_path):
    """The same fake drive verified by a plan's test (`kind: verify`) through `stibium run`: its summary counts the
    blocks the drive keeps to the block, the verdict names the wrap, and the terminal says it as its own line."""
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0, parallel=8, size_bytes=SIZE, keep_bytes=KEEP) as device:
        target = device.mount / "t"
        plan = tmp_path / "v.yaml"            # as much as the run's margin leaves: well past the 64 MiB kept
        plan.write_text("name: v\ntests:\n  - name: fill\n    kind: verify\n    fraction_of_free: 0.98\n"
                        "    file_size: 32MiB\n    chunk: 1MiB\n")
        done = subprocess.run([sys.executable, "-m", "stibium_py", "run", str(plan), "--target", str(target),
                               "--keep-files", "--out", str(tmp_path / "r")], capture_output=True, text=True,
                              timeout=900, env={**os.environ, "COLUMNS": "400"})
        assert done.returncode == 0, done.stdout + done.stderr
        (run_dir,) = (tmp_path / "r").iterdir()
        summary = json.loads((run_dir / "summary.json").read_text())
        read = next(t for t in summary["tests"] if t["op"] == "read")
        block, fill = read["block_bytes"], read["written_bytes"]
        files = sorted(target.rglob("v*.bin"))
        places: dict[int, int] = {}
        for k, path in enumerate(files):
            first_block = k * 32 * MiB // block
            for first, last, physical in _extents(path):
                for j in range(first, last + 1):
                    if (j * 4096) % block == 0:
                        places[first_block + j * 4096 // block] = (physical + j - first) * 4096
    winner: dict[int, int] = {}
    for index in sorted(places):
        winner[_kept_at(places[index])] = index
    kept = sum(1 for index, place in places.items() if winner[_kept_at(place)] == index)
    total = fill // block
    assert len(files) == -(-fill // (32 * MiB)) and len(places) == total and kept < total
    assert read["ok_bytes"] == kept * block                          # to the block
    assert read["moved_blocks"] == total - kept and read["corrupt_blocks"] == read["unreadable_blocks"] == 0
    assert read["verdict"].startswith(f"only {kept * block:,} of {total * block:,} bytes")
    assert "this drive writes over what it holds" in read["verdict"]
    assert f"fill: {read['verdict']}" in done.stdout.splitlines()    # the terminal's own line
    print(f"TRUTH plan's verify: kept {kept:,} of {total:,} blocks: {read['verdict']}")
