"""One settings object for every bootstrap stibium runs: how many resamples, from which seed, at what
confidence. Each output that carries intervals records the settings it used (summary.json, compare,
a series' summary.json), so a number can be reproduced exactly."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Settings:
    resamples: int = 2000
    seed: int = 12345
    confidence: float = 0.95
    noise_band: float = 0.02      # compare: ratios within 1 +- this are "same within noise"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def with_seed(self, seed: int) -> "Settings":
        return Settings(self.resamples, seed, self.confidence, self.noise_band)


# The defaults of each analysis: a run's summary, a comparison (ratios need more resamples for their
# tails) and a series of repeated runs.
SUMMARY = Settings(resamples=2000, seed=12345)
COMPARE = Settings(resamples=10000, seed=2024)
SERIES = Settings(resamples=2000, seed=4242)
