"""A toy test's result per op: the median throughput over its files, and one warning."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stibium_py.analysis.estimate import Estimate
from stibium_py.analysis.rates import PointKey, PointRule, bytes_per_s, median_rate
from stibium_py.analysis.summary import Pending, SummaryContext
from stibium_py.rundir.table import Table
from stibium_py.units import in_flight_label


@dataclass(frozen=True)
class ToyResult:
    name: str
    op: str
    n: int
    rate: Estimate
    kind: str = "toy"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "kind": self.kind, "n": self.n,
                "rate_bytes_per_s": self.rate.as_dict()}


def summarise(name: str, op: str, rows: Table, ctx: SummaryContext) -> Pending:
    rate = median_rate(rows.col("bytes").astype(float), rows.seconds, ctx.s.resamples, ctx.s.seed,
                        ctx.s.confidence).rate
    result = ToyResult(name, op, len(rows), rate)
    return lambda: [result]


def add_warnings(e: ToyResult, add: Any) -> None:
    if e.n < 3:
        add("info", f"{e.name} ({e.op})", f"{e.n} files: the median of fewer than 3 has no interval",
            "write at least 3 (repeats: 3)")


POINTS = PointRule(lambda test, op, *_: PointKey(test, op, "toy", "", 0, 0, 1, 1), "bytes", median_rate,
                   "median throughput", op_rank=str, rate_format=bytes_per_s,
                   unit=lambda op: "bytes", flight=in_flight_label)
