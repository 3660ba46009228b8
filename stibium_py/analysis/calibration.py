"""The coverage of the files-test intervals, as measured by tests/bench/bench_interval_coverage.py
(300 simulated runs per cell, 14 sizes 1 MB-2 GB, B = 400): per repeats per size and noise, the share of
runs whose 95 % interval held the true rate and the true latency. Shown in the report's methods section;
re-measure and update it when the method changes."""

from __future__ import annotations

NOISES = ("log-normal 5 %", "log-normal 5 % + 3 % outliers", "Student t(3) x 5 %")

# repeats per size: ((rate, latency) per noise), None where no interval is given
COVERAGE: dict[int, tuple[tuple[float, float], ...] | None] = {
    1: None,
    2: None,
    3: ((0.953, 0.980), (0.943, 0.973), (0.927, 0.957)),
    5: ((0.943, 0.957), (0.927, 0.963), (0.967, 0.957)),
    10: ((0.967, 0.953), (0.977, 0.950), (0.963, 0.963)),
    25: ((0.960, 0.960), (0.950, 0.923), (0.973, 0.957)),
}


def rows() -> list[list[str]]:
    """The table as text: repeats, then "rate / latency" per noise."""
    out = []
    for repeats, cells in COVERAGE.items():
        if cells is None:
            out.append([str(repeats)] + ["no interval (too few repeats)"] * len(NOISES))
        else:
            out.append([str(repeats)] + [f"{r:.1%} / {lat:.1%}" for r, lat in cells])
    return out
