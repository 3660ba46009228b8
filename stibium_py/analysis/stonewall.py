"""A test with a stonewall (IOR's -D): each measurement of its bytes stopped starting requests that long after
it began, and with many clients every client then went on to the furthest client's count (wear-out). What the
reader must know: how many measurements (steps) it stopped, how far they had come by then, and how long the
wear-out added. Pure: a test's rows of one op in, one client's or many clients' aggregate (clients.aggregate:
a step's row holds the least any client had done by the stonewall)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..rundir.measurement import ALL_CLIENTS
from ..rundir.table import Table


@dataclass(frozen=True)
class Stonewall:
    """stopped of measured measurements (many clients: steps) had requests left at the stonewall; done_least,
    done_median: the share of its pass done by then (many clients: the least client's share of a step), the
    least and the median over the stopped ones; wearout_max_s: many clients, the longest a step went on after
    the last client's stonewall requests ended (the wear-out, with a write's sync)."""

    stonewall_s: float
    measured: int
    stopped: int
    done_least: float
    done_median: float
    wearout_max_s: float
    many: bool

    def to_json(self) -> dict[str, Any]:
        return {"stonewall_s": self.stonewall_s, "measured": self.measured, "stopped": self.stopped,
                "done_least": self.done_least, "done_median": self.done_median, "wearout_max_s": self.wearout_max_s,
                "many_clients": self.many}

    def line(self) -> str:
        """What the stonewall did, in words."""
        head = f"stonewall {self.stonewall_s:g} s"
        if not self.stopped:
            return f"{head}: no measurement reached it (each did its whole pass)"
        if not self.many:
            return (f"{head}: {self.stopped} of {self.measured} measurements stopped by it, after "
                    f"{self.done_median:.0%} of their requests (median; least {self.done_least:.0%}); their rates "
                    f"are of what they moved by then")
        return (f"{head}: {self.stopped} of {self.measured} steps stopped by it, the slowest client by then after "
                f"{self.done_median:.0%} of its requests (median; least {self.done_least:.0%}); every client then "
                f"went on to the furthest client's count (wear-out, up to {self.wearout_max_s:.3g} s more), and the "
                f"rates include it, as IOR's do")


def stonewall(rows: Table) -> Stonewall | None:
    """The stonewall of a test's rows (one op); None where it has none."""
    asked = rows.stonewall_s
    if not len(rows) or not np.isfinite(asked).any():
        return None
    rows = rows.take(np.isfinite(asked))
    cut = rows.stonewall_requests < rows.pass_requests
    done = (rows.stonewall_requests / rows.pass_requests)[cut] if cut.any() else np.ones(1)   # of the stopped ones
    wearout = np.where(rows.wearout_requests > 0, rows.seconds - rows.stonewall_seconds, 0.0)
    return Stonewall(stonewall_s=float(np.nanmax(asked)), measured=len(rows), stopped=int(cut.sum()),
                     done_least=float(np.min(done)), done_median=float(np.median(done)),
                     wearout_max_s=float(np.nanmax(wearout)), many=bool(np.any(rows.file == ALL_CLIENTS)))
