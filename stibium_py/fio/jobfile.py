"""A plan's own fio job file read as data, before fio sees any of it (pure, but for `read_plan_file`).

A job file comes with a plan from a stranger, so it is held to an allow-list: the workload options that shape
the requests fio makes (what, how large, how many, how fast, through which of the ordinary engines), nothing
that runs a command (exec_prerun, ioengine=exec), loads code (ioengine=external:), reads or writes a file other
than the test's own (directory, the logs, iologs, include), deletes (unlink), or changes the machine (ioscheduler,
cgroups, uid). Each value is held to the form fio documents for it (a size, a count, a time), so no value carries
an expression, an environment variable (`$HOME`, which fio would expand) or a path. What passes is written out
again as a canonical job file (`[section]` and `key=value` lines, the aliases under their own names, no comments):
that text, not the file on disk, is what fio is asked about and what every trial runs.

The reader is fio's ini format as fio's init.c parses it: `[section]` headers, `key=value` or a bare `key`, lines
starting with `;` or `#` are comments (and the rest of a line after a blank and `;` or `#`), `include` lines
(refused here). docs/fio.md lists the options and why the others are refused."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..beside import Named, read_beside
from ..errors import FioError

MAX_JOB_FILE_BYTES = 256 * 1024
MAX_LINES = 4096
MAX_LINE_CHARS = 1024
MAX_JOBS = 256                       # sections other than [global]
MAX_NUMJOBS = 64                     # as a plan's threads (plan.model.MAX_THREADS)
MAX_IODEPTH = 1024                   # as a plan's requests in flight (plan.model.MAX_IN_FLIGHT)
MAX_NRFILES = 4096
# fio allocates iodepth x the largest request of every job (backend.c, init_io_u_buffers): the whole file's
# buffers, summed over every job and its clones, are held to this, so a job file cannot ask for all of memory
MAX_BUFFER_BYTES = 2 * 1024**3

_NUMBER = r"\d{1,15}(?:\.\d{1,9})?"
_SIZE = rf"{_NUMBER}\s?(?:[kmgtpe]i?b?|b)?"
_PERCENT = rf"{_NUMBER}%"
_TIME = rf"{_NUMBER}(?:ns|us|ms|s|m|h|d)?"
_FILE_NAME = r"(?!\.\.?(?::|$))[A-Za-z0-9._-]{1,255}"
_BOOL = r"|0|1|true|false|yes|no|on|off"

FORMS: dict[str, str] = {
    "size": _SIZE, "size_or_percent": rf"{_SIZE}|{_PERCENT}",
    "sizes": rf"(?:{_SIZE})?(?:,(?:{_SIZE})?){{0,2}}",
    "size_ranges": rf"{_SIZE}-{_SIZE}(?:,{_SIZE}-{_SIZE}){{0,2}}",
    "size_split": rf"(?:{_SIZE}(?:-{_SIZE})?/\d{{0,3}}(?::|,)?)+",
    "count": r"\d{1,12}", "percent": r"\d{1,3}(?:\.\d{1,6})?%?", "percents": r"\d{1,3}(?:,\d{0,3}){0,2}",
    "time": _TIME, "times": rf"{_TIME}(?:-{_TIME})?", "bool": _BOOL,
    "files": rf"{_FILE_NAME}(?::{_FILE_NAME})*", "name": r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}",
    "text": r"[^\x00-\x1f\x7f$`]{0,256}", "cpus": r"[0-9,\-]{1,256}", "percentiles": r"[0-9.:]{1,256}",
    "pattern": r"0x[0-9a-fA-F]{1,512}|\d{1,10}|'[ -&(-~]{0,256}'|\"[ !#-~]{0,256}\"",
    "rate": rf"(?:{_SIZE})?(?:,(?:{_SIZE})?){{0,2}}", "iops": r"\d{0,12}(?:,\d{0,12}){0,2}",
}


def _one_of(*values: str) -> str:
    return "|".join(re.escape(v) for v in values)


# the engines a plan may name: the ordinary system calls on the target's file (docs/fio.md)
ENGINES = ("psync", "pvsync", "pvsync2", "sync", "vsync", "libaio", "io_uring", "posixaio", "mmap")

# option -> the form of its value (a name of FORMS, or a regular expression of the values)
ALLOWED: dict[str, str] = {
    # what and how large
    "name": "name", "description": "text",
    "rw": r"(?:read|write|trim|randread|randwrite|randtrim|rw|readwrite|randrw|trimwrite|randtrimwrite)"
          rf"(?::{_SIZE})?",
    "rw_sequencer": r"(?:sequential|identical)(?::\d{1,12})?", "rwmixread": "percent", "rwmixwrite": "percent",
    "bs": "sizes", "bsrange": "size_ranges", "bssplit": "size_split", "bs_unaligned": "bool", "ba": "sizes",
    "bs_is_seq_rand": "bool",
    "size": "size_or_percent", "io_size": "size_or_percent", "filesize": rf"{_SIZE}(?:-{_SIZE})?",
    "offset": "size_or_percent", "offset_increment": "size_or_percent", "offset_align": "size",
    "number_ios": "count", "file_append": "bool", "filename": "files", "nrfiles": "count", "openfiles": "count",
    "file_service_type": r"(?:random|roundrobin|sequential|zipf|pareto|normal|gauss)(?::[0-9.]{1,12})?",
    "lockfile": _one_of("none", "exclusive", "readwrite"),
    # where in the file
    "randrepeat": "bool", "allrandrepeat": "bool", "randseed": "count", "norandommap": "bool",
    "random_generator": _one_of("tausworthe", "lfsr", "tausworthe64"),
    "random_distribution": r"(?:random|zipf|pareto|normal|gauss|zoned|zoned_abs)(?::[0-9.,:/%]{1,256})?",
    "percentage_random": "percents",
    # how
    "ioengine": _one_of(*ENGINES), "iodepth": "count", "iodepth_batch": "count", "iodepth_batch_complete_min": "count",
    "iodepth_batch_complete_max": "count", "iodepth_low": "count", "io_submit_mode": _one_of("inline", "offload"),
    "serialize_overlap": "bool", "direct": "bool", "buffered": "bool", "atomic": "bool", "overwrite": "bool",
    "sync": r"0|1|sync|dsync|none", "fsync": "count", "fdatasync": "count", "end_fsync": "bool",
    "fsync_on_close": "bool", "write_barrier": "count", "invalidate": "bool", "pre_read": "bool",
    "fallocate": _one_of("none", "native", "posix", "keep", "truncate", "0", "1"),
    "fadvise_hint": _one_of("0", "1", "sequential", "random", "normal"),
    "create_serialize": "bool", "create_fsync": "bool", "create_on_open": "bool",
    "mem": _one_of("malloc", "shm", "mmap"),
    "hipri": "bool", "hipri_percentage": "percent", "fixedbufs": "bool", "registerfiles": "bool",
    "sqthread_poll": "bool", "sqthread_poll_cpu": "count", "nonvectored": "bool", "uncached": "bool",
    "nowait": "bool", "force_async": "count", "userspace_reap": "bool",
    # how many and how long
    "numjobs": "count", "thread": "bool", "loops": "count", "startdelay": "times", "runtime": "time",
    "time_based": "bool", "ramp_time": "time", "stonewall": "bool", "new_group": "bool", "exitall": "bool",
    "exitall_on_error": "bool", "continue_on_error": r"none|read|write|io|verify|all|0|1",
    "rate": "rate", "rate_min": "rate", "rate_iops": "iops", "rate_iops_min": "iops",
    "rate_process": _one_of("linear", "poisson"), "rate_cycle": "count", "rate_ignore_thinktime": "bool",
    "thinktime": "time", "thinktime_spin": "time", "thinktime_blocks": "count",
    "latency_target": "time", "latency_window": "time", "latency_percentile": "percent", "max_latency": "time",
    "cpus_allowed": "cpus", "cpumask": "count", "cpus_allowed_policy": _one_of("shared", "split"),
    # the data
    "zero_buffers": "bool", "refill_buffers": "bool", "scramble_buffers": "bool", "buffer_pattern": "pattern",
    "buffer_compress_percentage": "percent", "buffer_compress_chunk": "size", "dedupe_percentage": "percent",
    "dedupe_mode": _one_of("repeat", "working_set"), "dedupe_working_set_percentage": "percent",
    "dedupe_global": "bool",
    "verify": r"0|md5|crc64|crc32c|crc32c-intel|crc32|crc16|crc7|xxhash|sha512|sha384|sha256|sha1|sha3-224"
              r"|sha3-256|sha3-384|sha3-512|pattern|null|meta",
    "do_verify": "bool", "verify_interval": "size", "verify_offset": "size", "verify_pattern": "pattern",
    "verify_fatal": "bool", "verify_backlog": "count", "verify_backlog_batch": "count",
    # what is reported
    "group_reporting": "bool", "stats": "bool", "clat_percentiles": "bool", "lat_percentiles": "bool",
    "slat_percentiles": "bool", "percentile_list": "percentiles", "disk_util": "bool", "gtod_reduce": "bool",
    "disable_lat": "bool", "disable_clat": "bool", "disable_slat": "bool", "disable_bw_measurement": "bool",
    "unified_rw_reporting": r"0|1|none|mixed|both", "clocksource": _one_of("gettimeofday", "clock_gettime", "cpu"),
    "kb_base": _one_of("1000", "1024"), "unit_base": _one_of("0", "1", "8"),
    "bwavgtime": "count", "iopsavgtime": "count",
}

ALIASES = {"readwrite": "rw", "blocksize": "bs", "blocksize_range": "bsrange", "blocksize_unaligned": "bs_unaligned",
           "blockalign": "ba", "io_limit": "io_size", "timeout": "runtime", "wait_for_previous": "stonewall",
           "iomem": "mem"}

# the options refused with their own reason (the rest: not on the allow-list)
REASONS: dict[str, str] = {
    **dict.fromkeys(("exec_prerun", "exec_postrun"), "it runs a command"),
    **dict.fromkeys(("include",), "it reads another file"),
    **dict.fromkeys(("directory", "filename_format", "opendir", "unique_filename", "write_bw_log", "write_lat_log",
                     "write_iops_log", "write_hist_log", "write_iolog", "read_iolog", "read_iolog_chunked",
                     "merge_blktrace_file", "replay_redirect", "verify_state_load", "verify_state_save",
                     "verify_dump", "error_dump"), "it reads or writes files other than the test's own"),
    **dict.fromkeys(("unlink", "unlink_each_loop"), "it deletes files"),
    **dict.fromkeys(("fill_device", "fill_fs"), "it fills the whole file system"),
    **dict.fromkeys(("ioscheduler", "cgroup", "cgroup_weight", "cgroup_nodelete", "uid", "gid", "nice", "prio",
                     "prioclass", "lockmem", "numa_cpu_nodes", "numa_mem_policy", "allow_mounted_write"),
                    "it changes the machine's settings or the process's rights"),
    **dict.fromkeys(("create_only", "verify_only", "profile"), "it makes fio do something other than measure"),
}


JOB_FILE = Named("job file", "give a fio job file", "a plan's job file is a few lines of options", FioError)


@dataclass(frozen=True)
class Option:
    key: str                         # the option's own name (an alias under it)
    value: str | None                # None: a bare key (a flag)
    line: int


@dataclass(frozen=True)
class CheckedJobFile:
    """A job file that passed: its canonical text (what fio runs) and the files its jobs name (filename=)."""

    text: str
    files: tuple[str, ...]


def read_plan_file(folder: Path, given: str, what: str, cap_bytes: int = MAX_JOB_FILE_BYTES) -> bytes:
    """The bytes of a job file a plan names (`given`, relative to the plan's `folder`), refused in one line where it
    is not a regular file inside the folder (beside.read_beside): a path that climbs out or is absolute, a symbolic
    link that leads out, a FIFO, a device, a folder, an empty or over-long name, a NUL byte, a file over
    `cap_bytes`. No refusal quotes the file."""
    return read_beside(folder, given, what, cap_bytes, JOB_FILE)


def check_job_file(data: bytes, where: str) -> CheckedJobFile:
    """A job file's bytes read and held to the allow-list; `where` names it in a refusal (`jobs/x.fio`), each
    refusal one line naming the line and the option: `jobs/x.fio:4: exec_prerun: not allowed in a plan's job file
    (it runs a command)`. Nothing of the file's text is quoted but a refused option's name."""
    if b"\x00" in data:
        raise FioError(f"{where}: holds a NUL byte; a job file is text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FioError(f"{where}: not UTF-8 text; give a fio job file") from None
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise FioError(f"{where}: more than {MAX_LINES} lines; a plan's job file is a few lines of options")
    sections: list[tuple[str, list[Option]]] = []
    for number, raw in enumerate(lines, 1):
        at = f"{where}:{number}"
        if len(raw) > MAX_LINE_CHARS:
            raise FioError(f"{at}: a line over {MAX_LINE_CHARS} characters; a job file's lines are short")
        line = _without_comment(raw).strip()
        if not line:
            continue
        if line.startswith("["):
            name = line[1:-1].strip() if line.endswith("]") else None
            if name is None or not re.fullmatch(FORMS["name"], name):
                raise FioError(f"{at}: a section name of letters, digits, . _ - (at most 64) between [ ] is expected; "
                               f"name the job plainly")
            sections.append((name, []))
            continue
        key, eq, value = line.partition("=")
        key = key.strip().lower()
        if key.startswith("include") and key[7:8].isspace():      # `include FILE`; a bare `include` is REASONS'
            raise FioError(f"{at}: include: not allowed in a plan's job file (it reads another file)")
        if not re.fullmatch(r"[a-z_][a-z0-9_-]{0,63}", key):
            raise FioError(f"{at}: not an option line (key=value, or a [section]); mend the line")
        if not sections:
            raise FioError(f"{at}: {key}: an option before any [section]; put it under [global] or a job")
        given = value.strip() if eq else None
        sections[-1][1].append(Option(_option(at, key, given), given, number))
    jobs = [name for name, _ in sections if name != "global"]
    if not jobs:
        raise FioError(f"{where}: it has no job (a [section] other than [global]); give a job file fio runs")
    if len(jobs) > MAX_JOBS:
        raise FioError(f"{where}: more than {MAX_JOBS} jobs; a plan's job file runs a few")
    _held_to_limits(sections, where)
    out = []
    for name, options in sections:
        out.append(f"[{name}]")
        out += [o.key if o.value is None else f"{o.key}={o.value}" for o in options]
    files = [f for _, options in sections for o in options if o.key == "filename" and o.value
             for f in o.value.split(":")]
    return CheckedJobFile("\n".join(out) + "\n", tuple(dict.fromkeys(files)))


def _without_comment(raw: str) -> str:
    """A line without its comment: the whole line where it starts with ; or #, else from a blank then ; or #."""
    stripped = raw.lstrip()
    if stripped.startswith((";", "#")):
        return ""
    found = re.search(r"\s[;#]", raw)
    return raw[:found.start()] if found else raw


def _option(at: str, key: str, value: str | None) -> str:
    """The option's own name (an alias under it), once its name and value are allowed; else one line why not."""
    key = ALIASES.get(key, key)
    if key in REASONS:
        raise FioError(f"{at}: {key}: not allowed in a plan's job file ({REASONS[key]})")
    if key not in ALLOWED:
        raise FioError(f"{at}: {key}: not one of the options a plan's job file may use (docs/fio.md lists them); "
                       f"leave it out")
    if value is not None and "$" in value:
        raise FioError(f"{at}: {key}: a value with $ (fio would expand an environment variable or an expression "
                       f"there); give the value itself")
    if key == "ioengine" and value is not None and value not in ENGINES:
        reason = "it loads code" if value.startswith("external") else "it runs a command" if value == "exec" else \
            f"a plan's job file uses one of {', '.join(ENGINES)}"
        raise FioError(f"{at}: ioengine={_shown(value)}: not allowed in a plan's job file ({reason})")
    if key == "mem" and value is not None and ":" in value:
        raise FioError(f"{at}: mem: a file after : is not allowed in a plan's job file (it reads or writes files "
                       f"other than the test's own)")
    if key == "filename" and value is not None and not re.fullmatch(FORMS["files"], value):
        raise FioError(f"{at}: filename: a plain file name in the test's folder (letters, digits, . _ -; several "
                       f"separated by :) is expected, without / or ..; name a file of the test's folder")
    form = FORMS.get(ALLOWED[key], ALLOWED[key])
    if value is None:
        if not re.fullmatch(form, ""):
            raise FioError(f"{at}: {key}: needs a value ({key}=...)")
    elif not re.fullmatch(form, value, re.IGNORECASE):
        raise FioError(f"{at}: {key}={_shown(value)}: not a value of the form fio documents for {key}; mend it")
    return key


def _held_to_limits(sections: list[tuple[str, list[Option]]], where: str) -> None:
    """Each job's numjobs, iodepth and nrfiles within their caps, and the buffers of the whole file (every job's
    clones x iodepth x its largest request) within MAX_BUFFER_BYTES, with the [global] options beneath a job's."""
    glob: dict[str, Option] = {}
    total = 0
    for name, options in sections:
        own = {o.key: o for o in options}
        if name == "global":
            glob.update(own)
            continue
        job = {**glob, **own}
        for key, low, high in (("numjobs", 1, MAX_NUMJOBS), ("iodepth", 1, MAX_IODEPTH), ("nrfiles", 1, MAX_NRFILES)):
            given = job.get(key)
            if given is not None and given.value and not low <= int(given.value) <= high:
                raise FioError(f"{where}:{given.line}: {key}={given.value}: a plan's job file takes {low} to {high} "
                               f"(job {name})")
        values = {k: o.value for k, o in job.items()}
        total += _count(values.get("numjobs"), 1) * _count(values.get("iodepth"), 1) * _largest_request(values)
    if total > MAX_BUFFER_BYTES:
        raise FioError(f"{where}: its jobs would hold {total / 1024**3:.1f} GiB of buffers (numjobs x iodepth x the "
                       f"largest bs, over every job); a plan's job file holds at most {MAX_BUFFER_BYTES // 1024**3} GiB")


def _count(value: str | None, default: int) -> int:
    return int(value) if value else default


def _largest_request(o: dict[str, str | None]) -> int:
    """The largest request a job may make: the largest size of its bs, bsrange or bssplit (fio's 4k default)."""
    text = " ".join(o.get(k) or "" for k in ("bs", "bsrange", "bssplit")) or "4k"
    base = 1000 if o.get("kb_base") == "1000" else 1024
    sizes = [_bytes(m, base) for m in re.findall(rf"{_NUMBER}\s?(?:[kmgtpe]i?b?|b)?", text, re.IGNORECASE)]
    return max([s for s in sizes if s], default=4096)


def _bytes(text: str, base: int) -> int:
    found = re.fullmatch(rf"({_NUMBER})\s?([kmgtpe]?)(i?)b?", text.strip(), re.IGNORECASE)
    if not found:
        return 0
    number, prefix, binary = found.groups()
    power = "kmgtpe".find(prefix.lower()) + 1 if prefix else 0
    return int(float(number) * (1024 if binary else base) ** power)


def _shown(value: str) -> str:
    """A refused value as a refusal names it: at most 40 characters, printable."""
    printable = "".join(c if c.isprintable() else "?" for c in value)
    return printable if len(printable) <= 40 else printable[:37] + "..."

