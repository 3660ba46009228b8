"""The history as a file: `history export` writes the runs as JSON (stibium-history/1) that another machine's
`history import` adds to its own (a lab gathering its machines' histories in one place). A file to import
comes from someone else: it is data, held field by field to the format (pydantic, nothing beyond it), and
its runs are kept as imported: their paths name the other machine's folders and are never opened here
(`rebuild` does not follow them)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..rundir import received
from ..errors import HistoryError
from ..rundir.jsonread import JsonRefused, load_json
from ..rundir.record import MAX_COUNT, MAX_RANKS
from .entry import KEPT_STATUSES, Drive, PointEntry, RunEntry

FORMAT = "stibium-history/1"
IMPORTED = "imported:"            # the path of an imported run: never a folder of this machine
MAX_FILE_BYTES = 512 * 1024 * 1024
# a run's test points: the largest built-in plan has a few hundred; a page draws a figure for each
MAX_POINTS = 2000
# a rate in bytes or operations a second: 1e30 is past any device (a rate of 1.7e308 overflowed in the figures)
MAX_RATE = 1e30

Text = Optional[str]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Point(_Strict):
    point: str = Field(max_length=1000)
    key: dict[str, Any]
    unit: str = Field(max_length=40)
    estimate: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    n: int = Field(ge=0, le=MAX_COUNT)
    refused: Text = Field(default=None, max_length=1000)

    @field_validator("estimate", "low", "high")
    @classmethod
    def _positive(cls, v: float | None) -> float | None:
        if v is not None and not (math.isfinite(v) and 0 < v < MAX_RATE):
            raise ValueError(f"a rate is a positive number below {MAX_RATE:g} or null")
        return v


class _Drive(_Strict):
    key: str = Field(min_length=1, max_length=1000)
    label: str = Field(min_length=1, max_length=1000)
    model: Text = Field(default=None, max_length=1000)
    serial: Text = Field(default=None, max_length=1000)
    firmware: Text = Field(default=None, max_length=1000)
    capacity_bytes: Optional[int] = Field(default=None, gt=0, le=MAX_COUNT)


class _Run(_Strict):
    run_key: str = Field(min_length=1, max_length=2000)
    path: str = Field(max_length=4096)
    name: str = Field(max_length=1000)
    series: Text = Field(default=None, max_length=1000)
    started_utc: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$")
    ended_utc: Text = Field(default=None, max_length=40)
    status: Literal[KEPT_STATUSES]        # type: ignore[valid-type]
    stopped_by: Text = Field(default=None, max_length=2000)
    host: Text = Field(default=None, max_length=1000)
    os: Text = Field(default=None, max_length=1000)
    plan_name: Text = Field(default=None, max_length=1000)
    plan_sha256: Text = Field(default=None, max_length=64)
    ops_sha256: Text = Field(default=None, max_length=64)
    stibium_version: Text = Field(default=None, max_length=100)
    helper_version: Text = Field(default=None, max_length=100)
    fs_type: Text = Field(default=None, max_length=100)
    volume_uuid: Text = Field(default=None, max_length=100)
    ranks: int = Field(ge=1, le=MAX_RANKS)
    drive: _Drive
    points: list[_Point] = Field(max_length=MAX_POINTS)


class _File(_Strict):
    format: Literal["stibium-history/1"]
    runs: list[_Run]


def to_json(entries: list[RunEntry]) -> dict[str, Any]:
    from dataclasses import asdict
    return {"format": FORMAT, "runs": [asdict(e) for e in entries]}


def read_export(path: Path) -> list[RunEntry]:
    """The runs of an export file, each marked imported; one HistoryError line for a file that is not one."""
    try:
        # the file the person named (a link they give is theirs to follow), a regular file read to the cap: a FIFO
        # or a device (/dev/zero) there is refused, not waited on or read without end
        data = load_json(received.read_text(path, MAX_FILE_BYTES, follow=True), str(path),
                         "give the file `stibium history export` wrote")
    except (received.Refused, JsonRefused) as e:
        raise HistoryError(str(e) if isinstance(e, JsonRefused) else f"{e}; give the file `stibium history export` "
                           f"wrote") from None
    except OSError as e:
        raise HistoryError(f"{path}: {e.strerror}; give the file `stibium history export` wrote") from None
    except (ValueError, RecursionError):
        raise HistoryError(f"{path}: not JSON; give the file `stibium history export` wrote") from None
    try:
        parsed = _File.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise HistoryError(f"{path}: not a stibium history export ({FORMAT}): {where}: {first['msg']}") from None
    return [RunEntry(**{**r.model_dump(exclude={"drive", "points"}),
                        "path": r.path if r.path.startswith(IMPORTED) else f"{IMPORTED}{r.host or ''}:{r.path}"},
                     drive=Drive(**r.drive.model_dump()),
                     points=tuple(PointEntry(**p.model_dump()) for p in r.points)) for r in parsed.runs]


def held_to_format(entries: list[RunEntry], where: str) -> list[RunEntry]:
    """The runs read from a database others write to (a team's), each held to the format's types and bounds; one
    HistoryError line for the first that is not."""
    from dataclasses import asdict
    for entry in entries:
        try:
            _Run.model_validate({**asdict(entry), "points": [asdict(p) for p in entry.points]})
        except ValidationError as e:
            first = e.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise HistoryError(f"{where}: the run {entry.run_key[:200]!r} in it is not as stibium writes a run "
                               f"({field}: {first['msg']}); this is not a history stibium wrote", 2) from None
    return entries
