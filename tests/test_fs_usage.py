"""fs_usage's wide output read into a trace (stibium_py/trace/fs_usage.py). No Mac is reachable, so each line is made
here as fs_usage.c's format_print makes it in wide mode (Apple's system_cmds-1026.100.5: the time of day, the call's
name in 17 columns, its arguments as each format prints them, the path padded to the column left, the time in the
kernel and the command with its thread), and the parser is held to what those lines say."""

from __future__ import annotations

from stibium_py.trace.fs_usage import parse, starting_sizes
from stibium_py.trace.parsed import files_of

ROOT = "/Users/ann/Photos"
COLUMNS = 264                                   # fs_usage -w (MAX_WIDE_MODE_COLS)


def _line(ts: str, name: str, args: str, path: str, took_us: int, cmd: str = "Photos", tid: int = 4242,
          nopadding: bool = False, waited: bool = False) -> str:
    """One line as format_print writes it with wideflag set."""
    head = f"{ts}  {name:<17.17}{args}"
    clen = COLUMNS - (len(head) + 14 + 20 + 11) - (0 if nopadding else 3)
    buf = f" {path} " if path else ""
    buf = buf + " " * (clen - len(buf)) if clen > len(buf) else buf
    secs, usecs = divmod(took_us, 1_000_000)
    return f"{head}{'' if nopadding else '   '}{buf} {secs:3d}.{usecs:06d}{' W' if waited else '  '} {cmd}.{tid}"


def _open(ts: str, fd: int, mode: str, path: str, took_us: int = 40, **kw) -> str:
    return _line(ts, "open", f" F={fd:<3d}      ({mode}) ", path, took_us, nopadding=True, **kw)   # print_open


LINES = [
    _open("10:00:00.000100", 5, "R_____________", f"{ROOT}/card/IMG_0001.JPG"),
    _line("10:00:00.001000", "read", f" F={5:<3d}  B=0x{0x100000:<6x}", "", 900),            # FMT_FD_IO
    _line("10:00:00.002000", "pread", f" F={5:<3d}  B=0x{0x800:<8x} O=0x{0x100000:08x}        ", "", 30),
    _line("10:00:00.002100", "lseek", f" F={5:<3d}  O=0x{0:08x}         <SEEK_SET>", "", 2),
    _open("10:00:00.003000", 6, "_WC_T_______X_", "lib/IMG_0001.JPG", took_us=60),            # relative: the cwd
    _line("10:00:00.004300", "write", f" F={6:<3d}  B=0x{0x100000:<6x}", "", 1200, waited=True),
    _line("10:00:00.009500", "fcntl", f" F={6:<3d} <FULLFSYNC>", "", 5000),
    _line("10:00:00.009600", "fsync", f" F={6:<3d}", "", 300),
    _line("10:00:00.010000", "close", f" F={6:<3d}", "", 5),
    _line("10:00:00.010100", "close", f" F={5:<3d}", "", 4),
    _line("10:00:00.011000", "stat64", " " * 18, f"{ROOT}/lib/IMG_0001.JPG", 8),               # FMT_DEFAULT
    _line("10:00:00.011100", "stat64", f"      [{2:3d}]       ", f"{ROOT}/lib/IMG_0002.xmp", 6),   # failed: ENOENT
    _line("10:00:00.012000", "openat", f" F={7:<3d}      (RW_A__________) ", "[-2]/lib/side.xmp", 20, nopadding=True),
    _line("10:00:00.012500", "pwrite", f" F={7:<3d}  B=0x{0xbb8:<8x} O=0x{0:08x}        ", "", 15),
    _line("10:00:00.013000", "ftruncate", f" F={7:<3d}  O=0x{0x1000:08x}        ", "", 10, nopadding=True),
    _line("10:00:00.013500", "close", f" F={7:<3d}", "", 3),
    _line("10:00:00.014000", "mkdir", " " * 18, f"{ROOT}/lib/2026", 30),
    _line("10:00:00.014500", "rename", " " * 18, f"{ROOT}/lib/IMG_0001.JPG", 40),             # its new name unshown
    _line("10:00:00.015000", "unlink", " " * 18, f"{ROOT}/card/IMG_0001.JPG", 25),
    _line("10:00:00.016000", "rmdir", f"      [{66:3d}]       ", f"{ROOT}/card", 9),          # ENOTEMPTY
    _open("10:00:00.017000", 8, "R_____________", "/System/Library/foo.dylib"),                 # outside
    _line("10:00:00.017100", "read", f" F={8:<3d}  B=0x{0x1000:<6x}", "", 10),                 # outside
    _line("10:00:00.018000", "getdirentries64", f" F={9:<3d}  B=0x{0x200:<6x}", "", 11),       # fd never opened
    _line("10:00:00.018500", "chdir", " " * 18, f"{ROOT}/lib", 4),
    _line("10:00:00.018600", "stat64", " " * 18, "side.xmp", 4, cmd="Photos", tid=4243),       # other thread
    "Cleaning up tracing state because of ^C",                                                  # not a call
]


def test_each_wide_form_reads_as_the_call_it_is():
    read = parse(LINES, ROOT)
    parsed, left_out = read.parsed, read.left_out
    files, anonymous = files_of(parsed, starting_sizes(read))
    path = {v: k for k, v in parsed.paths.items()}
    got = [(c.call, path[c.file], c.handle, c.offset, c.bytes, c.result, c.error) for c in parsed.calls]
    assert got == [
        ("open", "card/IMG_0001.JPG", 0, -1, 0, 0, ""),
        ("read", "card/IMG_0001.JPG", 0, -1, 0x100000, 0x100000, ""),
        ("read", "card/IMG_0001.JPG", 0, 0x100000, 0x800, 0x800, ""),
        ("seek", "card/IMG_0001.JPG", 0, 0, 0, 0, ""),
        ("open", "lib/IMG_0001.JPG", 1, -1, 0, 1, ""),
        ("write", "lib/IMG_0001.JPG", 1, -1, 0x100000, 0x100000, ""),
        ("fullsync", "lib/IMG_0001.JPG", 1, -1, 0, 0, ""),
        ("fsync", "lib/IMG_0001.JPG", 1, -1, 0, 0, ""),
        ("close", "lib/IMG_0001.JPG", 1, -1, 0, 0, ""),
        ("close", "card/IMG_0001.JPG", 0, -1, 0, 0, ""),
        ("stat", "lib/IMG_0001.JPG", -1, -1, 0, 0, ""),
        ("stat", "lib/IMG_0002.xmp", -1, -1, 0, -1, "ENOENT"),
        ("open", "lib/side.xmp", 2, -1, 0, 2, ""),
        ("write", "lib/side.xmp", 2, 0, 0xbb8, 0xbb8, ""),
        ("truncate", "lib/side.xmp", 2, -1, 0x1000, 0, ""),
        ("close", "lib/side.xmp", 2, -1, 0, 0, ""),
        ("mkdir", "lib/2026", -1, -1, 0, 0, ""),
        ("unlink", "card/IMG_0001.JPG", -1, -1, 0, 0, ""),
        ("rmdir", "card", -1, -1, 0, -1, "ENOTEMPTY"),
        ("stat", "lib/side.xmp", -1, -1, 0, 0, ""),
    ]
    assert left_out == 1                         # the rename
    assert parsed.outside == 3                   # the dylib's open and read, the unknown descriptor
    assert {c.thread for c in parsed.calls} == {0, 1}
    assert "lib/2026" in parsed.folders and "card" in parsed.folders
    sizes = {f.path: f.size_bytes for f in files}
    # what the lines tell: the card's photo was read to 1 MiB + 2 KiB (its first read, then a pread past it); the
    # library's files were made (O_CREAT) or first met by a failed call; card/ was there
    assert sizes[anonymous["card/IMG_0001.JPG"]] == 0x100000 + 0x800
    assert sizes[anonymous["lib/IMG_0001.JPG"]] is None and sizes[anonymous["lib/IMG_0002.xmp"]] is None
    assert sizes[anonymous["card"]] == 0


def test_times_are_each_call_s_start_from_its_end_and_its_time_in_the_kernel():
    first, read = parse(LINES[:2], ROOT).parsed.calls
    # the open ended at .000100 after 40 us: it began at .000060, the trace's 0; the read ended at .001000 after
    # 900 us: it began at .000100, 40 us after the open
    assert (first.start_ns, first.took_ns) == (0, 40_000)
    assert (read.start_ns, read.took_ns) == (40_000, 900_000)


def test_the_clock_passing_midnight_keeps_the_calls_in_order():
    lines = [_line("23:59:59.999000", "stat64", " " * 18, f"{ROOT}/a", 10),
             _line("00:00:00.001000", "stat64", " " * 18, f"{ROOT}/b", 10)]
    assert [c.start_ns for c in parse(lines, ROOT).parsed.calls] == [0, 2_000_000]


def test_a_long_relative_path_fs_usage_may_have_cut_is_left_out():
    read = parse([_line("10:00:00.000100", "stat64", " " * 18, "x" * 160, 5)], ROOT)
    assert read.parsed.calls == [] and read.left_out == 1


def test_import_fs_usage_writes_a_trace_that_shows_and_replays(tmp_path, disk_dir):
    import json

    from click.testing import CliRunner

    from stibium_py.cli import main
    log = tmp_path / "fs_usage.log"
    log.write_text("\n".join(LINES) + "\n")
    runner = CliRunner()
    done = runner.invoke(main, ["trace", "import-fs-usage", str(log), "--folder", ROOT, "--out",
                                str(tmp_path / "photos.trace")])
    assert done.exit_code == 0, done.output
    said = (f"trace: {tmp_path / 'photos.trace'} (20 calls on 7 files and folders; 3 calls outside the folder not kept; "
            f"1 call left out (renames, whose new name fs_usage does not print, and paths it cut))")
    assert "".join(done.output.split()) == "".join(said.split())       # the terminal wraps it anywhere
    shown = runner.invoke(main, ["trace", "show", str(tmp_path / "photos.trace"), "--json"])
    summary = json.loads(shown.output)
    assert summary["program"] == "Photos" and summary["system"] == "Darwin" and summary["threads"] == 2
    assert {k["call"]: k["count"] for k in summary["kinds"]}["fullsync"] == 1
    (tmp_path / "plan.yaml").write_text(json.dumps({"name": "mac", "tests": [
        {"name": "import", "kind": "replay", "trace": "photos.trace", "trials": 1}]}))
    ran = runner.invoke(main, ["run", str(tmp_path / "plan.yaml"), "--target", str(disk_dir / "t"), "--out",
                               str(tmp_path / "r")])
    assert ran.exit_code == 0 and "import: 20 calls on 2 threads (as-fast)" in ran.output, ran.output
    # the library's folder (named by no call but there: its file was made in it) is laid out, and the stat of the
    # file never made fails here as it did there; the card's rmdir failed there (ENOTEMPTY: the card held photos
    # fs_usage never showed) and succeeds here, which the run says
    said = " ".join(ran.output.split())
    assert "1 call over 1 trial came out otherwise than recorded" in said and "the first is call 18" in said
    again = runner.invoke(main, ["trace", "import-fs-usage", str(log), "--folder", "Photos", "--out",
                                 str(tmp_path / "other.trace")])
    assert again.exit_code == 2 and again.output == (
        "stibium: trace import-fs-usage: --folder 'Photos' is not an absolute path; give the folder as the Mac named "
        "it, such as /Users/ann/Photos\n")



def test_record_on_macos_follows_the_program_s_process_with_fs_usage(tmp_path, monkeypatch):
    """`stibium record` on a Mac, with fs_usage played by a script of this test's: fs_usage is given the program's
    process id before the program is let go, stopped with SIGINT after it ends, and its lines make the trace; the
    folder's files are listed first, with their sizes."""
    import os
    import stat

    from stibium_py.trace import record as recording
    folder = tmp_path / "Photos"
    (folder / "card").mkdir(parents=True)
    (folder / "card" / "IMG_0001.JPG").write_bytes(b"j" * 5000)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "seen.txt"
    root = str(folder.resolve())
    (tmp_path / "canned.txt").write_text("\n".join([
        _open("10:00:00.000100", 5, "R_____________", f"{root}/card/IMG_0001.JPG"),
        _line("10:00:00.001000", "read", f" F={5:<3d}  B=0x{5000:<6x}", "", 90),
        _line("10:00:00.001100", "close", f" F={5:<3d}", "", 4)]) + "\n")
    fake = bin_dir / "fs_usage"
    # its lines first, as fs_usage prints each call as it sees it: a SIGINT that comes before the shell has gone further
    # (a loaded machine; it came once before the trap, and the shell ended by it had printed nothing) loses nothing
    fake.write_text(f"""#!/bin/sh
cat {tmp_path / "canned.txt"}
trap 'exit 0' INT
echo "$@" > {seen}
tr '\\0' ' ' < /proc/"$4"/cmdline >> {seen}; echo >> {seen}
while :; do sleep 0.05; done
""")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(recording.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(recording, "FS_USAGE_START_S", 1.0)
    done = recording.record(["sh", "-c", "echo made > out.txt"], folder)
    args, waiting = seen.read_text().splitlines()[:2]
    assert args.startswith("-w -f filesys ") and int(args.split()[3]) > 0
    assert "read _ <" in waiting                 # fs_usage met the program still held at its gate
    assert (folder / "out.txt").read_text() == "made\n"       # then it ran
    t = done.trace
    assert (t.tool, t.system, t.program, done.exit_status) == ("fs_usage", "Darwin", "sh", 0)
    assert [c.call for c in t.calls] == ["open", "read", "close"]
    assert 5000 in {f.size_bytes for f in t.files}     # the photo's size before the program ran, from the listing
