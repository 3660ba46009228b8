"""Records the built-in traces (plans/traces/*.trace) again: four real programs, each run under `stibium record` in
a scratch folder made the same way each time, each trace anonymised as every trace is (names become tokens, no data
is kept). Not a test: what it records depends on the machine and the programs' versions; docs/trace-format.md
("Built-in traces") says what each is and where it was recorded.

    python3 tests/bench/record_builtin_traces.py [--out plans/traces] [--scratch DIR]"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SQLITE = r"""
import sqlite3
db = sqlite3.connect("notes.db", isolation_level=None)
db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE IF NOT EXISTS note (id INTEGER PRIMARY KEY, title TEXT, body TEXT)")
for k in range(200):                      # one transaction a row, as an app that saves each edit
    db.execute("BEGIN")
    db.execute("INSERT INTO note (title, body) VALUES (?, ?)", (f"note {k}", "x" * (200 + 37 * (k % 50))))
    db.execute("COMMIT")
db.close()
"""

PHOTOS = r"""
import os, shutil
os.makedirs("library/2026", exist_ok=True)
for name in sorted(os.listdir("card/DCIM")):          # each photo copied, then a sidecar written beside it
    src, dst = f"card/DCIM/{name}", f"library/2026/{name}"
    with open(src, "rb") as r, open(dst, "wb") as w:
        while True:
            block = r.read(1 << 20)
            if not block:
                break
            w.write(block)
        w.flush()
        os.fsync(w.fileno())
    with open(dst[:-4] + ".xmp", "w") as side:
        side.write("<x:xmpmeta>" + "r" * 3000 + "</x:xmpmeta>")
        side.flush()
        os.fsync(side.fileno())
    os.stat(dst)
"""


def _files(folder: Path, count: int, low: int, high: int, seed: int, dirs: int = 1, ext: str = ".c") -> None:
    rng = random.Random(seed)
    for k in range(count):
        d = folder / (f"d{k % dirs}" if dirs > 1 else "")
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{k:04d}{ext}").write_bytes(rng.randbytes(rng.randint(low, high)))


def _record(work: Path, out: Path, command: list[str]) -> None:
    out.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", "stibium_py", "record", "--folder", str(work), "--out", str(out),
                           "--", *command], cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{out.name}: {done.stdout}{done.stderr}")
    print(f"{out.name}: {done.stdout.strip().splitlines()[-1] if done.stdout.strip() else 'recorded'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "plans" / "traces")
    ap.add_argument("--scratch", type=Path, default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=args.scratch))
    try:
        work = scratch / "sqlite"
        work.mkdir()
        (scratch / "sqlite.py").write_text(SQLITE)
        _record(work, args.out / "sqlite-inserts.trace", [sys.executable, str(scratch / "sqlite.py")])

        work = scratch / "checkout"
        _files(work / "repo", 300, 500, 16_000, 1, dirs=20)
        env = {**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@s", "GIT_COMMITTER_NAME": "s",
               "GIT_COMMITTER_EMAIL": "s@s"}
        for step in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "tree"]):
            subprocess.run(["git", *step], cwd=work / "repo", check=True, env=env)
        for entry in (work / "repo").iterdir():
            if entry.name != ".git":
                shutil.rmtree(entry)
        _record(work, args.out / "git-checkout.trace", ["git", "-C", "repo", "checkout", "-q", "-f", "HEAD"])

        work = scratch / "extract"
        _files(scratch / "tree", 300, 500, 16_000, 2, dirs=20)
        work.mkdir()
        subprocess.run(["tar", "-czf", str(work / "tree.tar.gz"), "-C", str(scratch), "tree"], check=True)
        (work / "out").mkdir()
        _record(work, args.out / "tar-extract.trace", ["tar", "-xzf", "tree.tar.gz", "-C", "out"])

        work = scratch / "photos"
        _files(work / "card" / "DCIM", 24, 1_500_000, 4_000_000, 3, ext=".JPG")
        (scratch / "photos.py").write_text(PHOTOS)
        _record(work, args.out / "photo-import.trace", [sys.executable, str(scratch / "photos.py")])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
