"""The step search's energy statistic at a lab's size (analysis/history.py: _energy): the merge of sorted halves
(memory linear in the runs, a block of orderings at a time) against the 2-D prefix sums of the n x n distance
matrix it replaced (499 x n^2 floats), and against the merge as it was before it took one pass an ordering
(two_pass_energy: the first t values' sums and the last n - t values' from the ordering reversed), side by side
on the same orderings: time, peak memory (tracemalloc: numpy's arrays are counted), and the largest difference in
the statistic. The matrix is measured up to 1,000 runs (4 GB there; 5,000 runs would ask for 93 GiB).

    PYTHONPATH=tests:. python3 tests/bench/bench_history_energy.py [--sizes 30,300,1000,5000,10000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from stibium_py.analysis.history import ENERGY_BLOCK_VALUES, PERMUTATIONS, _energy

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


def two_pass_energy(z: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """_energy as it was before (at 71fc0d9): two merges an ordering, the second over the ordering reversed."""
    rows, n = z.shape
    t = np.arange(min_size, n - min_size + 1)
    m, k = t.astype(float), (n - t).astype(float)
    before, after = _two_pass_prefix(z), _two_pass_prefix(z[:, ::-1])
    within_x, within_y = before[:, t], after[:, n - t]
    cross = before[:, n][:, None] - within_x - within_y
    e = 2 * cross / (m * k) - within_x / (m * (m - 1) / 2) - within_y / (k * (k - 1) / 2)
    q = m * k / n * e
    best = np.argmax(q, axis=1)
    return t[best], q[np.arange(rows), best]


def _two_pass_prefix(z: np.ndarray) -> np.ndarray:
    """_prefix_within before: the counts and sums scattered back to each value's place at every level."""
    rows, n = z.shape
    size = 1 << max(0, (n - 1).bit_length())
    values = np.zeros((rows, size))
    values[:, :n] = z
    where = np.broadcast_to(np.arange(size), (rows, size)).copy()
    count, total = np.zeros((rows, size)), np.zeros((rows, size))
    row = np.arange(rows)[:, None]
    half = 1
    while half < size:
        order = np.argsort(values.reshape(rows, -1, 2 * half), axis=2, kind="stable")
        values = np.take_along_axis(values.reshape(rows, -1, 2 * half), order, 2)
        where = np.take_along_axis(where.reshape(rows, -1, 2 * half), order, 2)
        left = order < half
        right = ~left
        count[row, where.reshape(rows, size)] += np.where(right, np.cumsum(left, axis=2), 0).reshape(rows, size)
        total[row, where.reshape(rows, size)] += np.where(
            right, np.cumsum(np.where(left, values, 0.0), axis=2), 0.0).reshape(rows, size)
        values, where = values.reshape(rows, size), where.reshape(rows, size)
        half *= 2
    earlier = np.zeros((rows, n))
    earlier[:, 1:] = np.cumsum(z, axis=1)[:, :-1]
    d = z * (2 * count[:, :n] - np.arange(n)) - 2 * total[:, :n] + earlier
    out = np.zeros((rows, n + 1))
    out[:, 1:] = np.cumsum(d, axis=1)
    return out


def blocks(fn):
    """fn over the orderings a block at a time, as _energy takes them (ENERGY_BLOCK_VALUES)."""
    def over_blocks(z: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
        per_block = max(1, ENERGY_BLOCK_VALUES // (1 << max(0, (z.shape[1] - 1).bit_length())))
        parts = [fn(z[i:i + per_block], min_size) for i in range(0, len(z), per_block)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return over_blocks


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
    print("runs | merge: s, peak MiB | merge before (two passes): s, peak MiB | largest relative difference | same "
          "split || matrix: s, peak MiB | largest relative difference | same split")
    for n in sizes:
        z = rng.normal(size=n)
        z[n // 2:] += 0.3
        orderings = rng.permuted(np.broadcast_to(z, (PERMUTATIONS, n)), axis=1)
        s_new, mb_new, (tau_new, q_new) = measured(_energy, orderings)
        s_two, mb_two, (tau_two, q_two) = measured(blocks(two_pass_energy), orderings)
        line = (f"{n} | {s_new:.3f}, {mb_new:.0f} | {s_two:.3f}, {mb_two:.0f} | "
                f"{float(np.max(np.abs(q_new - q_two) / np.abs(q_two))):.1e} | {bool((tau_new == tau_two).all())} || ")
        if n <= MATRIX_MAX:
            s_old, mb_old, (tau_old, q_old) = measured(matrix_energy, orderings)
            diff = float(np.max(np.abs(q_new - q_old) / np.abs(q_old)))
            print(line + f"{s_old:.3f}, {mb_old:.0f} | {diff:.1e} | {bool((tau_new == tau_old).all())}")
        else:
            print(line + f"not measured ({PERMUTATIONS * (n + 1) ** 2 * 8 / 2 ** 30:.0f} GiB) | - | -")


if __name__ == "__main__":
    main()
