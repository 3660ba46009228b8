"""Requests at a stated rate (helper --rate) on a device of known service time (Recipe C: every request takes a
set delay, one at a time), against the queueing prediction for that device: with constant arrivals below its
capacity no request waits, so the response time is the service time; with Poisson arrivals (M/G/1) the response
times are those of a single server fed the very due times the helper issued at (its Poisson schedule reproduced
from its seed, tests/helper_schedule.py), computed here by Lindley's recursion from the device's own service times
(measured closed-loop first), the server held by each for the device's own 1 / capacity (measured kept busy:
the rest of a request's time, the kernel's and FUSE's way to the device, overlaps the request before it). p50 and
p99 within 5 % at 50 % and 70 % of the capacity."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import devices

from stibium_py.run.helper import find_helper
from helper_schedule import helper_poisson_due_ns

DELAY_S = 0.002
SECONDS = 40


def _read(helper: str, path, *extra: str) -> dict:
    done = subprocess.run([helper, "read", "--path", str(path), "--bytes", "64MiB", "--granularity", "4KiB",
                           "--access", "random", "--engine", "direct", *extra], capture_output=True, text=True)
    out = json.loads(done.stdout)
    assert done.returncode == 0, out
    return out


def _service_times(hist_text: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """n draws from a histogram as the helper writes it ("lo-hi:count" bins, ns), uniform inside a bin."""
    bins = [(float(b.split(":")[0].split("-")[0]), float(b.split(":")[0].split("-")[1]), int(b.split(":")[1]))
            for b in hist_text.split()]
    counts = np.array([c for _, _, c in bins], float)
    pick = rng.choice(len(bins), size=n, p=counts / counts.sum())
    lo = np.array([b[0] for b in bins])[pick]
    hi = np.array([b[1] for b in bins])[pick]
    return (lo + rng.random(n) * (hi - lo)) / 1e9


def _m_g_1(arrivals_s: np.ndarray, service_s: np.ndarray, overlapped_s: float) -> np.ndarray:
    """Response times of one server taking requests in order of arrival (Lindley's recursion): each request holds
    the server its service time less the part that overlaps the request before it, and takes its whole service
    time once served."""
    held = np.maximum(service_s - overlapped_s, 0.0)
    wait = np.empty(len(service_s))
    w = 0.0
    for k in range(len(service_s)):
        wait[k] = w
        if k + 1 < len(service_s):
            w = max(0.0, w + held[k] - (arrivals_s[k + 1] - arrivals_s[k]))
    return wait + service_s


@pytest.mark.timeout(900)
def test_response_times_at_a_rate_are_the_queue_s_of_a_device_of_known_service_time(tmp_path):
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    helper = str(find_helper())
    with devices.recipe_c(tmp_path / "dev", delay_s=DELAY_S, parallel=1) as device:
        path = device.mount / "f.bin"
        subprocess.run([helper, "write", "--path", str(path), "--bytes", "64MiB", "--granularity", "1MiB"],
                       check=True, capture_output=True)
        closed = _read(helper, path, "--bytes", "4MiB")         # one at a time, closed loop: the service time
        # the device's capacity, kept busy (8 in flight): its slot is held for 1 / capacity a request; the rest of a
        # request's time (the kernel's and FUSE's way to the slot and back) overlaps the request before it
        busy = _read(helper, path, "--duration", "10", "--queue-depth", "8")
        capacity = busy["requests"] / busy["seconds"]
        overlapped = max(0.0, closed["lat_mean_s"] - 1 / capacity)
        # at 70 % load a wait moves 3.3 times as much as the server's time does: that time is measured again after
        # the loads, and the two measurements' mean held
        print(f"TRUTH rate on Recipe C ({DELAY_S * 1e3:.0f} ms a request, one at a time): service time mean "
              f"{closed['lat_mean_s'] * 1e3:.3f} ms, p50 {closed['lat_p50_s'] * 1e3:.3f} ms, p99 "
              f"{closed['lat_p99_s'] * 1e3:.3f} ms; capacity {capacity:.1f} requests/s (a slot held "
              f"{1e3 / capacity:.3f} ms a request, {overlapped * 1e6:.0f} us of each request outside it)")
        rng = np.random.default_rng(20261128)
        runs = []
        for load, arrivals in ((0.5, "constant"), (0.5, "poisson"), (0.7, "poisson")):
            rate = load * capacity
            runs.append((load, arrivals, rate, _read(helper, path, "--rate", f"{rate:.3f}", "--arrivals", arrivals,
                                                      "--duration", str(SECONDS), "--queue-depth", "32", "--seed",
                                                      "5")))
        after = _read(helper, path, "--duration", "10", "--queue-depth", "8")
        held_s = (1 / capacity + after["seconds"] / after["requests"]) / 2
        overlapped = max(0.0, closed["lat_mean_s"] - held_s)
        print(f"TRUTH rate on Recipe C: capacity after the loads {after['requests'] / after['seconds']:.1f} "
              f"requests/s; a slot held {held_s * 1e3:.3f} ms a request on the mean of the two")
        for load, arrivals, rate, out in runs:
            achieved = out["requests"] / out["seconds"]
            if arrivals == "constant":      # no request waits: its response is its service
                truth = {"p50": out["lat_p50_s"], "p99": out["lat_p99_s"]}
            else:
                # the queue fed the very due times the helper issued at (its schedule, reproduced from its seed),
                # each request a service time of the device's drawn from the closed loop's; 20 such draws pooled
                due_s = np.array(helper_poisson_due_ns(5, 0, float(f"{rate:.3f}"), out["requests"])) / 1e9
                predicted = np.concatenate([_m_g_1(due_s, _service_times(closed["lat_hist_ns"], rng, len(due_s)),
                                                   overlapped) for _ in range(20)])
                truth = {"p50": float(np.quantile(predicted, 0.5)), "p99": float(np.quantile(predicted, 0.99))}
            got = {"p50": out["resp_p50_s"], "p99": out["resp_p99_s"]}
            for q in ("p50", "p99"):
                print(f"TRUTH rate on Recipe C at {load:.0%} of capacity ({rate:.1f}/s, {arrivals}): response {q} "
                      f"{got[q] * 1e3:.3f} ms, queue's {truth[q] * 1e3:.3f} ms, error {got[q] / truth[q] - 1:+.2%}; "
                      f"achieved {achieved:.1f}/s, {out['late_issues']} of {out['requests']} issued late")
            # constant arrivals: every due request; Poisson: within 4 standard deviations of its count
            spread = 0.002 if arrivals == "constant" else 4 / (rate * SECONDS) ** 0.5
            assert abs(achieved / rate - 1) <= spread
            # the queue is fed the due times: a machine that issued more than 0.5 % of the requests over 100 us late
            # (a CPU starved by its host) broke that premise, and its p99 can be made of late requests: said, not
            # judged. A loaded machine came +5.37 % at p99 with 61 of 9,289 late, +13.8 % with 112 of 9,260; an
            # idle one issues under 16 of 9,000 late
            if out["late_issues"] > 0.005 * out["requests"]:
                print(f"TRUTH rate on Recipe C at {load:.0%} ({arrivals}): {out['late_issues']} of {out['requests']} "
                      f"issued late: this machine did not issue on time, so the queue's percentiles are not judged")
                continue
            for q in ("p50", "p99"):
                assert abs(got[q] / truth[q] - 1) <= 0.05, (q, got, truth)


@pytest.mark.timeout(600)
def test_a_stall_shows_in_the_open_loop_s_p99_and_hides_from_the_closed_loop_s(tmp_path):
    """A device that stops 200 ms of every second (parallel_disk's stall@): at 1,000 requests a second every
    request that comes during a stall waits for its end, a fifth of them, so the response time's p99 is near
    200 ms; a closed loop on the same device issues one request into each stall and waits with it, so its p99 is
    the device's ordinary time (coordinated omission: the closed loop's percentiles count one slow request where
    the stall held two hundred)."""
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    helper = str(find_helper())
    with devices.recipe_c(tmp_path / "dev", delay_s=0.0005, parallel=64,
                          faults=f"stall@{10**9}:{200 * 10**6}") as device:
        path = device.mount / "f.bin"
        subprocess.run([helper, "write", "--path", str(path), "--bytes", "64MiB", "--granularity", "1MiB"],
                       check=True, capture_output=True)
        closed = _read(helper, path, "--duration", "10")
        opened = _read(helper, path, "--duration", "10", "--rate", "1000", "--queue-depth", "256")
    print(f"TRUTH rate on a device that stops 200 ms a second: closed loop {closed['requests']} requests, latency "
          f"p50 {closed['lat_p50_s'] * 1e3:.3f} ms, p99 {closed['lat_p99_s'] * 1e3:.3f} ms, max "
          f"{closed['lat_max_s'] * 1e3:.1f} ms; at 1,000/s {opened['requests']} requests, response p50 "
          f"{opened['resp_p50_s'] * 1e3:.3f} ms, p99 {opened['resp_p99_s'] * 1e3:.1f} ms, service p99 "
          f"{opened['lat_p99_s'] * 1e3:.1f} ms, {opened['late_issues']} issued late (by {opened['issue_late_p50_s'] * 1e3:.3f} ms "
          f"at the median, {opened['issue_late_p99_s'] * 1e3:.3f} ms at p99, {opened['issue_late_max_s'] * 1e3:.1f} ms at most)")
    assert opened["resp_p99_s"] >= 0.100
    assert closed["lat_p99_s"] < 0.010 and closed["lat_max_s"] >= 0.100     # the stall met once a second
    # every request issued, and the wait the device's, not the instrument's: the service time, timed from each
    # request's own issue, shows the stall as the response time does, and the issues' own lateness is a tenth of
    # the stall at most at p99 (a count of issues over 100 us late depends on the machine: after each stall the
    # device's two hundred answers at once take the CPU from the issuer; figures: docs/truth-devices.md)
    assert opened["requests"] == 10_000
    assert opened["lat_p99_s"] >= 0.100 and opened["issue_late_p99_s"] < 0.020


TARGET_S = 0.100
TRIAL_S = 2.0


def _p99_words(judged: dict) -> str:
    """A searched rate's p99 as the search judged it: the median of the trials' p99s and the upper end of its
    interval, which is what must be under the target (kinds/pattern/load.judge)."""
    p99 = judged["resp_p99_s"]
    high = p99["high"] if p99.get("high") is not None else p99["estimate"]
    return f"p99 {p99['estimate'] * 1e3:.2f} ms, up to {high * 1e3:.2f} ms"


@pytest.mark.timeout(900)
def test_a_targets_search_finds_the_knee_the_device_s_capacity_sets(tmp_path):
    """slo on Recipe C (2 ms a request, one at a time), a target far above the machine's own stalls: below the
    capacity C (measured kept busy) constant arrivals barely wait; above it a trial of D seconds builds a backlog
    that grows all through it, so a request arriving t seconds in waits (rate / C - 1) t. Its response p99 is about
    (rate / C - 1) x 0.99 D plus the service time s, so a target T is met up to the knee C (1 + (T - s) / (0.99 D)):
    with T = 100 ms and D = 2 s, 4.9 % above C. The search's bracket holds that knee: its middle within 5 %, no rate
    met 3 % above it and none missed 3 % below it. C is measured before the search and after it, and moved 0.7-1.3 %
    between the two in three runs here, but 5.0 % in a CI clone whose hypervisor took CPUs (429.0 and 450.5
    requests/s): the knee is known only between the knees of the two, and the bracket is judged against that band.
    The two may differ by 8 % at most; past that the device did not hold still, and the test fails saying so.

    The target was 10 ms with trials of 1 s first, and a slow CI machine missed it at 95-98 % of C: a stall of the
    machine of h ms at a load of rho leaves h rho / (1 - rho) ms of requests behind it (at 95 %, a 10 ms stall
    delays 190 ms of them), and in a trial of about 450 requests p99 is the fifth slowest, so one stall of 10 ms
    decides it. At 100 ms only a stall of nearly that could, and above C a stall of h moves the knee by h / D (0.5 %
    for 10 ms)."""
    why = devices.missing_for_recipe_c()
    if why:
        pytest.skip(f"Recipe C {why}")
    from conftest import stibium_run
    helper = str(find_helper())
    with devices.recipe_c(tmp_path / "dev", delay_s=DELAY_S, parallel=1) as device:
        path = device.mount / "f.bin"
        subprocess.run([helper, "write", "--path", str(path), "--bytes", "64MiB", "--granularity", "1MiB"],
                       check=True, capture_output=True)
        before = _read(helper, path, "--duration", "5", "--queue-depth", "8")
        summary, _ = stibium_run(tmp_path, device, f"""\
name: knee
tests:
  - name: knee
    kind: pattern
    op: read
    access: random
    granularities: [4KiB]
    span: 32MiB
    duration: {TRIAL_S:g}s
    queue_depth: 8
    slo: {{p99: {TARGET_S * 1e3:g}ms, lowest: 125 IOPS, highest: 2k IOPS}}
    trials: 3
""")
        after = _read(helper, path, "--duration", "5", "--queue-depth", "8")
    capacities = sorted(out["requests"] / out["seconds"] for out in (before, after))
    # a capacity C's knee, the slot's time a request being 1 / C
    knee_low, knee_high = (c * (1 + (TARGET_S - 1 / c) / (0.99 * TRIAL_S)) for c in capacities)
    (test,) = summary["tests"]
    (answer,) = test["slo"]
    met, missed = answer["met"]["rate_per_s"], answer["missed"]["rate_per_s"]
    middle = (met * missed) ** 0.5
    print(f"TRUTH slo on Recipe C ({DELAY_S * 1e3:.0f} ms a request, one at a time): capacity kept busy "
          f"{before['requests'] / before['seconds']:.1f} and {after['requests'] / after['seconds']:.1f} requests/s, "
          f"the knee of p99 <= {TARGET_S * 1e3:.0f} ms in {TRIAL_S:.0f} s trials {knee_low:.1f}-{knee_high:.1f}/s; "
          f"met at {met:.1f}/s ({_p99_words(answer['met'])}), missed at {missed:.1f}/s "
          f"({_p99_words(answer['missed'])}), {len(answer['searched'])} rates searched; the bracket's middle "
          f"{middle / knee_low - 1:+.2%} from the lower knee, {middle / knee_high - 1:+.2%} from the upper")
    assert capacities[1] / capacities[0] <= 1.08, "the device's capacity moved more than 8 % during the search"
    assert missed / met <= 1.0625 + 1e-9                       # neighbours on the grid
    assert met <= knee_high * 1.03 and missed >= knee_low * 0.97
    assert knee_low * 0.95 <= middle <= knee_high * 1.05
