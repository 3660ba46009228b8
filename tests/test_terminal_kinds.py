"""Every kind's terminal output at 80, 120 and 160 columns (issue: every word true): a run of every kind at once
(files, patterns with requests in flight, a mix, steady rounds, a sustained write, a tree of two thread counts,
each with a long name) printed as `stibium run` prints it. Each line fits; the summary table and the disk-mark
table are one line a row; no rate, count, unit or interval is cut (only a name may be shortened, with …, from
both its ends); a many-runs comparison's table too."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from stibium_py.cli import main

LONG = "a-test-name-as-long-as-a-person-writes-it-for-a-studio"
PLAN = {"name": "every-kind", "tests": [
    {"name": f"{LONG}-files", "kind": "files", "sizes": ["64KiB", "1MiB"], "repeats": 3},
    {"name": f"{LONG}-pattern", "kind": "pattern", "op": ["read", "write"], "access": "random",
     "granularities": ["4KiB"], "queue_depth": [1, 4], "threads": [1, 2], "bytes": "512KiB", "span": "8MiB",
     "trials": 2},
    {"name": f"{LONG}-mix", "kind": "pattern", "read_fraction": 0.7, "access": "random", "granularities": ["4KiB"],
     "bytes": "256KiB", "span": "4MiB", "trials": 2},
    {"name": f"{LONG}-steady", "kind": "pattern", "op": "write", "access": "random", "granularities": ["16KiB"],
     "bytes": "256KiB", "span": "4MiB", "steady": {"window": 3, "max_rounds": 3}},
    {"name": f"{LONG}-sustained", "kind": "sustained", "bytes": "3MiB", "file_size": "1MiB",
     "granularity": "256KiB", "chunk": "1MiB"},
    {"name": f"{LONG}-tree", "kind": "tree", "files": 40, "file_size": "4KB", "dirs": 4, "threads": [1, 2],
     "trials": 2},
]}
UNITS = re.compile(r"\d(?:[\d,.]*)\s?(?:[kMGT]i?B/s|B/s|files/s|names/s|IOPS|[mun]?s|µs|%)")


@pytest.fixture
def every_kind(disk_dir) -> Path:
    """The run, made anew for each test (about a second and a half): disk_dir is a test's own folder."""
    plan = disk_dir / "every-kind.yaml"
    plan.write_text(json.dumps(PLAN, indent=1))
    done = CliRunner().invoke(main, ["run", str(plan), "--target", str(disk_dir / "t"), "--out", str(disk_dir / "r")])
    assert done.exit_code == 0, done.output
    (run,) = (disk_dir / "r").iterdir()
    return run


def _printed(run: Path, width: int) -> list[str]:
    from stibium_py.results.pipeline import summarize_run
    from stibium_py.report.build import terminal
    _, _, summary = summarize_run(run)
    console = Console(width=width, record=True, force_terminal=False)
    for r in terminal(summary, width):
        console.print(r)
    return console.export_text().splitlines()


def _table_rows(lines: list[str], title_words: str, n: int) -> list[str]:
    """The n lines under the rule of the table whose title holds those words: its rows, where none wrapped (a
    wrapped row's second line would start with spaces, and the last row would be missing)."""
    start = next(k for k, ln in enumerate(lines) if title_words in ln)
    rule = next(k for k in range(start, len(lines)) if set(lines[k].strip()) == {"─"})
    return lines[rule + 1:rule + 1 + n]


@pytest.mark.parametrize("width", [80, 120, 160])
def test_every_kind_s_lines_fit_and_its_tables_are_one_line_a_row(every_kind, width):
    from stibium_py.results.pipeline import summarize_run
    from stibium_py.kinds.pattern.in_flight import mark_rows
    lines = _printed(every_kind, width)
    assert all(len(ln) <= width for ln in lines), [ln for ln in lines if len(ln) > width]
    _, _, summary = summarize_run(every_kind)
    names = [e.name for e in summary.tests]
    body = _table_rows(lines, "stibium summary", len(names))
    for name, line in zip(names, body):
        first, rest = line.split(maxsplit=1)
        assert first == name or ("…" in first and name.startswith(first.split("…")[0])
                                 and name.endswith(first.split("…")[1])), (first, name)
        assert "…" not in rest, line                       # no value, unit or interval cut
        assert UNITS.search(rest), line
    mark = _table_rows(lines, "disk-mark table", len(mark_rows(summary)))
    assert all(re.match(r"\S", ln) and "B/s" in ln for ln in mark), mark
    assert not any("…" in ln.rsplit(":", 1)[-1] for ln in mark), mark   # a shortened test name at most
    assert all(": " in label for label, _ in mark_rows(summary))        # two tests share RND4K Q1T1: all named
    trees = [e for e in summary.tests if e.kind == "tree"]
    tree = _table_rows(lines, "tree phases", len(trees))
    for e, line in zip(trees, tree):
        assert re.match(r"\S", line) and f" {e.op} " in line, tree               # one line a phase
        assert len(re.findall(r"[\d,.]+ (?:files|names)/s", line)) == 2, line   # both thread counts, whole
    sustained = [e for e in summary.tests if e.kind == "sustained"]
    body = _table_rows(lines, "sustained: where", len(sustained))
    for e, line in zip(sustained, body):
        assert re.match(r"\S", line) and f" {e.op}s " in line, body
        assert re.search(r"\d [kMGT]?B/s", line) and ("steady throughout" in line or line.count("B/s") == 2), line
        assert "…" not in line.split(maxsplit=1)[1], line


@pytest.mark.parametrize("width", [80, 120, 160])
def test_many_runs_against_a_reference_are_one_line_a_point(every_kind, tmp_path, width):
    from stibium_py.analysis.settings import Settings
    from stibium_py.results.compare import compare_many, load_side
    from stibium_py.report.compare_terminal import many_runs
    result = compare_many([load_side(every_kind)] * 3, settings=Settings(resamples=200, seed=1))
    console = Console(width=width, record=True, force_terminal=False)
    for r in many_runs(result, width):
        console.print(r)
    lines = console.export_text().splitlines()
    assert all(len(ln) <= width for ln in lines), [ln for ln in lines if len(ln) > width]
    body = _table_rows(lines, "over the reference", len(result.rows))
    for row, ln in zip(result.rows, body):
        assert re.match(r"\S", ln), body
        if math.isfinite(row.point.ratio.estimate):
            assert re.search(r"\d\.\d{3} (±\d+%|\[\d|\(no interval\))", ln), ln
        else:       # a point without a rate (a files read whose time did not grow with its size, on a busy machine)
            assert re.search(r"\s-\s+inconclusive", ln), ln
