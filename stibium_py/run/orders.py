"""What a kind's order of operations may ask of the driver (Steps), and the record a kind hands the driver
(Order): the function that carries out one test step by step (its writes, what comes between, its reads), with
whether the test's files may wait for the end of the run to be removed and whether it wears the drive. Each
kind's order lives in its folder (stibium_py/kinds/<name>/order.py), so a kind brings its own order without
being a method of the driver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from rich.console import Console

from ..rundir.measurement import Measurement
from ..rundir.op import Op
from ..plan import ExpandedTest
from ..rundir.record import RunRecord
from ..clients.sharing import Place
from .workdir import WorkDir


class Steps(Protocol):
    """What an order asks of the driver: operations.Operations, which driver.Driver holds and hands each order."""

    done: set[int]
    run: RunRecord
    work: WorkDir
    place: Place
    crew: Any
    console: Console
    rounds: dict[str, list[Measurement]]
    temperature: Any
    temperature_said: bool
    skip: Callable[[list[Op]], None]

    def step(self) -> None: ...
    def measure(self, op: Op) -> None: ...
    def measure_together(self, ops: list[Op], waited: Any = None) -> None: ...
    def quiet(self) -> Any: ...
    def ensure_file(self, op: Op, test: ExpandedTest) -> None: ...
    def evict(self, op: Op, test: ExpandedTest) -> None: ...
    def residency(self, op: Op, test: ExpandedTest) -> float | None: ...
    def measure_with(self, op: Op, args: list[str],
                     chunk_row: Callable[[dict[str, Any], float], Measurement] | None,
                     answer_row: Callable[[bool, dict[str, Any], float], Measurement | list[Measurement]],
                     written_by: int | None = None, what: str | None = None,
                     rate_said: Callable[[Measurement], str] | None = None) -> None: ...
    def helper_ok(self, args: list[str]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Order:
    """How the driver carries out one kind of test: its operations in order (the test's status back:
    complete, or waiting-for-reboot), whether its files may wait for the end of the run to be removed, whether
    it wears the drive enough to say so before the run, and whether its files stay when the run is cut."""

    run: Callable[[Any, ExpandedTest], str]
    files_wait_for_end: bool
    wears_drive: bool
    kept_when_cut: bool         # its files stay when a signal cuts the run, for resume to go on with (a verify's
                                # fill: hours of writing); every other test's files are removed then
