"""`stibium verify` on drives of known faults. A fake drive of known capacity (Recipe C's disk saying 256 MiB and keeping 64 MiB, every
byte past 64 MiB written around over what its first 64 MiB held, its first 4 MiB its own): the bytes that read
back as written are exactly those a drive of that mapping keeps (each block's place on the disk from FIEMAP,
the last block written to each place the one that reads back), the rest hold other blocks of the fill, and the
verdict names the fake capacity. A drive whose bytes at known offsets read back flipped and whose reads of a
known range fail: exactly the blocks over them are corrupted (one bit) and unreadable (EIO), none else. The same
disk keeping every byte reads everything back. `stibium verify` is a plan of one verify test: the same drive
verified by a plan of its own says the same."""

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


def _verify(tmp_path: Path, mount: Path, *more: str) -> tuple[subprocess.CompletedProcess, Path, dict]:
    """`stibium verify` of mount/t with files of 32 MiB kept, as much as the run's margin leaves (64 MB and 5 % of
    the fill free: about 160 MiB of this 256 MiB disk); its run directory and the read back's summary."""
    (mount / "t").mkdir()
    done = subprocess.run([sys.executable, "-m", "stibium_py", "verify", str(mount / "t"), "--file-size", "32MiB",
                           "--keep", "--out", str(tmp_path / "r"), "--no-history", *more],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "400"})
    (run_dir,) = (tmp_path / "r").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text()) if (run_dir / "summary.json").exists() else {}
    read = next((t for t in summary.get("tests", []) if t["op"] == "read"), {})
    return done, run_dir, read


def _places(target: Path, block: int) -> dict[int, int]:
    """Each block of the fill -> its first byte on the disk (FIEMAP); file k of 32 MiB begins at block
    k * 32 MiB / block of the fill."""
    places: dict[int, int] = {}
    for k, path in enumerate(sorted(target.rglob("v*.bin"))):
        first_block = k * 32 * MiB // block
        for first, last, physical in _extents(path):
            for j in range(first, last + 1):
                if (j * 4096) % block == 0:
                    places[first_block + j * 4096 // block] = (physical + j - first) * 4096
    return places


def _kept(places: dict[int, int]) -> int:
    """The blocks a drive of parallel_disk's mapping keeps: the last one written to each place."""
    winner: dict[int, int] = {}
    for index in sorted(places):
        winner[_kept_at(places[index])] = index
    return sum(1 for index, place in places.items() if winner[_kept_at(place)] == index)


def test_a_fake_drive_s_real_capacity_is_found_to_the_block_and_named(tmp_path):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0, parallel=8, size_bytes=SIZE, keep_bytes=KEEP) as device:
        done, run_dir, read = _verify(tmp_path, device.mount)
        block = read["block_bytes"]
        places = _places(device.mount / "t", block)
    kept, total = _kept(places), read["written_bytes"] // block
    assert done.returncode == 1, done.stderr                         # a byte did not read back as written
    assert len(places) == total and kept < total
    assert read["ok_bytes"] == kept * block                          # to the block
    assert read["moved_blocks"] == total - kept and read["corrupt_blocks"] == read["unreadable_blocks"] == 0
    assert read["verdict"].startswith(f"only {kept * block:,} of {total * block:,} bytes")
    assert "this drive writes over what it holds" in read["verdict"]
    assert f"fill: {read['verdict']}" in done.stdout.splitlines()   # the terminal says it too, in one line
    print(f"kept {kept:,} of {total:,} blocks: {read['verdict']}")


# inside the fill (about 168 MiB of this disk, which ext4 puts at 1-41 and 130-255 MiB of it: FIEMAP); the test
# asserts the faults fell in its files before it asserts anything of the verdict
FLIPS = (150 * MiB + 12_345, 180 * MiB + 3 * 4096 + 7)
EIO = (200 * MiB, 200 * MiB + 40 * 1024 + 100)


def test_each_corrupted_and_each_unreadable_block_is_found_and_no_other(tmp_path):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    faults = ",".join([*(f"flip@{o}" for o in FLIPS), f"eio@{EIO[0]}-{EIO[1]}"])
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0, parallel=8, size_bytes=SIZE, faults=faults) as device:
        done, run_dir, read = _verify(tmp_path, device.mount)
        block = read["block_bytes"]
        places = _places(device.mount / "t", block)
    corrupt = {i for i, p in places.items() for o in FLIPS if p <= o < p + block}
    unreadable = {i for i, p in places.items() if p < EIO[1] and p + block > EIO[0]}
    assert len(corrupt) == 2 and len(unreadable) == 11                  # the faults fell in the fill's files
    assert done.returncode == 1, done.stderr
    assert (read["corrupt_blocks"], read["unreadable_blocks"], read["moved_blocks"]) == (2, 11, 0)
    assert read["ok_bytes"] == (len(places) - 13) * block
    bad = read["bad"]
    assert {b["block"] for b in bad if b["kind"] == "corrupt"} == corrupt
    assert all(b["bits"] == 1 for b in bad if b["kind"] == "corrupt")
    assert {b["block"] for b in bad if b["kind"] == "unreadable"} == unreadable
    assert {b["errno"] for b in bad if b["kind"] == "unreadable"} == {5}
    assert read["verdict"].endswith("; 2 blocks came back corrupted; 11 blocks could not be read")


def test_the_same_drive_keeping_every_byte_reads_everything_back(tmp_path):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0, parallel=8, size_bytes=SIZE) as device:
        done, run_dir, read = _verify(tmp_path, device.mount)
    assert done.returncode == 0, done.stderr
    assert read["verdict"] == f"all {read['written_bytes']:,} bytes read back as written"
    assert read["written_bytes"] > 140 * MiB


def test_a_verify_cut_by_a_signal_says_so_and_resumes_to_the_same_verdict_writing_no_file_twice(tmp_path):
    """SIGINT once the first file is written (a disk of 2 ms a request, so that the rest takes seconds): exit 130,
    the record interrupted and the way on said in one line; resumed on its target, the first file is not written
    again and every byte reads back."""
    import csv
    import signal
    import time
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    with devices.recipe_c(tmp_path / "dev", delay_s=0.002, parallel=1, size_bytes=SIZE) as device:
        target = device.mount / "t"
        target.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "stibium_py", "verify", str(target), "--size", "48MiB",
                                 "--file-size", "8MiB", "--out", str(tmp_path / "r"), "--no-history"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "COLUMNS": "400"})

        def files_written() -> int:
            rows = list((tmp_path / "r").glob("*/measurements.csv"))
            if not rows:
                return 0
            with open(rows[0], newline="") as f:
                return sum(1 for r in csv.DictReader(f) if r["op"] == "write" and r["chunk"] == "" and r["error"] == "")
        deadline = time.monotonic() + 120
        while files_written() < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
        (run_dir,) = (tmp_path / "r").iterdir()
        assert proc.returncode == 130, err
        assert err.splitlines()[-1] == f"stibium: run interrupted; finish it with `stibium resume {run_dir}`"
        assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
        written = files_written()
        assert 1 <= written < 6
        done = subprocess.run([sys.executable, "-m", "stibium_py", "verify", str(target), "--resume", str(run_dir),
                               "--no-history"], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "COLUMNS": "400"})
        assert done.returncode == 0, done.stderr
        assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
        assert files_written() == 6                  # each file written whole once: none written again
        assert "fill: all 50,331,648 bytes read back as written" in done.stdout.splitlines()
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
        places = _places(target, block)
    kept = _kept(places)
    total = fill // block
    assert len(files) == -(-fill // (32 * MiB)) and len(places) == total and kept < total
    assert read["ok_bytes"] == kept * block                          # to the block
    assert read["moved_blocks"] == total - kept and read["corrupt_blocks"] == read["unreadable_blocks"] == 0
    assert read["verdict"].startswith(f"only {kept * block:,} of {total * block:,} bytes")
    assert "this drive writes over what it holds" in read["verdict"]
    assert f"fill: {read['verdict']}" in done.stdout.splitlines()    # the terminal's own line
    print(f"TRUTH plan's verify: kept {kept:,} of {total:,} blocks: {read['verdict']}")
