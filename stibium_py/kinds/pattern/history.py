"""What a history keeps of a pattern test beyond its points (each rate it measured is a point): a search's answer,
the most it carried within its target, as a rate whose band is the search's bracket (the highest rate that met the
target to the lowest that did not), so that a drive's answer can be followed run after run."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...analysis.estimate import Estimate
from ...analysis.settings import Settings
from ...rundir.table import Table
from .load import TARGET_KEYS, slo_answers
from .load_view import answer_label


def rates(rows: Table, s: Settings) -> list[tuple[str, dict[str, Any], str, Estimate, int]]:
    """Per test, op, point shape and target: the highest rate met (its band up to the lowest missed; none where
    every rate searched met it), in requests a second, with the count of rates searched."""
    mine = rows.take(np.flatnonzero((np.asarray(rows.kind).astype(str) == "pattern")
                                    & (np.asarray(rows.instrument).astype(str) == "helper")))
    out = []
    for (test, op), idx in mine.groups("test", "op").items():
        for a in slo_answers(mine.take(idx), s.confidence):
            met, missed = a.met, a.missed
            access, gran, stride, depth, threads, mix, fill = a.shape
            key = {"test": str(test), "op": str(op), "kind": "pattern", "access": access, "granularity_bytes": gran,
                   "stride_bytes": stride, "queue_depth": depth, "threads": threads, "read_fraction": mix,
                   "fill": fill, "slo": " ".join(f"{k}={a.targets[k]!r}" for k in TARGET_KEYS if k in a.targets)}
            method = "the highest rate that met the target; its band up to the lowest that did not"
            rate = Estimate(met.rate_per_s if met else math.nan, met.rate_per_s if met else math.nan,
                            missed.rate_per_s if met and missed else math.nan, method, len(a.searched))
            out.append((answer_label(str(test), str(op), a), key, "requests", rate, len(a.searched)))
    return out
