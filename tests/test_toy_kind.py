"""A kind is one folder: tests/toy_kind, registered here and nowhere else, is planned, shown, run (the fake
helper), summarised, warned about, reported and compared by the same layers as the built-in kinds, and no
file of the package names it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from stibium_py import registry
from stibium_py.report.publish import CompareRequest, publish_compare, publish_run
from stibium_py.run import LoadedPlan, RunOptions, start_run
from stibium_py.rundir.csvread import read_measurements

from fake_helper import FakeHelpers
from toy_kind import SPEC

PLAN = """name: toy
tests:
  - name: t
    kind: toy
    size: 64KiB
    repeats: 2
"""


@pytest.fixture
def toy():
    registry.register(SPEC)
    try:
        yield SPEC
    finally:
        registry.unregister("toy")


def _run(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(PLAN)
    options = RunOptions(target=tmp_path / f"t-{name}", out_dir=tmp_path / f"r-{name}", progress=False)
    finished = start_run(LoadedPlan.read(path), options, Console(quiet=True), FakeHelpers())
    assert finished.status == "complete"
    return finished.path


def test_a_kind_in_one_folder_runs_reports_and_compares(tmp_path, toy, capsys):
    from stibium_py.cli import main
    (tmp_path / "show.yaml").write_text(PLAN)
    with pytest.raises(SystemExit) as shown:
        main(["plan", "show", str(tmp_path / "show.yaml")], standalone_mode=True)
    assert shown.value.code == 0
    assert "  t: 2 toy files of 64 KiB, written then read." in capsys.readouterr().out

    a, b = _run(tmp_path, "a"), _run(tmp_path, "b")
    rows, damaged = read_measurements(a)
    assert damaged == 0 and set(rows.kind.tolist()) == {"toy"} and rows.op.tolist() == ["write"] * 2 + ["read"] * 2

    summary = publish_run(a, Console(quiet=True)).to_json()
    assert [(t["name"], t["op"], t["kind"], t["n"]) for t in summary["tests"]] == [("t", "write", "toy", 2),
                                                                                   ("t", "read", "toy", 2)]
    assert {"level": "info", "test": "t (read)", "message": "2 files: the median of fewer than 3 has no interval",
            "what_to_do": "write at least 3 (repeats: 3)"} in summary["warnings"]
    page = (a / "report.html").read_text()
    assert "<h2>Toy tests</h2>" in page
    assert json.loads((a / "summary.json").read_text())["tests"][1]["rate_bytes_per_s"]["estimate"] > 0

    out = tmp_path / "compare.html"
    result = publish_compare(CompareRequest((a, b), out_file=out), Console(quiet=True))
    assert [(p.key.test, p.key.op, p.key.kind) for p in result.points] == [("t", "read", "toy"), ("t", "write", "toy")] \
        or [(p.key.test, p.key.op, p.key.kind) for p in result.points] == [("t", "write", "toy"), ("t", "read", "toy")]
    assert all(p.ratio.method.startswith("ratio of median throughputs") for p in result.points)
    assert "t read: toy files, both runs" in out.read_text()


def test_no_file_of_the_package_names_the_toy_kind():
    package = Path(registry.__file__).parent
    naming = [str(p.relative_to(package)) for p in package.rglob("*.py") if re.search(r"\btoy\b", p.read_text())]
    assert naming == []


def test_without_registration_the_plan_is_refused_with_the_kinds_there_are(tmp_path):
    from stibium_py.plan.load import load_plan
    from stibium_py.errors import PlanError
    path = tmp_path / "toy.yaml"
    path.write_text(PLAN)
    with pytest.raises(PlanError, match=r"kind must be 'files', 'pattern', 'replay', 'stream', 'sustained', 'tree' or 'verify', not 'toy'"):
        load_plan(path)
