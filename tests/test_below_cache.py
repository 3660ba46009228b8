"""Caches below the file system: the block-device stack read from a sysfs laid out as the kernel lays it
out (and diskutil's answer on a Mac), the memory yardstick, the flag it gives files and pattern reads, the
warnings in summary.json and in the terminal, compare's caution, and no negative latency in the table.
The same on real loop devices: tests/truth/test_truth_below_cache.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from stibium_py.machine import stack
from stibium_py.analysis.settings import Settings
from stibium_py.analysis.summary import summarize
from stibium_py.cli import main
from stibium_py.machine.memory import CAP_BYTES, Shape, shape_of
from stibium_py.rundir.record import RunRecord
from stibium_py.kinds.files.view import SMALLEST_NOTE
from stibium_py.report.build import terminal_table
from stibium_py.rundir.store import read_run_json
from stibium_py.rundir.csvread import read_measurements
from synthetic import SIZES, make_run

LOOP_WHY = ("the loop device reads its backing file /images/disk.img through the page cache (dio 0), so reads this "
            "run made uncached come from memory one layer down; attach it with `losetup --direct-io=on`, or choose "
            "a target on a disk")


def _block(sys_root: Path, name: str, device_path: str, files: dict[str, str] | None = None) -> Path:
    """A block device at sys_root/devices/<device_path>/block/<name> with /sys/class/block/<name> linked to it."""
    node = sys_root / "devices" / device_path / "block" / name
    node.mkdir(parents=True)
    for rel, text in (files or {}).items():
        (node / rel).parent.mkdir(parents=True, exist_ok=True)
        (node / rel).write_text(text + "\n")
    link = sys_root / "class" / "block" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(node)
    return node


def _partition(sys_root: Path, disk: Path, name: str) -> None:
    part = disk / name
    part.mkdir()
    (part / "partition").write_text("1\n")
    (sys_root / "class" / "block" / name).symlink_to(part)


def test_a_loop_device_without_direct_io_serves_reads_from_memory(tmp_path):
    sys_root = tmp_path / "sys"
    _block(sys_root, "loop0", "virtual", {"loop/backing_file": "/images/disk.img", "loop/dio": "0"})
    vda = _block(sys_root, "vda", "pci0000:00/0000:00:02.0/virtio1")
    _partition(sys_root, vda, "vda1")
    mounts = "/dev/vda1 /images ext4 rw 0 0\n/dev/loop0 /mnt ext4 rw 0 0\n"
    s = stack.linux_stack("ext4", "/dev/loop0", mounts, sys_root)
    assert [(x.name, x.kind, x.reads) for x in s.layers] == [
        ("ext4", "file system", "none"), ("loop0", "loop", "memory"), ("ext4", "file system", "none"),
        ("vda1", "partition", "none"), ("vda", "virtio", "may cache")]
    assert s.memory[0].why == LOOP_WHY
    assert s.text().startswith("ext4 (file system) on loop0 (loop, dio 0, backing /images/disk.img) on ext4")


def test_a_loop_device_with_direct_io_is_as_good_as_its_backing_file(tmp_path):
    sys_root = tmp_path / "sys"
    _block(sys_root, "loop0", "virtual", {"loop/backing_file": "/images/disk.img", "loop/dio": "1"})
    _block(sys_root, "loop1", "virtual", {"loop/backing_file": "/dev/shm/disk.img", "loop/dio": "1"})
    _block(sys_root, "nvme0n1", "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0", {"device/model": "Samsung 990"})
    mounts = "/dev/nvme0n1 /images xfs rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n"
    on_disk = stack.linux_stack("ext4", "/dev/loop0", mounts, sys_root)
    assert [(x.name, x.reads) for x in on_disk.layers] == [("ext4", "none"), ("loop0", "none"), ("xfs", "none"),
                                                          ("nvme0n1", "none")]
    assert on_disk.layers[-1].detail == "Samsung 990"
    on_tmpfs = stack.linux_stack("ext4", "/dev/loop1", mounts, sys_root)
    assert [x.reads for x in on_tmpfs.layers] == ["none", "memory", "memory"]
    assert on_tmpfs.memory[0].why == ("the loop device's backing file /dev/shm/disk.img is held in memory below it; "
                                      "choose a target on a disk")


def test_device_mapper_md_usb_sata_and_ram_disks(tmp_path):
    sys_root = tmp_path / "sys"
    sda = _block(sys_root, "sda", "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0",
                 {"device/vendor": "ATA", "device/model": "CT1000MX500"})
    _partition(sys_root, sda, "sda2")
    _block(sys_root, "sdb", "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0",
                 {"device/model": "Portable SSD T7"})
    dm = _block(sys_root, "dm-0", "virtual", {"dm/name": "vg-home"})
    (dm / "slaves").mkdir()
    (dm / "slaves" / "sda2").symlink_to(sys_root / "class" / "block" / "sda2")
    md = _block(sys_root, "md0", "virtual", {"md/level": "raid1"})
    (md / "slaves").mkdir()
    for member in ("sda2", "sdb"):
        (md / "slaves" / member).symlink_to(sys_root / "class" / "block" / member)
    _block(sys_root, "zram0", "virtual")
    assert [(x.name, x.kind, x.detail) for x in stack.resolve_block("/dev/dm-0", sys_root)] == [
        ("dm-0", "dm", "vg-home over sda2"), ("sda2", "partition", ""), ("sda", "scsi", "ATA CT1000MX500")]
    assert [(x.name, x.kind) for x in stack.resolve_block("/dev/md0", sys_root)] == [
        ("md0", "md"), ("sda2", "partition"), ("sda", "scsi"), ("sdb", "usb")]
    assert [(x.kind, x.reads) for x in stack.resolve_block("/dev/zram0", sys_root)] == [("zram", "memory")]
    assert stack.resolve_block("/dev/sdz", sys_root) == []
    assert [x.reads for x in stack.linux_stack("nfs4", "server:/export", "", sys_root).layers] == ["may cache"]
    assert [x.reads for x in stack.linux_stack("fuse.sshfs", "host:/", "", sys_root).layers] == ["may cache"]


def test_a_mac_disk_image_serves_reads_from_memory():
    image = {"DeviceIdentifier": "disk6", "BusProtocol": "Disk Image", "MediaName": "Apple UDIF read-write Media",
             "VirtualOrPhysical": "Virtual"}
    internal = {"DeviceIdentifier": "disk0", "BusProtocol": "Apple Fabric", "MediaName": "APPLE SSD AP1024Z",
                "VirtualOrPhysical": "Physical"}
    apfs_volume = {"DeviceIdentifier": "disk3s5", "VirtualOrPhysical": "Virtual", "BusProtocol": "Apple Fabric"}
    s = stack.darwin_stack("apfs", apfs_volume, image)
    assert [(x.name, x.kind, x.reads) for x in s.layers] == [("apfs", "file system", "none"),
                                                            ("disk6", "disk image", "memory")]
    s = stack.darwin_stack("apfs", apfs_volume, internal)
    assert [(x.name, x.kind, x.reads) for x in s.layers] == [("apfs", "file system", "none"),
                                                            ("disk0", "Apple Fabric", "none")]
    assert [x.reads for x in stack.darwin_stack("smbfs", {}, {}).layers] == ["may cache"]


def test_a_memory_read_stands_for_the_same_requests_on_at_most_the_cap():
    assert shape_of(16 << 20, 4096, "random", 32, 1) == Shape(16 << 20, 4096, "random", 32, 1)
    assert shape_of(2 << 30, 1 << 20, "strided") == Shape(CAP_BYTES, 1 << 20, "sequential")
    assert shape_of(2 << 30, 2 << 30, "sequential") == Shape(CAP_BYTES, CAP_BYTES, "sequential")
    assert shape_of(10_000, 10_000, "sequential") == Shape(10_000, 10_000, "sequential")
    assert shape_of(100_000_000, 3_000_000, "sequential").bytes == 66_000_000     # whole requests
    records = [{"bytes": 4096, "granularity_bytes": 4096, "access": "random", "rates_bytes_per_s": [1e9, 3e9, 2e9]},
               {"bytes": "damaged"}]
    run = RunRecord.from_json({"format": "stibium-run/2", "memory_reads": records}, "run.json")
    assert run.memory_rates == {Shape(4096, 4096, "random"): 2e9}
    assert run.to_json()["memory_reads"] == [{**records[0], "queue_depth": 1, "threads": 1}]


RATE = 4.88e8


def _run_with_memory(path: Path, memory_factor: float, facts: dict | None = None, **kw) -> Path:
    """A synthetic run whose memory reads ran at memory_factor times the device's rate, for every shape."""
    run = make_run(path, rate_bytes_per_s=RATE, repeats=4, trials=5, **kw)
    record = json.loads((run / "run.json").read_text())
    shapes = {shape_of(int(s), int(s), "sequential") for s in SIZES}
    shapes |= {shape_of(64 << 20, g, "random") for g in (4096, 65536, 1 << 20, 16 << 20)}
    record["memory_reads"] = [{**s.__dict__, "rates_bytes_per_s": [RATE * memory_factor] * 3} for s in sorted(shapes)]
    record["target_facts"] = facts or {}
    (run / "run.json").write_text(json.dumps(record))
    return run


def _summary(run: Path):
    rows, _ = read_measurements(run)
    record = read_run_json(run)
    return summarize(rows, Settings(resamples=300), memory_rates=record.memory_rates,
                     target_facts=record.target_facts)


def test_reads_at_memory_speed_with_nothing_in_the_page_cache_are_flagged(tmp_path):
    summary = _summary(_run_with_memory(tmp_path / "fast", memory_factor=2.0))     # reads at 50 % of memory
    files_read = next(t for t in summary.tests if t.name == "files" and t.op == "read")
    files_write = next(t for t in summary.tests if t.name == "files" and t.op == "write")
    pattern = next(t for t in summary.tests if t.name == "pat")
    assert len(files_read.below_cache) == files_read.n and files_write.below_cache == []
    assert len(pattern.below_cache) == 4 and all(0.45 < p.memory_share < 0.55 for p in pattern.points)
    assert files_read.rate.estimate > 0.9 * RATE            # kept in the fit
    said = {(w.test, w.message) for w in summary.warnings if w.level == "warning"}
    share = float(sorted(files_read.memory_shares)[len(files_read.memory_shares) // 2])
    assert ("files (read)", f"28 of 28 reads ran at {share:.0%} of memory speed (median) with none of the file in "
            "the page cache: served by a cache below the file system") in said
    assert any(test == "pat (read)" and message.startswith("4 of 4 points ran at ") for test, message in said)
    assert all(t["reasons"][-1].startswith("below: ") for t in files_read.to_json()["below_cache"])

    slow = _summary(_run_with_memory(tmp_path / "slow", memory_factor=10.0))      # reads at 10 % of memory
    assert all(not getattr(t, "below_cache", []) for t in slow.tests)
    assert not [w for w in slow.warnings if "below the file system" in w.message]


def test_the_stack_s_layers_are_warned_about(tmp_path):
    facts = {"stack": stack.Stack((stack.Layer("ext4", "file system"),
                                   stack.Layer("loop0", "loop", "dio 0, backing /images/disk.img", stack.MEMORY,
                                               LOOP_WHY),
                                   stack.Layer("vda", "virtio", "a virtual machine's disk", stack.MAY_CACHE, "host"))
                                  ).to_json()}
    summary = _summary(_run_with_memory(tmp_path / "r", memory_factor=2.0, facts=facts))
    notices = [(w.level, w.message, w.what_to_do) for w in summary.warnings if w.test == "all"]
    assert ("warning", "loop0 (loop, dio 0, backing /images/disk.img) serves reads from memory below the file system",
            LOOP_WHY) in notices
    assert ("info", "vda (virtio, a virtual machine's disk) may serve reads from memory below the file system",
            "host") in notices
    todo = next(w.what_to_do for w in summary.warnings
                if w.test == "files (read)" and "served by a cache below the file system" in w.message)
    assert todo == ("these are not the drive's numbers (the layer that caches: loop0 (loop, dio 0, backing "
                    "/images/disk.img)); run `stibium selftest` on the target, and measure a target whose reads reach "
                    "the device")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_terminal_says_every_warning_of_summary_json(tmp_path):
    facts = {"stack": [stack.Layer("vda", "virtio", "", stack.MAY_CACHE, "host").to_json()]}    # an info
    run = _run_with_memory(tmp_path / "r", memory_factor=2.0, facts=facts)
    result = CliRunner().invoke(main, ["report", str(run)], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    summary = json.loads((run / "summary.json").read_text())
    warned = [w for w in summary["warnings"] if w["level"] == "warning"]
    assert warned
    out = _flat(result.output)
    for w in warned:
        test = "" if w["test"] == "all" else f"{w['test']}: "
        assert _flat(f"warning: {test}{w['message']}. What to do: {w['what_to_do']}.") in out
    infos = len(summary["warnings"]) - len(warned)
    assert infos >= 1 and f"{infos} note{'s' if infos > 1 else ''} more (outliers, facts) in the report" in out
    quiet = CliRunner().invoke(main, ["report", "--quiet", str(run)])
    assert quiet.exit_code == 0 and quiet.output == ""


def test_compare_cautions_a_point_that_a_cache_below_served(tmp_path):
    a = _run_with_memory(tmp_path / "a", memory_factor=10.0, seed=1)
    b = _run_with_memory(tmp_path / "b", memory_factor=2.0, seed=2)
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--out", str(tmp_path / "c.html")],
                                env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    out = _flat(result.output)
    assert re.search(r"caution: files read: served by a cache below the file system \(B at 4\d% of memory speed\): "
                     r"not the drive's speed", out)
    assert "caution: pat read random 4 KiB: served by a cache below the file system (B at 50% of memory" in out
    as_json = json.loads(CliRunner().invoke(main, ["compare", str(a), str(b), "--json", "--out",
                                                   str(tmp_path / "c.html")]).output)
    cautions = {(r["test"], r["op"], r["granularity_bytes"]): r["caution"] for r in as_json["rows"]}
    assert cautions[("files", "read", 0)].startswith("served by a cache below the file system (B at ")
    assert cautions[("files", "write", 0)] is None


def test_a_negative_fitted_latency_is_never_printed_as_a_latency(tmp_path):
    # seconds = -1 ms + size / rate: the line's intercept is below zero, every measured time above it
    run = make_run(tmp_path / "r", rate_bytes_per_s=RATE, latency_s=-1e-3, repeats=4, trials=5, noise=0.01)
    rows, _ = read_measurements(run)
    summary = summarize(rows, Settings(resamples=300))
    files_read = next(t for t in summary.tests if t.name == "files" and t.op == "read")
    assert files_read.fit.line.intercept_s < 0 and files_read.latency.estimate == 0.0     # held to what it can be
    for width in (80, 160):
        console = Console(width=width, record=True, force_terminal=False)
        console.print(terminal_table(summary, width))
        text = console.export_text()
        line = next(ln for ln in text.splitlines() if ln.split()[:2] in (["files", "read"], ["│", "files"])
                    and "read" in ln)
        latency = re.search(r"(-?[\d.]+) (ms|us)\*", line)
        assert latency and float(latency.group(1)) > 0, line      # the smallest size's median time, marked
        assert _flat(SMALLEST_NOTE) in _flat(text)
    html = (run / "report.html")
    CliRunner().invoke(main, ["report", "--quiet", str(run)])
    assert "the table then shows the median time of the smallest size" in html.read_text()


def test_the_memory_probe_is_synced_where_its_data_would_reach_the_device_anyway(tmp_path):
    from stibium_py.machine.memory import linux_background_bytes, probe_sync
    size = CAP_BYTES
    # Linux below the background threshold: never written back before its removal
    assert probe_sync("linux", size, 2 << 30) == "none"
    # at or above it, or where it is not known: synced before the tests
    assert probe_sync("linux", size, size) == "fsync"
    assert probe_sync("linux", size, None) == "fsync"
    # macOS writes a sequential writer's clusters behind it (xnu vfs_cluster.c): always synced
    assert probe_sync("darwin", size, 2 << 30) == "fsync"
    vm = tmp_path / "vm"
    vm.mkdir()
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  2000000 kB\nMemAvailable:  1000000 kB\n")
    (vm / "dirty_background_bytes").write_text("0\n")
    (vm / "dirty_background_ratio").write_text("10\n")
    assert linux_background_bytes(vm, meminfo) == 1000000 * 1024 // 10
    (vm / "dirty_background_bytes").write_text("33554432\n")
    assert linux_background_bytes(vm, meminfo) == 32 << 20
    assert linux_background_bytes(tmp_path / "none", meminfo) is None


def test_selftest_s_pair_is_judged_at_the_share_itself():
    from stibium_py.analysis.below import BELOW_SHARE, served_from_memory
    assert served_from_memory(BELOW_SHARE * 1e9, 1e9)
    assert not served_from_memory(BELOW_SHARE * 1e9 * 0.999, 1e9)


@pytest.mark.parametrize("plan,said", [
    ("name: f\ntests:\n  - name: f\n    kind: files\n    sizes: [64KiB, 128KiB]\n    repeats: 1\n",
     r"<td>memory speed</td><td>\d+ read shapes read from the page cache before the tests, "),
    ("name: t\ntests:\n  - name: t\n    kind: tree\n    files: 4\n    file_size: 4KB\n    dirs: 1\n    trials: 1\n",
     r"<td>memory speed</td><td>not measured \(the run has no reads of a file&#x27;s data by stibium&#x27;s helper "
     r"to hold against it\): no read is held against memory speed</td>"),
])
def test_the_page_says_why_a_run_has_no_memory_yardstick(disk_dir, plan, said):
    path = disk_dir / "p.yaml"
    path.write_text(plan)
    done = CliRunner().invoke(main, ["run", str(path), "--target", str(disk_dir / "t"), "--out", str(disk_dir / "r")])
    assert done.exit_code == 0, done.output
    (run,) = (disk_dir / "r").iterdir()
    assert re.search(said, (run / "report.html").read_text()), said
    record = json.loads((run / "run.json").read_text())          # a run of a stibium that kept no count of shapes
    del record["expanded"]["memory_shapes"]
    record["memory_reads"] = []
    (run / "run.json").write_text(json.dumps(record))
    assert CliRunner().invoke(main, ["report", str(run)]).exit_code == 0
    assert "<td>memory speed</td><td>not measured (the stibium that made this run did not record it)" in \
        (run / "report.html").read_text()
