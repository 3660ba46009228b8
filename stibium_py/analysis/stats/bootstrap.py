"""Every bootstrap stibium resamples with, in one place: the stratified bootstrap of a files test's Theil-Sen lines
(by size, with its pairwise and sampled-pair variants and the m-out-of-n rescaling above SUBSAMPLE_POINTS, each
with its measured reason beside it), the small-sample widening its intervals are calibrated with, medians of
trials, moving blocks of a sustained test's chunks, and the two-level draws of a series of runs (the runs, then
one draw of each). The intervals are percentiles of the draws (estimate.percentile_interval)."""

from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np

from .quantiles import norm_ppf, t_ppf
from .theil_sen import theil_sen

# up to this many points a resample's slope is the weighted median of every pairwise slope, sorted once; above,
# the median of SAMPLED_PAIRS of its pairwise slopes drawn at random (_sampled_pair_slopes)
PAIRWISE_BOOTSTRAP_MAX_POINTS = 150
# Above PAIRWISE_BOOTSTRAP_MAX_POINTS, the intercept's interval comes from this many resamples rebuilt whole.
INTERCEPT_RESAMPLES = 400
SUBSAMPLE_POINTS = 500                      # above: resamples of this many points, rescaled (m-out-of-n)
SAMPLED_PAIRS = 5000                        # even: a resample's slope is the mean of the middle two


def strata_of(x: np.ndarray) -> list[np.ndarray]:
    """The bootstrap's strata: the points of each size; a size with a single point (one repeat) is merged
    with its neighbours until every stratum has two points or more, since a stratum of one point is the
    same in every resample and would make the interval collapse to nothing."""
    groups = [np.flatnonzero(x == v) for v in np.unique(x)]
    merged: list[np.ndarray] = []
    for g in groups:
        if merged and len(merged[-1]) < 2:
            merged[-1] = np.concatenate([merged[-1], g])
        else:
            merged.append(g)
    if len(merged) > 1 and len(merged[-1]) < 2:
        last = merged.pop()
        merged[-1] = np.concatenate([merged[-1], last])
    return merged


def small_sample_widening(x: np.ndarray, confidence: float) -> tuple[float, float]:
    """The factors (rate, latency) that widen stratified percentile bootstrap intervals for small strata:
    resampling m points underestimates their variance by (m - 1) / m, so both get sqrt(m / (m - 1)), m the
    smallest stratum; the rate, a line through k sizes (the strata), gets t(k-2) / z, the latency, a median
    over all n points, t(n-2) / z (docs/methods.md; chosen by simulation:
    tests/bench/bench_interval_coverage.py)."""
    strata = strata_of(np.asarray(x, float))
    m = min(len(g) for g in strata)
    if m < 2:
        return 1.0, 1.0
    z = norm_ppf(0.5 + confidence / 2)
    bias = math.sqrt(m / (m - 1))

    def factor(df: int) -> float:
        return float(t_ppf(0.5 + confidence / 2, df) / z * bias) if df >= 1 else 1.0

    return factor(len(strata) - 2), factor(len(x) - 2)


def _resample_counts(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Counts (resamples x n) of a bootstrap stratified by size."""
    counts = np.zeros((resamples, len(x)), dtype=np.int32)   # small integers: half the memory traffic of floats
    for idx in strata_of(x):
        counts[:, idx] = rng.multinomial(len(idx), np.full(len(idx), 1.0 / len(idx)), size=resamples)
    return counts


def _weighted_medians(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row of weights (resamples x n): the weighted median of each row's values (values per row)."""
    order = np.argsort(values, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    cw = np.cumsum(np.take_along_axis(weights, order, axis=1), axis=1)
    pos = (cw < cw[:, -1:] / 2).sum(axis=1)
    return v[np.arange(len(v)), np.minimum(pos, v.shape[1] - 1)]


def bootstrap_lines(x: np.ndarray, y: np.ndarray, resamples: int, seed: int, intercepts: bool = True,
                    line: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Theil-Sen slopes of stratified bootstrap resamples, and each resample's own joint intercept (the
    median over its points of y - slope x; above PAIRWISE_BOOTSTRAP_MAX_POINTS for the first
    INTERCEPT_RESAMPLES). `line`, the data's own Theil-Sen line (slope, intercept) where the caller has it, centres the
    rescaled resamples of very many points (see _sampled_pair_slopes)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    rng = np.random.default_rng(seed)
    n = len(x)
    if n <= PAIRWISE_BOOTSTRAP_MAX_POINTS:
        i, j = np.triu_indices(n, k=1)
        keep = x[i] != x[j]
        i, j = i[keep], j[keep]
        slopes = (y[j] - y[i]) / (x[j] - x[i])
        order = np.argsort(slopes)
        slopes, i, j = slopes[order], i[order], j[order]
        counts = _resample_counts(x, rng, resamples)
        out = np.empty(resamples)
        chunk = max(1, int(2e7 // max(len(slopes), 1)))
        for start in range(0, resamples, chunk):
            c = counts[start:start + chunk]
            w = c[:, i] * c[:, j]
            cw = np.cumsum(w, axis=1)
            half = cw[:, -1] / 2
            pos = np.array([np.searchsorted(cw[k], half[k]) for k in range(len(c))])
            out[start:start + chunk] = slopes[np.minimum(pos, len(slopes) - 1)]
        if not intercepts:
            return out, None
        return out, _weighted_medians(y[None, :] - out[:, None] * x[None, :], counts)
    slopes, own, scale = _sampled_pair_slopes(x, y, resamples, rng, intercepts)
    if scale == 1.0:
        return slopes, own
    slope, intercept = line or theil_sen(x, y)     # smaller resamples: their spread around the data's line, scaled
    slopes = slope + scale * (slopes - slope)
    return slopes, None if own is None else intercept + scale * (own - intercept)


def _mix64(v: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on a uint64 array, in place (wrapping arithmetic), without its last
    xor-shift: that one only stirs the low 32 bits, which _below discards."""
    v ^= v >> np.uint64(30)
    v *= np.uint64(0xBF58476D1CE4E5B9)
    v ^= v >> np.uint64(27)
    v *= np.uint64(0x94D049BB133111EB)
    return v


def _below(h: np.ndarray, m: np.ndarray) -> np.ndarray:
    """A hash mapped onto 0..m-1 by multiplication (Lemire), without a slow integer division; overwrites
    h and returns it as int64."""
    h >>= np.uint64(32)
    h *= m.view(np.uint64)
    h >>= np.uint64(32)
    return h.view(np.int64)


def _member(b: np.ndarray, j: np.ndarray, first: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Which point stands at positions j of resamples b (b holds b * positions + salt): a member of j's
    stratum (first, members: its first point and its number of points) chosen by a hash of (b, j), so
    that a position drawn twice holds the same point."""
    h = j.astype(np.uint64)
    h += b
    e = _below(_mix64(h), members[j])
    e += first[j]
    return e


def _sampled_pair_slopes(x: np.ndarray, y: np.ndarray, resamples: int, rng: np.random.Generator,
                         intercepts: bool = True) -> tuple[np.ndarray, np.ndarray | None, float]:
    """Many points: each resample's slope is the median of SAMPLED_PAIRS of its pairwise slopes, and (for
    the first INTERCEPT_RESAMPLES) its own joint intercept; and the factor the caller scales their spread
    by (1 unless the resamples are smaller than the data, below).

    A resample has nv positions (grouped by size; nv = n up to SUBSAMPLE_POINTS, about SUBSAMPLE_POINTS
    above): position j of resample b holds member hash(b, j) mod m of j's stratum, so that a resample is
    the same whichever way it is built, and its pairs are positions drawn at random, so a resample costs
    O(SAMPLED_PAIRS + nv), not O(n^2). The second position of a pair is drawn outside the first one's
    stratum (pairs of equal size have no slope).

    The pair sampling adds noise to each resample's slope, and the more points a resample has the more
    that noise outweighs the resampling's own (measured: 3.2 times the spread at 50,400 points). So above
    SUBSAMPLE_POINTS the resamples have SUBSAMPLE_POINTS points, drawn from every stratum in proportion
    (the m-out-of-n bootstrap, with replacement), and their spread around the full data's line is scaled
    by sqrt(m / n): for an estimator that is asymptotically normal at the rate sqrt(n), as Theil-Sen's
    slope and the median are, the spread of m-point resamples is sqrt(n / m) times that of n-point ones."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    n = len(xs)
    strata = strata_of(xs)
    start = np.array([g[0] for g in strata], dtype=np.int64)
    size = np.array([len(g) for g in strata], dtype=np.int64)
    vsize = size if n <= SUBSAMPLE_POINTS else np.minimum(size, np.maximum(2, np.round(size * SUBSAMPLE_POINTS / n)
                                                                           .astype(np.int64)))
    nv = int(vsize.sum())                      # positions of a resample
    vstart = np.concatenate([[0], np.cumsum(vsize)[:-1]])
    vfirst, vmembers = np.repeat(vstart, vsize), np.repeat(vsize, vsize)  # a position's stratum among positions
    first, members = np.repeat(start, vsize), np.repeat(size, vsize)      # ... and among the points
    salt = np.uint64(rng.integers(1, 2**62))
    out = np.empty(resamples)
    # resamples per pass: 10, so that a pass's points (10 x 2 x nv complex numbers, 160 KB at nv = 500) stay in a
    # core's cache while its pairs are looked up in them (50 a pass, 780 KB, made the loop half as slow again:
    # docs/performance.md). A pair is one draw of the generator, taken in order, so the count a pass does not
    # change the numbers
    chunk = 10
    half = SAMPLED_PAIRS // 2
    positions = np.arange(nv)
    # a second position is drawn among the nv - m positions past its first one's stratum (m its members),
    # counting on from the stratum's end; the resamples are laid out twice over, so that a count past the
    # last position reads the first ones again without a wrap
    # (both in one word, span high and the first position past low: one lookup a pair, not two)
    past_span = ((nv - vmembers).astype(np.uint64) << np.uint64(32)) | (vfirst + vmembers).astype(np.uint64)
    # a resample's points as y + i x: a pair's two points are two gathers, not four, and one subtraction
    # gives both differences
    points = np.empty((chunk, 2, nv), complex)
    for b0 in range(0, resamples, chunk):       # in place where it can be: this loop is the summary's cost
        nb = min(chunk, resamples - b0)
        b = np.arange(b0, b0 + nb, dtype=np.uint64)[:, None] * np.uint64(nv) + salt
        # a pair from one 64-bit draw: its high half picks the first position (one of nv), its low half the
        # second (one of the span past the first's stratum), each by multiplication and a shift (Lemire): a
        # position is at most nv / 2^32 (1e-7) more likely than another, and there is one draw a pair, not two
        # (the generator's two draws a pair were a third of the loop's time: docs/performance.md)
        j2 = rng.bit_generator.random_raw((nb, SAMPLED_PAIRS))
        j1 = j2 >> np.uint64(32)
        j1 *= np.uint64(nv)
        j1 >>= np.uint64(32)
        j2 &= np.uint64(0xFFFFFFFF)
        stratum = past_span[j1]
        j2 *= stratum >> np.uint64(32)
        j2 >>= np.uint64(32)
        stratum &= np.uint64(0xFFFFFFFF)
        j2 += stratum
        row = np.arange(0, nb * 2 * nv, 2 * nv, dtype=np.uint64)[:, None]
        j1 += row
        j2 += row
        # the pass's resamples built whole (nb x nv points, a tenth of its pairs), each row twice: a pair's
        # two points are looked up in them, not hashed pair by pair
        e = _member(b, np.broadcast_to(positions, (nb, nv)), first, members)
        z = points[:nb]
        z.real = ys[e][:, None, :]
        z.imag = xs[e][:, None, :]
        z = z.reshape(-1)
        dz = z[j2.view(np.int64)]
        dz -= z[j1.view(np.int64)]
        d = dz.real / dz.imag
        # the median of an even count: the upper middle selected, the lower middle the largest below it
        # (one selection, a quarter of the time of selecting both)
        d.partition(half, axis=1)
        out[b0:b0 + nb] = (d[:, :half].max(axis=1) + d[:, half]) / 2
    scale = math.sqrt(nv / n)
    if not intercepts:
        return out, None, scale
    # each of the first resamples rebuilt whole (the same hash as above): its own joint intercept
    own = np.empty(min(resamples, INTERCEPT_RESAMPLES))
    for r in range(len(own)):
        e = _member(np.asarray(np.uint64(r) * np.uint64(nv) + salt), positions, first, members)
        own[r] = np.median(ys[e] - out[r] * xs[e])
    return out, own, scale


def bootstrap_medians(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Medians of `resamples` bootstrap resamples of values."""
    values = np.asarray(values, float)
    rng = np.random.default_rng(seed)
    return np.median(values[rng.integers(0, len(values), size=(resamples, len(values)))], axis=1)


def moving_blocks(n: int, rng: np.random.Generator, block: int) -> np.ndarray:
    """Indices of a moving-block bootstrap resample of n items (blocks of `block` in a row, cut to n)."""
    starts = rng.integers(0, max(1, n - block + 1), size=-(-n // block))
    return (starts[:, None] + np.arange(block)[None, :]).ravel()[:n] % n


def two_level_draws(draws: Sequence[np.ndarray], resamples: int, seed: int) -> np.ndarray:
    """Resample the runs, then one within-run draw of each picked run: geometric means of the picks.
    With one run this is its own draws."""
    if len(draws) == 1:
        return np.asarray(draws[0], float)[:resamples]
    width = min(len(d) for d in draws)
    table = np.vstack([np.asarray(d, float)[:width] for d in draws])
    rng = np.random.default_rng(seed)
    k = len(draws)
    picked = rng.integers(0, k, size=(resamples, k))
    column = rng.integers(0, width, size=(resamples, k))
    # a pick whose draws are all NaN (a resample without a rate) is NaN, which the percentile interval leaves out
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)         # nanmean's "Mean of empty slice"
        return np.exp(np.nanmean(np.log(table[picked, column]), axis=1))
