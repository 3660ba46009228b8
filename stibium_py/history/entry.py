"""A run directory as the history keeps it: the drive it ran on, what ran (the plan and its digest, the
versions), how it ended, and each test point's rate with its interval and n. Read from the run directory
alone, so that a run recorded as it ended and the same run added later (`history add`, `rebuild`) give
the same rows: the rates are computed as `compare` computes them (analysis/rates.py: by point, the
estimator of its kind, the summary's seed and resamples)."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import registry
from ..analysis import rates
from ..analysis.settings import SUMMARY, Settings
from ..rundir.record import MAX_COUNT, RunRecord

# the statuses a run ends with that the history keeps: measured to the end, or cut short (marked so)
KEPT_STATUSES = ("complete", "interrupted")


@dataclass(frozen=True)
class Drive:
    """What names a drive across runs: its serial (with its model) where the machine could read one, else
    the volume's UUID, else the host and the device; the label is for people."""

    key: str
    label: str
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    capacity_bytes: int | None = None


@dataclass(frozen=True)
class PointEntry:
    point: str               # the point in words (rates.describe): "random-4k read random 4 KiB Q32T1"
    key: dict[str, Any]      # rates.key_json of the point, to match points across runs exactly
    unit: str                # what its rate counts per second: bytes, files, names
    estimate: float | None   # None where the run gave no rate (one size, no measurement)
    low: float | None        # None where it gave no interval (one trial, few repeats: `refused` says why)
    high: float | None
    n: int
    refused: str | None = None


@dataclass(frozen=True)
class Note:
    """What a person wrote of a run or a drive (a firmware update, a new NAS). An expected note says a change from
    then on is meant: `history check` does not call it a step down."""

    run_key: str | None      # the run it speaks of, or None for a drive's
    drive_key: str | None    # the drive it speaks of (a run's note names its run's drive too)
    text: str
    expected: bool
    written_utc: str


@dataclass(frozen=True)
class RunEntry:
    run_key: str             # the run's identity: host, start and folder name (the same run added twice is one)
    path: str
    name: str
    series: str | None       # the series folder a run of a series sits in
    started_utc: str
    ended_utc: str | None
    status: str
    stopped_by: str | None
    host: str | None
    os: str | None
    plan_name: str | None
    plan_sha256: str | None
    ops_sha256: str | None
    stibium_version: str | None
    helper_version: str | None
    fs_type: str | None
    volume_uuid: str | None
    ranks: int
    drive: Drive
    points: tuple[PointEntry, ...]


def drive_of(record: RunRecord) -> Drive:
    """The drive a run's target was on, from its run.json (target_facts.drive; a run from before stibium read
    drives has the device's model and the volume's UUID only)."""
    facts = record.target_facts
    given = facts.get("drive")
    drive: dict[str, Any] = given if isinstance(given, dict) else {}
    model = _text(drive.get("model")) or _text(facts.get("device_model"))
    serial, firmware = _text(drive.get("serial")), _text(drive.get("firmware"))
    capacity = drive.get("capacity_bytes")
    capacity = capacity if isinstance(capacity, int) and not isinstance(capacity, bool) and 0 < capacity <= MAX_COUNT \
        else None                          # past SQLite's integers: no drive's capacity
    uuid, device = _text(facts.get("volume_uuid")), _text(facts.get("device")) or _text(facts.get("mount_point"))
    host = record.hostname or "unknown host"
    if serial:
        key, label = f"serial:{model or ''}:{serial}", f"{model or 'drive'} (serial {serial})"
    elif uuid:
        key, label = f"volume:{uuid}", f"{model or device or 'drive'}, volume {uuid}"
    else:
        where = f"{model or 'drive'} {device}" if device else f"{model or 'the drive'} of {record.target or 'the target'}"
        key, label = f"host:{host}:{device or record.target or ''}", f"{where} on {host}"
    return Drive(key, " ".join(label.split()), model, serial, firmware, capacity)


def _text(value: Any) -> str | None:
    """A fact's text as the history keeps it: stripped, at most MAX_TEXT characters."""
    return value.strip()[:MAX_TEXT] if isinstance(value, str) and value.strip() else None


MAX_TEXT = 1000        # a model, serial or firmware of more is no drive's: the export's limit too


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _rate_entry(point: str, key: dict[str, Any], unit: str, rate: Any, n: int, refused: str | None) -> PointEntry:
    estimate = _finite(rate.estimate)
    estimate = estimate if estimate is not None and estimate > 0 else None
    low, high = _finite(rate.low), _finite(rate.high)
    if estimate is None or low is None or high is None or low <= 0:
        low = high = None          # no interval, or one that reaches to zero: a rate has none there
    return PointEntry(point, key, unit, estimate, low, high, n, refused)


def point_entries(rows: Any, settings: Settings = SUMMARY) -> tuple[PointEntry, ...]:
    """Each test point's rate with its interval, then the rates the kinds without points keep (a sustained test's
    stretches: KindSpec.history)."""
    out = []
    for key, table in rates.by_point(rows).items():
        kind, x, y = rates.draw_inputs(table)
        rate = rates.point_rate(kind, x, y, settings.resamples, settings.seed, settings.confidence)
        out.append(_rate_entry(rates.describe(key), rates.key_json(key), rates.unit_of(key), rate.rate, len(table),
                               rate.refused))
    for spec in registry.specs():
        if spec.history is not None:
            out += [_rate_entry(point, key, unit, rate, n, None) for point, key, unit, rate, n in
                    spec.history(rows, settings)]
    return tuple(out)


def read_entry(run_dir: Path) -> RunEntry | None:
    """A run directory as a history entry; None for a run that is not over (running, waiting for a reboot)
    or that failed. RunDirError and RecordError reach the caller for a folder that is no run."""
    from ..results.compare import run_of
    from ..rundir.store import is_series
    from ..results.pipeline import load_run
    loaded = load_run(run_dir)          # read once: the record and the rows
    record = loaded.record
    if record.status not in KEPT_STATUSES:
        return None
    run = run_of(loaded)
    points = point_entries(run.rows) if run is not None else ()
    path = run_dir.resolve()
    machine = record.machine
    os_name = " ".join(str(v) for v in (machine.get("os"), machine.get("os_product_version") or machine.get("os_release"))
                       if v)
    plan_text = record.plan.text
    facts = record.target_facts
    started = record.started_utc or ""
    return RunEntry(
        run_key=f"{record.hostname or ''}/{started}/{path.name}", path=str(path), name=path.name,
        series=path.parent.name if is_series(path.parent) else None, started_utc=started,
        ended_utc=record.ended_utc, status=record.status, stopped_by=record.stopped_by, host=record.hostname,
        os=os_name or None, plan_name=record.plan.name,
        plan_sha256=hashlib.sha256(plan_text.encode()).hexdigest() if plan_text else None,
        ops_sha256=record.expanded.get("ops_sha256"), stibium_version=record.stibium_version,
        helper_version=record.helper_version, fs_type=_text(facts.get("fs_type")),
        volume_uuid=_text(facts.get("volume_uuid")), ranks=record.ranks, drive=drive_of(record), points=points)
