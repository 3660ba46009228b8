"""The job file's reader in its parts (fio/jobfile.py), called directly: the refusals' words for each kind of file
and path, the read that never waits on a FIFO, a section or include line at its edges, and the sizes that bound
the buffers (numbers with and without units, in either case, decimal or binary). The whole files and the table of
every allowed option are tests/test_fio_jobfile.py and tests/test_fio_allowed.py."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from stibium_py.errors import FioError
from stibium_py.beside import named_kind
from stibium_py.fio.jobfile import (MAX_BUFFER_BYTES, _bytes, _largest_request, _one_of, _shown,
                                    check_job_file, read_plan_file)


def test_a_choice_of_words_is_each_word_escaped():
    assert _one_of("a.b", "c+", "d") == r"a\.b|c\+|d"


@pytest.mark.parametrize("mode, said", [
    (stat.S_IFDIR, "a folder"), (stat.S_IFIFO, "a FIFO"), (stat.S_IFCHR, "a device"), (stat.S_IFBLK, "a device"),
    (stat.S_IFSOCK, "a socket"), (stat.S_IFLNK, "not a regular file")])
def test_each_kind_of_file_that_is_no_job_file_is_named(mode, said):
    assert named_kind(mode | 0o644) == said


def test_a_fifo_in_the_plan_s_folder_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "mine.fio")
    said: list[str] = []

    def read() -> None:
        try:
            read_plan_file(tmp_path, "mine.fio", "j")
        except FioError as e:
            said.append(str(e))
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():           # release the blocked open, then fail
        os.close(os.open(tmp_path / "mine.fio", os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
        pytest.fail("the FIFO's open waited for a writer")
    assert said == ["j: a FIFO, not a job file; give a fio job file"]


def test_a_path_through_a_file_is_said_as_the_system_says_it(tmp_path):
    (tmp_path / "job.fio").write_text("[j]\n")
    with pytest.raises(FioError) as e:
        read_plan_file(tmp_path, "job.fio/x", "j")
    assert str(e.value) == ("j: cannot be reached (Not a directory); give the job file's path relative to the plan's "
                            "folder")


def test_a_name_of_1024_characters_is_still_a_path(tmp_path):
    with pytest.raises(FioError) as e:
        read_plan_file(tmp_path, "a" * 1024, "j")
    assert "not a path" not in str(e.value)
    with pytest.raises(FioError, match="not a path"):
        read_plan_file(tmp_path, "a" * 1025, "j")


def test_a_section_without_its_closing_bracket_is_refused():
    with pytest.raises(FioError) as e:
        check_job_file(b"[job\nrw=read\n", "j.fio")
    assert str(e.value).startswith("j.fio:1: a section name of letters, digits")


def test_an_include_written_as_an_option_is_refused_as_an_include():
    with pytest.raises(FioError) as e:
        check_job_file(b"[job]\ninclude=other.fio\n", "j.fio")
    assert str(e.value) == "j.fio:2: include: not allowed in a plan's job file (it reads another file)"


def test_a_job_s_missing_counts_are_one_at_the_buffers_bound():
    # 1 GiB requests: numjobs 2 (iodepth 1 unsaid) and iodepth 2 (numjobs 1 unsaid) each hold 2 GiB, the bound
    assert MAX_BUFFER_BYTES == 2 * 1024**3
    check_job_file(b"[job]\nbs=1g\nnumjobs=2\n", "j.fio")
    check_job_file(b"[job]\nbs=1g\niodepth=2\n", "j.fio")
    with pytest.raises(FioError, match="would hold 3.0 GiB"):
        check_job_file(b"[job]\nbs=1g\niodepth=3\n", "j.fio")


@pytest.mark.parametrize("options, largest", [
    ({}, 4096), ({"bs": "64K"}, 65536), ({"bs": "1m", "kb_base": "1000"}, 1_000_000),
    ({"bs": "1mi", "kb_base": "1000"}, 1 << 20), ({"bs": "4k", "bsrange": "1k-128k"}, 131072),
    ({"bssplit": "4k/50:1M/50"}, 1 << 20), ({"bs": "0"}, 4096), ({"bs": "512"}, 512)])
def test_a_job_s_largest_request(options, largest):
    assert _largest_request(options) == largest


@pytest.mark.parametrize("text, base, size", [
    ("4", 1024, 4), ("4K", 1024, 4096), ("4k", 1000, 4000), ("4ki", 1000, 4096), ("4KiB", 1000, 4096),
    ("1.5m", 1024, 1572864), ("2g", 1024, 2 << 30), ("1e", 1024, 1024**6), ("x", 1024, 0), ("", 1024, 0)])
def test_a_size_s_bytes(text, base, size):
    assert _bytes(text, base) == size


def test_a_refused_value_is_shown_printable_and_cut_past_40_characters():
    assert _shown("a\x1bb\u202ec") == "a?b?c"
    assert _shown("x" * 40) == "x" * 40
    assert _shown("x" * 41) == "x" * 37 + "..."
