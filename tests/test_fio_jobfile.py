"""A plan's own fio job file is data (stibium_py/fio/jobfile.py): each way a job file from a stranger could run a
command, load code, or read, write or delete outside the test's folder is refused in one line naming the file,
the line and the option, exit status 2, before fio sees any of it; nothing outside the target is created,
changed or removed (a folder beside it, hashed with its mtimes), and no marker that a command or a library's
constructor would make appears."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main
from stibium_py.errors import FioError
from stibium_py.fio.jobfile import ALLOWED, MAX_JOB_FILE_BYTES, check_job_file, read_plan_file

PLAN = """\
name: stranger
tests:
  - name: t
    kind: pattern
    op: read
    access: sequential
    granularities: [64KiB]
    bytes: 1MiB
    span: 4MiB
    trials: 1
    bench: fio
    bench_job: {job}
"""


def _snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file below folder: its content's hash and its mtime (ns)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                  path.stat().st_mtime_ns)
    return out


@pytest.fixture
def stranger(tmp_path):
    """A plan's folder (plan.yaml, jobs/), and beside it a folder outside the target with files a hostile job
    would aim at; yields a function that runs a job file and returns (exit code, output)."""
    plans = tmp_path / "plans"
    (plans / "jobs").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_bytes(b"precious\n" * 100)
    (outside / "other.fio").write_text(f"[x]\nrw=read\nexec_prerun=touch {tmp_path / 'marker'}\n")
    before = _snapshot(outside)

    def run(job: str | bytes | None, given: str = "jobs/mine.fio") -> tuple[int, str]:
        if job is not None:
            (plans / "jobs" / "mine.fio").write_bytes(job.encode() if isinstance(job, str) else job)
        (plans / "plan.yaml").write_text(PLAN.format(job=given))
        result = CliRunner().invoke(main, ["run", str(plans / "plan.yaml"), "--target", str(tmp_path / "target"),
                                           "--out", str(tmp_path / "reports")])
        return result.exit_code, result.output

    yield run
    assert _snapshot(outside) == before, "a file outside the target was created, changed or removed"
    assert not (tmp_path / "marker").exists(), "a command or a library's code ran"
    assert not (tmp_path / "reports").exists() and not (tmp_path / "target").exists()


def _out(tmp: Path) -> str:
    return str(tmp / "outside")


# each row of the table: the job line, and the exact refusal (line 3: [a], rw=read, then the line)
HOSTILE = [
    ("exec_prerun=touch {marker}", "exec_prerun: not allowed in a plan's job file (it runs a command)"),
    ("exec_postrun=touch {marker}", "exec_postrun: not allowed in a plan's job file (it runs a command)"),
    ("ioengine=exec", "ioengine=exec: not allowed in a plan's job file (it runs a command)"),
    ("ioengine=external:{lib}", "ioengine=external:{lib_shown}: not allowed in a plan's job file (it loads code)"),
    ("ioengine=filedelete", "ioengine=filedelete: not allowed in a plan's job file (a plan's job file uses one of "
                            "psync, pvsync, pvsync2, sync, vsync, libaio, io_uring, posixaio, mmap)"),
    ("filename={outside}/victim", "filename: a plain file name in the test's folder (letters, digits, . _ -; several "
                                  "separated by :) is expected, without / or ..; name a file of the test's folder"),
    ("filename=../../outside/victim", "filename: a plain file name in the test's folder (letters, digits, . _ -; "
                                      "several separated by :) is expected, without / or ..; name a file of the "
                                      "test's folder"),
    ("filename=data.bin:{outside}/victim", "filename: a plain file name in the test's folder (letters, digits, . _ "
                                           "-; several separated by :) is expected, without / or ..; name a file "
                                           "of the test's folder"),
    ("filename=..", "filename: a plain file name in the test's folder (letters, digits, . _ -; several separated by "
                    ":) is expected, without / or ..; name a file of the test's folder"),
    ("unlink=1", "unlink: not allowed in a plan's job file (it deletes files)"),
    ("directory={outside}", "directory: not allowed in a plan's job file (it reads or writes files other than the "
                            "test's own)"),
    ("filename_format={outside}/$jobname", "filename_format: not allowed in a plan's job file (it reads or writes "
                                           "files other than the test's own)"),
    ("write_bw_log={outside}/bw", "write_bw_log: not allowed in a plan's job file (it reads or writes files other "
                                  "than the test's own)"),
    ("write_iolog={outside}/io", "write_iolog: not allowed in a plan's job file (it reads or writes files other than "
                                 "the test's own)"),
    ("write_lat_log={outside}/lat", "write_lat_log: not allowed in a plan's job file (it reads or writes files other "
                                    "than the test's own)"),
    ("write_hist_log={outside}/h", "write_hist_log: not allowed in a plan's job file (it reads or writes files other "
                                   "than the test's own)"),
    ("read_iolog={outside}/victim", "read_iolog: not allowed in a plan's job file (it reads or writes files other "
                                    "than the test's own)"),
    ("iomem=mmapshared:{outside}/victim", "mem: a file after : is not allowed in a plan's job file (it reads or "
                                          "writes files other than the test's own)"),
    ("ioscheduler=none", "ioscheduler: not allowed in a plan's job file (it changes the machine's settings or the "
                         "process's rights)"),
    ("size=${{HOME}}", "size: a value with $ (fio would expand an environment variable or an expression there); "
                       "give the value itself"),
    ("bs=$pagesize*2", "bs: a value with $ (fio would expand an environment variable or an expression there); give "
                       "the value itself"),
    ("numjobs=100000", "numjobs=100000: a plan's job file takes 1 to 64 (job a)"),
    ("include {outside}/other.fio", "include: not allowed in a plan's job file (it reads another file)"),
]


@pytest.fixture(scope="module")
def constructor_lib(tmp_path_factory):
    """A shared library whose constructor creates a marker file (the `marker` of the test's folder beside it)."""
    folder = tmp_path_factory.mktemp("lib")
    source = folder / "evil.c"
    source.write_text('#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void made(void) '
                      '{ const char *m = getenv("STIBIUM_TEST_MARKER"); if (m) { FILE *f = fopen(m, "w"); '
                      'if (f) fclose(f); } }\n')
    lib = folder / "evil.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(source)], check=True)
    return lib


@pytest.mark.timeout(120)
@pytest.mark.parametrize("line, refusal", HOSTILE, ids=[h[0].split("=")[0].split()[0] + str(i)
                                                       for i, h in enumerate(HOSTILE)])
def test_a_hostile_job_line_is_refused_before_fio_sees_it(stranger, tmp_path, monkeypatch, constructor_lib, line,
                                                          refusal):
    monkeypatch.setenv("STIBIUM_TEST_MARKER", str(tmp_path / "marker"))
    values = {"marker": tmp_path / "marker", "outside": _out(tmp_path), "lib": constructor_lib,
              "lib_shown": _shown(f"external:{constructor_lib}")[len("external:"):]}
    code, out = stranger(f"[a]\nrw=read\n{line.format(**values)}\n")
    assert code == 2
    assert out == f"stibium: jobs/mine.fio:3: {refusal.format(**values)}\n"


def _shown(value: str) -> str:
    return value if len(value) <= 40 else value[:37] + "..."


def test_the_library_and_the_command_would_have_run_if_fio_had_read_them(tmp_path, monkeypatch, constructor_lib):
    """The hostile lines above are live: fio itself, given them, makes the markers (so the refusals above are
    what keeps them out)."""
    monkeypatch.setenv("STIBIUM_TEST_MARKER", str(tmp_path / "lib-marker"))
    subprocess.run(["fio", "--output-format=json", "-"], input=f"[a]\nrw=read\nsize=4k\nioengine=external:"
                   f"{constructor_lib}\n", text=True, capture_output=True, timeout=60, cwd=tmp_path)
    assert (tmp_path / "lib-marker").exists()
    subprocess.run(["fio", "--output-format=json", "-"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                   input=f"[a]\nrw=read\nsize=4k\nexec_prerun=touch {tmp_path / 'cmd-marker'}\n")
    assert (tmp_path / "cmd-marker").exists()


def test_a_job_file_that_is_a_link_out_of_the_plan_s_folder_is_refused(stranger, tmp_path):
    (tmp_path / "plans" / "jobs" / "mine.fio").symlink_to(tmp_path / "outside" / "other.fio")
    code, out = stranger(None)
    assert code == 2
    assert out == (f"stibium: test t: bench_job jobs/mine.fio: outside the plan's folder {tmp_path / 'plans'} (a path "
                   f"that climbs out of it, or a link that leads out); put the job file beside the plan\n")


@pytest.mark.parametrize("given, refusal", [
    ("/etc/passwd", "an absolute path; a plan's job file lies in the plan's folder: give its path relative to it"),
    ("~/x.fio", "an absolute path; a plan's job file lies in the plan's folder: give its path relative to it"),
    ("../outside/victim", "outside the plan's folder {plans} (a path that climbs out of it, or a link that leads "
                          "out); put the job file beside the plan"),
    ("jobs", "a folder, not a job file; give a fio job file"),
])
def test_a_job_path_outside_the_plan_s_folder_is_refused_without_quoting_it(stranger, tmp_path, given, refusal):
    code, out = stranger(None, given)
    assert code == 2
    assert out == f"stibium: test t: bench_job {given}: {refusal.format(plans=tmp_path / 'plans')}\n"
    assert "precious" not in out and "root:" not in out


def test_a_fifo_is_refused_at_once(stranger, tmp_path):
    os.mkfifo(tmp_path / "plans" / "jobs" / "mine.fio")
    code, out = stranger(None)
    assert code == 2
    assert out == "stibium: test t: bench_job jobs/mine.fio: a FIFO, not a job file; give a fio job file\n"


def test_a_device_reached_through_a_link_is_refused(stranger, tmp_path):
    (tmp_path / "plans" / "jobs" / "mine.fio").symlink_to("/dev/zero")
    code, out = stranger(None)
    assert code == 2 and "outside the plan's folder" in out


def test_a_device_node_inside_the_plan_s_folder_is_refused(tmp_path):
    os.mknod(tmp_path / "zero", 0o600 | 0o020000, os.makedev(1, 5))       # /dev/zero's numbers, here
    with pytest.raises(FioError, match=r"^z: a device, not a job file; give a fio job file$"):
        read_plan_file(tmp_path, "zero", "z")


@pytest.mark.parametrize("given, refusal", [
    ('""', "bench_job is the job file's path relative to the plan's folder, such as jobs/reads.fio (not empty, no "
           "NUL byte, at most 1024 characters)"),
    ('"a\\0b"', "bench_job is the job file's path relative to the plan's folder, such as jobs/reads.fio (not empty, "
                "no NUL byte, at most 1024 characters)"),
])
def test_an_empty_or_nul_path_is_refused_in_the_plan(stranger, given, refusal):
    code, out = stranger(None, given)
    assert code == 2
    assert out.startswith("stibium: ") and out.strip().endswith(refusal) and len(out.strip().splitlines()) == 1


def test_a_job_file_past_its_cap_is_read_no_further(tmp_path):
    (tmp_path / "big.fio").write_bytes(b"[a]\n" + b";" * (4 * MAX_JOB_FILE_BYTES))
    with pytest.raises(FioError, match=r"^big: larger than 256 KiB; a plan's job file is a few lines of options$"):
        read_plan_file(tmp_path, "big.fio", "big")


def test_a_job_line_that_quotes_a_file_is_refused_without_its_content(stranger, tmp_path):
    code, out = stranger("include /etc/passwd\n")
    assert code == 2
    assert out == "stibium: jobs/mine.fio:1: include: not allowed in a plan's job file (it reads another file)\n"


def test_stibium_plan_check_holds_the_job_file_to_the_allow_list(tmp_path):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "mine.fio").write_text("[a]\nrw=read\nexec_postrun=rm -rf /\n")
    (tmp_path / "plan.yaml").write_text(PLAN.format(job="jobs/mine.fio"))
    result = CliRunner().invoke(main, ["plan", "check", str(tmp_path / "plan.yaml")])
    assert result.exit_code == 2
    assert result.output == ("stibium: jobs/mine.fio:3: exec_postrun: not allowed in a plan's job file (it runs a "
                             "command)\n")


def test_what_passes_is_written_again_as_canonical_options_under_their_own_names():
    checked = check_job_file(b"[global]\n  filename = data.bin ; the test's file\n# a comment\nreadwrite=randread\n"
                             b"blocksize=4k\n\n[one]\nio_limit=1m\nwait_for_previous\n", "j.fio")
    assert checked.text == "[global]\nfilename=data.bin\nrw=randread\nbs=4k\n[one]\nio_size=1m\nstonewall\n"
    assert checked.files == ("data.bin",)


@pytest.mark.parametrize("text, refusal", [
    ("rw=read\n", "j.fio:1: rw: an option before any [section]; put it under [global] or a job"),
    ("[a b]\n", "j.fio:1: a section name of letters, digits, . _ - (at most 64) between [ ] is expected; name the "
                "job plainly"),
    ("[../x]\nrw=read\n", "j.fio:1: a section name of letters, digits, . _ - (at most 64) between [ ] is expected; "
                          "name the job plainly"),
    ("[a]\nname=../../x\n", "j.fio:2: name=../../x: not a value of the form fio documents for name; mend it"),
    ("[a]\nrw\n", "j.fio:2: rw: needs a value (rw=...)"),
    ("[a]\niodepth=5000\n", "j.fio:2: iodepth=5000: a plan's job file takes 1 to 1024 (job a)"),
    ("[a]\nnumjobs=64\niodepth=64\nbs=1m\n", "j.fio: its jobs would hold 4.0 GiB of buffers (numjobs x iodepth x the "
                                           "largest bs, over every job); a plan's job file holds at most 2 GiB"),
    ("[a]\nbs=4k`id`\n", "j.fio:2: bs=4k`id`: not a value of the form fio documents for bs; mend it"),
])
def test_the_reader_refuses_what_is_not_plainly_an_option(text, refusal):
    with pytest.raises(FioError) as e:
        check_job_file(text.encode(), "j.fio")
    assert str(e.value) == refusal


def test_bytes_that_are_not_text_are_refused():
    with pytest.raises(FioError, match=r"^j.fio: holds a NUL byte; a job file is text$"):
        check_job_file(b"[a]\n\x00\n", "j.fio")
    with pytest.raises(FioError, match=r"^j.fio: not UTF-8 text; give a fio job file$"):
        check_job_file(b"[a]\n\xff\n", "j.fio")


def test_every_allowed_option_is_one_this_fio_knows():
    """The allow-list names options of fio itself (fio --cmdhelp=all, the engines' own from --enghelp), so no
    entry is a typo that refuses nothing or a name fio would read otherwise."""
    fio = shutil.which("fio")
    assert fio is not None
    engines = {line.split()[0] for engine in ("io_uring", "libaio", "pvsync2") for line in subprocess.run(
        [fio, f"--enghelp={engine}"], capture_output=True, text=True, timeout=30).stdout.splitlines() if line.strip()}
    unknown = [name for name in ALLOWED if name not in engines and not subprocess.run(
        [fio, f"--cmdhelp={name}"], capture_output=True, text=True, timeout=30).stdout.strip()]
    assert unknown == []


def test_docs_fio_md_lists_every_option_a_job_file_may_use():
    text = (Path(__file__).parent.parent / "docs" / "fio.md").read_text(encoding="utf-8")
    section = text[text.index("### What a plan's job file may say"):text.index("### What the report shows")]
    assert [name for name in ALLOWED if f"`{name}`" not in section] == []
