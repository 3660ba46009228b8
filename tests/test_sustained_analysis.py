"""The analysis of sustained writes (stibium_py/analysis/sustained.py) on simulated chunk rows of known
truth: a rate that halves after a known number of bytes is found there (within 10 %) with both rates
(within 3 %), a constant rate gives no cliff, and by simulation with fixed seeds: the intervals cover the
truth and a steady drive is almost never given a cliff."""

from __future__ import annotations

import numpy as np

from stibium_py.analysis.sustained import sustained_result

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
    return chunk_bytes, np.cumsum(chunk_bytes), seconds, temperature


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
