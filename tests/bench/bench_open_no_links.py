"""The helper's open of a test file by a path in which no name may be a link (helper/sb_nolinks.c: openat2 with
RESOLVE_NO_SYMLINKS on Linux, O_NOFOLLOW_ANY on macOS) against an older helper's plain open(2) with O_NOFOLLOW:
`open_seconds` of a 4 KiB uncached read of a file six names deep, the two helpers taking turns call by call.
Target: the same within the spread (the open stays outside the requests' timed interval, inside open_seconds)."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess

from common import scratch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("old", help="an older stibium-helper (built from a commit before sb_nolinks.c)")
    ap.add_argument("new", help="this tree's stibium-helper")
    ap.add_argument("--dir")
    ap.add_argument("--calls", type=int, default=300)
    a = ap.parse_args()
    d = scratch(a.dir)
    try:
        folder = d / "a" / "b" / "c" / "d"
        folder.mkdir(parents=True)
        f = folder / "f.bin"
        f.write_bytes(b"x" * 4096)
        seen: dict[str, list[float]] = {a.old: [], a.new: []}
        for i in range(a.calls):
            for h in (a.old, a.new) if i % 2 else (a.new, a.old):
                out = subprocess.run([h, "read", "--path", str(f), "--bytes", "4KiB"], capture_output=True, text=True)
                seen[h].append(json.loads(out.stdout)["open_seconds"])
        for h, name in ((a.old, "old"), (a.new, "new")):
            v = sorted(seen[h])
            n = len(v)
            print(f"{name}: open_seconds median {statistics.median(v) * 1e6:.1f} us, p10 {v[n // 10] * 1e6:.1f}, "
                  f"p90 {v[n * 9 // 10] * 1e6:.1f}")
        print(f"new / old: {statistics.median(seen[a.new]) / statistics.median(seen[a.old]):.3f}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
