"""`stibium selftest`: proves, or refutes, on the user's own machine and disk, that stibium's
uncached I/O is uncached and its clock sound. Each check answers pass, fail or cannot tell, with
the numbers behind it; the whole is written as JSON for a bug report.

The checks, in order, on one small file in a folder of their own inside the target (removed at
the end): the clock is monotonic and fine enough; the target has room; each engine writes and
reads; a direct read of a file just written with direct I/O finds none of it in the page cache;
`evict` leaves none of it there; a buffered read leaves it there; a direct read is slower than a
read from the cache (the cache really is bypassed: on a memory file system it is not); the
direct reads were honoured by the platform's rules; a full sync is accepted; the helper runs
natively (not under Rosetta).
"""

from __future__ import annotations

import platform
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..machine import sysinfo
from ..analysis.below import BELOW_SHARE, served_from_memory
from .helper import Helper, HelperResult, find_helper, op_args, run_once
from ..paths import PathError, folder_to_write, missing_folders, remove_empty
from .preflight import RunError
from ..machine.stack import Stack

PASS, FAIL, CANNOT_TELL = "pass", "fail", "cannot tell"
FILE_BYTES = 32 * 2**20
READ_GRANULARITY = "1MiB"
CLOCK_READINGS = 50
CLOCK_RESOLUTION_LIMIT_NS = 1000      # finer than a microsecond: enough for a 4 KiB request on an SSD
BYPASS_ROUNDS = 3                     # direct and cached reads compared by their medians over this many rounds
RESIDENT_EMPTY = 0.01                 # at most 1 % of the pages: "none"
RESIDENT_FULL = 0.9


@dataclass
class Check:
    name: str
    status: str
    detail: str
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass
class SelftestResult:
    checks: list[Check]
    facts: dict[str, Any]

    @property
    def failed(self) -> bool:
        return any(c.status == FAIL for c in self.checks)

    def as_json(self) -> dict[str, Any]:
        return {"format": "stibium-selftest/1", "facts": self.facts, "checks": [asdict(c) for c in self.checks],
                "failed": self.failed}


class _Session:
    """The helper process and the folder of the checks."""

    def __init__(self, helper: Helper, folder: Path):
        self.helper = helper
        self.folder = folder
        self.file = folder / "selftest.dat"

    def call(self, args: list[str]) -> HelperResult:
        return self.helper.call(args, timeout_s=120)

    def io(self, command: str, engine: str, **flags: Any) -> HelperResult:
        granularity = flags.pop("granularity", READ_GRANULARITY if command == "read" else None)
        return self.call(op_args(command, self.file, bytes=FILE_BYTES, granularity=granularity, engine=engine,
                                 **flags))

    def fresh_write(self, engine: str, **flags: Any) -> HelperResult:
        if self.file.exists():
            self.file.unlink()
        return self.io("write", engine, **flags)


def _rate(result: HelperResult) -> float | None:
    seconds = result.data.get("seconds")
    return result.data.get("bytes", 0) / seconds if result.ok and seconds else None


def check_clock(session: _Session) -> Check:
    readings = []
    for _ in range(CLOCK_READINGS):
        result = session.call(["info"])
        if not result.ok:
            return Check("clock", FAIL, f"the helper's info failed: {result.error}")
        readings.append(int(result.data["now_ns"]))
    info = session.call(["info"]).data
    steps = [b - a for a, b in zip(readings, readings[1:])]
    resolution = int(info.get("clock_resolution_ns") or 0)
    numbers = {"clock": info.get("clock"), "resolution_ns": resolution, "readings": len(readings),
               "backward_steps": sum(1 for s in steps if s < 0), "smallest_step_ns": min(steps)}
    if numbers["backward_steps"]:
        return Check("clock", FAIL, f"{numbers['backward_steps']} of {len(steps)} steps went backwards", numbers)
    if not 0 < resolution <= CLOCK_RESOLUTION_LIMIT_NS:
        return Check("clock", FAIL, f"resolution {resolution} ns is coarser than {CLOCK_RESOLUTION_LIMIT_NS} ns",
                     numbers)
    return Check("clock", PASS, f"{info.get('clock')}: monotonic over {len(readings)} readings, resolution "
                 f"{resolution} ns", numbers)


def check_space(target: Path) -> Check:
    free = shutil.disk_usage(target).free
    need = 4 * FILE_BYTES
    numbers = {"free_bytes": free, "needed_bytes": need}
    if free < need:
        return Check("free space", FAIL, f"{free / 1e6:.0f} MB free; the checks need {need / 1e6:.0f} MB", numbers)
    return Check("free space", PASS, f"{free / 1e9:.1f} GB free", numbers)


def check_engines(session: _Session) -> Check:
    numbers: dict[str, Any] = {}
    for engine in ("direct", "buffered", "foundation"):
        wrote = session.fresh_write(engine, sync="fsync")
        read = session.io("read", engine) if wrote.ok else wrote
        numbers[engine] = {"write_ok": wrote.ok, "read_ok": read.ok, "error": wrote.error or read.error,
                           "write_bytes_per_s": _rate(wrote), "read_bytes_per_s": _rate(read)}
    broken = [e for e, n in numbers.items() if not (n["write_ok"] and n["read_ok"])]
    if broken:
        return Check("engines", FAIL, "; ".join(f"{e}: {numbers[e]['error']}" for e in broken), numbers)
    return Check("engines", PASS, "direct, buffered and foundation each wrote and read a 32 MiB file", numbers)


def check_residency(session: _Session) -> list[Check]:
    """The page-cache checks: after a direct write, after evict, after a buffered read."""
    checks = []
    wrote = session.fresh_write("direct", sync="fsync", granularity=READ_GRANULARITY)
    if not wrote.ok:
        return [Check("direct write leaves no cache", CANNOT_TELL, f"the direct write failed: {wrote.error}")]
    direct = session.io("read", "direct")
    before = direct.data.get("resident_before") if direct.ok else None
    if before is None:
        checks.append(Check("direct write leaves no cache", CANNOT_TELL,
                            "residency could not be measured" + (f": {direct.error}" if direct.error else "")))
    else:
        status = PASS if before <= RESIDENT_EMPTY else FAIL
        checks.append(Check("direct write leaves no cache", status,
                            f"{before:.0%} of a file just written with direct I/O was in the page cache",
                            {"resident_before": before}))
    buffered = session.io("read", "buffered")
    resident = session.call(["residency", "--path", str(session.file)])
    fraction = resident.data.get("resident") if resident.ok else None
    if not buffered.ok or fraction is None:
        checks.append(Check("buffered read is cached", CANNOT_TELL, buffered.error or resident.error))
    else:
        checks.append(Check("buffered read is cached", PASS if fraction >= RESIDENT_FULL else FAIL,
                            f"{fraction:.0%} of the file was in the page cache after a buffered read",
                            {"resident": fraction}))
    evicted = session.call(["evict", "--path", str(session.file)])
    after = evicted.data.get("resident_after") if evicted.ok else None
    if after is None:
        checks.append(Check("evict empties the cache", CANNOT_TELL, evicted.error or "no residency after evict"))
    else:
        checks.append(Check("evict empties the cache", PASS if after <= RESIDENT_EMPTY else FAIL,
                            f"{evicted.data.get('resident_before', 0):.0%} resident before evict, {after:.0%} after",
                            {"resident_before": evicted.data.get("resident_before"), "resident_after": after}))
    return checks


def check_bypass(session: _Session) -> list[Check]:
    """A direct read against a read from the cache, BYPASS_ROUNDS times: the cache is bypassed only if the
    median direct read is slower than the median cached one (one round alone can be disturbed, for
    example by another program taking the CPU during a read from memory); and whether the platform's rules
    honoured the direct reads."""
    directs, cacheds = [], []
    for _ in range(BYPASS_ROUNDS):
        session.call(["evict", "--path", str(session.file)])   # macOS serves resident pages even to F_NOCACHE
        directs.append(session.io("read", "direct"))
        session.io("read", "buffered")              # warms the cache
        cacheds.append(session.io("read", "buffered"))     # served from it
    checks = []
    d_rates, c_rates = [_rate(r) for r in directs], [_rate(r) for r in cacheds]
    numbers: dict[str, Any] = {"direct_read_bytes_per_s": d_rates, "cached_read_bytes_per_s": c_rates,
               "cached_resident_before": [r.data.get("resident_before") for r in cacheds]}
    if None in d_rates or None in c_rates:
        failed = next(r for r in directs + cacheds if _rate(r) is None)
        checks.append(Check("direct read bypasses the cache", CANNOT_TELL, failed.error, numbers))
    else:
        d = statistics.median([r for r in d_rates if r is not None])
        c = statistics.median([r for r in c_rates if r is not None])
        ratio = c / d
        numbers["cache_speedup"] = ratio
        status = FAIL if served_from_memory(d, c) else PASS
        checks.append(Check("direct read bypasses the cache", status,
                            f"direct {d / 1e6:.0f} MB/s, from the cache {c / 1e6:.0f} MB/s ({ratio:.1f}x, medians "
                            f"of {BYPASS_ROUNDS})" + ("" if status == PASS else
                                                     f": direct reads run at {d / c:.0%} of memory speed ("
                                                     f"{BELOW_SHARE:.0%} or more is memory), the cache is not "
                                                     f"bypassed here or one layer down"),
                            numbers))
    said = [r.data.get("direct_honoured") for r in directs if r.ok]
    honoured = None if not said or None in said else all(said)
    reason = next((r.data.get("cached_reason") or "" for r in directs if r.ok and r.data.get("direct_honoured") is False),
                  "")
    if honoured is None:
        checks.append(Check("direct I/O honoured", CANNOT_TELL, "the file system does not say whether it honours "
                            "direct I/O", {"direct_honoured": None}))
    else:
        checks.append(Check("direct I/O honoured", PASS if honoured else FAIL,
                            "the platform bypasses the page cache for these requests" if honoured else
                            f"not honoured: {reason or 'the file system caches anyway'}",
                            {"direct_honoured": honoured, "cached_reason": reason}))
    return checks


def check_stack(target: Path) -> Check:
    """What lies below the file system (stack.py): a layer that serves reads from memory fails, as a run
    warns of it; layers that may cache are named (the bypass check measures them)."""
    layers = Stack.from_json(sysinfo.target_facts(target).get("stack"))
    numbers = {"stack": layers.to_json()}
    if not layers.layers:
        return Check("no cache below the file system", CANNOT_TELL, "the layers below the file system cannot be "
                     "read on this machine; the bypass check measures them", numbers)
    if layers.memory:
        x = layers.memory[0]
        return Check("no cache below the file system", FAIL, f"{x.name} ({x.kind}): {x.why}", numbers)
    maybe = "".join(f"; {x.name} ({x.kind}) may cache: the bypass check measures it" for x in layers.may_cache)
    return Check("no cache below the file system", PASS, layers.text() + maybe, numbers)


def check_full_sync(session: _Session) -> Check:
    wrote = session.fresh_write("direct", sync="full")
    if not wrote.ok:
        return Check("full sync", FAIL, f"a write with sync: full failed: {wrote.error}")
    used = wrote.data.get("sync_used", "")
    numbers = {"sync_used": used, "sync_seconds": wrote.data.get("sync_seconds")}
    if "refused" in used:
        return Check("full sync", FAIL, f"F_FULLFSYNC refused by this file system; stibium used {used}", numbers)
    return Check("full sync", PASS, f"accepted ({used})", numbers)


FLUSH_FILE_BYTES = 4 << 20
FLUSH_ROUNDS = 15


def check_flushes(session: _Session, info: dict[str, Any], write_cache: str | None = None) -> Check:
    """Each flush the platform has, after an uncached write of one kernel page (macOS writes smaller ones
    through its cache), against that write's own time: analysis/flushes.py. The kinds take turns round by
    round at offsets drawn from a fixed seed, so that a drift of the drive meets them all alike."""
    from ..analysis.flushes import PLATFORM_FLUSHES, FlushVerdict, flush_time
    platform = str(info.get("platform"))
    page = int(info.get("kernel_page_size_bytes") or 4096)
    path = session.folder / "flush.dat"
    laid = session.call(op_args("write", path, bytes=FLUSH_FILE_BYTES, engine="direct", sync="fsync"))
    if not laid.ok:
        return Check("flushes", CANNOT_TELL, f"the flush check's file could not be written: {laid.error}")
    kinds = ("none", *PLATFORM_FLUSHES.get(platform, ("fsync",)))
    rng = random.Random(20261126)
    times: dict[str, list[float]] = {k: [] for k in kinds}
    used: dict[str, str] = {}
    for _ in range(FLUSH_ROUNDS):
        for kind in kinds:
            offset = rng.randrange(FLUSH_FILE_BYTES // page) * page
            r = session.call(op_args("write", path, bytes=page, granularity=page, offset=offset, engine="direct",
                                     sync=kind, existing=True))
            if not r.ok:
                return Check("flushes", CANNOT_TELL, f"a write with sync: {kind} failed: {r.error}")
            seconds = r.data.get("io_seconds" if kind in ("none", "dsync") else "sync_seconds")
            times[kind].append(float(seconds or 0.0))
            used[kind] = str(r.data.get("sync_used") or kind)
    verdict = FlushVerdict(page, statistics.median(times["none"]),
                           tuple(flush_time(platform, k, used[k], times["none"], times[k]) for k in kinds[1:]))
    numbers = {"write_bytes": page, "write_s": times["none"], "write_cache": write_cache,
               **{f"{used[k]}_s": times[k] for k in kinds[1:]}}
    said = f"; the drive reports its write cache as {write_cache}" if write_cache else ""
    return Check("flushes", CANNOT_TELL if verdict.suspicious else PASS, verdict.text + said, numbers)


def check_native(info: dict[str, Any]) -> Check:
    translated = info.get("translated")
    if translated is None:
        return Check("native helper", CANNOT_TELL, "the helper cannot tell whether it runs translated")
    if translated:
        return Check("native helper", FAIL, "the helper runs under Rosetta, where macOS does no uncached I/O; "
                     "install stibium with an arm64 Python (Homebrew's in /opt/homebrew, or python.org's)",
                     {"translated": True})
    return Check("native helper", PASS, f"runs natively ({platform.machine()})", {"translated": False})


def run_selftest(target: Path) -> SelftestResult:
    """Every check, in a temporary folder inside target that is removed at the end."""
    target = target.expanduser()
    try:
        folder_to_write(target, "--target", "choose another folder")
    except PathError as e:
        raise RunError(str(e), 2) from None
    # a target that does not exist is created, as `stibium run` does, and removed again at the end (only the
    # folders made here, and only where empty)
    made = missing_folders(target)
    target.mkdir(parents=True, exist_ok=True)
    try:
        return _checks(target)
    finally:
        remove_empty(made)


def _checks(target: Path) -> SelftestResult:
    helper_path = find_helper()
    info = run_once(["info", "--path", str(target)], helper_path)
    if not info.ok:
        raise RunError(f"target {target}: {info.error}", 2)
    facts: dict[str, Any] = {"helper": info.data, "python": platform.python_version(), "machine": platform.machine(),
             "os": platform.platform(), "target": str(target.resolve()), "started_epoch_s": time.time()}
    checks = [check_space(target), check_native(info.data), check_stack(target)]
    if checks[0].status == FAIL:
        return SelftestResult(checks, facts)
    # the folder as it resolves: the helper opens test files by a path in which no name may be a link
    folder = Path(tempfile.mkdtemp(prefix=".stibium-selftest-", dir=target.resolve()))
    try:
        with Helper(helper_path) as helper:
            session = _Session(helper, folder)
            checks.insert(0, check_clock(session))
            checks.append(check_engines(session))
            checks.extend(check_residency(session))
            checks.extend(check_bypass(session))
            checks.append(check_full_sync(session))
            drive = sysinfo.target_facts(target).get("drive") or {}
            checks.append(check_flushes(session, info.data, drive.get("write_cache")))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    facts["seconds"] = time.time() - facts["started_epoch_s"]
    return SelftestResult(checks, facts)
