"""A reshape changes no number: `stibium report --json` of run directories of every kind (a quick run, a run of
every kind, the fixture kept from 0741864, the verifies an earlier stibium wrote) gives the summaries kept in
tests/fixtures/summaries, made by the code before the kinds' logic moved into their folders and the top level into
rooms (#67). Every string and count equal; a number equal within a part in 10^9 (the last digits of a float
may differ between numpy builds, the numbers may not)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from stibium_py.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = ("run-quick", "run-every-kind", "run-0741864", "verify-earlier-lies", "verify-earlier-interrupted")


def _same(a, b, where: str = "") -> list[str]:
    """Where two JSON values differ (a number by more than a part in 10^9)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return [f"{where}: keys {list(a)} != {list(b)}"]
        return [d for k in a for d in _same(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _same(x, y, f"{where}[{i}]")]
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300) else [f"{where}: {a!r} != {b!r}"]
    return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} != {b!r}"]


@pytest.mark.parametrize("name", RUNS)
def test_a_run_s_summary_is_the_one_kept(name, tmp_path):
    run = tmp_path / name
    shutil.copytree(FIXTURES / name, run)
    done = CliRunner().invoke(main, ["report", str(run), "--json"])
    assert done.exit_code == 0, done.output
    kept = json.loads((FIXTURES / "summaries" / f"{name}.json").read_text())
    assert _same(kept, json.loads(done.output)) == []


def test_the_comparison_finds_a_number_moved_and_a_word_changed():
    assert _same({"a": [1.0, "x"]}, {"a": [1.0 + 1e-12, "x"]}) == []
    assert _same({"a": [1.0, "x"]}, {"a": [1.0001, "y"]}) == [".a[0]: 1.0 != 1.0001", ".a[1]: 'x' != 'y'"]
