"""The bench beside the road test on devices of known speed (docs/truth-devices.md): where the device sets the
pace, fio's equivalent job and the helper must measure the same rate, and the report's ratio of the two must
hold 1 within half a percent. The two instruments start and stop their clocks at other points: fio's runtime
runs from its job thread's start to after it takes its statistics lock and is rounded up to a whole millisecond
(fio's backend.c, update_runtime), the helper's from its first submission to its last completion. On devices this
steady five trials resolve that tenth of a percent (Recipe C's interval once was [1.0002, 1.0023]), so the
interval is asked to reach within 0.5 % of 1 and to lie within 3 % of it: a real gap, as the 6 % a rate filter's
burst once gave fio, fails both.
"""

from __future__ import annotations

import pytest

from conftest import entry, stibium_run
from test_truth import report_value

pytestmark = pytest.mark.truth

PLAN = """\
name: truth-bench
tests:
  - name: twin
    kind: pattern
    op: read
    access: {access}
    granularities: [{granularity}]
    queue_depth: {depth}
    bytes: {bytes}
    span: {span}
    trials: 5
    bench: fio
"""


TIMING_WINDOWS = 0.005  # how far apart the two instruments' clocks may put a steady device's rate


def _assert_ratio_holds_one(name: str, pair: dict) -> None:
    ratio = pair["ratio"]
    print(f"TRUTH {name}: bench / road {ratio['estimate']:.4f} [{ratio['low']:.4f}, {ratio['high']:.4f}]")
    assert ratio["low"] - TIMING_WINDOWS <= 1 <= ratio["high"] + TIMING_WINDOWS
    assert 0.97 < ratio["low"] <= ratio["high"] < 1.03


def _rows(run_dir) -> list[dict]:
    import csv
    with (run_dir / "measurements.csv").open() as f:
        return list(csv.DictReader(f))


def _pair(summary: dict) -> tuple[dict, dict]:
    e = entry(summary, "twin", "read")
    (pair,) = e["bench"]
    return e, pair


# steady_b: Recipe B with a burst of 10 ms, not the fixture's 100 ms: a fio process takes 0.28 s around a job of one
# request (`/usr/bin/time fio --size=4k` on the machine this was written on), the helper a millisecond between
# measurements, so a burst of 100 ms (5.2 MB, 8 % of a 64 MiB trial) reached fio's trials whole and the helper's
# hardly (fio +6.1 % against the helper in the first run of this test); at 10 ms it is 0.8 %.
@pytest.fixture
def steady_b(device_b_short_burst):
    return device_b_short_burst


def test_fio_and_the_helper_read_recipe_b_at_its_rate(tmp_path, steady_b):
    """256 KiB sequential reads one at a time, 64 MiB a trial (1.3 s at 50 MiB/s: fio's millisecond runtime is
    within 0.04 % of it)."""
    device_b = steady_b
    summary, _ = stibium_run(tmp_path, device_b, PLAN.format(access="sequential", granularity="256KiB", depth=1,
                                                             bytes="64MiB", span="64MiB"))
    e, pair = _pair(summary)
    road, bench = pair["road_bytes_per_s"]["estimate"], pair["bench_bytes_per_s"]["estimate"]
    assert abs(report_value("Recipe B: fio's rate against the helper's", road, bench)) < 0.03
    assert abs(report_value("Recipe B: fio's rate against the set rate", device_b.read_bytes_per_s, bench)) < 0.03
    _assert_ratio_holds_one("Recipe B", pair)


# Recipe C's delays are timers in a FUSE process: a host that slows this virtual machine's CPUs for a second
# stretches one instrument's trial (seen once, in a CI run of 2026-11-26: the interval [0.964, 1.001] around a ratio
# of 0.999, where three runs just after gave [0.997, 1.001]). The run is measured again, up to twice, where the ratio's interval leaves
# [0.97, 1.03]; two instruments 3 % apart would leave it every time (their intervals here are 0.2-0.4 % wide).
RECIPE_C_ATTEMPTS = 3


def test_fio_and_the_helper_make_recipe_c_s_iops_at_a_queue_depth(tmp_path, device_c):
    """Random 4 KiB reads, 16 in flight: 16 / delay requests a second (477 IOPS); 2 MiB a trial, 512 requests
    (1.07 s). The helper by io_uring, fio by its io_uring engine."""
    depth = 16
    for attempt in range(RECIPE_C_ATTEMPTS):
        (tmp_path / f"attempt-{attempt}").mkdir()
        (device_c.mount / "t").mkdir(exist_ok=True)
        summary, run_dir = stibium_run(tmp_path / f"attempt-{attempt}", device_c, PLAN.format(
            access="random", granularity="4KiB", depth=depth, bytes="2MiB", span="8MiB"))
        ratio = _pair(summary)[1]["ratio"]
        if 0.97 < ratio["low"] <= ratio["high"] < 1.03:
            break
        print(f"Recipe C, attempt {attempt + 1}: bench / road [{ratio['low']:.4f}, {ratio['high']:.4f}]; again")
    rows = _rows(run_dir)
    iops = {instrument: sorted(int(r["requests"]) / float(r["seconds"]) for r in rows if r["instrument"] == instrument)
            for instrument in ("helper", "fio")}
    road, bench = (v[len(v) // 2] for v in (iops["helper"], iops["fio"]))
    assert abs(report_value("Recipe C: fio's IOPS against the helper's", road, bench)) < 0.05
    assert abs(report_value("Recipe C: fio's IOPS against 16 / delay", depth / device_c.delay_s, bench)) < 0.05
    _, pair = _pair(summary)
    _assert_ratio_holds_one("Recipe C", pair)
