"""What the helper's tree phases (`stibium-helper tree`) add per file against a bare C loop of the same calls:
the same list, the same phases one after another (create without sync, stat, list, read without eviction,
copy, rename, delete), one thread, each side timing its own interval with the raw monotonic clock; rounds
alternate the two, medians per phase, and the difference per file. Use a low-noise folder (zram with ext4,
or tmpfs) so that the device does not drown the calls:

    PYTHONPATH=tests/bench python3 tests/bench/bench_tree_helper.py --dir /mnt/zram [--files 10000] [--rounds 5]"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from stibium_py.run.helper import find_helper

PHASES = ("create", "stat", "list", "read", "copy", "rename", "delete")

BARE_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static unsigned long long now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return t.tv_sec * 1000000000ULL + t.tv_nsec; }
int main(int argc, char **argv) {            /* bare ROOT LIST PHASE: one line per file "size\tpath\tnew" */
    const char *root = argv[1], *phase = argv[3];
    FILE *f = fopen(argv[2], "r"); char line[8192]; size_t n = 0, cap = 1024;
    char **paths = malloc(cap * sizeof *paths), **tos = malloc(cap * sizeof *tos); unsigned long long *sizes = malloc(cap * 8);
    while (fgets(line, sizeof line, f)) {
        if (n == cap) { cap *= 2; paths = realloc(paths, cap * sizeof *paths); tos = realloc(tos, cap * sizeof *tos);
                        sizes = realloc(sizes, cap * 8); }
        line[strcspn(line, "\n")] = 0; char *p = strchr(line, '\t') + 1, *t = strchr(p, '\t'); if (t) *t++ = 0;
        sizes[n] = strtoull(line, NULL, 10); asprintf(&paths[n], "%s/%s", root, p);
        tos[n] = NULL; if (t) asprintf(&tos[n], "%s/%s", root, t); n++;
    }
    static char buf[1 << 20]; memset(buf, 7, sizeof buf);
    unsigned long long t0 = now(), ops = 0; struct stat st;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(phase, "create")) {
            int fd = open(paths[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0) { /* the folders above, as the helper makes them */
                for (char *s = strchr(paths[i] + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
                    *s = 0; mkdir(paths[i], 0755); *s = '/'; }
                fd = open(paths[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); }
            for (unsigned long long left = sizes[i]; left;) { ssize_t k = write(fd, buf, left < sizeof buf ? left : sizeof buf);
                if (k <= 0) return 1; left -= k; }
            close(fd);
        } else if (!strcmp(phase, "stat")) { if (stat(paths[i], &st)) return 1; }
        else if (!strcmp(phase, "read")) { int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
            while (read(fd, buf, sizeof buf) > 0) {} close(fd); }
        else if (!strcmp(phase, "copy")) {          /* a clone where it can, else copy_file_range, as the helper */
            int in = open(paths[i], O_RDONLY | O_CLOEXEC), out = open(tos[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (out < 0) { for (char *s = strchr(tos[i] + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
                    *s = 0; mkdir(tos[i], 0755); *s = '/'; }
                out = open(tos[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644); }
            if (ioctl(out, FICLONE, in) != 0) while (copy_file_range(in, NULL, out, NULL, 1 << 30, 0) > 0) {}
            close(in); close(out); }
        else if (!strcmp(phase, "rename")) { if (rename(paths[i], tos[i])) return 1; }
        else if (!strcmp(phase, "delete")) { if (unlink(paths[i])) return 1; }
        else if (!strcmp(phase, "list")) {           /* the list names the folders: each listed once */
            DIR *d = opendir(paths[i]); if (!d) return 1; while (readdir(d)) {} closedir(d); }
        ops++;
    }
    printf("{\"seconds\": %.9f, \"ops\": %llu}\n", (now() - t0) / 1e9, ops);
    return 0;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="a low-noise folder (zram, tmpfs)")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stibium-bench-tree-"))
    try:
        bare = work / "bare"
        (work / "bare.c").write_text(BARE_C)
        subprocess.run(["cc", "-O2", "-o", str(bare), str(work / "bare.c")], check=True)
        rng = random.Random(1)
        names = [f"src/d{k // 400}/m{k // 40}/f{k}.c" for k in range(a.files)]    # 40 files a folder
        sizes = [int(1024 * 64 ** rng.random()) for _ in names]                   # 1-64 KiB, log-uniform
        lists = {"plain": work / "plain.txt", "rename": work / "rename.txt", "renamed": work / "renamed.txt",
                 "folders": work / "folders.txt", "copy": work / "copy.txt"}
        folders = sorted({"."} | {str(p) for n in names for p in Path(n).parents if str(p) != "."})
        lists["plain"].write_text("".join(f"{s}\t{n}\n" for s, n in zip(sizes, names)))
        lists["rename"].write_text("".join(f"0\t{n}\t{n}.o\n" for n in names))
        lists["renamed"].write_text("".join(f"0\t{n}.o\n" for n in names))
        lists["copy"].write_text("".join(f"{s}\t{n}\tcopy/{n}\n" for s, n in zip(sizes, names)))
        lists["folders"].write_text("".join(f"0\t{f}\n" for f in folders))      # the folders the helper lists
        which = {"rename": "rename", "delete": "renamed", "copy": "copy"}
        helper = str(find_helper())
        # each side's seconds per operation (list: per folder)
        times: dict[str, dict[str, list[float]]] = {side: {p: [] for p in PHASES} for side in ("helper", "bare")}
        for r in range(a.rounds):
            for side in (("helper", "bare") if r % 2 == 0 else ("bare", "helper")):
                root = Path(a.dir) / f"stibium-bench-tree-{side}"
                root.mkdir()
                try:
                    for phase in PHASES:
                        listing = str(lists[which.get(phase, "plain")])
                        if side == "bare" and phase == "list":
                            listing = str(lists["folders"])
                        cmd = ([helper, "tree", "--path", str(root), "--list", listing, "--phase", phase]
                               + (["--evict", "off"] if phase == "read" else [])) if side == "helper" \
                            else [str(bare), str(root), listing, phase]
                        out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                        times[side][phase].append(out["seconds"] / out["ops"])
                finally:
                    shutil.rmtree(root, ignore_errors=True)
        print(f"{a.files} files of 1-64 KiB in {a.files // 40} folders under {a.dir}; medians of {a.rounds} rounds")
        print(f"{'phase':8} {'helper us/op':>13} {'bare C us/op':>13} {'ratio':>7} {'added us/op':>12}")
        for phase in PHASES:
            h, b = statistics.median(times["helper"][phase]), statistics.median(times["bare"][phase])
            print(f"{phase:8} {h * 1e6:13.2f} {b * 1e6:13.2f} {h / b:7.3f} {(h - b) * 1e6:12.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
