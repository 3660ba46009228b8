"""The history's part in a run: when a run ends (complete or interrupted), it is read back from its run
directory and recorded in the machine's history, and sent to the team's where the person named one. Never a
reason for the run to fail: what goes wrong is one line saying the history was not written (or the run not
sent) and why; the run directory has every measurement either way, and a run the team's database did not take
is in the machine's file for `stibium history push` to send."""

from __future__ import annotations

from pathlib import Path

from ..errors import HistoryError, RecordError, RunDirError
from .where import Where


def remember(run_dir: Path, where: Where) -> list[str]:
    """Record the run in the history (and the team's); the lines that say where, or why not. A line that says
    something was not written begins "history: not"."""
    from .db import History, open_at
    from .entry import read_entry
    database = where.local
    try:
        entry = read_entry(run_dir)
        if entry is None:
            return ["history: not written (the run did not end complete or interrupted)"]
        with History(database) as history:
            history.add(entry)
        cut = " (marked interrupted)" if entry.status == "interrupted" else ""
        lines = [f"history: recorded{cut} in {database} ({entry.drive.label})"]
    except (HistoryError, RunDirError, RecordError) as e:
        return [f"history: not written: {e}"]
    except OSError as e:
        return [f"history: not written: {e.filename or database}: {e.strerror or e}"]
    except KeyboardInterrupt:
        return [f"history: not written (interrupted); `stibium history add {run_dir}` records the run later"]
    if where.team is None:
        return lines
    try:
        with open_at(where.team) as team:
            team.add(entry)
        lines.append(f"history: sent to {where.team.shown}")
    except HistoryError as e:
        lines.append(f"history: not sent: {e}; the run is kept in {database}, and `stibium history push` sends it")
    except KeyboardInterrupt:
        lines.append(f"history: not sent (interrupted); the run is kept in {database}, and `stibium history push` "
                     f"sends it")
    return lines

