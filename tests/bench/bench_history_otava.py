"""The history's step finding held against an independent method, for docs/history.md: the simulated histories of
tests/history_simulation.py (30 runs with the noise of this machine's disk; no step, and steps of 5, 10 and 20 %
slower in the middle half) written into a team's PostgreSQL database by stibium's own writer, then read from that
one table by both: stibium (TeamHistory, then analysis/history.py's E-divisive means confirmed by the intervals)
and Apache Otava (PyPI: its PostgresImporter runs a query on the same tables, its E-divisive means with a
Student t-test, default options: p <= 0.001, a window of 50). Each method's rate of steps found within one run of
their place and of series with any step claimed, and how often both found the step within one run of each
other. The server is the bench's own (tests/pg_server.py, on loopback). Otava pins numpy and scipy versions of its
own, so it runs in a virtual environment of its own (made under /var/tmp at the first run, or --otava-python).

    PYTHONPATH=tests:. python3 tests/bench/bench_history_otava.py [--series 300]
"""

from __future__ import annotations

import argparse
import json
import math
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from history_simulation import RUNS, _series, noise
from pg_server import PgServer

VENV = Path("/var/tmp/stibium-otava-venv")

OTAVA = r"""
import json, sys
from datetime import datetime
from otava.postgres import Postgres, PostgresConfig
from otava.importer import PostgresImporter
from otava.test_config import PostgresMetric, PostgresTestConfig
from otava.series import AnalysisOptions
from otava.data_selector import DataSelector
port, database, drives = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
importer = PostgresImporter(Postgres(PostgresConfig("127.0.0.1", port, "stibium", "", database)))
found = {}
for drive in drives:
    test = PostgresTestConfig(
        name=drive, time_column="time", attributes=["run"],
        metrics=[PostgresMetric("rate", 1, 1.0, "rate")],
        query="SELECT to_timestamp(r.started_utc, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS time, r.name AS run, "
              "p.estimate AS rate FROM runs r JOIN points p ON p.run_id = r.id JOIN drives d ON d.id = r.drive_id "
              "WHERE d.key = %{BRANCH} ORDER BY r.started_utc")
    selector = DataSelector()
    selector.branch = drive        # Otava's one parameter of a query (its query without one fails with pg8000 1.31)
    series = importer.fetch_data(test, selector)
    analyzed = series.analyze(AnalysisOptions())
    found[drive] = [[int(c.index), float(c.forward_change_percent())] for c in analyzed.change_points.get("rate", [])]
print(json.dumps(found))
"""


def otava_python(given: str | None) -> str:
    if given:
        return given
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "apache-otava==0.8.0"], check=True)
    return str(python)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--otava-python")
    args = ap.parse_args()
    from stibium_py.analysis.history import find_steps
    from stibium_py.history.drives import drive_history
    from stibium_py.history.entry import Drive, PointEntry, RunEntry
    from stibium_py.history.team import TeamHistory
    from stibium_py.history.where import TeamUrl

    python = otava_python(args.otava_python)
    port = free_port()
    server = PgServer(listen="127.0.0.1", port=port)
    try:
        url = server.new_database()
        from urllib.parse import urlsplit
        database = urlsplit(url).path.lstrip("/")
        deviations, own = noise()
        rng = np.random.default_rng(args.seed)
        truth: dict[str, tuple[float, int]] = {}
        started = time.monotonic()
        with TeamHistory(TeamUrl(url)) as team:
            for step in (0.0, -0.05, -0.10, -0.20):
                for k in range(args.series):
                    at = int(rng.integers(RUNS // 4, 3 * RUNS // 4 + 1))
                    key = f"sim{int(-step * 100):02d}-{k}"
                    truth[key] = (step, at)
                    drive = Drive(key, key)
                    runs = []
                    for e in _series(rng, step, at, RUNS, deviations, own):
                        rate = math.exp(e.log_rate)
                        half = 1.96 * e.own_se
                        point = PointEntry("p", {}, "bytes", rate * 1e8, rate * 1e8 * math.exp(-half),
                                           rate * 1e8 * math.exp(half), 8)
                        runs.append(RunEntry(f"{key}/{e.started_utc}", f"/sim/{key}/{e.name}", e.name, None,
                                             e.started_utc, e.started_utc, "complete", None, "sim", None, "sim",
                                             None, None, None, None, None, None, 1, drive, (point,)))
                    team.add_many(runs)
        print(f"written: {len(truth)} series of {RUNS} runs in {time.monotonic() - started:.1f} s")
        ours: dict[str, list[tuple[int, float]]] = {}
        with TeamHistory(TeamUrl(url)) as team:
            for i, key in enumerate(truth):
                entries = drive_history(team.runs(key)).points[0].entries
                ours[key] = [(s.at, s.ratio.estimate) for s in find_steps(entries, seed=i)]
        started = time.monotonic()
        theirs_raw = subprocess.run([python, "-c", OTAVA, str(port), database, json.dumps(list(truth))],
                                    capture_output=True, text=True)
        if theirs_raw.returncode != 0:
            raise SystemExit(f"Otava failed: {theirs_raw.stderr[-3000:]}")
        print(f"Otava: {time.monotonic() - started:.1f} s")
        theirs = {k: [(int(i), 1 + pct / 100) for i, pct in v] for k, v in json.loads(theirs_raw.stdout).items()}
        print("| step | stibium: found within one run | stibium: any claimed | Otava: found within one run | "
              "Otava: any claimed | both found it, within one run of each other |")
        print("|---|---|---|---|---|---|")
        for step in (0.0, -0.05, -0.10, -0.20):
            keys = [k for k, (s, _) in truth.items() if s == step]

            def near(found: list[tuple[int, float]], at: int) -> list[int]:
                return [i for i, ratio in found if abs(i - at) <= 1 and (ratio < 1) == (step < 0)]
            a = [bool(near(ours[k], truth[k][1])) for k in keys]
            b = [bool(near(theirs[k], truth[k][1])) for k in keys]
            both = [bool(near(ours[k], truth[k][1])) and bool(near(theirs[k], truth[k][1])) and
                    abs(near(ours[k], truth[k][1])[0] - near(theirs[k], truth[k][1])[0]) <= 1 for k in keys]
            n = len(keys)
            cells = ["-" if step == 0 else f"{100 * sum(a) / n:.1f} %", f"{100 * sum(bool(ours[k]) for k in keys) / n:.1f} %",
                     "-" if step == 0 else f"{100 * sum(b) / n:.1f} %",
                     f"{100 * sum(bool(theirs[k]) for k in keys) / n:.1f} %",
                     "-" if step == 0 else f"{100 * sum(both) / n:.1f} %"]
            print(f"| {int(-step * 100)} % | " + " | ".join(cells) + " |")
    finally:
        server.close()


if __name__ == "__main__":
    main()
