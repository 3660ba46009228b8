"""`stibium selftest` end to end: every check passes on a disk-backed file system, and on tmpfs (which
accepts direct I/O and caches anyway) the cache checks fail and the command exits 1; the JSON for a
bug report holds the same; nothing is left in the target."""

from __future__ import annotations

import json

from click.testing import CliRunner

from stibium_py.cli import main


def _selftest(target, out):
    result = CliRunner().invoke(main, ["selftest", "--target", str(target), "--json", str(out)])
    return result, json.loads(out.read_text())


def test_every_check_passes_on_a_disk(disk_dir, tmp_path):
    target = disk_dir / "t"
    target.mkdir()
    result, data = _selftest(target, tmp_path / "s.json")
    statuses = {c["name"]: c["status"] for c in data["checks"]}
    assert result.exit_code == 0, result.output
    assert statuses == {name: "pass" for name in (
        "clock", "free space", "native helper", "engines", "direct write leaves no cache", "buffered read is cached",
        "evict empties the cache", "direct read bypasses the cache", "direct I/O honoured", "full sync")}
    assert data["failed"] is False and data["facts"]["helper"]["clock"]
    assert list(target.iterdir()) == []


def test_tmpfs_fails_the_cache_checks(mount_tmpfs, tmp_path):
    target = mount_tmpfs("200m")
    result, data = _selftest(target, tmp_path / "s.json")
    statuses = {c["name"]: c["status"] for c in data["checks"]}
    assert result.exit_code == 1
    assert statuses["direct I/O honoured"] == "fail"
    assert statuses["direct read bypasses the cache"] == "fail"
    assert statuses["evict empties the cache"] == "fail"
    assert statuses["clock"] == statuses["engines"] == "pass"
    assert data["failed"] is True
    assert list(target.iterdir()) == []


def test_a_target_that_is_not_a_folder_is_one_line(tmp_path):
    result = CliRunner().invoke(main, ["selftest", "--target", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"stibium: --target {tmp_path / 'nope'} does not exist; create it "
                                                  f"or choose another"]
