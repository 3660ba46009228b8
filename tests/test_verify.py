"""`stibium verify TARGET`: a plan of one verify test run by the driver as every plan is, with the compiled helper's
signed blocks on a temporary folder. Sizes read as a plan reads them (10MB is 10,000,000 bytes), the fill in a
folder of its own that goes at the end, a refusal before anything is made, a pipe closed under it, its exit status
from its verdict. A drive's lies are made by hand between the writes and the reads (the run cut at its first
eviction, its files changed as a fake drive changes them, then resumed). A verify an earlier stibium wrote
(verify.json) still reports, and is not carried on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from stibium_py.errors import RunError
from stibium_py.run.helper import CompiledHelper, Helper, find_helper
from stibium_py.kinds.verify.analysis import verify_result
from stibium_py.kinds.verify.command import kept_everything, verify_plan
from stibium_py.results.pipeline import load_run
from stibium_py.run import RunOptions, resume_run, start_run

MiB = 1 << 20
BLOCK = 4096
FIXTURES = Path(__file__).parent / "fixtures"
ENV = {**os.environ, "COLUMNS": "400"}


def _verify(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stibium_py", "verify", *args, "--no-history"],
                          capture_output=True, text=True, env=ENV, timeout=300)


def _summary_read(run_dir: Path) -> dict[str, Any]:
    summary = json.loads((run_dir / "summary.json").read_text())
    return next(t for t in summary["tests"] if t["op"] == "read")


@pytest.mark.parametrize("size", ["10MB", "10000000"])
def test_a_size_reads_as_a_plan_reads_it_and_the_fill_goes_at_the_end(tmp_path, size):
    """10MB is 10,000,000 bytes (the number on a card's label), filled to whole 64 KiB: 9,961,472 bytes in files
    of 4 MiB (the last one shorter), every byte read back; the target is left as it was."""
    (tmp_path / "t").mkdir()
    done = _verify(str(tmp_path / "t"), "--size", size, "--file-size", "4MiB", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "r").iterdir()
    read = _summary_read(run_dir)
    assert (read["written_bytes"], read["ok_bytes"], read["files"]) == (9_961_472, 9_961_472, 3)
    assert "fill: all 9,961,472 bytes read back as written" in done.stdout.splitlines()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert not list((tmp_path / "t").iterdir())
    assert done.stdout.splitlines()[-1] == f"run directory: {tmp_path / 'r' / run_dir.name} (complete)"


def test_a_size_that_does_not_fit_is_refused_in_one_line_before_anything_is_made(tmp_path):
    (tmp_path / "t").mkdir()
    done = _verify(str(tmp_path / "t"), "--size", "100TB", "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "free but the plan needs 100 TB plus a margin" in done.stderr
    assert done.stderr.rstrip().endswith("free some space or choose another folder")      # no --target: an argument
    assert not (tmp_path / "r").exists() and not list((tmp_path / "t").iterdir())


def test_a_fill_refused_for_its_space_lists_none_of_its_operations_and_a_started_one_records_their_digest(
        tmp_path, monkeypatch):
    """Alone, the operations' digest is taken after the checks: a refused 100 TB fill (186,000 operations) never
    lists them as dictionaries nor hashes them, which took most of its refusal's time; a fill that starts records
    the digest of the very operations it expanded."""
    import stibium_py.run.start as start
    from stibium_py.rundir.record import ops_digest
    digests: list[str] = []

    def counted(ops):
        digests.append(ops_digest(ops))
        return digests[-1]
    monkeypatch.setattr(start, "ops_digest", counted)
    (tmp_path / "t").mkdir()
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False)
    with pytest.raises(RunError, match="free but the plan needs 100 TB plus a margin"):
        start_run(verify_plan(100 * 10**12, 1 << 30), options, Console(quiet=True), CompiledHelper(find_helper()))
    assert digests == [] and not (tmp_path / "r").exists()
    start_run(verify_plan(8 * MiB, 4 * MiB), options, Console(quiet=True), CompiledHelper(find_helper()))
    (run_dir,) = (tmp_path / "r").iterdir()
    recorded = json.loads((run_dir / "run.json").read_text())["expanded"]
    assert len(digests) == 1 and recorded["ops_sha256"] == digests[0] and recorded["ops_count"] == 4


@pytest.mark.parametrize("args, said", [
    (["--size", "0"], "stibium: --size: 0 is no size to fill; give a size above 0 (such as 1GB)"),
    (["--size", "ten"], "stibium: --size: cannot read the size 'ten'; write a number with a unit, such as 10MB or "
                        "4KiB"),
    (["--file-size", "0"], "stibium: --file-size: 0 is no size to fill; give a size above 0 (such as 1GB)"),
    (["--size", "1TB", "--file-size", "1MB"], "stibium: --size 1 TB in files of 1 MB makes 1,000,000 files, and a "
                                              "verify holds at most 500,000; give a larger --file-size")])
def test_a_size_that_is_no_size_is_refused_in_one_line(tmp_path, args, said):
    (tmp_path / "t").mkdir()
    done = _verify(str(tmp_path / "t"), *args, "--out", str(tmp_path / "r"))
    assert (done.returncode, done.stderr.splitlines()) == (2, [said])
    assert not (tmp_path / "r").exists()


def test_a_read_only_target_is_refused_in_one_line_and_leaves_no_run_directory(tmp_path, mount_tmpfs):
    mount = mount_tmpfs("8m")
    (mount / "t").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    done = _verify(str(mount / "t"), "--size", "1MB", "--out", str(tmp_path / "r"))
    assert (done.returncode, done.stderr.splitlines()) == (
        2, [f"stibium: target {mount / 't'} is on a read-only file system; choose another folder"])
    assert not (tmp_path / "r").exists()


def test_a_drive_s_root_is_a_target_and_is_left_as_it_was(tmp_path, mount_tmpfs):
    """`stibium verify /Volumes/CARD`: the drive itself, beside the files it holds; the fill goes in a folder of
    its own there and is removed at the end (a plan's run refuses a file system's root)."""
    mount = mount_tmpfs("80m")           # the run's margin: 64 MB and 5 % of the fill stay free
    (mount / "photo.jpg").write_bytes(b"x" * 1000)
    done = _verify(str(mount), "--size", "2MB", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in mount.iterdir()) == ["photo.jpg"]
    assert (mount / "photo.jpg").read_bytes() == b"x" * 1000


def test_a_closed_pipe_is_said_and_the_verify_still_ends_complete_with_its_fill_removed(tmp_path):
    """`stibium verify T | head -1`: the reader goes after the first line; the verify goes on to its end (its record
    complete, its fill gone), and stderr says why the rest was not printed."""
    (tmp_path / "t").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "stibium_py", "verify", str(tmp_path / "t"), "--size", "8MiB",
                             "--file-size", "4MiB", "--out", str(tmp_path / "r"), "--no-history"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 1
    assert err.splitlines() == ["stibium: the output's reader closed it (as `| head` does); the rest of it was not "
                                "printed"]
    (run_dir,) = (tmp_path / "r").iterdir()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    assert not list((tmp_path / "t").iterdir())


class _CutAtEviction:
    """The compiled helper, cut (as by Ctrl-C) when the driver first asks it to empty the page cache: every file
    written, none read back."""

    def __init__(self) -> None:
        self.real = CompiledHelper(find_helper())

    def once(self, args: list[str]):
        return self.real.once(args)

    def session(self) -> Helper:
        helper = self.real.session()
        call = helper.call

        def cut(args: list[str], *rest: Any, **named: Any):
            if args[0] == "evict":
                raise KeyboardInterrupt
            return call(args, *rest, **named)
        helper.call = cut           # type: ignore[method-assign]
        return helper


def test_a_wrapping_drive_and_a_flipped_bit_are_each_named_after_a_resume(tmp_path):
    """The fill's second file written over its first (a drive of half the capacity: each block lands at its
    index modulo the half), one bit flipped in the second: resumed, every block is counted as such."""
    options = RunOptions(target=tmp_path / "t", out_dir=tmp_path / "r", progress=False, keep_files=True)
    with pytest.raises(RunError) as e:
        start_run(verify_plan(8 * MiB, 4 * MiB), options, Console(quiet=True), _CutAtEviction())
    assert e.value.exit_code == 130
    (run_dir,) = (tmp_path / "r").iterdir()
    first, second = sorted((tmp_path / "t").rglob("v*.bin"))
    first.write_bytes(second.read_bytes())                 # blocks 0-1023 now hold blocks 1024-2047
    data = bytearray(second.read_bytes())
    data[5 * BLOCK + 100] ^= 0x10                          # block 1029: one bit
    second.write_bytes(bytes(data))
    finished = resume_run(run_dir, RunOptions(progress=False, keep_files=True), Console(quiet=True),
                          CompiledHelper(find_helper()))
    assert finished.status == "complete"
    rows = load_run(run_dir).measurements.valid()
    result = verify_result("fill", "read", rows.take(rows.op == "read"), rows.take(rows.op == "write"))
    assert (result.ok_blocks, result.moved_blocks, result.corrupt_blocks, result.unreadable_blocks) == (
        1023, 1024, 1, 0)
    assert result.sentence() == (
        "only 4,190,208 of 8,388,608 bytes (4.19 MB of 8.39 MB) read back as written; 4,194,304 bytes hold other "
        "blocks of the fill: this drive writes over what it holds, and keeps about 4.19 MB (a fake capacity); "
        "1 block came back corrupted")
    assert result.bad[0].kind == "moved" and result.bad[0].holds == 1024


def test_the_exit_status_says_whether_every_byte_read_back():
    good = {"kind": "verify", "op": "read", "written_bytes": 8, "ok_bytes": 8, "unknown_bytes": 0,
            "rejected_files": 0}
    assert kept_everything({"tests": [{"kind": "verify", "op": "write"}, good]})
    assert not kept_everything({"tests": [{**good, "ok_bytes": 4}]})
    assert not kept_everything({"tests": [{**good, "unknown_bytes": 4}]})
    assert not kept_everything({"tests": [{"kind": "verify", "op": "write"}]})     # nothing read back


def _earlier(tmp_path: Path, name: str) -> Path:
    run_dir = tmp_path / name
    shutil.copytree(FIXTURES / name, run_dir)
    return run_dir


def test_an_earlier_stibium_s_verify_still_reports_its_verdict_first(tmp_path):
    """A run directory `stibium verify` wrote before it was a plan (verify.json, chunks.csv; tests/fixtures: a
    wrap, a flipped bit and a file cut short, made by that stibium): its verdict is read, not run again."""
    run_dir = _earlier(tmp_path, "verify-earlier-lies")
    done = subprocess.run([sys.executable, "-m", "stibium_py", "report", str(run_dir)], capture_output=True,
                          text=True, env=ENV)
    assert done.returncode == 0, done.stderr
    verdict = ("only 4,182,016 of 8,388,608 bytes (4.18 MB of 8.39 MB) read back as written; 4,194,304 bytes hold "
               "other blocks of the fill: this drive writes over what it holds, and keeps about 4.18 MB (a fake "
               "capacity); 1 block came back corrupted; 2 blocks could not be read")
    assert done.stdout.splitlines()[0] == verdict
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["verdict"], summary["moved_blocks"], summary["unreadable_blocks"]) == (verdict, 1024, 2)
    assert verdict in (run_dir / "report.html").read_text()


def test_an_earlier_stibium_s_verify_cut_short_is_not_carried_on_and_says_what_to_do(tmp_path):
    run_dir = _earlier(tmp_path, "verify-earlier-interrupted")
    (tmp_path / "t").mkdir()
    done = _verify(str(tmp_path / "t"), "--resume", str(run_dir))
    assert (done.returncode, done.stderr.splitlines()) == (2, [
        f"stibium: {run_dir} is a verify of an earlier stibium, which this one reads but does not carry on; "
        f"`stibium report {run_dir}` shows its verdict; start a new verify of {tmp_path / 't'}"])
    shown = subprocess.run([sys.executable, "-m", "stibium_py", "report", str(run_dir)], capture_output=True,
                           text=True, env=ENV).stdout.splitlines()
    assert shown[0].startswith("not finished: ")
    assert shown[1] == ("this verify is interrupted (SIGINT); an earlier stibium's verify is "
                        "not carried on: start a new one")


def test_an_earlier_record_that_names_files_a_verify_does_not_make_is_refused(tmp_path):
    run_dir = _earlier(tmp_path, "verify-earlier-interrupted")
    record = json.loads((run_dir / "verify.json").read_text())
    record["folder"] = "../../home"
    (run_dir / "verify.json").write_text(json.dumps(record))
    done = subprocess.run([sys.executable, "-m", "stibium_py", "report", str(run_dir)], capture_output=True,
                          text=True)
    assert done.returncode == 2 and done.stderr.startswith(f"stibium: {run_dir / 'verify.json'}: folder: String "
                                                           f"should match pattern")


def test_the_command_s_sizes_plan_and_refusals_in_its_own_words():
    """kinds/verify/command.py in process: sizes read as a plan reads them, the plan it runs, the file count it
    holds, a refusal of the plan's key said with the option."""
    from stibium_py.errors import PlanError
    from stibium_py.kinds.verify.command import MAX_FILES, SOURCE, files_checked, in_command_words, size_given
    assert size_given("--size", "10MB") == 10_000_000 and size_given("--file-size", "1GiB") == 1 << 30
    assert size_given("--size", "1") == 1
    for value, said in (("0", "--size: 0 is no size to fill; give a size above 0 (such as 1GB)"),
                        ("ten", "--size: cannot read the size 'ten'; write a number with a unit, such as 10MB or "
                                "4KiB")):
        with pytest.raises(RunError) as e:
            size_given("--size", value)
        assert (str(e.value), e.value.exit_code) == (said, 2)
    files_checked(None, 1)
    files_checked(MAX_FILES * 4, 4)                       # exactly the most files a verify holds
    with pytest.raises(RunError) as e:
        files_checked(MAX_FILES * 4 + 1, 4)
    assert e.value.exit_code == 2 and str(e.value) == (
        f"--size 2 MB in files of 4 B makes {MAX_FILES + 1:,} files, and a verify holds at most {MAX_FILES:,}; "
        f"give a larger --file-size")
    for key, option in (("bytes", "--size"), ("fraction_of_free", "--size"), ("file_size", "--file-size")):
        found = in_command_words(PlanError(f"{SOURCE}:8: tests[0] (fill).{key}: too many"))
        assert (str(found), found.exit_code) == (f"{option}: too many", 2)
    other = in_command_words(PlanError("plan.yaml:3: something else"))
    assert (str(other), other.exit_code) == ("plan.yaml:3: something else", 2)
    chunk = in_command_words(PlanError(f"{SOURCE}: tests[0] (fill).chunk: not whole\nsee the plan"))
    assert str(chunk) == "chunk: not whole\nsee the plan"      # a key of no option: its own name, every line


def test_the_command_s_plan_is_one_verify_test_of_the_size_asked():
    sized = verify_plan(10_000_000, 4 * MiB)
    (test,) = sized.plan.tests
    assert (sized.plan.name, test.name, test.kind, test.bytes, test.fraction_of_free) == (
        "verify", "fill", "verify", 10_000_000, None)
    assert sized.plan.description == "stibium verify: 10,000,000 bytes written as signed blocks and read back"
    assert str(sized.source) == "stibium verify" and '"bytes": 10000000' in sized.text
    assert sized.text.startswith('{\n  "name": "verify",\n')
    loaded = verify_plan(None, 1 << 30)
    (most,) = loaded.plan.tests
    assert (most.bytes, most.fraction_of_free, most.max_bytes) == (None, 0.98, None)
    assert loaded.plan.description == ("stibium verify: the free space less the run's margin written as signed "
                                       "blocks and read back")


def test_the_exit_status_holds_every_verify_test_and_only_them():
    good = {"kind": "verify", "op": "read", "written_bytes": 8, "ok_bytes": 8, "unknown_bytes": 0,
            "rejected_files": 0}
    assert not kept_everything({"tests": [{**good, "written_bytes": 0, "ok_bytes": 0}]})    # nothing written
    assert not kept_everything({"tests": [{**good, "rejected_files": 1}]})
    assert not kept_everything({"tests": [good, {**good, "name": "second", "ok_bytes": 0}]})
    assert kept_everything({"tests": [good, {"kind": "stream", "op": "read", "written_bytes": 0}]})
    assert not kept_everything({})
    assert kept_everything({"tests": [{**good, "written_bytes": 1, "ok_bytes": 1}]})


def test_verify_resume_carries_on_only_a_verify(tmp_path):
    """`stibium verify T --resume RUN` resumes a verify, not another plan's run (that is `stibium resume`'s, with
    its own rules for where it may write)."""
    from synthetic import make_run
    from stibium_py.kinds.verify.command import is_verify
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    (tmp_path / "t").mkdir()
    done = _verify(str(tmp_path / "t"), "--resume", str(run))
    assert (done.returncode, done.stderr.splitlines()) == (2, [
        f"stibium: {run} is a run of a plan with other tests than a verify; carry it on with `stibium resume {run}`"])
    assert is_verify({"tests": [{"kind": "verify", "name": "fill"}]})
    assert not is_verify({"tests": []}) and not is_verify(None) and not is_verify({"tests": "verify"})
