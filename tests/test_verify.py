"""`stibium verify`: signed blocks written and read back uncached by the compiled helper, on a temporary folder.
A drive's lies are made by hand between the writes and the reads (the verify stopped after writing, its files
changed as a fake drive would change them, then resumed): blocks that hold other blocks (a wrap), a flipped bit,
a file cut short. The verdict says each, exactly; a verify resumed takes up where it stopped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stibium_py.errors import RunError
from stibium_py.helper import CompiledHelper, find_helper
from stibium_py.verify import run as verify_run
from stibium_py.verify.state import read_chunks, read_state
from stibium_py.verify.verdict import verdict_of

MiB = 1 << 20
BLOCK = 4096


def _start(tmp_path: Path, size: int, stop_after: str | None = None, keep: bool = False):
    (tmp_path / "t").mkdir(exist_ok=True)
    options = verify_run.VerifyOptions(size_bytes=size, file_bytes=4 * MiB, chunk_bytes=MiB, out_dir=tmp_path / "r",
                                       stop_after=stop_after, keep=keep)
    return verify_run.start(tmp_path / "t", options, CompiledHelper(find_helper()), lambda message: None)


def _verdict(run_dir: Path):
    state = read_state(run_dir)
    return verdict_of(state, read_chunks(run_dir, state))


def test_an_honest_folder_reads_back_every_byte_and_the_files_go(tmp_path):
    run_dir, state = _start(tmp_path, 10 * MiB)
    v = _verdict(run_dir)
    assert state.status == "complete" and [f.blocks for f in state.files] == [1024, 1024, 512]
    assert v.sentence() == "all 10,485,760 bytes read back as written"
    assert len(v.write_rates) == len(v.read_rates) == 10            # a chunk of 1 MiB each
    assert not list((tmp_path / "t").iterdir())


def test_a_wrapping_drive_a_flipped_bit_and_a_short_file_are_each_named(tmp_path):
    """The fill's second half written over its first (a drive of half the capacity, each write landing at its
    block modulo that half), one bit flipped in a block of the second half, and the last file cut by 8 KiB."""
    run_dir, state = _start(tmp_path, 8 * MiB, stop_after="write", keep=True)
    assert state.status == "interrupted" and all(f.written for f in state.files)
    folder = tmp_path / "t" / state.folder
    first, second = (folder / "v000000.bin"), (folder / "v000001.bin")
    first.write_bytes(second.read_bytes())                 # blocks 0-1023 now hold blocks 1024-2047
    data = bytearray(second.read_bytes())
    data[5 * BLOCK + 100] ^= 0x10                          # block 1029: one bit
    second.write_bytes(bytes(data[:-2 * BLOCK]))           # blocks 2046 and 2047: gone
    state = verify_run.resume(tmp_path / "t", run_dir, CompiledHelper(find_helper()), lambda message: None,
                              keep=True)
    v = _verdict(run_dir)
    assert state.status == "complete" and (v.ok_blocks, v.moved, v.corrupt, v.unreadable) == (1021, 1024, 1, 2)
    assert v.sentence() == (
        "only 4,182,016 of 8,388,608 bytes (4.18 MB of 8.39 MB) read back as written; 4,194,304 bytes hold other "
        "blocks of the fill: this drive writes over what it holds, and keeps about 4.18 MB (a fake capacity); "
        "1 block came back corrupted; 2 blocks could not be read")
    assert v.bad[0].kind == "moved" and v.bad[0].holds == 1024
    assert f"the first bad block: byte 0 of the fill ({state.folder}/v000000.bin, byte 0), it holds block 1,024, " \
           f"written after it" in v.details()
    corrupt = next(b for b in _bad_of(state) if b.kind == "corrupt")
    assert (corrupt.block, corrupt.bits) == (1029, 1)
    assert [b.errno for b in _bad_of(state) if b.kind == "unreadable"] == [5, 5]      # EIO: past the file's end
    assert list((tmp_path / "t" / state.folder).iterdir())   # --keep given again: the files stay


def _bad_of(state):
    return [b for f in state.files if f.checked for b in f.checked.bad]


def test_a_resumed_verify_writes_no_file_again_that_was_written(tmp_path):
    run_dir, state = _start(tmp_path, 8 * MiB, stop_after="write")
    state = verify_run.resume(tmp_path / "t", run_dir, CompiledHelper(find_helper()), lambda message: None)
    assert state.status == "complete" and [f.attempts for f in state.files] == [{"write": 1, "read": 1}] * 2
    assert _verdict(run_dir).sentence() == "all 8,388,608 bytes read back as written"
    assert not list((tmp_path / "t").iterdir())


def test_a_verify_is_resumed_only_on_its_own_target(tmp_path):
    run_dir, _ = _start(tmp_path, 4 * MiB, stop_after="write")
    (tmp_path / "other").mkdir()
    with pytest.raises(RunError) as e:
        verify_run.resume(tmp_path / "other", run_dir, CompiledHelper(find_helper()), lambda message: None)
    assert e.value.exit_code == 2 and str(e.value) == (
        f"{run_dir} verified {tmp_path / 't'}, not {tmp_path / 'other'}; give its own target to resume it")


def test_a_record_that_names_files_a_verify_does_not_make_is_refused(tmp_path):
    run_dir, _ = _start(tmp_path, 4 * MiB, stop_after="write")
    record = json.loads((run_dir / "verify.json").read_text())
    record["folder"] = "../../home"
    (run_dir / "verify.json").write_text(json.dumps(record))
    done = subprocess.run([sys.executable, "-m", "stibium_py", "verify", str(tmp_path / "t"), "--resume",
                           str(run_dir)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith(f"stibium: {run_dir / 'verify.json'}: folder: String "
                                                           f"should match pattern")


def test_a_size_that_does_not_fit_is_refused_in_one_line_before_anything_is_made(tmp_path):
    (tmp_path / "t").mkdir()
    done = subprocess.run([sys.executable, "-m", "stibium_py", "verify", str(tmp_path / "t"), "--size", "1000TB",
                           "--out", str(tmp_path / "r")], capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "do not fit" in done.stderr and "give a smaller --size or --margin" in done.stderr
    assert not (tmp_path / "r").exists() and not list((tmp_path / "t").iterdir())


def test_the_command_says_the_verdict_first_and_writes_its_page(tmp_path):
    (tmp_path / "t").mkdir()
    done = subprocess.run([sys.executable, "-m", "stibium_py", "verify", str(tmp_path / "t"), "--size", "4MiB",
                           "--file-size", "4MiB", "--out", str(tmp_path / "r")], capture_output=True, text=True,
                          env={**__import__("os").environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if not line.startswith(("written", "read back ", "the page"))]
    assert said[0] == "all 4,194,304 bytes read back as written"
    (run_dir,) = (tmp_path / "r").iterdir()
    assert "all 4,194,304 bytes read back as written" in (run_dir / "report.html").read_text()
    assert json.loads((run_dir / "summary.json").read_text())["ok_bytes"] == 4 * MiB


@pytest.mark.parametrize("honoured, said", [
    (True, "written and read back uncached"),
    (False, "written and read back with uncached I/O, which this file system (fuse.sshfs) does not honour: its own "
            "cache may have answered reads, and hidden what the drive keeps"),
    (None, "written and read back asking for uncached I/O (whether this file system honours it is not known)")])
def test_the_details_say_whether_the_file_system_honoured_uncached_io(tmp_path, honoured, said):
    """A file system that accepts O_DIRECT and caches anyway (FUSE, tmpfs) is said so: its reads may have come from
    its cache, so "uncached" is said only where the helper found it honoured."""
    from stibium_py.verify.state import VerifyState
    state = VerifyState(target="/mnt/x", folder="stibium-verify-" + "0" * 16, run=1, seed=1, block_bytes=BLOCK,
                        chunk_bytes=MiB, files=verify_run.layout(4 * MiB, BLOCK, MiB, 4 * MiB), started_epoch_s=0.0,
                        host="h", direct_honoured=honoured, fs_type="fuse.sshfs")
    assert verdict_of(state, {}).details()[0].endswith(said)


def test_an_honest_folder_s_record_says_the_helper_found_uncached_io_honoured(tmp_path):
    run_dir, state = _start(tmp_path, 4 * MiB)
    assert state.fs_type and state.direct_honoured is not None


def test_a_host_or_file_system_name_beyond_ascii_is_held_to_verify_json_s_characters():
    """A host named with a non-ASCII letter (or a FUSE file system's subtype) would have failed verify.json's own
    check and ended the verify in an internal error."""
    import re
    assert verify_run.name_word("mañana-mac.local", 255) == "ma_ana-mac.local"
    assert verify_run.name_word("fuse.ñfs" + "x" * 40, 31) == "fuse._fs" + "x" * 23
    assert re.fullmatch(r"^[A-Za-z0-9._-]*$", "mañana") is None        # state.py's pattern, which "ñ" fails
