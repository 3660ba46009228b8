"""Traces (stibium_py/trace/): strace's lines read into calls (every form strace 6 prints, on a file of its lines
written by hand in tests/fixtures/strace/forms.txt), the files named by tokens with their sizes at the start, a
trace written and read back, a stranger's trace refused in one line wherever it steps out of its format, the
summary `stibium trace show` prints, and `stibium record` on a real program under the real strace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from stibium_py.errors import TraceError
from stibium_py.trace import model
from stibium_py.trace.model import Call, Trace, TraceFile, plain_path, read_trace, trace_text, write_trace
from stibium_py.trace.parsed import files_of
from stibium_py.trace.strace import parse
from stibium_py.trace.summary import summarize

FORMS = Path(__file__).parent / "fixtures" / "strace" / "forms.txt"


def _parsed():
    p = parse(FORMS.read_text().splitlines(), "/srv/app", "/srv/app")
    rel = {v: k for k, v in p.paths.items()}
    return p, [(c.thread, c.start_ns, c.took_ns, c.call, rel.get(c.file), rel.get(c.to_file), c.handle, c.offset,
                c.bytes, c.result, c.error) for c in p.calls]


def test_each_form_strace_prints_is_read_into_its_call():
    p, calls = _parsed()
    assert calls == [
        (0, 0, 20000, "open", "data/db.sqlite", None, 0, -1, 0, 4, ""),
        (0, 100000, 7000, "read", "data/db.sqlite", None, 0, 0, 100, 100, ""),          # pread64: its offset
        (0, 200000, 11000, "write", "data/db.sqlite", None, 0, 8192, 4096, 4096, ""),
        (0, 300000, 2000000, "fdatasync", "data/db.sqlite", None, 0, -1, 0, 0, ""),
        # a write another thread's line cut in two: timed from its start to its end, in its own thread
        (1, 2500000, 100000, "write", "data/db.sqlite", None, 0, -1, 512, 512, ""),
        (0, 2510000, 4000, "seek", "data/db.sqlite", None, 0, 12288, 0, 12288, ""),     # to where it went
        (0, 3000000, 9000, "read", "data/db.sqlite", None, 0, -1, 4096, 4000, ""),      # readv: its vectors' bytes
        (0, 3100000, 50000, "sync_range", "data/db.sqlite", None, 0, 0, 4096, 0, ""),
        (0, 3200000, 10000, "truncate", "data/db.sqlite", None, 0, -1, 16384, 0, ""),
        (0, 3300000, 40000, "allocate", "data/db.sqlite", None, 0, 16384, 65536, 0, ""),
        (0, 3400000, 1000000, "fsync", "data/db.sqlite", None, 0, -1, 0, 0, ""),
        (0, 4500000, 6000, "mmap", "data/db.sqlite", None, 0, 0, 65536, 65536, ""),
        (0, 4600000, 3000, "close", "data/db.sqlite", None, 0, -1, 0, 0, ""),
        (0, 4700000, 4000, "open", "data/missing", None, -1, -1, 0, -1, "ENOENT"),
        (0, 4800000, 30000, "mkdir", "out", None, -1, -1, 0, 0, ""),
        # a child made after chdir("out") works there; its name's escaped blank read back
        (2, 5100000, 15000, "open", "out/a b.txt", None, 1, -1, 0, 5, ""),
        (2, 5200000, 5000, "write", "out/a b.txt", None, 1, -1, 10, 10, ""),
        (2, 5300000, 10000, "rename", "out/a b.txt", "data/b.txt", -1, -1, 0, 0, ""),
        (0, 5500000, 10000, "rename", "data/b.txt", "data/c.txt", -1, -1, 0, 0, ""),    # after fchdir back
        (0, 5600000, 8000, "open", "data", None, 2, -1, 0, 7, ""),
        (0, 5700000, 10000, "list", "data", None, 2, -1, 32768, 112, ""),
        (0, 5800000, 4000, "stat", "data/c.txt", None, -1, -1, 0, 0, ""),               # relative to a folder's fd
        (0, 5900000, 3000, "stat", "data", None, 2, -1, 0, 0, ""),                      # AT_EMPTY_PATH: the fd's own
        (0, 6000000, 6000, "open", "data/c.txt", None, 3, -1, 0, 8, ""),
        (0, 6100000, 6000, "open", "data/d.txt", None, 4, -1, 0, 9, ""),
        (0, 6200000, 12000, "copy", "data/c.txt", "data/d.txt", 3, -1, 10, 10, ""),     # copy_file_range
        (0, 6300000, 10000, "copy", "data/c.txt", "data/d.txt", 3, -1, 100, 10, ""),    # sendfile(out, in)
        (0, 6400000, 20000, "unlink", "data/d.txt", None, -1, -1, 0, 0, ""),
        (0, 6500000, 20000, "rmdir", "out", None, -1, -1, 0, 0, "")]                     # unlinkat AT_REMOVEDIR
    # the library opened and mapped, the folder above, the terminal: counted, not kept; a pipe is no file at all
    assert p.outside == 4 and p.folders == {"data", "out"}


def test_the_files_are_tokens_in_their_folders_with_their_sizes_before_the_run():
    p, _ = _parsed()
    files, names = files_of(p, {".": 0, "data": 0, "data/db.sqlite": 12288})
    assert [(f.path, f.folder, f.size_bytes) for f in files] == [
        ("n1/n2", False, 12288), ("n1/n3", False, None), ("n4", True, None), ("n4/n5", False, None),
        ("n1/n6", False, None), ("n1/n7", False, None), ("n1", True, 0), ("n1/n8", False, None)]
    assert names["out/a b.txt"] == "n4/n5" and all(plain_path(f.path) for f in files)
    text = trace_text(Trace(files, tuple(p.calls), "strace 6.1", "Linux", "app", 10_000_000, p.outside))
    assert "db.sqlite" not in text and "srv" not in text and "a b" not in text


def _trace() -> Trace:
    p, _ = _parsed()
    files, _ = files_of(p, {".": 0, "data": 0, "data/db.sqlite": 12288})
    return Trace(files, tuple(p.calls), "strace 6.1", "Linux", "app", 10_000_000, p.outside)


def test_a_trace_written_reads_back_the_same(tmp_path):
    write_trace(_trace(), tmp_path / "t.trace")
    assert read_trace(tmp_path / "t.trace") == _trace()
    empty = Trace((), (), "strace 6.1", "Linux", "true", 1000)
    write_trace(empty, tmp_path / "e.trace")
    assert read_trace(tmp_path / "e.trace") == empty and json.loads((tmp_path / "e.trace").read_text())["calls"] == []


def _doc() -> dict:
    return json.loads(trace_text(_trace()))


def _refused(tmp_path: Path, doc, capsys=None) -> str:
    path = tmp_path / "x.trace"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(TraceError) as e:
        read_trace(path)
    return str(e.value).replace(str(path), "T")


def _with(change) -> dict:
    doc = _doc()
    change(doc)
    return doc


TODO = "give a trace that stibium record wrote"


@pytest.mark.parametrize("change, said", [
    (lambda d: d["files"][0].update(path="../../etc/passwd"), "file 0's path is not a plain relative path"),
    (lambda d: d["files"][0].update(path="/etc/passwd"), "file 0's path is not a plain relative path"),
    (lambda d: d["files"][0].update(path="a/./b"), "file 0's path is not a plain relative path"),
    (lambda d: d["files"][0].update(path="a//b"), "file 0's path is not a plain relative path"),
    (lambda d: d["files"][0].update(path="/".join(["d"] * 33)), "file 0's path is not a plain relative path"),
    (lambda d: d["files"][1].update(path=d["files"][0]["path"]), "file 1's path is named twice"),
    (lambda d: d["files"][0].update(size_bytes=-1), "file 0's size_bytes is not a whole number from 0 to"),
    (lambda d: d["files"][0].update(size_bytes=1.5), "file 0's size_bytes is not a whole number from 0 to"),
    (lambda d: d["files"][0].update(folder="yes"), "file 0's folder is not true or false"),
    (lambda d: d["files"][0].update(extra=1), "file 0 is not a record of path, folder and size_bytes"),
    (lambda d: d["calls"][0].__setitem__(0, 4096), "call 0's thread is not a whole number from 0 to 4095"),
    (lambda d: d["calls"][0].__setitem__(4, 99), "call 0's file is not a whole number from -1 to 7"),
    (lambda d: d["calls"][0].__setitem__(2, -5), "call 0's took_ns is not a whole number from 0 to"),
    (lambda d: d["calls"][0].__setitem__(8, True), "call 0's bytes is not a whole number from 0 to"),
    (lambda d: d["calls"][0].__setitem__(3, "exec"), "call 0 is 'exec', not one of open, close, read"),
    (lambda d: d["calls"][0].__setitem__(10, "rm -rf /"), "call 0's error is not an error's name"),
    (lambda d: d["calls"][0].pop(), "call 0 is not a row of 11 values"),
    (lambda d: d.update(version=2), "a trace of version 2, which this stibium does not read (it reads version 1)"),
    (lambda d: d.update(format="other"), "not a stibium trace (its format is not 'stibium-trace')"),
    (lambda d: d.update(columns=["thread"]), "its columns are not thread, start_ns"),
    (lambda d: d["recorded"].update(program="a\x1b[2Jb"), "recorded.program is not a line of text"),
    (lambda d: d["recorded"].update(elapsed_ns=-1), "recorded.elapsed_ns is not a whole number from 0 to"),
    (lambda d: d.update(calls={}), "'calls' is not a list"),
    (lambda d: d.update(files=[[]] * 3), "file 0 is not a record of path, folder and size_bytes"),
])
def test_a_stranger_s_trace_that_steps_out_of_its_format_is_refused_in_one_line(tmp_path, change, said):
    message = _refused(tmp_path, _with(change))
    assert message.startswith(f"T: {said}") and message.endswith(TODO) and "\n" not in message


def test_a_trace_that_is_no_json_nests_too_deep_or_holds_too_much_is_refused(tmp_path, monkeypatch):
    assert _refused(tmp_path, "{not json") == f"T: not JSON; {TODO}"
    assert _refused(tmp_path, "[" * 200 + "]" * 200) == f"T: nested deeper than 64 levels; {TODO}"
    (tmp_path / "bytes.trace").write_bytes(b"\xff{}")
    assert _refusal(tmp_path / "bytes.trace") == f"{tmp_path / 'bytes.trace'}: not UTF-8 text; {TODO}"
    monkeypatch.setattr(model, "MAX_CALLS", 10)
    assert _refused(tmp_path, _doc()) == f"T: more than 10 calls; {TODO}"
    monkeypatch.setattr(model, "MAX_THREADS", 2)           # thread 2 is the third
    assert _refused(tmp_path, _with(lambda d: d.update(calls=d["calls"][:9] + d["calls"][15:16]))) == \
        f"T: call 9's thread is not a whole number from 0 to 1; {TODO}"
    monkeypatch.setattr(model, "TRACE_CAP_BYTES", 100)
    assert _refused(tmp_path, _doc()) == "T: larger than 100 bytes; a trace holds at most 10 calls"


def test_a_trace_path_that_is_no_file_is_refused_without_waiting(tmp_path):
    with pytest.raises(TraceError, match="no such file; give the path of a trace"):
        read_trace(tmp_path / "none.trace")
    with pytest.raises(TraceError, match="a folder, not a trace"):
        read_trace(tmp_path)
    os.mkfifo(tmp_path / "fifo.trace")
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.append(_refusal(tmp_path / "fifo.trace")), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():
        os.close(os.open(tmp_path / "fifo.trace", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO waited for a writer")
    assert said == [f"{tmp_path / 'fifo.trace'}: a FIFO, not a trace; give the path of a trace"]


def _refusal(path: Path) -> str:
    try:
        read_trace(path)
    except TraceError as e:
        return str(e)
    return ""


def test_the_summary_sums_each_kind_its_bytes_and_the_time_in_and_between_calls():
    s = summarize(_trace())
    by = {k.call: (k.count, k.bytes, k.in_calls_ns, k.errors) for k in s.kinds}
    assert [k.call for k in s.kinds] == ["open", "close", "read", "write", "seek", "fsync", "fdatasync",
                                         "sync_range", "truncate", "allocate", "rename", "unlink", "mkdir", "rmdir",
                                         "stat", "list", "copy", "mmap"]
    assert by["read"] == (2, 4100, 16000, 0) and by["write"] == (3, 4096 + 512 + 10, 116000, 0)
    assert by["open"] == (6, 0, 59000, 1) and by["copy"] == (2, 20, 22000, 0) and by["mmap"] == (1, 65536, 6000, 0)
    assert s.calls == 29 and s.threads == 3 and s.files == 8 and (s.existing, s.existing_bytes) == (2, 12288)
    assert s.in_calls_ns == sum(c.took_ns for c in _trace().calls)
    # thread 1: one call; thread 2: 5.1 ms to 5.31 ms with 30 us in calls; thread 0: 0 to 6.52 ms
    busy0 = sum(c.took_ns for c in _trace().calls if c.thread == 0)
    assert s.between_ns == (6_520_000 - busy0) + 0 + (210_000 - 30_000)
    assert (s.span_ns, s.not_replayed, s.outside) == (6_520_000, 1, 4)


def _wide(monkeypatch) -> None:
    import stibium_py.cli
    monkeypatch.setattr(stibium_py.cli.console.made(), "_width", 200)


def test_trace_show_prints_what_the_trace_holds(tmp_path, monkeypatch):
    _wide(monkeypatch)
    write_trace(_trace(), tmp_path / "t.trace")
    done = CliRunner().invoke(main, ["trace", "show", str(tmp_path / "t.trace")], terminal_width=120)
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0] == ("app, recorded by strace 6.1 on Linux: 29 calls by 3 threads on 8 files and folders (2 there "
                        "before it ran, 12.3 KB in their files)")
    assert lines[1] == ("time in these calls 3.43 ms, between them 3.4 ms (50% of the threads' time was spent in the "
                        "calls), from the first call to the last 6.52 ms; the program ran 10 ms")
    assert lines[2] == ("the quickest call took 3 us: strace's own stop is in every call's time "
                        "(docs/trace-format.md), so a fast call's time is mostly the tracer's")
    assert lines[3] == ("1 call a replay cannot make (mmap: the reads and writes of a mapped file are page faults, "
                        "which no call shows)")
    assert lines[4] == "4 calls on files outside the recorded folder were not kept"
    assert any(line.split()[:3] == ["│", "fsync", "│"] for line in lines)
    as_json = CliRunner().invoke(main, ["trace", "show", "--json", str(tmp_path / "t.trace")])
    assert json.loads(as_json.output)["calls"] == 29
    bad = CliRunner().invoke(main, ["trace", "show", str(tmp_path / "none.trace")])
    assert bad.exit_code == 2 and bad.output == f"stibium: {tmp_path / 'none.trace'}: no such file; give the path of a trace\n"
    import dataclasses
    write_trace(dataclasses.replace(_trace(), tool="bpftrace 0.17.0"), tmp_path / "b.trace")
    by_ebpf = CliRunner().invoke(main, ["trace", "show", str(tmp_path / "b.trace")], terminal_width=120)
    assert by_ebpf.output.splitlines()[2] == ("the quickest call took 3 us: the recorder's probes at each call's entry "
                                              "and return are in its time (docs/trace-format.md), a few microseconds")


@pytest.fixture
def tracefs():
    """The kernel's tracing folder, mounted for the test where it is not (and taken away after): bpftrace reads
    the syscalls' tracepoints from it."""
    from stibium_py.trace.record import TRACEFS
    mounted = False
    if not (TRACEFS / "events").is_dir():
        assert os.geteuid() == 0, "the eBPF recorder's test runs as root (CI does)"
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=True)
        mounted = True
    yield
    if mounted:
        subprocess.run(["umount", str(TRACEFS)], check=False)


@pytest.mark.skipif(sys.platform != "linux", reason="strace and bpftrace are Linux's")
@pytest.mark.parametrize("tracer", ["strace", "ebpf"])
def test_record_keeps_what_a_real_program_did_to_its_folder(tmp_path, monkeypatch, tracer, request):
    _wide(monkeypatch)
    assert shutil.which(tracer if tracer == "strace" else "bpftrace"), "install.sh --test installs strace, bpftrace"
    if tracer == "ebpf":
        request.getfixturevalue("tracefs")
    work = tmp_path / "work"
    work.mkdir()
    (work / "old.bin").write_bytes(b"x" * 3000)
    script = tmp_path / "prog.py"
    script.write_text("import os, threading\n"
                      "fd = os.open('new.bin', os.O_WRONLY | os.O_CREAT, 0o644)\n"
                      "os.write(fd, b'y' * 5000); os.fsync(fd); os.close(fd)\n"
                      "def t():\n    fd = os.open('old.bin', os.O_RDONLY); os.pread(fd, 1000, 2000); os.close(fd)\n"
                      "th = threading.Thread(target=t); th.start(); th.join()\n"
                      "os.rename('new.bin', 'renamed.bin'); os.unlink('renamed.bin')\n")
    out = tmp_path / "p.trace"
    done = CliRunner().invoke(main, ["record", "--tracer", tracer, "--folder", str(work), "--out", str(out), "--",
                                     sys.executable, str(script)])
    assert done.exit_code == 0, done.output
    t = read_trace(out)
    assert t.tool.startswith("strace " if tracer == "strace" else "bpftrace ")
    kept = [(c.thread, c.call, t.files[c.file].path, c.bytes, c.result) for c in t.calls
            if c.call in ("write", "fsync", "read", "rename", "unlink")]
    assert kept == [(0, "write", "n1", 5000, 5000), (0, "fsync", "n1", 0, 0), (1, "read", "n2", 1000, 1000),
                    (0, "rename", "n1", 0, 0), (0, "unlink", "n3", 0, 0)]
    sizes = {f.path: f.size_bytes for f in t.files}
    assert sizes["n1"] is None and sizes["n2"] == 3000 and sizes["n3"] is None
    assert t.outside > 0 and t.program == os.path.basename(sys.executable) and t.elapsed_ns > 0
    assert sorted(p.name for p in work.iterdir()) == ["old.bin"]              # the program's own doing, no more
    assert done.output.startswith(f"trace: {out} (")
    again = CliRunner().invoke(main, ["record", "--folder", str(work), "--out", str(out), "--", "true"])
    assert again.exit_code == 2 and again.output == f"stibium: record: {out} exists; give another --out or remove it\n"
    os.symlink(tmp_path / "elsewhere.trace", tmp_path / "dangling.trace")
    through = CliRunner().invoke(main, ["record", "--folder", str(work), "--out", str(tmp_path / "dangling.trace"),
                                        "--", "true"])
    assert through.exit_code == 2 and not (tmp_path / "elsewhere.trace").exists()
    none = CliRunner().invoke(main, ["record", "--folder", str(work), "--out", str(tmp_path / "q.trace"), "--",
                                     "no-such-program-here"])
    assert none.exit_code == 2 and none.output == ("stibium: record: no-such-program-here: no such program; give a "
                                                   "program on the PATH or its path\n")
    assert not (tmp_path / "q.trace").exists()


IOLOG_V3 = """fio version 3 iolog
2 /dev/nvme0n1 add
872 /dev/nvme0n1 open
878 /dev/nvme0n1 write 0 16384
888 /dev/nvme0n1 read 16384 4096
889 /srv/other.img read 8192 4096
890 /dev/nvme0n1 trim 0 4096
891 /dev/nvme0n1 sync 0 0
892 /dev/nvme0n1 datasync 0 0
893 /dev/nvme0n1 wait 0 1000
10001677 /dev/nvme0n1 close
"""


def test_fio_s_io_log_is_a_trace_of_one_thread_with_its_files_at_the_size_its_requests_reach():
    from stibium_py.trace.fio_iolog import read_iolog
    done = read_iolog(IOLOG_V3, "a.iolog")
    t = done.trace
    assert [(c.start_ns, c.call, c.file, c.handle, c.offset, c.bytes, c.result) for c in t.calls] == [
        (872_000, "open", 0, 0, -1, 0, 0), (878_000, "write", 0, 0, 0, 16384, 16384),
        (888_000, "read", 0, 0, 16384, 4096, 4096),
        (889_000, "open", 1, 1, -1, 0, 0), (889_000, "read", 1, 1, 8192, 4096, 4096),    # never opened: opened here
        (891_000, "fsync", 0, 0, -1, 0, 0), (892_000, "fdatasync", 0, 0, -1, 0, 0),
        (10_001_677_000, "close", 0, 0, -1, 0, 0)]
    assert [(f.path, f.folder, f.size_bytes) for f in t.files] == [("n1", False, 20480), ("n2", False, 12288)]
    assert done.not_kept == 2 and {c.thread for c in t.calls} == {0} and all(c.took_ns == 0 for c in t.calls)
    assert (t.tool, t.system, t.program, t.elapsed_ns) == ("fio write_iolog (version 3)", "", "fio", 0)
    assert "nvme" not in trace_text(t)
    v2 = read_iolog("fio version 2 iolog\nf1 add\nf1 open\nf1 read 0 4096\nf1 write 4096 4096\nf1 close\n", "b")
    assert [(c.start_ns, c.call) for c in v2.trace.calls] == [(0, "open"), (0, "read"), (0, "write"), (0, "close")]


@pytest.mark.parametrize("text, said", [
    ("fio version 4 iolog\n", "x: not fio's I/O log (its first line is not 'fio version 2 iolog' or 'fio version 3 "
                              "iolog'); give a log fio wrote with write_iolog"),
    ("", "x: not fio's I/O log"),
    ("fio version 3 iolog\n5 f read 0\n", "x:2: not a line of fio's log (FILE ACTION, or FILE DIR OFFSET LENGTH, "
                                         "after the time); mend the line"),
    ("fio version 2 iolog\nf exec\n", "x:2: exec: not one of fio's file actions (add, open, close); mend the line"),
    ("fio version 2 iolog\nf rm 0 1\n", "x:2: rm: not one of fio's requests"),
    ("fio version 2 iolog\nf read -1 4096\n", "x:2: offset -1 is not a whole number from 0 to 1125899906842624"),
    ("fio version 2 iolog\nf read 0 ²\n", "x:2: length ² is not a whole number from 0 to"),
    ("fio version 3 iolog\n99999999999999999999 f read 0 1\n", "x:2: time 99999999999999999999 is not a whole number"),
])
def test_a_stranger_s_io_log_is_refused_line_by_line(text, said):
    from stibium_py.trace.fio_iolog import read_iolog
    with pytest.raises(TraceError) as e:
        read_iolog(text, "x")
    assert str(e.value).startswith(said) and "\n" not in str(e.value)


def test_trace_import_fio_writes_the_trace_and_says_what_it_left_out(tmp_path, monkeypatch):
    _wide(monkeypatch)
    (tmp_path / "a.iolog").write_text(IOLOG_V3)
    done = CliRunner().invoke(main, ["trace", "import-fio", str(tmp_path / "a.iolog"), "--out", str(tmp_path / "a.trace")])
    assert done.exit_code == 0, done.output
    assert done.output == (f"trace: {tmp_path / 'a.trace'} (8 calls on 2 files; 2 of its trims, range syncs and waits "
                           f"not kept (no call of a trace does them))\n")
    shown = CliRunner().invoke(main, ["trace", "show", str(tmp_path / "a.trace")]).output.splitlines()
    assert shown[:2] == ["fio, recorded by fio write_iolog (version 3): 8 calls by 1 thread on 2 files and folders (2 "
                         "there before it ran, 32.8 KB in their files)",
                         "the trace holds no call's time in the kernel (its recorder kept none); from the first call to "
                         "the last 10 s"]
    again = CliRunner().invoke(main, ["trace", "import-fio", str(tmp_path / "a.iolog"), "--out", str(tmp_path / "a.trace")])
    assert again.exit_code == 2 and "exists; give another --out or remove it" in again.output
    (tmp_path / "bad.iolog").write_bytes(b"fio version 3 iolog\n\xff\n")
    bad = CliRunner().invoke(main, ["trace", "import-fio", str(tmp_path / "bad.iolog"), "--out", str(tmp_path / "b.trace")])
    assert bad.exit_code == 2 and bad.output == (f"stibium: {tmp_path / 'bad.iolog'}: not UTF-8 text; give a log fio "
                                                 f"wrote with write_iolog\n")
    assert not (tmp_path / "b.trace").exists()


def test_posix_fadvise_is_kept_as_its_advice_on_its_range():
    lines = ["7 1000.000000 openat(AT_FDCWD</srv/app>, \"f\", O_RDWR) = 3</srv/app/f> <0.000010>",
             "7 1000.000100 fadvise64(3</srv/app/f>, 0, 16777216, POSIX_FADV_DONTNEED) = 0 <0.000200>",
             "7 1000.000400 fadvise64(3</srv/app/f>, 4096, 0, POSIX_FADV_RANDOM) = 0 <0.000002>"]
    p = parse(lines, "/srv/app", "/srv/app")
    assert [(c.call, c.offset, c.bytes) for c in p.calls] == [("open", -1, 0), ("advise_dontneed", 0, 16777216),
                                                               ("advise_random", 4096, 0)]


def test_a_copy_to_the_end_asks_what_it_moved_when_replayed():
    from stibium_py.kinds.replay.script import script_of
    files = (TraceFile(".", True, 0), TraceFile("a", False, 20480), TraceFile("b", False, None))
    calls = (Call(0, 0, 1, "open", 1, handle=0, result=3), Call(0, 10, 1, "open", 2, handle=1, result=4),
             Call(0, 20, 1, "copy", 1, 2, 0, -1, model.MAX_BYTES, 20480),           # cat: SSIZE_MAX, to the end
             Call(0, 30, 1, "copy", 1, 2, 0, -1, model.MAX_BYTES, 0))
    text = script_of(Trace(files, calls, "t", "Linux", "p", 0)).text
    copies = [line.split() for line in text.splitlines() if line.startswith("C ") and line.split()[2] == "17"]
    assert [int(c[8]) for c in copies] == [20480, 0]
