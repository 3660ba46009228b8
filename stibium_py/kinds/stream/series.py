"""A series' stream tests: per test and op, each run's most streams without a drop in every trial (with every
trial's own), the most across the runs (every trial of every run), and whether the runs differ: one run carried
more in every trial than another in any, which is the same claim a comparison of two sides makes (compare.py).
A count is a whole number found by trials, so there is no interval to widen by the runs: every trial is shown."""

from __future__ import annotations

from typing import Any

from ...analysis.settings import Settings
from ...rundir.table import Table
from .analysis import results_of_run
from .words import described


def _differ(runs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Two runs whose trials do not overlap (the one whose fewest is the largest, the one whose most is the
    smallest), or None: every run's range of trials meets every other's."""
    high = max(runs, key=lambda r: min(r["most_streams_by_trial"]))
    low = min(runs, key=lambda r: max(r["most_streams_by_trial"]))
    return (high, low) if min(high["most_streams_by_trial"]) > max(low["most_streams_by_trial"]) else None


def across_runs(runs: list[tuple[str, Table]], s: Settings) -> list[dict[str, Any]]:
    """Per test and op, each run's most streams on the store (the clients times each one's count) and every
    trial's, the most across the runs, and warnings: where the runs differ, and each run left out with why (no whole
    trial, or another frame or rate under the test's name).
    The settings are not needed: a count has no interval."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for run, rows in runs:
        for (name, op), e in results_of_run(rows).items():
            entry = found.setdefault((name, op), {"test": name, "op": op, "action": "capture" if op == "write"
                                                  else "playback", "format": "", "frame_bytes": 0, "fps": 0.0,
                                                  "runs": [], "without_whole_trial": [], "other_frame": []})
            if e is None:
                entry["without_whole_trial"].append(run)
                continue
            if entry["runs"] and (entry["frame_bytes"], entry["fps"]) != (e.frame_bytes, e.fps):
                # a run of another plan under the same name: not the same stream, left out and said
                entry["other_frame"].append(f"{run} ({described(e)})")
                continue
            by_trial = [m * e.clients for m in e.most_by_trial]
            entry.update(format=described(e), frame_bytes=e.frame_bytes, fps=e.fps)
            entry["runs"].append({"run": run, "clients": e.clients, "most_streams": min(by_trial),
                                  "most_streams_by_trial": by_trial})
    out = []
    for entry in found.values():
        if not entry["runs"]:
            continue
        entry["most_streams"] = min(r["most_streams"] for r in entry["runs"])
        apart = _differ(entry["runs"])
        entry["runs_differ"] = apart is not None
        entry["warnings"] = [] if apart is None else [{
            "level": "warning", "test": f"{entry['test']} {entry['action']}",
            "message": f"runs differ: {apart[0]['run']} carried {min(apart[0]['most_streams_by_trial'])} streams or "
                       f"more in every trial, {apart[1]['run']} at most {max(apart[1]['most_streams_by_trial'])}",
            "what_to_do": "quote the fewest streams across runs; look for what changed between them (caches, "
                          "background work, temperature)"}]
        left_out = [(entry["without_whole_trial"], "no trial of it ran whole"),
                    (entry["other_frame"], f"it ran another frame or rate than the others ({entry['format']})")]
        entry["warnings"] += [{
            "level": "warning", "test": f"{entry['test']} {entry['action']}",
            "message": f"left out {', '.join(runs)}: {why}", "what_to_do": "read that run's report for what it did"}
            for runs, why in left_out if runs]
        out.append(entry)
    return out
