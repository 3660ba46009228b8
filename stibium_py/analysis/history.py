"""Steps across runs: where a drive's rate at one test point changed, and whether its latest run is a step
down (docs/history.md has the method and its error rates measured by simulation).

Each run gives a rate with its own interval; the runs of a series count as one entry (the mean of their log
rates). On the log scale:

- **Finding steps** in a history: E-divisive means (Matteson and James 2014; Hunter, Apache Otava, finds
  performance regressions with it), by binary segmentation: the split of a segment with the largest energy
  statistic, kept where a permutation test (the entries' order shuffled, a fixed seed) gives p <= ALPHA.
  No library of the stack has it; the statistic is a few array sums. A split is then **confirmed by the
  intervals**: the levels of the segments before and after (mean log rate, with the larger of two
  uncertainties: the scatter of its runs, and the runs' own intervals) must differ beyond the interval of
  their ratio (scipy's t quantile). A split that is not confirmed is dropped.
- **Checking the latest entry**: its rate against the level of the entries since the last step before it,
  with the uncertainty of a new entry around that level (the level's scatter or the entry's own interval,
  whichever is larger, plus the level's own) and a t quantile of the level's degrees of freedom (a normal
  quantile with one entry before it, whose own interval is then all there is).
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from .estimate import Estimate
from .stats import library

ALPHA = 0.01              # the permutation test's level for one split (docs/history.md: false alarms by simulation)
PERMUTATIONS = 499
MIN_SEGMENT = 3           # entries on each side of a split: a step needs runs to stand on
CONFIDENCE = 0.95
SEED = 20261126


@dataclass(frozen=True)
class Entry:
    """One entry of a point's history: a run, or the runs of a series as one."""

    name: str                 # the run's folder, or the series'
    started_utc: str
    runs: tuple[str, ...]
    log_rate: float
    own_se: float             # its own uncertainty of log_rate (from the interval(s)); nan where none was given

    @property
    def rate(self) -> float:
        return math.exp(self.log_rate)


@dataclass(frozen=True)
class Step:
    at: int                   # the index of the first entry after the step
    name: str                 # that entry's name: the run where it changed
    started_utc: str
    ratio: Estimate           # after / before, with its interval
    before: int               # entries in the segment before and after
    after: int

    @property
    def change(self) -> float:
        """The step in percent of the level before: -12.0 is 12 % slower."""
        return (self.ratio.estimate - 1.0) * 100.0


def _se_from_interval(estimate: float, low: float | None, high: float | None, confidence: float) -> float:
    if low is None or high is None or not (0 < low <= estimate <= high):
        return math.nan
    return (math.log(high) - math.log(low)) / (2 * _quantile(0, confidence))


def entry_of(name: str, started_utc: str, runs: Sequence[tuple[str, float, float | None, float | None]],
             confidence: float = CONFIDENCE) -> Entry:
    """An entry from runs (name, rate, low, high) of one point: a run's own, or a series' runs as one (their mean
    log rate, with the uncertainty of that mean: their scatter or their own intervals, whichever is larger)."""
    logs = np.log([r[1] for r in runs])
    ses = np.array([_se_from_interval(r[1], r[2], r[3], confidence) for r in runs])
    if len(runs) == 1:
        return Entry(name, started_utc, (runs[0][0],), float(logs[0]), float(ses[0]))
    own = float(np.nanmean(ses ** 2)) if np.isfinite(ses).any() else 0.0
    return Entry(name, started_utc, tuple(r[0] for r in runs), float(np.mean(logs)),
                 math.sqrt(max(float(np.var(logs, ddof=1)), own) / len(runs)))


# -- E-divisive means
# Orderings of one segment computed at a time: at most this many values (rows x padded length) in each of the
# working arrays, about 8 MB each, so that the permutations of a history of any length take bounded memory.
ENERGY_BLOCK_VALUES = 1 << 20
PERMUTATION_BLOCK_VALUES = 1 << 16
FIRST_LOOK = 50             # orderings drawn before the sequential test first looks


def _energy(z: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """For each row of z (orderings of one segment), the split with the largest energy statistic (univariate,
    exponent 1) and that statistic. The sum of distances within the first t values comes from _prefix_within; the
    others from it and each value's sum of distances to every value of the segment, g (the same for a value in any
    ordering): over the first t values the g add up to twice the sum within them and the sum across the split, so
    the sum across is their total less twice the first, and the sum within the last n - t is what is left of all
    the pairs' sum (half of all the g). Before, the last n - t came from a second pass over each row reversed,
    twice the work. The rows are taken a block at a time (ENERGY_BLOCK_VALUES)."""
    rows, n = z.shape
    per_block = max(1, ENERGY_BLOCK_VALUES // (1 << max(0, (n - 1).bit_length())))
    t = np.arange(min_size, n - min_size + 1)
    m, k = t.astype(float), (n - t).astype(float)
    taus, qs = [], []
    for start in range(0, rows, per_block):
        part = z[start:start + per_block]
        where = np.argsort(part, axis=1, kind="stable")
        ordered = np.take_along_axis(part, where, 1)
        below = np.zeros((len(part), n + 1))
        below[:, 1:] = np.cumsum(ordered, axis=1)
        # g of the value of rank r (r values below it): v (2 r - n) - 2 (the sum below it) + the sum of all (ties add 0)
        g = np.empty_like(part)
        np.put_along_axis(g, where, ordered * (2 * np.arange(n) - n) - 2 * below[:, :n] + below[:, n:], 1)
        g_before = np.zeros((len(part), n + 1))
        g_before[:, 1:] = np.cumsum(g, axis=1)
        all_pairs = g_before[:, n:] / 2
        within_x = _prefix_within(part, where)[:, t]
        cross = g_before[:, t] - 2 * within_x
        within_y = all_pairs - within_x - cross
        e = 2 * cross / (m * k) - within_x / (m * (m - 1) / 2) - within_y / (k * (k - 1) / 2)
        q = m * k / n * e
        best = np.argmax(q, axis=1)
        taus.append(t[best])
        qs.append(q[np.arange(len(part)), best])
    return np.concatenate(taus), np.concatenate(qs)


def _prefix_within(z: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """W[:, t], the sum of |z_i - z_j| over i < j < t, for t = 0..n, every row of z at once, in O(n log n) a row and
    memory linear in n (the n x n distance matrix's 2-D prefix sums took 499 x n^2 floats: 93 GiB for 5,000 runs).

    W grows by d_t = sum over i < t of |z_t - z_i| = z_t (2 c_t - t) - 2 s_t + P_t, where c_t and s_t are the count
    and the sum of the earlier values below z_t and P_t the sum of all earlier values (a tie adds 0 to either side).
    c and s come from a merge of sorted halves: at each level, blocks of 2h values whose halves are sorted already
    are sorted whole (a stable sort, which merges two sorted runs in linear time). A value of a right half at place
    p of the merged block, the j-th of its half, has p - j of the left half's values before it, and their sum is the
    left half's first p - j values' (a prefix sum of the row before the merge). Each value carries its z c - s
    through the levels in the merged order; the order they end in is the row's stable sort (`order`, where the caller
    has it), where they are put back in place once."""
    rows, n = z.shape
    size = 1 << max(0, (n - 1).bit_length())
    values = np.zeros(rows * size)            # the rows one after the other, indexed flat (faster than by row)
    values.reshape(rows, size)[:, :n] = z
    # the padding lies after every value, so it is never an earlier one; as large as the row's largest, it ends last
    if n < size:
        values.reshape(rows, size)[:, n:] = z.max(axis=1, keepdims=True)
    carried = np.zeros(rows * size)           # z c - s of each value so far, in the current order
    sums = np.zeros((rows, size + 1))
    row_start = np.arange(rows)[:, None, None] * (size + 1)
    half = 1
    while half < size:
        width, blocks = 2 * half, size // (2 * half)
        np.cumsum(values.reshape(rows, size), axis=1, out=sums[:, 1:])
        merge = np.argsort(values.reshape(rows * blocks, width), axis=1, kind="stable")
        merged_from = (merge + np.arange(rows * blocks)[:, None] * width).ravel()
        values, carried = values[merged_from], carried[merged_from]
        right = (merge >= half).ravel()
        count = (np.arange(half, width + half) - merge).ravel() * right
        start = np.broadcast_to(row_start + (np.arange(blocks) * width)[None, :, None], (rows, blocks, width)).ravel()
        flat_sums = sums.ravel()
        carried += right * (values * count - (flat_sums[start + count] - flat_sums[start]))
        half *= 2
    ended = np.empty((rows, size), dtype=np.intp)
    ended[:, :n] = np.argsort(z, axis=1, kind="stable") if order is None else order
    ended[:, n:] = np.arange(n, size)
    placed = np.zeros((rows, size))
    np.put_along_axis(placed, ended, 2 * carried.reshape(rows, size), 1)
    earlier = np.zeros((rows, n))
    earlier[:, 1:] = np.cumsum(z, axis=1)[:, :-1]
    d = placed[:, :n] - z * np.arange(n) + earlier
    out = np.zeros((rows, n + 1))
    out[:, 1:] = np.cumsum(d, axis=1)
    return out


def _split(z: np.ndarray, rng: np.random.Generator, min_size: int, permutations: int,
           alpha: float = ALPHA) -> tuple[int, float] | None:
    """The best split of a segment with its permutation p-value; None for a segment too short to split.

    The permutations are drawn a block at a time, and the test stops once so many have beaten the split that its
    p-value cannot come to `alpha` or below (Besag and Clifford's sequential test, stopping for a split that is not
    there): the splits it keeps are decided by all `permutations`, as before, and a segment without a step, most
    of a long history, costs a few dozen instead of 499. The p-value of a stopped test is the least it could have
    ended with, above alpha."""
    if len(z) < 2 * min_size:
        return None
    tau, q = _energy(z[None, :], min_size)
    # more than this beaten, p is above alpha whatever follows (a hair's allowance: alpha may be a p-value itself)
    most_beaten = math.floor(alpha * (permutations + 1) + 1e-9) - 1
    # the first look after 50 orderings (a segment without a step has beaten its split five times by then, most of
    # the time), then blocks twice as large; a block holds at most about 64 Ki values (16 orderings of 10,000 runs)
    largest = max(16, PERMUTATION_BLOCK_VALUES // (1 << max(0, (len(z) - 1).bit_length())))
    block = min(FIRST_LOOK, largest)
    # an ordering that splits the same two sets ties with the split: counted as beating it, whatever the rounding of
    # its sums in another order (on the statistic's scale, n times the values' range; with no step q is near 0, where
    # a tolerance relative to q alone left ties to the rounding)
    tie = 1e-12 * max(abs(float(q[0])), len(z) * float(np.ptp(z)))
    beaten = done = 0
    while done < permutations:
        rows = min(block, permutations - done)
        shuffled = rng.permuted(np.broadcast_to(z, (rows, len(z))), axis=1)
        beaten += int(np.sum(_energy(shuffled, min_size)[1] >= q[0] - tie))
        done += rows
        if beaten > most_beaten:
            break
        block = min(2 * block, largest)
    return int(tau[0]), (beaten + 1) / (permutations + 1)


def _level(entries: Sequence[Entry]) -> tuple[float, float, int]:
    """A segment's level (mean log rate), its standard error and degrees of freedom (0: its own interval only)."""
    logs = np.array([e.log_rate for e in entries])
    own = np.array([e.own_se for e in entries])
    own_var = float(np.nanmean(own ** 2)) if np.isfinite(own).any() else math.nan
    k = len(entries)
    if k == 1:
        return float(logs[0]), math.sqrt(own_var) if math.isfinite(own_var) else math.inf, 0
    spread = float(np.var(logs, ddof=1))
    return float(np.mean(logs)), math.sqrt(max(spread, own_var if math.isfinite(own_var) else 0.0) / k), k - 1


@functools.lru_cache(maxsize=4096)
def _quantile(df: int, confidence: float) -> float:
    """The two-sided quantile of Student's t with df degrees of freedom (0: the normal's). Kept once asked: a
    history asks the same few thousands of times (each run's interval, each segment's level), at 0.1 ms each."""
    stats = library("scipy.stats")
    norm, t = stats.norm, stats.t
    return float(t.ppf(0.5 + confidence / 2, df)) if df > 0 else float(norm.ppf(0.5 + confidence / 2))


def ratio_between(before: Sequence[Entry], after: Sequence[Entry], confidence: float = CONFIDENCE) -> Estimate:
    """The level after / the level before, with its interval (the quadrature of the two levels' errors, the t
    quantile of the smaller degrees of freedom)."""
    lb, sb, db = _level(before)
    la, sa, da = _level(after)
    d, se = la - lb, math.hypot(sb, sa)
    q = _quantile(min(db, da), confidence)
    return Estimate(math.exp(d), math.exp(d - q * se), math.exp(d + q * se),
                    "ratio of the mean log rates after and before", len(before) + len(after))


# A segment's test, as kept between calls and commands (history/step_tests.py): the key names everything its answer
# hangs on; the version changes with anything that changes the orderings drawn (the blocks, the first look)
TESTS_VERSION = f"e-divisive 2, first look {FIRST_LOOK}, blocks {PERMUTATION_BLOCK_VALUES}"


class SegmentTests(Protocol):
    """Segments' tests by key (segment_key): a dict, or the machine's file of them (history/step_tests.py)."""

    def get(self, key: str) -> tuple[int, float] | None: ...

    def __setitem__(self, key: str, value: tuple[int, float]) -> None: ...


def segment_key(z: np.ndarray, a: int, b: int, seed: int, min_size: int, permutations: int, alpha: float) -> str:
    """The key of the test of z[a:b]: its values to the bit, its bounds (its generator's seed), the test's settings."""
    digest = hashlib.sha256(np.ascontiguousarray(z[a:b], dtype=np.float64).tobytes())
    digest.update(f"|{a}|{b}|{seed}|{min_size}|{permutations}|{alpha!r}|{TESTS_VERSION}".encode())
    return digest.hexdigest()


def find_steps(entries: Sequence[Entry], alpha: float = ALPHA, min_size: int = MIN_SEGMENT,
               permutations: int = PERMUTATIONS, seed: int = SEED, confidence: float = CONFIDENCE,
               kept: SegmentTests | None = None) -> list[Step]:
    """The steps of a point's history, oldest first: E-divisive splits, each confirmed by the intervals. `kept`
    holds the segments' tests made before (by key: segment_key) and receives the new ones: the same answers."""
    z = np.array([e.log_rate for e in entries])
    tested: dict[tuple[int, int], tuple[int, float] | None] = {}

    def split(a: int, b: int) -> tuple[int, float] | None:
        """A segment's split, tested once: its permutations drawn from a generator of its own (the seed and its
        bounds), so that its answer does not hang on the segments tested before it."""
        if (a, b) not in tested:
            key = segment_key(z, a, b, seed, min_size, permutations, alpha) if kept is not None else ""
            found = kept.get(key) if kept is not None else None
            if found is not None and _plausible(found, b - a, min_size, permutations):
                tested[a, b] = found
            else:
                made = _split(z[a:b], np.random.default_rng([seed, a, b]), min_size, permutations, alpha)
                tested[a, b] = made
                if kept is not None and made is not None:
                    kept[key] = made
        return tested[a, b]
    cuts: list[int] = []
    while True:
        bounds = [0, *sorted(cuts), len(z)]
        best = None
        for a, b in zip(bounds, bounds[1:]):
            found = split(a, b)
            if found is not None and found[1] <= alpha and (best is None or found[1] < best[1]):
                best = (a + found[0], found[1])
        if best is None:
            break
        cuts.append(best[0])
    cuts.sort()
    while True:                  # drop the splits the intervals do not bear out, the weakest first
        bounds = [0, *cuts, len(z)]
        ratios = [ratio_between(entries[a:c], entries[c:b], confidence) for a, c, b in zip(bounds, bounds[1:], bounds[2:])]
        weak = [i for i, r in enumerate(ratios) if r.low <= 1.0 <= r.high]
        if not weak:
            break
        cuts.pop(min(weak, key=lambda i: abs(math.log(ratios[i].estimate))))
    return [Step(c, entries[c].name, entries[c].started_utc, r, c - a, b - c)
            for a, c, b, r in zip(bounds, bounds[1:], bounds[2:], ratios)]


def _plausible(found: tuple[int, float], n: int, min_size: int, permutations: int) -> bool:
    """Whether a kept test could be one of a segment of n: a split inside it, a p-value no finer than its orderings
    allow (1 / (permutations + 1)) and at most 1."""
    tau, p = found
    return (isinstance(tau, int) and min_size <= tau <= n - min_size and isinstance(p, float)
            and 1 / (permutations + 1) - 1e-12 <= p <= 1.0)


@dataclass(frozen=True)
class Latest:
    """The latest entry of a point's history against the level of the entries since the last step before it."""

    entry: Entry
    baseline: tuple[Entry, ...]
    ratio: Estimate               # latest / baseline level, with its interval

    @property
    def change(self) -> float:
        return (self.ratio.estimate - 1.0) * 100.0

    def step_down(self, threshold: float) -> bool:
        """A step down beyond the threshold (0.05: 5 %): slower by more than that, the whole interval included."""
        return self.ratio.high < 1.0 - threshold


def check_latest(entries: Sequence[Entry], confidence: float = CONFIDENCE, seed: int = SEED,
                 kept: SegmentTests | None = None) -> Latest | None:
    """The latest entry against its baseline; None with no entry before it."""
    if len(entries) < 2:
        return None
    earlier = list(entries[:-1])
    steps = find_steps(earlier, seed=seed, confidence=confidence, kept=kept)
    baseline = earlier[steps[-1].at:] if steps else earlier
    latest = entries[-1]
    level, level_se, df = _level(baseline)
    own = latest.own_se ** 2 if math.isfinite(latest.own_se) else None
    if df:      # a new run lies around the level as its runs scatter, or as far as its own interval says
        new_var = max(float(np.var([e.log_rate for e in baseline], ddof=1)), own or 0.0)
    else:       # one run before it: only the runs' own intervals say how far it may be
        new_var = math.inf if own is None else own
    d, se = latest.log_rate - level, math.sqrt(new_var + level_se ** 2)
    q = _quantile(df, confidence)
    low, high = (math.exp(d - q * se), math.exp(d + q * se)) if math.isfinite(se) else (math.nan, math.nan)
    return Latest(latest, tuple(baseline), Estimate(math.exp(d), low, high,
                                                    "latest rate / the level since the last step", len(baseline) + 1))


def confirmed(entries: Sequence[Entry], again: int, threshold: float, confidence: float = CONFIDENCE,
              seed: int = SEED) -> bool:
    """Whether the last `again` + 1 entries (a suspect run and the runs made to confirm it) are each a step down
    beyond `threshold` from the level before the first of them: a transient (one slow run) is not confirmed."""
    if again < 0 or len(entries) < again + 2:
        return False
    before = list(entries[:-(again + 1)])
    for entry in entries[-(again + 1):]:
        latest = check_latest([*before, entry], confidence, seed)
        if latest is None or not latest.step_down(threshold):
            return False
    return True
