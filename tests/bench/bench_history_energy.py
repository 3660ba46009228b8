"""The step search's energy statistic at a lab's size (analysis/history.py: _energy): the merge of sorted halves
(memory linear in the runs, a block of orderings at a time) against the 2-D prefix sums of the n x n distance
matrix it replaced (499 x n^2 floats), side by side on the same orderings: time, peak memory (tracemalloc:
numpy's arrays are counted), and the largest difference in the statistic. The matrix is measured up to 1,000
runs (4 GB there; 5,000 runs would ask for 93 GiB).

    PYTHONPATH=tests:. python3 tests/bench/bench_history_energy.py [--sizes 30,300,1000,5000,10000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from stibium_py.analysis.history import PERMUTATIONS, _energy

MATRIX_MAX = 1000


def matrix_energy(z: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The statistic as the history computed it before: the distance matrix's 2-D prefix sums, every row at once."""
    rows, n = z.shape
    prefix = np.zeros((rows, n + 1, n + 1))
    prefix[:, 1:, 1:] = np.abs(z[:, :, None] - z[:, None, :]).cumsum(1).cumsum(2)
    t = np.arange(min_size, n - min_size + 1)
    m, k = t.astype(float), (n - t).astype(float)
    cross = prefix[:, t, n] - prefix[:, t, t]
    within_x = prefix[:, t, t] / 2
    within_y = (prefix[:, n, n][:, None] - prefix[:, t, n] - prefix[:, n, t] + prefix[:, t, t]) / 2
    e = 2 * cross / (m * k) - within_x / (m * (m - 1) / 2) - within_y / (k * (k - 1) / 2)
    q = m * k / n * e
    best = np.argmax(q, axis=1)
    return t[best], q[np.arange(rows), best]


def measured(fn, z: np.ndarray) -> tuple[float, float, tuple[np.ndarray, np.ndarray]]:
    tracemalloc.start()
    started = time.perf_counter()
    out = fn(z, 3)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak / 2 ** 20, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="30,300,1000,5000,10000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    rng = np.random.default_rng(20261128)
    print("runs | merge: s, peak MiB | matrix: s, peak MiB | largest relative difference | same split")
    for n in sizes:
        z = rng.normal(size=n)
        z[n // 2:] += 0.3
        orderings = rng.permuted(np.broadcast_to(z, (PERMUTATIONS, n)), axis=1)
        s_new, mb_new, (tau_new, q_new) = measured(_energy, orderings)
        if n <= MATRIX_MAX:
            s_old, mb_old, (tau_old, q_old) = measured(matrix_energy, orderings)
            diff = float(np.max(np.abs(q_new - q_old) / np.abs(q_old)))
            print(f"{n} | {s_new:.3f}, {mb_new:.0f} | {s_old:.3f}, {mb_old:.0f} | {diff:.1e} | "
                  f"{bool((tau_new == tau_old).all())}")
        else:
            print(f"{n} | {s_new:.3f}, {mb_new:.0f} | not measured ({PERMUTATIONS * (n + 1) ** 2 * 8 / 2 ** 30:.0f} "
                  f"GiB) | - | -")


if __name__ == "__main__":
    main()
