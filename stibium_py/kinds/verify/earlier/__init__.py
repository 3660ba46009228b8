"""A verify's run directory as an earlier stibium wrote it (verify.json and chunks.csv, before a verify was a plan's
test run by the driver): read and reported, never carried on (docs/run-directory.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

STATE = "verify.json"


def holds(run_dir: Path) -> bool:
    """A run directory of an earlier `stibium verify`: its verify.json, and no run.json."""
    return (run_dir / STATE).is_file() and not (run_dir / "run.json").exists()


def summary_of(run_dir: Path) -> dict[str, Any]:
    """Its summary's JSON form, from its record."""
    from .record import read_chunks, read_state
    from .verdict import to_json, verdict_of
    state = read_state(run_dir)
    return to_json(verdict_of(state, read_chunks(run_dir, state)))


def report(run_dir: Path) -> list[str]:
    """Its summary.json and report.html written from its record; the lines the terminal says, the verdict first."""
    from ....rundir.store import write_json_atomic, write_text_atomic
    from .record import read_chunks, read_state
    from .verdict import to_json, verdict_of
    from .view import lines, render
    state = read_state(run_dir)
    verdict = verdict_of(state, read_chunks(run_dir, state))
    write_json_atomic(run_dir / "summary.json", to_json(verdict))
    write_text_atomic(run_dir / "report.html", render(verdict))
    said = lines(verdict)
    if state.status != "complete":
        said.insert(1, f"this verify is {state.status}" + (f" ({state.stopped_by})" if state.stopped_by else "") +
                    "; an earlier stibium's verify is not carried on: start a new one")
    return said + [f"report: {run_dir / 'report.html'}"]
