"""The whole catalogue of a kind's warnings (stibium_py/analysis/warnings.py): each premise false -> no word,
true -> the exact text. The results are stand-ins that carry only what the warning reads, so a premise is tested
at its edge without building a run that happens to reach it (the runs that do are in test_analysis, test_steady,
test_tree_kind, test_below_cache and the truth tests)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace as NS

import numpy as np
import pytest

from stibium_py import registry
from stibium_py.analysis import warnings as w
from stibium_py.analysis.cache import RESIDENT_THRESHOLD
from stibium_py.analysis.stonewall import Stonewall
from stibium_py.kinds.sustained.result import MIN_SIZE
from stibium_py.rundir.measurement import Measurement
from stibium_py.machine.stack import Stack
from stibium_py.rundir.table import Table


def _said(check, result) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    check(result, lambda level, test, message, todo: out.append((level, test, message, todo)))
    return out


# --- files ----------------------------------------------------------------------------------------------------

def _files(**changed) -> NS:
    quiet = dict(name="f", op="read", n=20, outliers=[], cache_suspects={}, fast_outliers=[],
                 drift=NS(detected=False, drift_fraction=0.0, change_points=[]), nonlinearity=NS(detected=False),
                 rate=NS(as_dict=lambda: {"estimate": 1e8, "low": 9e7, "high": 1.1e8, "method": "bootstrap"}),
                 measurements=NS(size_bytes=np.array([1 << 20, 1 << 26] * 10)), slope_s_per_byte=1e-8,
                 fit=NS(line=NS(intercept_s=1e-4)))
    return NS(**{**quiet, **changed})


FILES_CASES = [
    (dict(outliers=[3, 4]), "info", "2 of 20 points are outliers (flagged, kept in the fit)",
     "look at them in the residual plot; many severe ones mean background activity: repeat the run on a quiet "
     "machine"),
    (dict(cache_suspects={1: ["fast"]}), "warning", "1 reads look served from the page cache",
     "use between: evict (or drop-caches) and the direct engine; the rate without them is given beside"),
    (dict(fast_outliers=[5, 6, 7]), "info", "3 reads were fast outliers: not the page cache (measured absent from "
     "it just before), a device cache or burst", "they are what the device did and stay in the fit; see the rate "
     "per size (size bands)"),
    (dict(drift=NS(detected=True, drift_fraction=-0.23, change_points=[8])), "warning",
     "the rate drifted by -23% over the run (1 change points)",
     "throttling or background work (backups, indexing): see rate against elapsed time; repeat or cool down"),
    (dict(nonlinearity=NS(detected=True)), "warning",
     "small and large files give different rates: one line does not describe this device",
     "read the rate per size (size bands) rather than the single fitted rate"),
    (dict(rate=NS(as_dict=lambda: {"estimate": 1e8, "low": None, "high": None,
                                   "method": "median; no interval: 2 repeats"})), "warning",
     "no interval for the rate: 2 repeats", "set repeats: 3 or more in the plan"),
    (dict(measurements=NS(size_bytes=np.full(20, 1 << 20)), slope_s_per_byte=None), "warning",
     "one size: a rate needs two sizes or more (time against size), so there is none",
     "give the test two sizes or more, such as sizes: [1MB, 64MB]"),
    (dict(slope_s_per_byte=-1e-9), "warning", "time does not grow with size here, so no transfer rate can be fitted",
     "use larger sizes (at least a few MB): these files are dominated by latency"),
    (dict(fit=NS(line=NS(intercept_s=-2.5e-4))), "info",
     "the fitted line meets size 0 below 0 s (-0.250 ms), which no time can be: its latency is held to 0 s or more, "
     "and the summary shows the median time of the smallest size instead", "smaller files measure the latency "
     "better"),
]


def test_a_quiet_files_result_has_no_warning():
    assert _said(registry.spec("files").warnings, _files()) == []


@pytest.mark.parametrize("changed,level,message,todo", FILES_CASES, ids=[c[2][:30] for c in FILES_CASES])
def test_each_files_warning_is_said_exactly_where_its_premise_holds(changed, level, message, todo):
    assert _said(registry.spec("files").warnings, _files(**changed)) == [(level, "f (read)", message, todo)]


def test_files_premises_at_their_edges_say_nothing():
    # an interval there, a slope of exactly 0 is "does not grow" but a tiny positive one is not, an intercept of 0
    assert _said(registry.spec("files").warnings, _files(slope_s_per_byte=1e-15, fit=NS(line=NS(intercept_s=0.0)))) == []
    assert _said(registry.spec("files").warnings, _files(fit=NS(line=NS(intercept_s=float("nan"))))) == []
    assert [m for _, _, m, _ in _said(registry.spec("files").warnings, _files(slope_s_per_byte=0.0))] == [
        "time does not grow with size here, so no transfer rate can be fitted"]
    # no estimate at all: no "no interval" word (the one-size warning says why)
    assert _said(registry.spec("files").warnings, _files(rate=NS(as_dict=lambda: {"estimate": None, "low": None,
                                                                    "method": "no interval: x"}))) == []


# --- pattern --------------------------------------------------------------------------------------------------

def _point(**changed) -> NS:
    return NS(**{**dict(trials=6, mix=None, granularity_bytes=4096, queue_depth=1, threads=1, load=None, access="random"), **changed})


def _pattern(**changed) -> NS:
    quiet = dict(name="p", op="read", instrument="helper", points=[_point(), _point(granularity_bytes=65536)],
                 stonewall=None, steady=None, fill_rates=[], slo=[])
    return NS(**{**quiet, **changed})


def _steadiness(rounds: int, max_rounds: int, points: int = 1):
    from stibium_py.kinds.pattern.steady import PointRounds, Steadiness, SteadyVerdict
    verdict = SteadyVerdict(False, rounds - 4, rounds, 1e8, 0.3, 0.25, 1e6, 5e5, 2e6, 0.95,
                            "the range is 30% of the mean (over 20%)")
    pts = tuple(PointRounds(("write", "random", 4096 << k, 0, 32, 1, None, "helper", "random", None), (1e8,) * rounds,
                            verdict)
                for k in range(points))
    return Steadiness("p", 5, max_rounds, rounds, None, pts)


def test_a_quiet_pattern_result_has_no_warning():
    assert _said(registry.spec("pattern").warnings, _pattern()) == []
    assert _said(registry.spec("pattern").warnings, _pattern(steady=NS(steady=True))) == []


def test_points_of_one_trial_are_counted_and_the_advice_fits_the_instrument():
    one = _pattern(points=[_point(trials=1), _point(trials=6)])
    assert _said(registry.spec("pattern").warnings, one) == [(
        "warning", "p (read)", "1 of 2 points have one trial: a median of one has no interval, and compare gives them "
        "no verdict", "set trials: 6 or more in the plan (5 or fewer give the range of the trials, whose confidence "
        "the report states)")]
    fio = _pattern(instrument="fio", points=[_point(trials=1)])
    assert _said(registry.spec("pattern").warnings, fio)[0][3] == (
        "import several results of the same fio jobs together (each file is a trial; 6 or more give an interval of "
        "95 %)")
    assert _said(registry.spec("pattern").warnings, _pattern(points=[_point(trials=2)])) == []


def _load(offered: float, achieved: float, late: int, requests: int = 10_000):
    from stibium_py.analysis.estimate import Estimate
    from stibium_py.kinds.pattern.load import Load
    return Load(offered, "poisson", Estimate(achieved, achieved * 0.99, achieved * 1.01, "median", 6),
                {"p50": 1e-4, "p90": 2e-4, "p99": 3e-4, "p999": 4e-4, "max": 5e-4}, {}, requests, late, 2e-5,
                0.4 if late else 5e-5, 0)


def test_an_offered_rate_not_kept_is_said_with_what_was_achieved_and_how_late():
    kept = _pattern(points=[_point(load=_load(1000, 985, 100)), _point(load=_load(2000, 1990, 0))])
    assert _said(registry.spec("pattern").warnings, kept) == []
    over = _pattern(points=[_point(load=_load(1000, 985, 100)), _point(load=_load(50_000, 36_000, 9_990))])
    assert _said(registry.spec("pattern").warnings, over) == [(
        "info", "p (read)", "1 of 2 offered rates were not kept (random 4 KiB Q1T1 at 50k/s: achieved 36k/s of 50k/s "
        "offered; 9,990 of 10,000 requests (99.9%) issued over 100 us late, the latest 400 ms): beyond what "
        "the drive carries with these requests in flight, or the instrument's own lateness; their response times "
        "count every wait from the due times", "read the load table: the highest rate kept is what this drive "
        "carries at these requests in flight; more in flight (queue_depth, threads) may carry more")]


def test_a_mix_is_said_only_beyond_its_tolerance():
    def mixed(share: float) -> NS:
        return _pattern(op="mixed", points=[_point(mix=NS(read_share_bytes=share, read_fraction=0.7), queue_depth=32)])
    assert _said(registry.spec("pattern").warnings, mixed(0.7 + 0.9 * w.MIX_SHARE_TOLERANCE)) == []
    assert _said(registry.spec("pattern").warnings, mixed(0.65)) == [(
        "info", "p (mixed)", "the mixed 70/30 point at 4 KiB Q32T1 read 65.0% of its bytes, not 70%: each pass of "
        "the requests holds the share rounded to whole requests",
        "move more bytes a pass (bytes, or span by time) so that the share rounds closer")]


def test_the_stonewall_says_what_it_did_and_what_to_do():
    stopped = Stonewall(2.0, 10, 4, 0.5, 0.75, 0.0, False)
    assert _said(registry.spec("pattern").warnings, _pattern(stonewall=stopped)) == [(
        "info", "p (read)", "stonewall 2 s: 4 of 10 measurements stopped by it, after 75% of their requests (median; "
        "least 50%); their rates are of what they moved by then",
        "nothing to do where that was the intent; for whole passes raise stonewall or lower bytes")]
    idle = Stonewall(2.0, 10, 0, 1.0, 1.0, 0.0, False)
    assert _said(registry.spec("pattern").warnings, _pattern(stonewall=idle)) == [(
        "info", "p (read)", "stonewall 2 s: no measurement reached it (each did its whole pass)",
        "lower stonewall for it to bound the measurements, or leave it out")]


def test_not_steady_says_whether_the_rounds_ran_out_or_the_run_stopped():
    out = _said(registry.spec("pattern").warnings, _pattern(op="write", steady=_steadiness(25, 25, points=2)))
    assert out == [("warning", "p (write)", "not steady after 25 rounds: p write random 4 KiB Q32T1: the range "
                    "is 30% of the mean (over 20%) (and 1 more points); its rates are of rounds 21-25, which still "
                    "move", f"raise steady.max_rounds, {w.PRECONDITION_ADVICE}, or quote these rates as not steady")]
    out = _said(registry.spec("pattern").warnings, _pattern(op="write", steady=_steadiness(7, 25)))
    assert out == [("warning", "p (write)", "not steady yet: 7 of 25 rounds were measured before the run stopped "
                    "(p write random 4 KiB Q32T1: the range is 30% of the mean (over 20%)); its rates are of "
                    "rounds 3-7", "finish the run with stibium resume, which goes on with the rounds")]


# --- sustained ------------------------------------------------------------------------------------------------

def _sustained(**changed) -> NS:
    quiet = dict(name="s", op="write", result=NS(warnings=[], chunks=2 * MIN_SIZE), pauses=[],
                 temperature_known=True)
    return NS(**{**quiet, **changed})


def test_a_quiet_sustained_result_has_no_warning():
    assert _said(registry.spec("sustained").warnings, _sustained()) == []


def test_each_sustained_warning_is_said_exactly():
    assert _said(registry.spec("sustained").warnings, _sustained(result=NS(warnings=["throttling: x"], chunks=40))) == [(
        "warning", "s (write)", "throttling: x", "let the drive cool, give it airflow or a heatsink, and run again to "
        "tell heat from a full cache")]
    assert _said(registry.spec("sustained").warnings, _sustained(pauses=[(3 << 30, 41.6)])) == [(
        "warning", "s (write)", "the writes paused for 42 s after 3.22 GB (the run was resumed)", "a drive empties "
        "its fast cache during a pause, so the stretch after it can be fast again: for one uninterrupted curve, "
        "start a new run")]
    assert _said(registry.spec("sustained").warnings, _sustained(temperature_known=False)) == [(
        "info", "s (write)", "the drive's temperature could not be read on this machine (the system reports no sensor "
        "for this disk, and smartctl is not installed or cannot ask it), so heat cannot be told from a full cache",
        "install smartmontools (smartctl) to have it read with each chunk")]
    assert _said(registry.spec("sustained").warnings, _sustained(result=NS(warnings=[], chunks=2 * MIN_SIZE - 1))) == [(
        "warning", "s (write)", f"{2 * MIN_SIZE - 1} chunks are too few to find a cliff (at least {2 * MIN_SIZE})",
        "write more bytes or use a smaller chunk")]


# --- tree -----------------------------------------------------------------------------------------------------

def _tree(**changed) -> NS:
    quiet = dict(name="t", op="read", metadata_warm=False,
                 points=[NS(cloned=0, entries=1000, resident_before_max=0.0)])
    return NS(**{**quiet, **changed})


def test_a_quiet_tree_result_has_no_warning():
    assert _said(registry.spec("tree").warnings, _tree()) == []
    # clones said only of a copy, residency only of a read, and residency at the threshold is not said
    assert _said(registry.spec("tree").warnings, _tree(op="create", points=[NS(cloned=5, entries=1000, resident_before_max=1.0)])) \
        == []
    assert _said(registry.spec("tree").warnings, _tree(points=[NS(cloned=0, entries=1000,
                                                    resident_before_max=RESIDENT_THRESHOLD)])) == []
    just_above = _tree(points=[NS(cloned=0, entries=1000, resident_before_max=RESIDENT_THRESHOLD * 1.5)])
    assert [m for _, _, m, _ in _said(registry.spec("tree").warnings, just_above)] == [
        "a read phase met up to 2% of the files' pages in the page cache after they were evicted: some reads came "
        "from memory"]
    assert _said(registry.spec("tree").warnings, _tree(points=[NS(cloned=0, entries=1000, resident_before_max=None)])) == []


def test_each_tree_warning_is_said_exactly():
    assert _said(registry.spec("tree").warnings, _tree(metadata_warm=True)) == [(
        "info", "t", "the phases after create met the folder entries and inodes the phases before left in memory: "
        "metadata cannot be evicted file by file, so stat, list, rename and delete are warm-cache rates (a reboot or "
        "dropped caches would make them slower)",
        "for cold metadata set between: drop-caches (root) in the test; compare warm with warm")]
    copied = _said(registry.spec("tree").warnings, _tree(op="copy", points=[NS(cloned=1000, entries=1000, resident_before_max=0)]))
    assert copied == [("info", "t (copy)", "the file system cloned the copies (up to 1,000 of 1,000 a trial): a clone "
                       "shares its source's blocks and moves no bytes, so this copy's bytes per second are not a byte "
                       "copy's", "to time a copy that moves the bytes, run on a file system that does not clone "
                       "(ext4, or another volume); a Finder or cp --reflink copy on this one clones as this did")]
    read = _said(registry.spec("tree").warnings, _tree(points=[NS(cloned=0, entries=10, resident_before_max=0.25)]))
    assert read == [("warning", "t (read)", "a read phase met up to 25% of the files' pages in the page cache after "
                     "they were evicted: some reads came from memory", "this file system keeps what was evicted (a "
                     "network or FUSE file system may); choose a target on a local disk for uncached reads")]


# --- the run's rows and facts ---------------------------------------------------------------------------------

def _rows(**changed) -> Table:
    base = dict(test="r", op="write", kind="pattern", access="random", size_bytes=1 << 20, granularity_bytes=4096,
                stride_bytes=0, file="r/data.bin", bytes=40960, seconds=0.01, requests=10, syscalls=10,
                largest_syscall_bytes=4096, engine="direct", direct_honoured=1.0, sync_used="none")
    return Table.from_rows([Measurement(seq=i, trial=i, **{**base, **changed}) for i in range(3)])


def _run_words(rows: Table, facts: dict | None = None, target: dict | None = None) -> list[str]:
    return [n.message for n in w.warnings([], rows, facts or {}, target)]


def test_quiet_rows_have_no_warning():
    assert _run_words(_rows()) == []
    assert _run_words(_rows(sync_used="fsync"), {"platform": "linux"}) == []
    assert _run_words(_rows(engine="foundation"), {"platform": "darwin"}) == []


def test_direct_io_the_platform_cached_is_said_with_its_reason():
    assert _run_words(_rows(direct_honoured=0.0, cached_reason="offset not aligned to the page")) == [
        "3 of 3 direct measurements went through the page cache: offset not aligned to the page"]
    # no reason from the helper: the file system took O_DIRECT and cached anyway
    assert _run_words(_rows(direct_honoured=0.0)) == [
        "the file system accepted direct I/O but caches anyway (tmpfs, ramfs or macFUSE)"]


def test_a_flush_faster_than_the_writes_it_flushes_is_said_where_its_premise_holds():
    fast = dict(sync_used="fsync", sync_seconds=20e-6, lat_p50_s=200e-6)
    assert _run_words(_rows(**fast), {"platform": "linux"}) == [
        "its flushes (fsync) return in 20 us, faster than its 4 KiB uncached writes reach the drive (200 us a "
        "request): the drive does not flush to its medium, or it has power-loss protection"]
    assert _run_words(_rows(**{**fast, "sync_used": "F_FULLFSYNC"}), {"platform": "darwin"}) != []
    # at the edges: a flush as slow as a request, a Mac's fsync (no flush of the drive's cache: said otherwise),
    # larger requests, a synchronous write, a buffered engine, reads
    for changed, facts in [(dict(sync_seconds=200e-6), "linux"), ({}, "darwin"),
                           (dict(granularity_bytes=128 * 1024), "linux"), (dict(sync_used="O_DSYNC"), "linux"),
                           (dict(engine="buffered"), "linux"), (dict(op="read"), "linux")]:
        said = _run_words(_rows(**{**fast, **changed}), {"platform": facts})
        assert not [m for m in said if "its flushes" in m], (changed, said)


def test_a_mac_s_fsync_writes_and_gnustep_are_said_on_their_platforms():
    assert _run_words(_rows(sync_used="fsync"), {"platform": "darwin"}) == [
        "3 write measurements were synced with fsync, which on macOS leaves the data in the drive's write cache "
        "(Linux's fsync flushes it)"]
    assert _run_words(_rows(sync_used="F_FULLFSYNC"), {"platform": "darwin"}) == []
    assert _run_words(_rows(engine="foundation"), {"platform": "linux"}) == [
        "the foundation engine ran on GNUstep Base, whose implementation is not Apple's"]


def test_layers_below_the_file_system_are_said_by_what_they_do_with_reads():
    from stibium_py.machine.stack import Layer
    layers = [Layer("ext4", "file system"), Layer("loop0", "loop", "dio 0", reads="memory", why="w"),
              Layer("nbd0", "nbd", reads="may cache", why="w"), Layer("vda", "virtio")]
    target = {"stack": Stack(tuple(layers)).to_json()}
    assert _run_words(_rows(), {}, target) == [
        "loop0 (loop, dio 0) serves reads from memory below the file system",
        "nbd0 (nbd) may serve reads from memory below the file system"]


# --- many clients, and how a run ended ------------------------------------------------------------------------

def test_a_straggler_is_named_with_its_rate_against_the_others_median():
    from stibium_py.analysis.clients import straggler_notices
    from stibium_py.analysis.rates import PointKey
    key = PointKey("c", "read", "pattern", "sequential", 1 << 20, 0, 1, 1, None, "helper")
    ranks = [NS(rank=k, host=f"h{k}", rate=r, straggler="low severe" if k == 2 else "")
             for k, r in enumerate((400e6, 410e6, 90e6, 390e6))]
    point = NS(key=key, clients=ranks)
    assert [(n.level, n.test, n.message, n.what_to_do) for n in straggler_notices(NS(stragglers=[(point, ranks[2])]))] \
        == [("warning", "c (read)", "c read sequential 1 MiB: rank 2 (h2) is a straggler (low severe): 90 MB/s against "
             "the other clients' median of 400 MB/s; it counts in the aggregate", "look at rank 2's machine and its "
             "path to the store (its link, its mount options, other load on it)")]
    assert straggler_notices(NS(stragglers=[])) == []


@dataclass(frozen=True)
class _Said:
    warnings: list


@pytest.mark.parametrize("status", ["complete", "running", "interrupted"])
def test_how_a_run_ended_is_said_first_and_trials_advice_follows_it(tmp_path, status):
    from stibium_py.analysis.rates import ONE_TRIAL
    from stibium_py.results.pipeline import held_to_plan
    from stibium_py.rundir.record import RunRecord
    one = w.Notice("warning", "p (read)", f"1 of 2 points have {ONE_TRIAL}: x", "set trials: 6 or more in the plan")
    record = RunRecord(status=status, pid=4242, expanded={"ops_count": 12},
                       stopped_by="SIGHUP" if status == "interrupted" else None)
    said = [(n.message, n.what_to_do) for n in held_to_plan(_Said([one]), record, _rows(), tmp_path).warnings]
    expected = {
        "complete": [(one.message, one.what_to_do)],
        "running": [("this run is still running (process 4242): 3 of 12 measurements so far, and these numbers are "
                     "of those alone", f"wait for its end, then `stibium report {tmp_path}`"),
                    (one.message, one.what_to_do)],
        "interrupted": [("this run is interrupted (SIGHUP): 3 of 12 measurements were taken, and these numbers are "
                         "of those alone", f"finish it with `stibium resume {tmp_path}`"),
                        (one.message, f"finish the run (`stibium resume {tmp_path}`): not every trial of the plan "
                         "has run")]}[status]
    assert said == expected
