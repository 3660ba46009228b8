"""The summary of a run: per files test and op a `FilesResult`, per pattern test and op a
`PatternResult`, and the warnings with what to do. Pure: measurements in, a typed `Summary` out; its
JSON form is summary.json (docs/run-directory.md)."""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from ..memory import Shape
from ..table import Table
from . import below

from .files import FilesResult, files_inputs, files_numbers
from .patterns import pattern_result
from .sustained import sustained_results
from .settings import SUMMARY, Settings
from .warnings import Result, Notice, warnings

SUMMARY_FORMAT = "stibium-summary/1"


@dataclass(frozen=True)
class Summary:
    settings: Settings
    ceiling_bytes_per_s: float | None
    measurements: int             # rows read, failed ones included
    failed_measurements: int
    damaged_rows: int
    tests: list[Result]
    warnings: list[Notice]

    def to_json(self) -> dict[str, Any]:
        return {"format": SUMMARY_FORMAT,
                "settings": {**self.settings.to_json(), "ceiling_bytes_per_s": self.ceiling_bytes_per_s},
                "measurements": self.measurements, "failed_measurements": self.failed_measurements,
                "damaged_rows": self.damaged_rows, "tests": [t.to_json() for t in self.tests],
                "warnings": [w.to_json() for w in self.warnings]}


def summarize(rows: Table, s: Settings = SUMMARY, facts: dict[str, Any] | None = None,
              damaged_rows: int = 0, ceiling_bytes_per_s: float | None = None,
              executor: Executor | None = None, memory_rates: dict[Shape, float] | None = None,
              target_facts: dict[str, Any] | None = None) -> Summary:
    """The executor, where the caller gives one, computes the files tests in parallel (the same numbers).
    memory_rates: what memory does for each read shape (run.json's memory_reads), the yardstick of a cache
    below the file system; target_facts: run.json's, whose stack names the layers below it."""
    good = rows.valid()
    groups = good.groups("test", "op", "kind")
    # tests in the order the run began them (failed measurements count)
    order = {key: int(rows.seq[idx[0]]) for key, idx in rows.groups("test", "op").items()}
    results: list[Result] = []
    pending = []
    for (name, op, kind), idx in sorted(groups.items(), key=lambda kv: order[kv[0][:2]]):
        rs = good.take(idx)
        if kind == "sustained":
            results.extend(sustained_results(rs, s.confidence, s.seed).values())   # none before a file is complete
            continue
        shares = below.memory_shares(rs, memory_rates or {})
        if kind != "files":
            results.append(pattern_result(name, op, rs, s.resamples, s.seed, s.confidence, shares))
            continue
        args = (op, files_inputs(rs, shares), s, ceiling_bytes_per_s)
        numbers = executor.submit(files_numbers, *args) if executor is not None else files_numbers(*args)
        pending.append((len(results), name, op, rs, numbers))
        results.append(None)  # type: ignore[arg-type]
    for at, name, op, rs, numbers in pending:
        found = numbers.result() if executor is not None else numbers
        results[at] = FilesResult(name=name, op=op, measurements=rs, **found)
    found = warnings(results, good, facts or {}, target_facts or {})
    if damaged_rows:
        found.append(Notice("warning", "all", f"{damaged_rows} damaged rows of measurements.csv were skipped",
                             "the report uses the rows that are whole"))
    return Summary(s, ceiling_bytes_per_s, len(rows), len(rows) - len(good), damaged_rows, results, found)
