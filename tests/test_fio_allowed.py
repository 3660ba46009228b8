"""The allow-list of a plan's fio job file, option by option (fio/jobfile.py): each option takes a value of its
form and refuses one that is not, in the words a person reads. The table below is the reviewed list: a change to
ALLOWED that this file does not make too is a change to what a stranger's job file may say, and fails here."""

from __future__ import annotations

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
