"""Every field of a real run.json, two levels deep (the facts, the plan, the operations' summary), replaced by
each of a few hostile values (an integer past 2^63, -1, 1.7e308, text, markup with an escape sequence, an empty
list and record, a list, true); then `stibium report` and `stibium history add` of it. Each must answer with a
report or one line: never an internal error, a traceback, or a wait of more than 20 s. It prints the count of
cases and each that did not.

    stibium run quick --target /tmp/qt --out /tmp/qr --no-history
    PYTHONPATH=.:tests python3 tests/bench/bench_hostile_records.py /tmp/qr/quick-*
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from stibium_py.cli import main

VALUES: list[Any] = [2 ** 63, -1, 1.7e308, "x", "[/x]\x1b]0;t\x07", [], {}, [1, 2], True]
SLOW_S = 20.0


def fields(node: Any, prefix: tuple[str, ...] = (), depth: int = 3) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    if isinstance(node, dict) and depth:
        for key, value in node.items():
            out.append(prefix + (key,))
            out.extend(fields(value, prefix + (key,), depth - 1))
    return out


def main_() -> None:
    source = Path(sys.argv[1])
    good = json.loads((source / "run.json").read_text())
    failures, cases = [], 0
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for where in fields(good):
            for value in VALUES:
                record = copy.deepcopy(good)
                node = record
                for key in where[:-1]:
                    node = node[key]
                node[where[-1]] = value
                run = work / f"case-{cases}"
                cases += 1
                shutil.copytree(source, run)
                (run / "run.json").write_text(json.dumps(record))
                for command in (["report", str(run)], ["history", "add", str(run), "--history", str(work / "h.db")]):
                    started = time.monotonic()
                    result = CliRunner().invoke(main, command)
                    took = time.monotonic() - started
                    said = (result.output.strip().splitlines() or [repr(result.exception)])[-1]
                    if "internal error" in result.output or "Traceback" in result.output or took > SLOW_S or (
                            result.exception is not None and not isinstance(result.exception, SystemExit)):
                        failures.append((".".join(where), repr(value)[:30], command[0], said[:160], round(took, 1)))
                shutil.rmtree(run)
    print(f"{cases} cases ({len(fields(good))} fields x {len(VALUES)} values), {len(failures)} not answered well")
    for failure in failures:
        print(failure)


if __name__ == "__main__":      # the pool's worker processes import this file again: only the parent runs it
    main_()
