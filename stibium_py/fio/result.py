"""fio's JSON output read as typed records (pure): `parse` takes the text of `--output-format=json` or `json+`
of fio 3.x, with its `jobs[]` (one machine) or `client_stats[]` (fio --client, one entry per client and job),
and gives each job's shape (the options that make it a stibium test point: rw, bs, iodepth, numjobs, direct,
ioengine, rwmixread) and what it measured (bytes, runtime, requests, completion latency and, from json+, its
histogram). A job's clones (numjobs without group_reporting) are one job: their bytes and requests added, their
runtime the longest, as fio's group_reporting adds them. Damaged or truncated text, another program's JSON, a
fio before 3.0, or a job stibium has no point for (trims, a range of request sizes) is refused in one line that
names the problem (`FioError`). Unknown fields are left where they are: the importer keeps the file whole."""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from .. import registry
from ..analysis.histogram import LatencyHistogram
from ..errors import FioError  # noqa: F401 (raised here, declared apart)
from ..rundir.jsonread import JsonRefused, load_json

INSTRUMENT = "fio"                  # the rows' instrument column

ALL_CLIENTS_JOB = "All clients"     # fio --client's sum over the clients; stibium sums them itself
PERCENTILES = {"lat_p50_s": "50.000000", "lat_p90_s": "90.000000", "lat_p99_s": "99.000000",
               "lat_p999_s": "99.900000"}
_SIZE = re.compile(r"^\s*(\d{1,20})\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
MAX_BYTES = 2**63 - 1           # fio's sizes are unsigned long long; beyond this no file or request exists
MAX_COUNT = 2**31 - 1           # fio's iodepth and numjobs are unsigned int
_OPS = {"read": ("read", "sequential"), "write": ("write", "sequential"), "randread": ("read", "random"),
        "randwrite": ("write", "random"), "rw": ("mixed", "sequential"), "readwrite": ("mixed", "sequential"),
        "randrw": ("mixed", "random")}


@dataclass(frozen=True)
class Side:
    """One direction of a job (fio's "read" or "write" section)."""

    io_bytes: int
    runtime_ms: int
    total_ios: int
    clat_ns: dict[str, Any]
    slat_mean_ns: float | None
    histogram: str | None            # json+'s bins as stibium's histogram text (histogram_text); None without


@dataclass(frozen=True)
class Shape:
    """What makes a fio job a stibium test point."""

    op: str                          # read | write | mixed
    access: str                      # sequential | strided | random
    granularity_bytes: int
    stride_bytes: int
    queue_depth: int
    threads: int
    read_fraction: float | None
    direct: bool
    ioengine: str
    span_bytes: int                  # fio's size (each job's region); 0 where it is a share of the file
    synced: bool                     # fsync, fdatasync or end_fsync asked for


@dataclass(frozen=True)
class Job:
    """One job of a fio run, its clones together."""

    name: str
    groupid: int
    host: str | None                 # client_stats: the client's host; None for a run on one machine
    options: dict[str, str]          # the global options, then the job's own over them
    error: int                       # fio's error number (0: none)
    read: Side
    write: Side
    clones: int = 1


@dataclass(frozen=True)
class FioResult:
    version: str                     # "fio-3.33"
    timestamp_s: float | None
    jobs: list[Job] = field(default_factory=list)
    clients: list[str] = field(default_factory=list)   # client_stats: the clients' hosts, in order


def parse(text: str, where: str) -> FioResult:
    """fio's JSON output; `where` names it in a refusal."""
    start = _json_start(text)
    if start is None:
        raise FioError(f"{where}: no JSON in it; give the file fio wrote with --output-format=json or json+")
    try:
        data = load_json(text[start:], where, "give the file as fio wrote it")
    except JsonRefused as e:
        raise FioError(str(e)) from None
    except json.JSONDecodeError as e:
        line = text.count("\n", 0, start) + e.lineno
        if e.pos >= len(text[start:].rstrip()):
            raise FioError(f"{where}: cut short at line {line}: the JSON ends before it closes; was fio stopped "
                           f"while writing it? Run the jobs again") from None
        raise FioError(f"{where}: damaged JSON at line {line} ({e.msg}); give the file as fio wrote it") from None
    if not isinstance(data, dict) or "fio version" not in data:
        raise FioError(f"{where}: JSON, but not fio's output (it has no 'fio version'); give the file fio wrote "
                       f"with --output-format=json or json+")
    version = str(data["fio version"])
    found = re.match(r"^fio-(\d+)\.", version)
    if not found or int(found.group(1)) < 3:
        raise FioError(f"{where}: {version}'s output is not read; stibium reads fio 3.x (--output-format=json or "
                       f"json+): run the jobs again with fio 3")
    entries_key = "jobs" if "jobs" in data else "client_stats" if "client_stats" in data else None
    if entries_key is None or not isinstance(data[entries_key], list):
        raise FioError(f"{where}: fio's output without jobs[] or client_stats[]; give the whole file")
    glob = _options(data.get("global options"), f"{where}: global options")
    entries = data[entries_key]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("jobname"), str):
            raise FioError(f"{where}: {entries_key}[{i}] is not a fio job (no jobname); give the file as fio wrote it")
    hosts = _hosts(entries) if entries_key == "client_stats" else [None] * len(entries)
    jobs = []
    for i, (entry, host) in enumerate(zip(entries, hosts)):
        at = f"{where}: {entries_key}[{i}]"
        if entry["jobname"] == ALL_CLIENTS_JOB and entries_key == "client_stats":
            continue
        options = {**glob, **_options(entry.get("job options"), f"{at}: job options")}
        jobs.append(Job(name=entry["jobname"], groupid=_int(entry.get("groupid", 0), f"{at}: groupid"), host=host,
                        options=options, error=_int(entry.get("error", 0), f"{at}: error"),
                        read=_side(entry, "read", at), write=_side(entry, "write", at)))
    if not jobs:
        raise FioError(f"{where}: fio's output with no jobs in it; give the output of a run that ran jobs")
    timestamp = data.get("timestamp")
    return FioResult(version=version, timestamp_s=float(timestamp) if isinstance(timestamp, (int, float)) else None,
                     jobs=_clones_together(jobs), clients=list(dict.fromkeys(h for h in hosts if h is not None)))


def _hosts(entries: list[dict[str, Any]]) -> list[str | None]:
    """Each client_stats entry's client: its host, or host:port where one host ran several fio servers; None
    for the sum over the clients."""
    pairs = [(str(e.get("hostname") or "?"), e.get("port")) for e in entries]
    ports = {}
    for host, port in pairs:
        ports.setdefault(host, set()).add(port)
    return [None if e["jobname"] == ALL_CLIENTS_JOB else host if len(ports[host]) == 1 else f"{host}:{port}"
            for e, (host, port) in zip(entries, pairs)]


def shape(job: Job, where: str) -> Shape:
    """The job's test point; a job stibium has no point for is refused."""
    o = job.options
    at = f"{where}: job {job.name!r}"
    rw = o.get("rw", o.get("readwrite", "read"))
    base, _, skip = rw.partition(":")
    if base not in _OPS:
        raise FioError(f"{at}: rw={rw} has no stibium point (stibium measures reads, writes and their mixes); "
                       f"leave the job out of the file")
    op, access = _OPS[base]
    stride = 0
    if skip:
        if access == "random":
            raise FioError(f"{at}: rw={rw}: a random job's :N (offsets drawn every N requests) has no stibium point; "
                           f"leave it out")
        stride = fio_bytes(skip, o, f"{at}: rw")
        access = "strided" if stride else access
    for ranged in ("bsrange", "bssplit", "blocksize_range", "blocksize_split"):
        if ranged in o:
            raise FioError(f"{at}: {ranged}: a range of request sizes has no stibium point (one granularity a "
                           f"point); give the job one bs")
    sizes = [fio_bytes(b, o, f"{at}: bs") for b in o.get("bs", o.get("blocksize", "4k")).split(",") if b.strip()]
    wanted = sizes[:2] if op == "mixed" else sizes[:1] if op == "read" else sizes[1:2] or sizes[:1]
    if 0 in wanted:
        raise FioError(f"{at}: bs={o.get('bs', o.get('blocksize'))}: a request of 0 bytes; fio writes a request size "
                       f"of at least 1 byte there: give the file as fio wrote it")
    if len(set(wanted)) > 1:
        raise FioError(f"{at}: bs={o.get('bs')}: its reads and writes differ in size; a stibium point has one "
                       f"granularity")
    fraction = None
    if op == "mixed":
        if "rwmixread" in o:
            fraction = _int(o["rwmixread"], f"{at}: rwmixread", 0, 100) / 100
        elif "rwmixwrite" in o:
            fraction = 1 - _int(o["rwmixwrite"], f"{at}: rwmixwrite", 0, 100) / 100
        else:
            fraction = 0.5
    size = o.get("size", "")
    return Shape(op=op, access=access, granularity_bytes=wanted[0] if wanted else 4096, stride_bytes=stride,
                 queue_depth=_int(o.get("iodepth", "1"), f"{at}: iodepth", 1, MAX_COUNT),
                 threads=_int(o.get("numjobs", str(job.clones)), f"{at}: numjobs", 1, MAX_COUNT),
                 read_fraction=fraction, direct=_flag(o.get("direct")) or o.get("buffered") == "0",
                 ioengine=o.get("ioengine", "psync"),
                 span_bytes=fio_bytes(size, o, f"{at}: size") if size and not size.endswith("%") else 0,
                 synced=any(_flag(o.get(k)) for k in ("fsync", "fdatasync", "end_fsync", "fsync_on_close")))


def measured(job: Job, op: str) -> dict[str, Any]:
    """What the job measured, as measurement columns (`op`: read, write or mixed)."""
    sides = {"read": job.read, "write": job.write}
    used = [sides[op]] if op in sides else [job.read, job.write]
    out: dict[str, Any] = {
        "bytes": sum(s.io_bytes for s in used),
        "requests": sum(s.total_ios for s in used),
        "seconds": max(s.runtime_ms for s in used) / 1000 if any(s.runtime_ms for s in used) else None,
        "instrument": INSTRUMENT,
    }
    if op == "mixed":
        out.update(read_bytes=job.read.io_bytes, write_bytes=job.write.io_bytes, read_requests=job.read.total_ios,
                   write_requests=job.write.total_ios)
        for name, side in sides.items():
            pct = side.clat_ns.get("percentile") or {}
            out[f"{name}_lat_p50_s"] = _ns(pct.get(PERCENTILES["lat_p50_s"]))
            out[f"{name}_lat_p99_s"] = _ns(pct.get(PERCENTILES["lat_p99_s"]))
            out[f"{name}_lat_hist_ns"] = side.histogram
        both = LatencyHistogram.merged([job.read.histogram, job.write.histogram])
        if both is not None:       # reads and writes together, as the helper's mixed rows have them
            out["lat_hist_ns"] = both.to_text()
            out.update({column: _ns(pct) for column, pct in _percentiles(both).items()})
    else:
        side = used[0]
        pct = side.clat_ns.get("percentile") or {}
        out.update({column: _ns(pct.get(key)) for column, key in PERCENTILES.items()})
        out.update(lat_min_s=_ns(side.clat_ns.get("min")) if side.total_ios else None,
                   lat_max_s=_ns(side.clat_ns.get("max")) if side.total_ios else None,
                   lat_mean_s=_ns(side.clat_ns.get("mean")) if side.total_ios else None,
                   lat_hist_ns=side.histogram,
                   slat_mean_s=_ns(side.slat_mean_ns) if side.total_ios else None)
    if job.error:
        out.update(seconds=None, error=f"fio's job ended with error {job.error} ({os.strerror(job.error)})",
                   errno=job.error, strerror=os.strerror(job.error))
    return out


def point_columns(job: Job, s: Shape) -> dict[str, Any]:
    """A fio job's row of measurements.csv as its shape and its output give it: the point's columns (op, access,
    sizes, engine, requests in flight, read share, fio's engine as io_method, sync), then what it measured."""
    return {"op": s.op, "kind": registry.BENCHED, "access": s.access, "size_bytes": s.span_bytes,
            "granularity_bytes": s.granularity_bytes, "stride_bytes": s.stride_bytes,
            "file": job.options.get("filename", ""), "engine": "direct" if s.direct else "buffered",
            "engine_requested": "direct" if s.direct else "buffered", "queue_depth": s.queue_depth,
            "threads": s.threads, "read_fraction": s.read_fraction, "io_method": s.ioengine,
            "sync_used": ("fsync" if s.synced else "none") if s.op != "read" else None, **measured(job, s.op)}


def histogram_text(bins: Any) -> str | None:
    """json+'s completion-latency bins as stibium's histogram ('lo-hi:count' per bin, ns). fio keeps a latency
    in a bucket 1/64 of its power of two wide (exact below 128 ns) and names it by the bucket's middle
    (stat.c, plat_idx_to_val), so each bin is that middle less and plus half the bucket's width."""
    if not isinstance(bins, dict) or not bins:
        return None
    items = []
    for value, count in sorted(((int(v), int(c)) for v, c in bins.items()), key=lambda vc: vc[0]):
        if count <= 0:
            continue
        width = 1 if value < 128 else 1 << (value.bit_length() - 1 - 6)
        lo = max(value - width // 2, 0)
        items.append(f"{lo}-{lo + width}:{count}")
    return " ".join(items) or None


def fio_bytes(text: str, options: dict[str, str], where: str) -> int:
    """A size as fio reads it: k, m, g, t, p are powers of 1024 (kb_base=1024, fio's default); with
    kb_base=1000 they are powers of 1000 and the forms with an i (KiB) stay 1024."""
    found = _SIZE.match(str(text))
    if not found:
        raise FioError(f"{where}: {text!r} is not a size stibium reads (such as 4k or 1m); give the job one size")
    number, prefix, binary, _b = found.groups()
    power = "kmgtp".find(prefix.lower()) + 1 if prefix else 0
    base = 1000 if options.get("kb_base") == "1000" and not binary else 1024
    size = int(number) * base ** power
    if size > MAX_BYTES:
        raise FioError(f"{where}: {_shown(text)} is larger than fio takes (at most 2^63 bytes); give the file as fio "
                       f"wrote it")
    return size


def _json_start(text: str) -> int | None:
    """Where fio's JSON begins: fio may write notes on lines of their own before it."""
    if text.lstrip().startswith("{"):
        return text.index("{")
    found = re.search(r"^\{", text, re.MULTILINE)
    return found.start() if found else None


def _options(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FioError(f"{where} are not a table of options; give the file as fio wrote it")
    return {str(k): str(v) for k, v in value.items()}


def _side(entry: dict[str, Any], name: str, where: str) -> Side:
    side = entry.get(name)
    if not isinstance(side, dict):
        raise FioError(f"{where} has no '{name}' section; give the file as fio wrote it")
    clat = side.get("clat_ns")
    slat = side.get("slat_ns")
    clat = clat if isinstance(clat, dict) else {}
    io_bytes = _int(side.get("io_bytes"), f"{where}.{name}.io_bytes", 0)
    runtime_ms = _int(side.get("runtime"), f"{where}.{name}.runtime", 0)
    if io_bytes and not runtime_ms:
        raise FioError(f"{where}.{name}.runtime is 0 where the job moved {io_bytes} bytes; give the file as fio wrote it")
    bins = clat.get("bins")
    if bins is not None and not (isinstance(bins, dict) and all(
            isinstance(k, str) and k.isdigit() and len(k) < 20 and isinstance(c, int) and not isinstance(c, bool)
            and c >= 0 for k, c in bins.items())):
        raise FioError(f"{where}.{name}.clat_ns.bins is not a table of latencies (ns) and counts; give the file as "
                       f"fio wrote it")
    return Side(io_bytes=io_bytes, runtime_ms=runtime_ms,
                total_ios=_int(side.get("total_ios"), f"{where}.{name}.total_ios", 0),
                clat_ns=clat, slat_mean_ns=slat.get("mean") if isinstance(slat, dict) else None,
                histogram=histogram_text(bins))


def _int(value: Any, where: str, low: int | None = None, high: int | None = None) -> int:
    """A whole number of fio's output (a number, or the text of one in its options), within [low, high]."""
    try:
        if isinstance(value, bool) or (isinstance(value, str) and len(value) > 30):
            raise ValueError
        number = float(value)
        if not math.isfinite(number) or number != int(number):
            raise ValueError
    except (TypeError, ValueError):
        raise FioError(f"{where} is {_shown(value)}, not a whole number; give the file as fio wrote it") from None
    if (low is not None and number < low) or (high is not None and number > high):
        bound = f"at least {low}" if high is None else f"from {low} to {high}"
        raise FioError(f"{where} is {_shown(value)}; fio writes a number {bound} there: give the file as fio wrote it")
    return int(number)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _flag(value: str | None) -> bool:
    return value not in (None, "0", "false", "")


def _ns(value: Any) -> float | None:
    return float(value) / 1e9 if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _clones_together(jobs: list[Job]) -> list[Job]:
    """A job's clones (same name, group and client; numjobs without group_reporting) as one job: bytes and
    requests added, the longest runtime, the histograms merged; their percentiles only where json+ gave bins."""
    order: dict[tuple, list[Job]] = {}
    for job in jobs:
        order.setdefault((job.name, job.groupid, job.host), []).append(job)
    out = []
    for clones in order.values():
        if len(clones) == 1:
            out.append(clones[0])
            continue
        first = clones[0]
        out.append(Job(name=first.name, groupid=first.groupid, host=first.host, options=first.options,
                       error=next((c.error for c in clones if c.error), 0),
                       read=_sides_together([c.read for c in clones]),
                       write=_sides_together([c.write for c in clones]), clones=len(clones)))
    return out


def _sides_together(sides: list[Side]) -> Side:
    n = sum(s.total_ios for s in sides)
    merged = LatencyHistogram.merged([s.histogram for s in sides])
    moved = [s for s in sides if s.total_ios]
    clat: dict[str, Any] = {}
    if moved:
        clat = {"min": min(s.clat_ns.get("min", math.inf) for s in moved),
                "max": max(s.clat_ns.get("max", 0) for s in moved),
                "mean": sum(s.clat_ns.get("mean", 0) * s.total_ios for s in moved) / n}
        if merged is not None:
            clat["percentile"] = {PERCENTILES[column]: pct_ns for column, pct_ns in _percentiles(merged).items()}
    slat = [s.slat_mean_ns for s in moved if s.slat_mean_ns is not None]
    return Side(io_bytes=sum(s.io_bytes for s in sides), runtime_ms=max(s.runtime_ms for s in sides), total_ios=n,
                clat_ns=clat, slat_mean_ns=sum(slat) / len(slat) if slat else None,
                histogram=merged.to_text() if merged is not None else None)


def _percentiles(hist: LatencyHistogram) -> dict[str, float]:
    """The latency columns' percentiles (ns) of a merged histogram, by the histogram's one quantile rule (the
    upper bound of the bin that holds it, as every merged histogram of stibium's)."""
    return {column: hist.quantile_s(float(key) / 100) * 1e9 for column, key in PERCENTILES.items()}
