"""`stibium selftest` end to end: every check passes on a disk-backed file system, and on tmpfs (which
accepts direct I/O and caches anyway) the cache checks fail and the command exits 1; the JSON for a
bug report holds the same; nothing is left in the target."""

from __future__ import annotations

import json
import statistics

from click.testing import CliRunner

from stibium_py.analysis.below import BELOW_SHARE
from stibium_py.analysis.flushes import FlushVerdict, flush_time
from stibium_py.cli import main


def _selftest(target, out):
    result = CliRunner().invoke(main, ["selftest", "--target", str(target), "--json", str(out)])
    return result, json.loads(out.read_text())


def test_every_check_of_the_machine_passes_on_a_disk(disk_dir, tmp_path):
    """On this machine's disk. Whether direct reads reach the disk below a virtual machine's disk is the host's
    affair (this machine's reads of a file just written ran at up to 35 % of memory speed): that check is held
    to its threshold, and every check passing is shown on a device of known speed
    (tests/truth/test_truth_below_cache.py)."""
    target = disk_dir / "t" / "new"             # not there yet: made, as `stibium run` makes its target
    result, data = _selftest(target, tmp_path / "s.json")
    statuses = {c["name"]: c["status"] for c in data["checks"]}
    bypass = next(c for c in data["checks"] if c["name"] == "direct read bypasses the cache")
    share = 1 / bypass["numbers"]["cache_speedup"]
    assert bypass["status"] == ("fail" if share >= BELOW_SHARE else "pass")
    assert result.exit_code == (1 if bypass["status"] == "fail" else 0), result.output
    # whether this virtual disk's flushes reach a medium is its host's affair: the flush check is held to what it
    # measured (tests/truth/test_truth_flushes.py shows both answers on devices of known behaviour)
    flushes = next(c for c in data["checks"] if c["name"] == "flushes")
    n = flushes["numbers"]
    syncs = {"fsync": "fsync", "fdatasync": "data", "O_DSYNC": "dsync"}
    verdict = FlushVerdict(n["write_bytes"], statistics.median(n["write_s"]), tuple(
        flush_time("linux", syncs[k[:-2]], k[:-2], n["write_s"], v) for k, v in n.items() if k[:-2] in syncs))
    said = f"; the drive reports its write cache as {n['write_cache']}" if n["write_cache"] else ""
    assert len(verdict.flushes) == 3 and len(n["write_s"]) == 15
    assert (flushes["status"], flushes["detail"]) == ("cannot tell" if verdict.suspicious else "pass", verdict.text + said)
    assert {k: v for k, v in statuses.items() if k not in (bypass["name"], "flushes")} == {name: "pass" for name in (
        "clock", "free space", "native helper", "engines", "direct write leaves no cache", "buffered read is cached",
        "evict empties the cache", "direct I/O honoured", "full sync", "no cache below the file system")}
    assert data["failed"] is (bypass["status"] == "fail") and data["facts"]["helper"]["clock"]
    assert data["facts"]["target"] == str(target.resolve())
    assert not (disk_dir / "t").exists()        # the folders it made are gone again


def test_tmpfs_fails_the_cache_checks(mount_tmpfs, tmp_path):
    target = mount_tmpfs("200m")
    result, data = _selftest(target, tmp_path / "s.json")
    statuses = {c["name"]: c["status"] for c in data["checks"]}
    assert result.exit_code == 1
    assert statuses["direct I/O honoured"] == "fail"
    assert statuses["direct read bypasses the cache"] == "fail"
    assert statuses["evict empties the cache"] == "fail"
    assert statuses["no cache below the file system"] == "fail"
    stack_check = next(c for c in data["checks"] if c["name"] == "no cache below the file system")
    assert stack_check["detail"] == ("tmpfs (file system): tmpfs keeps files in memory: every read is a memory copy; "
                                     "choose a target on a disk")
    assert statuses["clock"] == statuses["engines"] == "pass"
    assert data["failed"] is True
    assert list(target.iterdir()) == []


def test_a_target_that_is_not_a_folder_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(main, ["selftest", "--target", str(tmp_path / "file" / "sub")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"stibium: --target {tmp_path / 'file' / 'sub'} has a part that is a "
                                                  f"file, not a folder ({tmp_path / 'file'}); choose another folder"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
