"""The analysis of sustained writes (stibium_py/kinds/sustained/result.py) on simulated chunk rows of known
truth: a rate that halves after a known number of bytes is found there (within 10 %) with both rates
(within 3 %), a constant rate gives no cliff, and by simulation with fixed seeds: the intervals cover the
truth and a steady drive is almost never given a cliff."""

from __future__ import annotations

import numpy as np

from stibium_py.kinds.sustained.result import sustained_result
from stibium_py.units import format_rate

MiB = 2**20
CHUNK = 16 * MiB


def _chunks(rates: list[tuple[int, float]], noise: float, seed: int,
            temps: list[float] | None = None) -> tuple[np.ndarray, ...]:
    """Chunk rows: `count` chunks at `rate` for each (count, rate), durations with log-normal noise."""
    rng = np.random.default_rng(seed)
    rate = np.concatenate([np.full(count, r) for count, r in rates])
    seconds = CHUNK / rate * np.exp(rng.normal(0, noise, len(rate)))
    chunk_bytes = np.full(len(rate), CHUNK)
    temperature = None if temps is None else np.concatenate([np.full(c, t) for (c, _), t in zip(rates, temps)])
    return chunk_bytes, seconds, temperature


def test_a_halved_rate_is_found_where_it_happened():
    result = sustained_result(*_chunks([(64, 200e6), (64, 100e6)], 0.03, seed=1))
    assert len(result.stretches) == 2
    truth_cliff = 64 * CHUNK
    assert abs(result.cliff_bytes.estimate / truth_cliff - 1) <= 0.10
    assert result.cliff_bytes.low <= truth_cliff <= result.cliff_bytes.high
    for stretch, truth in zip(result.stretches, (200e6, 100e6)):
        rate = stretch.rate_bytes_per_s
        assert abs(rate.estimate / truth - 1) <= 0.03
        assert rate.low <= truth <= rate.high
    assert result.headline.startswith("fast for the first 1.07 GB [")
    assert ", then 10" in result.headline and result.warnings == []


def test_a_constant_rate_has_no_cliff():
    result = sustained_result(*_chunks([(128, 150e6)], 0.03, seed=2))
    assert result.cliff_bytes is None and len(result.stretches) == 1
    assert abs(result.stretches[0].rate_bytes_per_s.estimate / 150e6 - 1) <= 0.01
    assert result.headline.startswith("steady at 150 MB/s [")


def test_a_drop_while_the_drive_warms_is_called_throttling():
    result = sustained_result(*_chunks([(40, 200e6), (40, 80e6)], 0.03, seed=3, temps=[45.0, 71.0]))
    fast, slow = (s.rate_bytes_per_s.estimate for s in result.stretches)
    assert abs(fast / 200e6 - 1) <= 0.03 and abs(slow / 80e6 - 1) <= 0.03
    assert result.warnings == [f"throttling: the rate fell from {fast / 1e6:.0f} MB/s to {slow / 1e6:.1f} MB/s after "
                               f"671 MB while the drive warmed from 45 to 71 °C"]
    cool = sustained_result(*_chunks([(40, 200e6), (40, 80e6)], 0.03, seed=3, temps=[45.0, 46.0]))
    assert cool.warnings == []


def test_by_simulation_steady_drives_get_no_cliff_and_intervals_cover():
    """100 steady runs and 100 runs with a cliff, seeds fixed: a false cliff in at most 2 of the steady runs,
    and each 95 % interval covers its truth in at least 85 of 100 runs (fewer than 85 of 100 at a true 95 %
    has probability under 1e-4, by the binomial tail)."""
    false_cliffs = sum(sustained_result(*_chunks([(96, 150e6)], 0.05, seed=100 + k)).cliff_bytes is not None
                       for k in range(100))
    assert false_cliffs <= 2
    cover = {"cliff": 0, "fast": 0, "slow": 0}
    for k in range(100):
        r = sustained_result(*_chunks([(48, 300e6), (48, 120e6)], 0.05, seed=1000 + k))
        assert len(r.stretches) == 2
        cover["cliff"] += r.cliff_bytes.low <= 48 * CHUNK <= r.cliff_bytes.high
        cover["fast"] += r.stretches[0].rate_bytes_per_s.low <= 300e6 <= r.stretches[0].rate_bytes_per_s.high
        cover["slow"] += r.stretches[1].rate_bytes_per_s.low <= 120e6 <= r.stretches[1].rate_bytes_per_s.high
    print(f"false cliffs {false_cliffs} of 100; coverage per 100: {cover}")
    assert all(v >= 85 for v in cover.values()), cover


def _file_rows(seq: int, started_s: float, start_ns: int, chunks: int, chunk_s: float, gap_ns: int) -> list:
    """The chunk rows and the file's row of one file of a sustained test, on a raw clock from start_ns."""
    from stibium_py.rundir.measurement import Measurement
    base = dict(seq=seq, test="s", op="write", kind="sustained", access="sequential", size_bytes=chunks * CHUNK,
                granularity_bytes=MiB, stride_bytes=0, trial=seq, file=f"s/s-{seq}.bin", started_s=started_s,
                engine="direct")
    rows, t = [], start_ns + 100_000            # the open
    for k in range(chunks):
        begin = t + (gap_ns if k else 0)
        t = begin + round(chunk_s * 1e9)
        rows.append(Measurement(**base, bytes=CHUNK, seconds=chunk_s, start_ns=begin, end_ns=t, chunk=k,
                                bytes_done=(k + 1) * CHUNK, chunk_gap_s=gap_ns / 1e9 if k else 0.0))
    rows.append(Measurement(**base, bytes=chunks * CHUNK, seconds=(t - start_ns) / 1e9, start_ns=start_ns,
                            end_ns=t + 500_000))
    return rows


def test_the_timeline_runs_on_the_raw_clock_and_marks_a_pause():
    """Three files of 4 chunks of 0.1 s, 50 us between chunks. The second follows the first by 2 ms on the
    same raw clock, although the runner's clock says 0.3 s (the helper's start-up). The third comes after a
    reboot (the raw clock restarted) 100 s later by the run's clock: a pause, timed by the run's clock."""
    from stibium_py.kinds.sustained.result import sustained_test_result
    from stibium_py.rundir.table import Table
    first = _file_rows(0, 0.0, 10**12, 4, 0.1, 50_000)
    second_ns = first[-2].end_ns + 2_000_000 - 100_000            # its first chunk begins 2 ms after
    second = _file_rows(1, 0.7, second_ns, 4, 0.1, 50_000)
    third = _file_rows(2, 0.7 + 100.0, 5 * 10**9, 4, 0.1, 50_000)
    interrupted = _file_rows(2, 50.0, 10**13, 2, 0.1, 50_000)[:-1]  # an attempt cut off: chunks, no file row
    rows = Table.from_rows(first + second + interrupted + third)
    e = sustained_test_result("s", "write", rows)
    assert e.files == 3 and e.n == 12 and e.bytes_done[-1] == 12 * CHUNK
    assert e.file_gap_s is not None and abs(e.file_gap_s[0] - 0.002) < 1e-9
    assert e.chunk_gap_s == (50e-6, 50e-6)
    took = 4 * 0.1 + 3 * 50e-6
    assert len(e.pauses) == 1 and e.pauses[0][0] == 8 * CHUNK
    assert abs(e.pauses[0][1] - (100.0 - took)) < 1e-6     # by the run's clock: sent 100 s after the second
    np.testing.assert_allclose(e.elapsed_s[:8], [k * 0.10005 + 0.1 if k < 4 else took + 0.002 + (k - 4) * 0.10005 + 0.1
                                                 for k in range(8)], atol=1e-9)
    assert np.all(np.diff(e.elapsed_s) > 0)


def test_the_ratio_of_two_sustained_rates_covers_the_truth():
    """compare's B / A of two steady drives (200 and 150 MB/s, 5 % noise per chunk, 48 chunks each): the 95 %
    interval built from the two intervals covers the true 0.75 in at least 52 of 60 simulated pairs."""
    from stibium_py.analysis.comparison import ratio_of_intervals
    covered = 0
    for k in range(60):
        a = sustained_result(*_chunks([(48, 200e6)], 0.05, seed=1000 + k)).stretches[0].rate_bytes_per_s
        b = sustained_result(*_chunks([(48, 150e6)], 0.05, seed=2000 + k)).stretches[0].rate_bytes_per_s
        r = ratio_of_intervals(a, b)
        covered += r.low <= 0.75 <= r.high
    print(f"covered {covered} of 60")
    assert covered >= 52


def test_the_curve_draws_the_temperature_on_a_second_axis_only_where_known():
    from stibium_py.kinds.sustained.figures import rate_curve
    d = sustained_result(*_chunks([(32, 200e6), (32, 100e6)], 0.03, seed=5)).to_json()
    n = d["chunks"]
    d.update(name="s", op="write", pauses=[], points={"bytes_done": list(range(1, n + 1)),
                                                      "elapsed_s": [0.1 * k for k in range(1, n + 1)],
                                                      "rate_bytes_per_s": [1e8] * n, "temperature_c": [None] * n})
    assert not any(t.yaxis == "y2" for t in rate_curve(d).data)
    d["points"]["temperature_c"] = [40.0 + k / 8 for k in range(n)]
    fig = rate_curve(d)
    (temperature,) = [t for t in fig.data if t.yaxis == "y2"]
    assert list(temperature.y) == d["points"]["temperature_c"] and fig.layout["yaxis2"]["title"]["text"] == "°C"
    assert [t.name for t in fig.data if t.name.startswith("stretch")] == [
        f"stretch {k + 1}: " + t for k, t in enumerate(
            f"{format_rate(s['rate_bytes_per_s']['estimate'])} [{format_rate(s['rate_bytes_per_s']['low'])}, "
            f"{format_rate(s['rate_bytes_per_s']['high'])}]" for s in d["stretches"])]
