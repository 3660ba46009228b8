"""The signals that end a run as an interruption: rows kept, status interrupted, test files removed."""

from __future__ import annotations

import signal
from typing import Any


class Interrupted(Exception):
    """SIGTERM or SIGHUP arrived during a run (SIGINT arrives as KeyboardInterrupt); its name is the argument."""

    @property
    def signal_name(self) -> str:
        return str(self.args[0]) if self.args else "SIGTERM"


# SIGTERM (kill, a launcher ending the job) and SIGHUP (the terminal window closed, an ssh session dropped).
# SIGHUP is left alone where it is ignored when the run starts (nohup): that person asked for the run to outlive
# the terminal.
ENDING_SIGNALS = ("SIGTERM", "SIGHUP")


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted(signal.Signals(signum).name)


def catch_ending_signals() -> dict[int, Any]:
    """Each of ENDING_SIGNALS raises Interrupted from now on (SIGHUP only where it is not ignored); the handlers
    it had, to put back (restore)."""
    previous = {}
    for name in ENDING_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is None or (name == "SIGHUP" and signal.getsignal(signum) == signal.SIG_IGN):
            continue
        previous[signum] = signal.signal(signum, _raise_interrupted)
    return previous


def restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)
