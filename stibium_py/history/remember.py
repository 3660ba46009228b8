"""The history's part in a run: when a run ends (complete or interrupted), it is read back from its run
directory and recorded. Never a reason for the run to fail: what goes wrong is one line saying the history
was not written and why; the run directory has every measurement either way."""

from __future__ import annotations

from pathlib import Path

from ..errors import HistoryError, RecordError, RunDirError


def remember(run_dir: Path, database: Path) -> str:
    """Record the run in the history; the line that says where, or why not."""
    from .db import History
    from .entry import read_entry
    try:
        entry = read_entry(run_dir)
        if entry is None:
            return "history: not written (the run did not end complete or interrupted)"
        with History(database) as history:
            history.add(entry)
        cut = " (marked interrupted)" if entry.status == "interrupted" else ""
        return f"history: recorded{cut} in {database} ({entry.drive.label})"
    except (HistoryError, RunDirError, RecordError) as e:
        return f"history: not written: {e}"
    except OSError as e:
        return f"history: not written: {e.filename or database}: {e.strerror or e}"
    except KeyboardInterrupt:
        return f"history: not written (interrupted); `stibium history add {run_dir}` records the run later"
