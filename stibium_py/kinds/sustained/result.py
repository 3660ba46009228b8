"""Sustained writes: where the fast stretch ends and the rates on either side (docs/methods.md).

The input is a streamed measurement's chunk rows (the helper's --chunk): each chunk's bytes, the bytes
written up to its end, its start and end on the raw clock, and where known the drive's temperature.

- Stretches: change points in the chunks' log rate against bytes written, found by the drift machinery
  (binary segmentation, L1 cost, penalty 4 ln n, at least MIN_SIZE chunks a stretch, on MAD-standardised
  values); neighbouring stretches whose rates differ by less than MIN_STEP are joined, so that noise never
  makes a cliff.
- Each stretch's rate: the Theil-Sen slope of bytes written against time over its chunks, with a
  moving-block bootstrap interval (chunks resampled in blocks, the cumulative series rebuilt and refitted).
- The cliff's place X (bytes written when the first change came) with a bootstrap interval: the first two
  stretches' log rates are resampled in blocks around their own medians and the step placed again.
- The headline: "fast for the first X at A, then B", each with its interval; a throttling warning where the
  rate falls while the drive warms by THROTTLE_WARMING_C or more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ...units import format_bytes, format_rate
from ...analysis.drift import change_points
from ...analysis.estimate import Estimate, estimate_text, percentile_interval
from ...analysis.stats.bootstrap import moving_blocks
from ...analysis.stats.theil_sen import row_slopes, slope_of

if TYPE_CHECKING:
    from ...rundir.table import Table

MIN_SIZE = 10                 # chunks a stretch needs (the drift machinery's minimum segment)
MIN_STEP = 0.10               # neighbouring stretches closer than this in rate are one stretch
BLOCK = 5                     # chunks per bootstrap block: the rate of a drive wanders over a few chunks
RESAMPLES = 400
MIN_INTERVAL_CHUNKS = 2 * BLOCK   # fewer chunks than two blocks: no interval (every resample nearly the same)
THROTTLE_WARMING_C = 3.0
MAX_PAIRS_POINTS = 400        # a stretch's slope reads at most this many chunks (every k-th beyond)


@dataclass(frozen=True)
class Stretch:
    first: int                        # chunk indices [first, end)
    end: int
    start_bytes: int                  # bytes written before its first chunk
    end_bytes: int
    rate_bytes_per_s: Estimate
    temperature_c: float | None = None   # median over its chunks, where known

    def to_json(self) -> dict[str, Any]:
        return {"first_chunk": self.first, "end_chunk": self.end, "start_bytes": self.start_bytes,
                "end_bytes": self.end_bytes, "rate_bytes_per_s": self.rate_bytes_per_s.as_dict(),
                "temperature_c": self.temperature_c}


@dataclass(frozen=True)
class SustainedResult:
    chunks: int
    bytes_written: int
    stretches: list[Stretch]
    cliff_bytes: Estimate | None       # where the first stretch ends (None: one steady stretch)
    warnings: list[str] = field(default_factory=list)

    @property
    def headline(self) -> str:
        first = self.stretches[0]
        if self.cliff_bytes is None:
            return f"steady at {est_text(first.rate_bytes_per_s, format_rate)} over {format_bytes(self.bytes_written)}"
        after = self.stretches[1]
        pace = "fast" if after.rate_bytes_per_s.estimate < first.rate_bytes_per_s.estimate else "slower"
        return (f"{pace} for the first {est_text(self.cliff_bytes, format_bytes)} at "
                f"{est_text(first.rate_bytes_per_s, format_rate)}, then {est_text(after.rate_bytes_per_s, format_rate)}")

    @property
    def step_fraction(self) -> float | None:
        """The rate after the cliff against before, less one (-0.6: it fell by 60 %); None without a cliff."""
        if self.cliff_bytes is None:
            return None
        return self.stretches[1].rate_bytes_per_s.estimate / self.stretches[0].rate_bytes_per_s.estimate - 1

    def to_json(self) -> dict[str, Any]:
        return {"chunks": self.chunks, "bytes_written": self.bytes_written,
                "stretches": [s.to_json() for s in self.stretches],
                "cliff_bytes": self.cliff_bytes.as_dict() if self.cliff_bytes else None,
                "headline": self.headline, "warnings": self.warnings}


def est_text(e: Estimate, fmt: Any) -> str:
    return estimate_text(e, fmt)


def stretch_rate(seconds: np.ndarray, nbytes: np.ndarray, confidence: float, seed: int) -> Estimate:
    """The Theil-Sen rate of a stretch's chunks (their durations and bytes, in order) with a moving-block
    bootstrap interval."""
    t = np.cumsum(seconds)
    b = np.cumsum(nbytes).astype(float)
    rate = slope_of(np.concatenate([[0.0], t]), np.concatenate([[0.0], b]), MAX_PAIRS_POINTS)
    if len(seconds) < MIN_INTERVAL_CHUNKS:
        return Estimate(rate, math.nan, math.nan, f"no interval: {len(seconds)} chunks, a bootstrap in blocks of "
                        f"{BLOCK} needs {MIN_INTERVAL_CHUNKS}; use a smaller chunk or write more", len(seconds))
    rng = np.random.default_rng(seed)
    idx = np.stack([moving_blocks(len(seconds), rng, BLOCK) for _ in range(RESAMPLES)])
    zero = np.zeros((RESAMPLES, 1))
    draws = row_slopes(np.hstack([zero, np.cumsum(seconds[idx], axis=1)]),
                       np.hstack([zero, np.cumsum(nbytes[idx], axis=1).astype(float)]), MAX_PAIRS_POINTS)
    lo, hi = percentile_interval(draws, confidence)
    return Estimate(rate, lo, hi, f"theil-sen of bytes against time, moving-block bootstrap ({BLOCK} chunks, "
                    f"B={RESAMPLES})", len(seconds))


def _segments(log_rate: np.ndarray) -> list[int]:
    """Stretch starts (always 0 first): change points, neighbours closer than MIN_STEP joined."""
    found = [c for c in change_points(log_rate) if MIN_SIZE <= c <= len(log_rate) - MIN_SIZE]
    bounds = found + [len(log_rate)]
    joined = [0]
    for c, nxt in zip(found, bounds[1:]):
        before = np.median(log_rate[joined[-1]:c])
        after = np.median(log_rate[c:nxt])
        if abs(math.exp(after - before) - 1) >= MIN_STEP:
            joined.append(c)
    return joined


def sustained_result(chunk_bytes: np.ndarray, seconds: np.ndarray, temperature_c: np.ndarray | None = None,
                     confidence: float = 0.95, seed: int = 12345) -> SustainedResult:
    """Stretches, their rates and the cliff of a sustained write's chunks (in the order written)."""
    chunk_bytes = np.asarray(chunk_bytes, float)
    bytes_done = np.cumsum(chunk_bytes)
    seconds = np.asarray(seconds, float)
    n = len(seconds)
    log_rate = np.log(chunk_bytes / seconds)
    starts = _segments(log_rate)
    ends = starts[1:] + [n]
    temps = None if temperature_c is None or not np.isfinite(np.asarray(temperature_c, float)).any() \
        else np.asarray(temperature_c, float)
    stretches = []
    for k, (a, b) in enumerate(zip(starts, ends)):
        t = None
        if temps is not None and np.isfinite(temps[a:b]).any():
            t = float(np.nanmedian(temps[a:b]))
        stretches.append(Stretch(a, b, int(bytes_done[a] - chunk_bytes[a]), int(bytes_done[b - 1]),
                                 stretch_rate(seconds[a:b], chunk_bytes[a:b], confidence, seed + k), t))
    cliff = None
    if len(stretches) > 1:
        cliff = _cliff_interval(log_rate, starts, bytes_done, chunk_bytes, confidence, seed)
    warnings = []
    for before, after in zip(stretches, stretches[1:]):
        if (before.temperature_c is not None and after.temperature_c is not None
                and after.rate_bytes_per_s.estimate < before.rate_bytes_per_s.estimate
                and after.temperature_c - before.temperature_c >= THROTTLE_WARMING_C):
            warnings.append(f"throttling: the rate fell from {format_rate(before.rate_bytes_per_s.estimate)} to "
                            f"{format_rate(after.rate_bytes_per_s.estimate)} after {format_bytes(after.start_bytes)} "
                            f"while the drive warmed from {before.temperature_c:.0f} to {after.temperature_c:.0f} °C")
    return SustainedResult(n, int(bytes_done[-1]) if n else 0, stretches, cliff, warnings)


def _best_split(x: np.ndarray) -> int:
    """Where one step in x fits best (least squares): the index that starts the second part, at least
    MIN_SIZE from either end."""
    n = len(x)
    c = np.arange(MIN_SIZE, n - MIN_SIZE + 1)
    total = np.cumsum(x)
    left = total[c - 1]
    right = total[-1] - left
    # the sum of squares explained by a step at c (larger is better)
    return int(c[np.argmax(left ** 2 / c + right ** 2 / (n - c))])


def _cliff_interval(log_rate: np.ndarray, starts: list[int], bytes_done: np.ndarray, chunk_bytes: np.ndarray,
                    confidence: float, seed: int) -> Estimate:
    """The bytes written before the first change, with a bootstrap interval: the chunks of the first two
    stretches are resampled in blocks around their own medians, put back in their places, and the step
    between them placed again (least squares, one step)."""
    n = len(log_rate)
    a, first = starts[0], starts[1]
    b = starts[2] if len(starts) > 2 else n
    rng = np.random.default_rng(seed + 7919)
    m1, m2 = np.median(log_rate[a:first]), np.median(log_rate[first:b])
    draws = np.empty(RESAMPLES)
    for k in range(RESAMPLES):
        series = np.concatenate([m1 + (log_rate[a:first] - m1)[moving_blocks(first - a, rng, BLOCK)],
                                 m2 + (log_rate[first:b] - m2)[moving_blocks(b - first, rng, BLOCK)]])
        at = a + _best_split(series)
        draws[k] = bytes_done[at] - chunk_bytes[at]
    lo, hi = percentile_interval(draws, confidence)
    # a chunk is timed as a whole: the change may have come anywhere inside the last chunk counted fast or the
    # first counted slow, so the interval is never narrower than that, however clear the step
    cliff = float(bytes_done[first] - chunk_bytes[first])
    lo, hi = min(lo, cliff - chunk_bytes[first - 1]), max(hi, cliff + chunk_bytes[first])
    return Estimate(cliff, lo, hi, f"first change point; the two stretches resampled in blocks of {BLOCK} chunks and "
                    f"the step placed again (B={RESAMPLES}), at least a chunk either side", n)


# ---------------------------------------------------------------- a sustained test of a run

PAUSE_S = 10.0                # more than this between two files is a pause (a resumed run), not the test's pace


@dataclass(frozen=True)
class SustainedTestResult:
    """A sustained test's writes (or its reads back): the chunks in the order they moved, across its files,
    the stretches and cliff of `result`, and what came between the chunks."""

    name: str
    op: str
    measurements: "Table"              # the chunk rows of the completed files, in order
    files: int
    result: SustainedResult
    bytes_done: np.ndarray             # per chunk: bytes of the test moved when it ended
    elapsed_s: np.ndarray              # per chunk: its end, seconds after the test's first chunk began
    rate_bytes_per_s: np.ndarray       # per chunk
    temperature_c: np.ndarray          # per chunk, NaN where unknown
    chunk_gap_s: tuple[float, float]   # median and largest time between two chunks of a file
    file_gap_s: tuple[float, float] | None   # the same between a file's last chunk and the next one's first
    pauses: list[tuple[int, float]]    # (bytes done before it, its seconds) where a run was resumed
    in_flight: int = 1                 # requests in flight (queue depth x threads)
    kind: str = "sustained"

    @property
    def n(self) -> int:
        return len(self.measurements)

    @property
    def lat_p50_s(self) -> float | None:
        """The median over the chunks of their median request latency."""
        p50 = self.measurements.lat_p50_s
        return float(np.nanmedian(p50)) if np.isfinite(p50).any() else None

    @property
    def temperature_known(self) -> bool:
        return bool(np.isfinite(self.temperature_c).any())

    def to_json(self) -> dict[str, Any]:
        def listed(values: np.ndarray) -> list[float | None]:
            return [float(v) if math.isfinite(v) else None for v in values]
        return {"name": self.name, "op": self.op, "kind": "sustained", "n": self.n, "files": self.files,
                **self.result.to_json(), "chunk_gap_s": {"median": self.chunk_gap_s[0], "max": self.chunk_gap_s[1]},
                "file_gap_s": ({"median": self.file_gap_s[0], "max": self.file_gap_s[1]} if self.file_gap_s
                               else None),
                "pauses": [{"after_bytes": b, "seconds": s} for b, s in self.pauses], "in_flight": self.in_flight,
                "points": {"bytes_done": [int(b) for b in self.bytes_done], "elapsed_s": listed(self.elapsed_s),
                           "rate_bytes_per_s": listed(self.rate_bytes_per_s),
                           "temperature_c": listed(self.temperature_c)}}


def chunks_in_order(rows: "Table") -> tuple["Table", int]:
    """The chunk rows of a sustained test's completed files, file by file and chunk by chunk, and how many
    files: a file counts once its own row (chunk empty) is there, and only the chunks of that attempt (the
    same started_s) belong to it; the chunks of an attempt an interruption cut off stay in the CSV only."""
    chunk = rows.chunk
    files = np.flatnonzero(np.isnan(chunk) & rows.ok)
    files = files[np.argsort(rows.seq[files], kind="stable")]
    taken = []
    for f in files:
        mine = np.flatnonzero((rows.seq == rows.seq[f]) & (rows.started_s == rows.started_s[f]) & ~np.isnan(chunk))
        taken.append(mine[np.argsort(chunk[mine], kind="stable")])
    order = np.concatenate(taken) if taken else np.array([], dtype=np.int64)
    return rows.take(order), len(files)


def _timeline(chunks: "Table") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each chunk's end in seconds after the test's first chunk began; the time between each two files (the
    last chunk of one to the first of the next); and which of those were pauses.

    Inside a file the helper's raw clock is exact. Between two files it is too while one helper ran them
    both: then the run's clock (started_s, when the runner sent each file) advanced by about as much as the
    raw clock, give or take the runner's own work. Where the two disagree by more than PAUSE_S (a reboot
    restarts the raw clock) the gap is taken from the run's clock. A gap of more than PAUSE_S either way is a
    pause (a resumed run)."""
    n = len(chunks)
    if not n:
        return np.array([]), np.array([]), np.array([], bool)
    start_ns, end_ns, seq, started = chunks.start_ns, chunks.end_ns, chunks.seq, chunks.started_s
    firsts = np.r_[0, np.flatnonzero(seq[1:] != seq[:-1]) + 1]
    lasts = np.r_[firsts[1:] - 1, n - 1]
    file_start_s = np.zeros(len(firsts))
    gaps, paused = np.zeros(len(firsts) - 1), np.zeros(len(firsts) - 1, bool)
    for i in range(1, len(firsts)):
        a, b = firsts[i - 1], firsts[i]
        raw_s = (start_ns[b] - start_ns[a]) / 1e9
        same_clock = raw_s > 0 and abs((started[b] - started[a]) - raw_s) < PAUSE_S
        took_s = (end_ns[lasts[i - 1]] - start_ns[a]) / 1e9
        gaps[i - 1] = max(0.0, (raw_s if same_clock else started[b] - started[a]) - took_s)
        paused[i - 1] = not same_clock or gaps[i - 1] > PAUSE_S
        file_start_s[i] = file_start_s[i - 1] + took_s + gaps[i - 1]
    which = np.cumsum(np.r_[0, seq[1:] != seq[:-1]])
    elapsed = file_start_s[which] + (end_ns - start_ns[firsts][which]) / 1e9
    return elapsed, gaps, paused


def sustained_test_result(name: str, op: str, rows: "Table", confidence: float = 0.95,
                          seed: int = 12345) -> SustainedTestResult:
    """The sustained analysis of one test's rows (file rows and chunk rows, as measurements.csv has them)."""
    chunks, files = chunks_in_order(rows)
    nbytes = chunks.col("bytes").astype(float)
    seconds = chunks.seconds
    temps = chunks.temperature_c
    done = np.cumsum(nbytes)
    elapsed, between, paused = _timeline(chunks)
    new_file = np.r_[False, chunks.seq[1:] != chunks.seq[:-1]] if len(chunks) else np.array([], bool)
    inside = chunks.chunk_gap_s[~new_file & (chunks.chunk > 0)]
    firsts = np.flatnonzero(new_file)
    pauses = [(int(done[k - 1]), float(g)) for k, g, p in zip(firsts, between, paused) if p]
    ordinary = between[~paused]
    result = sustained_result(nbytes, seconds, temps, confidence, seed)
    return SustainedTestResult(
        name, op, chunks, files, result, done, elapsed, nbytes / seconds, temps,
        (float(np.median(inside)), float(inside.max())) if inside.size else (0.0, 0.0),
        (float(np.median(ordinary)), float(ordinary.max())) if ordinary.size else None, pauses,
        int((chunks.queue_depth * chunks.threads).max()) if len(chunks) else 1)


def sustained_results(rows: "Table", confidence: float = 0.95, seed: int = 12345) -> dict[tuple[str, str],
                                                                                            SustainedTestResult]:
    """Per sustained test and op of a run's valid rows, its result; none for one without a complete file."""
    mine = rows.take(rows.kind == "sustained")
    return {(name, op): sustained_test_result(name, op, mine.take(idx), confidence, seed)
            for (name, op), idx in mine.groups("test", "op").items() if (mine.chunk[idx] >= 0).any()}
