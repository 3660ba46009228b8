"""The allow-list of a plan's fio job file, option by option (fio/jobfile.py): each option takes a value of its
form and refuses one that is not, in the words a person reads. The table below is the reviewed list: a change to
ALLOWED that this file does not make too is a change to what a stranger's job file may say, and fails here."""

from __future__ import annotations

import os

import pytest

from stibium_py.errors import FioError
from stibium_py.fio.jobfile import ALLOWED, FORMS, check_job_file

# each option whose value is one of the named forms (FORMS), by form
OPTIONS_BY_FORM = {
    "bool": (
        "bs_unaligned", "bs_is_seq_rand", "file_append", "randrepeat", "allrandrepeat", "norandommap",
        "serialize_overlap", "direct", "buffered", "atomic", "overwrite", "end_fsync", "fsync_on_close",
        "invalidate", "pre_read", "create_serialize", "create_fsync", "create_on_open", "hipri",
        "fixedbufs", "registerfiles", "sqthread_poll", "nonvectored", "uncached", "nowait",
        "userspace_reap", "thread", "time_based", "stonewall", "new_group", "exitall", "exitall_on_error",
        "rate_ignore_thinktime", "zero_buffers", "refill_buffers", "scramble_buffers", "dedupe_global",
        "do_verify", "verify_fatal", "group_reporting", "stats", "clat_percentiles", "lat_percentiles",
        "slat_percentiles", "disk_util", "gtod_reduce", "disable_lat", "disable_clat", "disable_slat",
        "disable_bw_measurement",
    ),
    "count": (
        "number_ios", "nrfiles", "openfiles", "randseed", "iodepth", "iodepth_batch",
        "iodepth_batch_complete_min", "iodepth_batch_complete_max", "iodepth_low", "fsync", "fdatasync",
        "write_barrier", "sqthread_poll_cpu", "force_async", "numjobs", "loops", "rate_cycle",
        "thinktime_blocks", "cpumask", "verify_backlog", "verify_backlog_batch", "bwavgtime", "iopsavgtime",
    ),
    "cpus": (
        "cpus_allowed",
    ),
    "files": (
        "filename",
    ),
    "iops": (
        "rate_iops", "rate_iops_min",
    ),
    "name": (
        "name",
    ),
    "pattern": (
        "buffer_pattern", "verify_pattern",
    ),
    "percent": (
        "rwmixread", "rwmixwrite", "hipri_percentage", "latency_percentile", "buffer_compress_percentage",
        "dedupe_percentage", "dedupe_working_set_percentage",
    ),
    "percentiles": (
        "percentile_list",
    ),
    "percents": (
        "percentage_random",
    ),
    "rate": (
        "rate", "rate_min",
    ),
    "size": (
        "offset_align", "buffer_compress_chunk", "verify_interval", "verify_offset",
    ),
    "size_or_percent": (
        "size", "io_size", "offset", "offset_increment",
    ),
    "size_ranges": (
        "bsrange",
    ),
    "size_split": (
        "bssplit",
    ),
    "sizes": (
        "bs", "ba",
    ),
    "text": (
        "description",
    ),
    "time": (
        "runtime", "ramp_time", "thinktime", "thinktime_spin", "latency_target", "latency_window",
        "max_latency",
    ),
    "times": (
        "startdelay",
    ),
}

# a value of each form, and one that is not
FORM_EXAMPLES = {
    "name": ("job-1", "-job"), "text": ("a plain description", "a `tick`"), "percent": ("50%", "abc"),
    "sizes": ("4k,8k", "4k,8k,16k,32k"), "size_ranges": ("4k-8k", "4k"), "size_split": ("4k/50:8k/50", "4k"),
    "bool": ("1", "maybe"), "size_or_percent": ("50%", "50%%"), "size": ("4k", "4q"), "count": ("2", "-1"),
    "files": ("data.bin", "data bin"), "percents": ("50,50", "50;50"), "times": ("1s-2s", "1s-"),
    "time": ("10s", "10y"), "rate": ("1m,2m", "1m,2m,3m,4m"), "iops": ("100,200", "100,200,300,400"),
    "cpus": ("0-1", "0-1;"), "pattern": ("0xdeadbeef", "0xZZ"), "percentiles": ("50:99", "50;99"),
}

# each option whose form is its own: a value it takes, and one it does not
OWN_FORMS = {
    "rw": ("randread:4k", "randwalk"), "rw_sequencer": ("identical:2", "random"), "filesize": ("4k-8k", "4k-"),
    "file_service_type": ("zipf:1.2", "zipf:a"), "lockfile": ("exclusive", "shared"),
    "random_generator": ("lfsr", "mt"), "random_distribution": ("zipf:1.2", "cauchy"),
    "io_submit_mode": ("offload", "async"), "sync": ("dsync", "osync"), "fallocate": ("keep", "punch"),
    "fadvise_hint": ("sequential", "willneed"), "mem": ("shm", "hugepages"), "continue_on_error": ("verify", "never"),
    "rate_process": ("poisson", "uniform"), "cpus_allowed_policy": ("split", "spread"),
    "dedupe_mode": ("working_set", "random"),
    "verify": ("crc32c", "crc128"), "unified_rw_reporting": ("both", "all"), "clocksource": ("cpu", "tsc"),
    "kb_base": ("1024", "1000000"), "unit_base": ("8", "16"),
}
# ioengine: the engines by name (tests/test_fio_jobfile.py holds each refusal's reason)


def _job(key: str, value: str) -> bytes:
    return f"[j]\n{key}={value}\n".encode()


def test_the_reviewed_table_is_the_allow_list():
    listed = {k: form for form, keys in OPTIONS_BY_FORM.items() for k in keys}
    assert {k: v for k, v in ALLOWED.items() if v in FORMS} == listed
    assert sorted(k for k, v in ALLOWED.items() if v not in FORMS) == sorted([*OWN_FORMS, "ioengine"])
    assert sorted(FORM_EXAMPLES) == sorted(FORMS)


@pytest.mark.parametrize("key, good, bad", [(k, *FORM_EXAMPLES[form]) for form, keys in OPTIONS_BY_FORM.items()
                                            for k in keys] + [(k, *v) for k, v in OWN_FORMS.items()])
def test_each_option_takes_a_value_of_its_form_and_refuses_another(key, good, bad):
    assert check_job_file(_job(key, good), "j.fio").text == f"[j]\n{key}={good}\n"
    with pytest.raises(FioError) as e:
        check_job_file(_job(key, bad), "j.fio")
    said = str(e.value)
    if key == "filename":
        assert said.startswith("j.fio:2: filename: a plain file name in the test's folder")
    else:
        assert said == f"j.fio:2: {key}={bad}: not a value of the form fio documents for {key}; mend it"


@pytest.mark.parametrize("form", sorted(FORMS))
def test_an_option_without_a_value_is_taken_only_where_its_form_takes_none(form):
    key = OPTIONS_BY_FORM[form][0] if form in OPTIONS_BY_FORM else None
    if key is None:
        pytest.fail(f"no option of the form {form}")
    takes_none = form in ("bool", "sizes", "rate", "iops", "text")
    if takes_none:
        assert check_job_file(f"[j]\n{key}\n".encode(), "j.fio").text == f"[j]\n{key}\n"
    else:
        with pytest.raises(FioError, match=rf"^j\.fio:2: {key}: needs a value \({key}=\.\.\.\)$"):
            check_job_file(f"[j]\n{key}\n".encode(), "j.fio")


# ------------------------------------------------------------------- the limits a job file is held to, at their edges

def _refused(text: str) -> str:
    with pytest.raises(FioError) as e:
        check_job_file(text.encode(), "j.fio")
    return str(e.value)


@pytest.mark.parametrize("key, low, high", [("numjobs", 1, 64), ("iodepth", 1, 1024), ("nrfiles", 1, 4096)])
def test_each_count_is_held_to_its_bounds_in_each_job(key, low, high):
    for ok in (low, high):
        check_job_file(f"[j]\n{key}={ok}\n".encode(), "j.fio")
    for bad in (low - 1, high + 1):
        assert _refused(f"[j]\n{key}={bad}\n") == \
            f"j.fio:2: {key}={bad}: a plan's job file takes {low} to {high} (job j)"
    # [global] reaches every job beneath it, named where it is refused
    assert _refused(f"[global]\n{key}={high + 1}\n[a]\nrw=read\n") == \
        f"j.fio:2: {key}={high + 1}: a plan's job file takes {low} to {high} (job a)"
    check_job_file(f"[global]\n{key}={high + 1}\n[a]\n{key}={high}\n".encode(), "j.fio")   # the job's own wins


@pytest.mark.parametrize("options, gib", [
    ("numjobs=2\niodepth=1024\nbs=1m", None),                   # 2 GiB exactly: the most
    ("numjobs=2\niodepth=1024\nbs=1025k", "2.0"),
    ("numjobs=2\niodepth=1024\nbs=4k,1025k", "2.0"),            # the largest of bs's sizes
    ("numjobs=2\niodepth=1024\nbsrange=4k-1025k", "2.0"),
    ("numjobs=2\niodepth=1024\nbssplit=4k/50:1025k/50", "2.0"),
    ("numjobs=2\niodepth=1024\nkb_base=1000\nbs=1m", None),     # 10^6 bytes a request
    ("numjobs=2\niodepth=1024\nkb_base=1000\nbs=1mib", None),   # binary whatever the base
    ("numjobs=2\niodepth=1024\nkb_base=1000\nbs=1.1m", "2.1"),  # 2.25e9 bytes
    ("numjobs=3\niodepth=1024\nkb_base=1000\nbs=1m", "2.9"),
    ("numjobs=64\niodepth=1024", None),                        # fio's 4k default: 256 MiB
    ("numjobs=64\niodepth=1024\nbs=1g", "65536.0"),
])
def test_the_buffers_of_every_job_are_held_to_2_gib(options, gib):
    text = "[j]\n" + options + "\n"
    if gib is None:
        check_job_file(text.encode(), "j.fio")
    else:
        assert _refused(text) == (f"j.fio: its jobs would hold {gib} GiB of buffers (numjobs x iodepth x the largest "
                                  f"bs, over every job); a plan's job file holds at most 2 GiB")


def test_the_buffers_of_the_jobs_add_up():
    job = "numjobs=1\niodepth=1024\nbs=1m\n"
    check_job_file(f"[a]\n{job}[b]\n{job}".encode(), "j.fio")                   # 1 + 1 GiB
    assert "would hold 3.0 GiB" in _refused(f"[a]\n{job}[b]\n{job}[c]\n{job}")


# ------------------------------------------------------------------- the file a plan names, read as a stranger's

def _read_refused(folder, given: str) -> str:
    from stibium_py.fio.jobfile import read_plan_file
    with pytest.raises(FioError) as e:
        read_plan_file(folder, given, "w")
    return str(e.value)


def test_a_path_that_is_no_path_is_refused_in_its_own_words(tmp_path):
    for given in ("", "   "):
        assert _read_refused(tmp_path, given) == \
            "w: an empty path; give the job file's path relative to the plan's folder"
    for given in ("a\x00b", "a" * 1025):
        assert _read_refused(tmp_path, given) == ("w: not a path (a NUL byte, or over 1024 characters); give the "
                                                  "job file's path relative to the plan's folder")
    assert _read_refused(tmp_path, "a" * 255) == \
        "w: no such file; give the job file's path relative to the plan's folder"
    assert _read_refused(tmp_path, "/".join(["a"] * 512)) == \
        "w: no such file; give the job file's path relative to the plan's folder"      # 1023 characters: a path
    for given in ("/x.fio", "~/x.fio", "~x.fio"):
        assert _read_refused(tmp_path, given) == ("w: an absolute path; a plan's job file lies in the plan's folder: "
                                                  "give its path relative to it")
    assert _read_refused(tmp_path, ".") == (f"w: outside the plan's folder {tmp_path.resolve()} (a path that climbs "
                                            f"out of it, or a link that leads out); put the job file beside the plan")


def test_a_path_that_cannot_be_reached_or_opened_is_said_with_the_system_s_words(tmp_path, monkeypatch):
    (tmp_path / "loop").symlink_to("loop")
    assert _read_refused(tmp_path, "loop") == ("w: cannot be reached (a loop of symbolic links); give the job file's "
                                               "path relative to the plan's folder")
    (tmp_path / "j.fio").write_text("[a]\n")
    real = os.open

    def refused(path, flags, *rest):
        if str(path).endswith("j.fio"):
            raise PermissionError(13, "Permission denied")
        return real(path, flags, *rest)
    monkeypatch.setattr(os, "open", refused)
    assert _read_refused(tmp_path, "j.fio") == "w: cannot be opened (Permission denied); give a job file you can read"


def test_a_socket_is_no_job_file(tmp_path):
    import socket
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "s.fio"))
        assert _read_refused(tmp_path, "s.fio") == "w: a socket, not a job file; give a fio job file"


def test_a_file_is_read_to_its_cap_and_refused_one_byte_past_it(tmp_path):
    from stibium_py.fio.jobfile import read_plan_file
    (tmp_path / "j.fio").write_bytes(b"x" * 2048)
    assert read_plan_file(tmp_path, "j.fio", "w", cap_bytes=2048) == b"x" * 2048
    (tmp_path / "j.fio").write_bytes(b"x" * 2049)
    with pytest.raises(FioError, match=r"^w: larger than 2 KiB; a plan's job file is a few lines of options$"):
        read_plan_file(tmp_path, "j.fio", "w", cap_bytes=2048)


# ------------------------------------------------------------------- the shape of a job file, at its bounds

def test_a_job_file_s_size_is_held_line_by_line_and_job_by_job():
    lines = ["[j]"] + ["; a comment"] * 4095
    check_job_file("\n".join(lines).encode(), "j.fio")                             # 4096 lines: the most
    assert _refused("\n".join(lines + ["; one more"])) == \
        "j.fio: more than 4096 lines; a plan's job file is a few lines of options"
    check_job_file(("[j]\n; " + "x" * 1022).encode(), "j.fio")                    # a line of 1024 characters
    assert _refused("[j]\n; " + "x" * 1023) == \
        "j.fio:2: a line over 1024 characters; a job file's lines are short"
    jobs = "".join(f"[j{k}]\nrw=read\n" for k in range(256))
    check_job_file(jobs.encode(), "j.fio")
    assert _refused(jobs + "[one-more]\n") == "j.fio: more than 256 jobs; a plan's job file runs a few"
    assert _refused("[global]\nrw=read\n") == \
        "j.fio: it has no job (a [section] other than [global]); give a job file fio runs"


def test_what_is_not_a_job_file_s_text_is_said():
    assert _refused("[j]\nrw=read\x00\n") == "j.fio: holds a NUL byte; a job file is text"
    with pytest.raises(FioError, match=r"^j\.fio: not UTF-8 text; give a fio job file$"):
        check_job_file(b"[j]\nrw=read\xff\n", "j.fio")
    assert _refused("rw=read\n[j]\n") == "j.fio:1: rw: an option before any [section]; put it under [global] or a job"
    assert _refused("[j\n") == ("j.fio:1: a section name of letters, digits, . _ - (at most 64) between [ ] is "
                                "expected; name the job plainly")
    assert _refused("[j]\n!rw=read\n") == "j.fio:2: not an option line (key=value, or a [section]); mend the line"


@pytest.mark.parametrize("line", ["include other.fio", "include\tother.fio", "INCLUDE other.fio", "include"])
def test_an_include_is_refused_however_it_is_written(line):
    assert _refused(f"[j]\n{line}\n") == "j.fio:2: include: not allowed in a plan's job file (it reads another file)"


def test_an_option_named_like_include_is_judged_as_any_other():
    assert _refused("[j]\nincludes=1\n") == ("j.fio:2: includes: not one of the options a plan's job file may use "
                                             "(docs/fio.md lists them); leave it out")


def test_comments_and_the_files_a_job_names():
    checked = check_job_file(b"; a comment\n  # another\n[j]\nfilename=a.bin:b.bin ; two files\nrw=read # read\n",
                             "j.fio")
    assert checked.text == "[j]\nfilename=a.bin:b.bin\nrw=read\n" and checked.files == ("a.bin", "b.bin")


def test_a_value_is_matched_whatever_its_case_and_the_global_section_is_not_a_job():
    assert check_job_file(b"[global]\nrw=read\n[j]\nrw=RANDREAD\ndirect=TRUE\n", "j.fio").text == \
        "[global]\nrw=read\n[j]\nrw=RANDREAD\ndirect=TRUE\n"
    assert _refused("[j]\nlockfile=shared\n") == \
        "j.fio:2: lockfile=shared: not a value of the form fio documents for lockfile; mend it"
    assert check_job_file(b"[j]\nlockfile=readwrite\n", "j.fio").text.endswith("lockfile=readwrite\n")
