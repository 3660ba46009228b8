"""Where ext4 puts a program's files, and what that does to the device's writes (docs/truth-devices.md, "Replays"):
SQLite's inserts (the truth test's program) recorded with `stibium record`, then the program itself and its replay
run again and again on one file system, each time in the recorded folder emptied or in a new folder at the top;
each line the bytes the device wrote (synced after), against the recording's, and the database's extents
(filefrag). With --blocks-not-by-cpu, /sys/fs/ext4/DEV/mb_stream_req is 0 (every file its own preallocation).

Root: ext4 on a loop device over an image in /dev/shm, removed after.

    python3 tests/bench/bench_replay_placement.py [--file-systems 3] [--rounds 4] [--blocks-not-by-cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "truth"))

from stibium_py.kinds.replay.script import script_of  # noqa: E402
from stibium_py.run.helper import find_helper  # noqa: E402
from stibium_py.trace.model import read_trace  # noqa: E402
from test_truth_replay import SQLITE  # noqa: E402  (the truth test's program, the one whose writes this explains)


def _written(device: str) -> int:
    return int(Path(f"/sys/block/{device}/stat").read_text().split()[6]) * 512


def _extents(path: Path) -> str:
    return subprocess.run(["filefrag", str(path)], capture_output=True, text=True).stdout.split(":")[-1].strip()


def _empty(folder: Path) -> None:
    for made in folder.iterdir():
        shutil.rmtree(made) if made.is_dir() else made.unlink()


def one_file_system(work: Path, rounds: int, not_by_cpu: bool) -> None:
    image, mount = Path(tempfile.mkdtemp(dir="/dev/shm")) / "fs.img", work / "mnt"
    mount.mkdir()
    with open(image, "wb") as f:
        f.truncate(1 << 30)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
    loop = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True,
                          check=True).stdout.strip()
    device = Path(loop).name
    try:
        subprocess.run(["mount", loop, str(mount)], check=True)
        if not_by_cpu:
            Path(f"/sys/fs/ext4/{device}/mb_stream_req").write_text("0\n")
        app, elsewhere = mount / "app", mount / "elsewhere"
        app.mkdir()
        trace, script = work / "app.trace", work / "script.txt"
        subprocess.run(["sync"], check=True)
        before = _written(device)
        subprocess.run([sys.executable, "-m", "stibium_py", "record", "--folder", str(app), "--out", str(trace), "--",
                        sys.executable, "-c", SQLITE], cwd=app, check=True, capture_output=True)
        subprocess.run(["sync"], check=True)
        recorded = _written(device) - before
        print(f"recorded: {recorded:,} bytes written, folder inode {app.stat().st_ino}, database "
              f"{_extents(app / 'app.db')}")
        script.write_text(script_of(read_trace(trace)).text)
        elsewhere.mkdir()
        for r in range(rounds):
            for what, folder in (("the program", app), ("replay", app), ("replay", elsewhere)):
                _empty(folder)
                base = [str(find_helper()), "replay", "--path", str(folder), "--script", str(script)]
                if what == "replay":
                    subprocess.run([*base, "--phase", "layout"], check=True, capture_output=True)
                subprocess.run(["sync"], check=True)
                before = _written(device)
                if what == "replay":
                    ran = subprocess.run([*base, "--phase", "run", "--timing", "fast"], capture_output=True, text=True,
                                         check=True)
                    assert json.loads(ran.stdout)["mismatched"] == 0
                else:
                    subprocess.run([sys.executable, "-c", SQLITE], cwd=folder, check=True)
                subprocess.run(["sync"], check=True)
                written = _written(device) - before
                db = folder / ("app.db" if what == "the program" else "n1")
                print(f"  {what} in {folder.name} (inode {folder.stat().st_ino}): {written:,} bytes "
                      f"({written / recorded - 1:+.2%}), database {_extents(db)}")
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        subprocess.run(["losetup", "-d", loop], check=False)
        shutil.rmtree(image.parent, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file-systems", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--blocks-not-by-cpu", action="store_true")
    a = ap.parse_args()
    for _ in range(a.file_systems):
        with tempfile.TemporaryDirectory(prefix="stibium-placement-") as work:
            one_file_system(Path(work), a.rounds, a.blocks_not_by_cpu)


if __name__ == "__main__":
    main()
