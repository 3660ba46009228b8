"""The summary of a run: per test and op the result its kind's summariser gives (each kind's folder,
registry.py), and the warnings with what to do. Pure: measurements in, a typed `Summary` out; its
JSON form is summary.json (docs/run-directory.md)."""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .. import registry
from ..machine.memory import Shape
from ..rundir.table import Table
from . import rates
from .settings import SUMMARY, Settings
from ..registry import KindResult
from .warnings import Notice, warnings

SUMMARY_FORMAT = "stibium-summary/1"


@dataclass(frozen=True)
class Summary:
    settings: Settings
    ceiling_bytes_per_s: float | None
    measurements: int             # rows read, failed ones included
    failed_measurements: int
    damaged_rows: int
    tests: list[KindResult]
    warnings: list[Notice]
    clients: Any = None           # many clients: analysis.clients.ClientsSummary (the tests are their aggregate)

    def to_json(self) -> dict[str, Any]:
        return {"format": SUMMARY_FORMAT, **({"clients": self.clients.to_json()} if self.clients else {}),
                "settings": {**self.settings.to_json(), "ceiling_bytes_per_s": self.ceiling_bytes_per_s},
                "measurements": self.measurements, "failed_measurements": self.failed_measurements,
                "damaged_rows": self.damaged_rows, "tests": [t.to_json() for t in self.tests],
                "warnings": [w.to_json() for w in self.warnings]}


@dataclass(frozen=True)
class SummaryContext:
    """What every kind's summary may need beyond its measurements."""

    s: Settings
    ceiling_bytes_per_s: float | None
    memory_rates: dict[Shape, float]
    executor: Executor | None
    judged: dict[str, Any]                    # tests by rounds, by name (their verdicts: KindSpec.rated)
    valid: Table | None = None                # every valid measurement of the run (a verify's read meets its writes)


Pending = Callable[[], Sequence[KindResult]]      # a kind's results of a test and op, once computed


def summarize(rows: Table, s: Settings = SUMMARY, facts: dict[str, Any] | None = None,
              damaged_rows: int = 0, ceiling_bytes_per_s: float | None = None,
              executor: Executor | None = None, memory_rates: dict[Shape, float] | None = None,
              target_facts: dict[str, Any] | None = None) -> Summary:
    """The executor, where the caller gives one, computes the files tests in parallel (the same numbers).
    memory_rates: what memory does for each read shape (run.json's memory_reads), the yardstick of a cache
    below the file system; target_facts: run.json's, whose stack names the layers below it."""
    good = rows.valid()
    rated, judged = rates.rated(good)      # a test by rounds: its window's rounds, and its verdict
    ctx = SummaryContext(s, ceiling_bytes_per_s, memory_rates or {}, executor, judged, good)
    # tests in the order the run began them (failed measurements count)
    order = {key: int(rows.seq[idx[0]]) for key, idx in rows.groups("test", "op").items()}
    groups = sorted(rated.groups("test", "op", "kind").items(), key=lambda kv: order[kv[0][:2]])
    # each kind summarises a test and op: (name, op, its valid measurements, context) -> its results, later
    pending = [registry.spec(kind).summarise(name, op, rated.take(idx), ctx) for (name, op, kind), idx in groups]
    made = [later() for later in pending]
    results: list[KindResult] = [r for found_of_one in made for r in found_of_one]
    found = warnings(results, good, facts or {}, target_facts or {})
    for ((name, op, _), idx), of_one in zip(groups, made):
        if not of_one:      # a kind whose results need a whole part (a group of streams, a sustained file)
            found.append(Notice("warning", f"{name} ({op})",
                                f"{len(idx):,} measurement{'s' if len(idx) != 1 else ''} of it, but no part of it ran "
                                f"whole, so the report has nothing of it",
                                "resume the run if it was cut, or run the test again"))
    if damaged_rows:
        rows_were = "row of measurements.csv was" if damaged_rows == 1 else "rows of measurements.csv were"
        found.append(Notice("warning", "all", f"{damaged_rows:,} damaged {rows_were} skipped",
                             "the report uses the rows that are whole"))
    return Summary(s, ceiling_bytes_per_s, len(rows), len(rows) - len(good), damaged_rows, results, found)
