"""What a run shows and reads as it goes: the progress bar, and the drive's temperature beside a sustained
test's chunks."""

from __future__ import annotations

from types import TracebackType

import math
import time

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from ..machine import sysinfo
from ..rundir.op import Op
from ..plan.expand import estimated_bytes
from ..units import format_rate, middle_cut, op_label


def bytes_of(ops: list[Op]) -> int:
    """What operations read and write, as the progress bar counts them (by time: on the assumed device)."""
    return round(sum(sum(estimated_bytes(o)) for o in ops))


class ProgressBar:
    """A rich progress bar on one line of the terminal: the current test and op (a long name cut in the middle),
    bytes done of the measurements, ETA, the last measurement's rate. A run that ends whole ends the bar at its
    total: measurements by time and rounds that stop at steady state move other bytes than foreseen."""

    LABEL_CHARS = 24

    def __init__(self, pending: list[Op], console: Console, enabled: bool):
        self.total = bytes_of(pending)
        bar_width = max(10, min(40, console.width - 62))        # the other columns take about 60 at most
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(bar_width=bar_width),
                                 DownloadColumn(binary_units=False), TimeRemainingColumn(),
                                 TextColumn("{task.fields[last]}"), console=console,
                                 disable=not (enabled and console.is_terminal), transient=False)
        self.task = self.progress.add_task("starting", total=max(self.total, 1), last="")

    def __enter__(self) -> "ProgressBar":
        self.progress.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if exc_type is None:
            done = self.progress.tasks[0].completed
            self.progress.update(self.task, total=max(done, 1), description="done")
        self.progress.__exit__(exc_type, exc, traceback)

    def skip(self, ops: list[Op]) -> None:
        """Operations that will not run (rounds after a steady window): out of the total."""
        self.total -= bytes_of(ops)
        self.progress.update(self.task, total=max(self.total, 1))

    def advance(self, op: Op, nbytes: int, seconds: float | None, last: str | None = None) -> None:
        """The bar moved by an operation's bytes; beside it its rate (`last`: its kind's words for it, such as a
        tree's files per second, else bytes per second)."""
        what = op_label(op.op, op.read_fraction)
        if last is None:
            last = format_rate(nbytes / seconds) if seconds and nbytes else ""
        self.progress.update(self.task, advance=nbytes, description=middle_cut(f"{op.test} {what}", self.LABEL_CHARS),
                             last=last)


class Temperature:
    """The drive's temperature, read at most once every READ_EVERY_S (smartctl asks the drive, which takes
    longer than a chunk can)."""

    READ_EVERY_S = 1.0

    def __init__(self, device: str | None):
        self.device = device
        self.value: float | None = None
        self.read_at = -math.inf

    def read(self) -> float | None:
        if not self.device:
            return None
        now = time.monotonic()
        if now - self.read_at >= self.READ_EVERY_S:
            self.value, _ = sysinfo.device_temperature_c(self.device)
            self.read_at = now
        return self.value
