"""What a new user meets in the terminal: the summary at 80 columns, one line per row; shell completion."""

from __future__ import annotations

import os
import subprocess

from rich.console import Console

from stibium_py.analysis.settings import Settings
from stibium_py.analysis.summary import summarize
from stibium_py.report.build import terminal_table
from stibium_py.store import read_measurements
from synthetic import make_run


def test_the_summary_is_one_line_per_row_at_80_columns(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=4.88e8, repeats=4, trials=5)
    rows, _ = read_measurements(run)
    summary = summarize(rows, Settings(resamples=300))
    console = Console(width=80, record=True, force_terminal=False)
    console.print(terminal_table(summary, console.width))
    lines = [ln for ln in console.export_text().splitlines() if ln.strip()]
    body = lines[lines.index(next(ln for ln in lines if set(ln.strip()) <= set("─ "))) + 1:]
    assert len(body) == len(summary.tests)          # one line per test and op
    assert all(len(ln) <= 80 for ln in lines)
    assert body[0].split()[:2] == ["files", "write"] and "MB/s ±" in body[0]
    # the op and the best point's granularity keep a column of their own: a long test name is what is cut
    from stibium_py.report.build import short_size
    pat = next(e for e in summary.tests if e.kind == "pattern")
    line = next(ln for ln in body if ln.split()[0] == "pat")
    assert line.split()[1:3] == ["read", short_size(pat.best.granularity_bytes)]


def test_a_long_test_name_is_cut_and_its_op_and_point_are_not(tmp_path):
    from stibium_py.table import Table
    run = make_run(tmp_path / "r", rate_bytes_per_s=4.88e8, repeats=4, trials=5)
    rows, _ = read_measurements(run)
    rows = Table.from_rows(m._replace(test="sequential-random-mix") if m.test == "pat" else m
                           for m in (rows.row(k) for k in range(len(rows))))
    summary = summarize(rows, Settings(resamples=300))
    console = Console(width=80, record=True, force_terminal=False)
    console.print(terminal_table(summary, console.width))
    line = next(ln for ln in console.export_text().splitlines() if ln.lstrip().startswith("sequentia…"))
    assert line.split()[1] == "read" and line.split()[2] in ("4K", "64K", "1M", "16M")
    assert len(line) <= 80


def test_wide_terminals_show_the_exact_intervals(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=4.88e8, repeats=4, trials=5)
    rows, _ = read_measurements(run)
    console = Console(width=160, record=True, force_terminal=False)
    console.print(terminal_table(summarize(rows, Settings(resamples=300)), console.width))
    assert "MB/s [" in console.export_text()


def test_bash_completion_of_commands_and_plans():
    env = dict(os.environ, _STIBIUM_COMPLETE="bash_source")
    script = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout
    assert "complete -o nosort -F _stibium_completion stibium" in script
    env = dict(os.environ, _STIBIUM_COMPLETE="bash_complete", COMP_WORDS="stibium se", COMP_CWORD="1")
    out = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout.split()
    assert out == ["plain,selftest"]
    env.update(COMP_WORDS="stibium run qu", COMP_CWORD="2")
    out = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout.split()
    assert out == ["plain,quartet", "plain,quick", "file,qu"]


def test_the_comparison_is_one_line_per_point_at_80_columns_in_a_readable_order(tmp_path, monkeypatch):
    from stibium_py.compare import compare_runs, load_run
    from stibium_py.report.compare_terminal import two_runs
    a = make_run(tmp_path / "a", rate_bytes_per_s=2e8, seed=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=3e8, seed=2)
    result = compare_runs(load_run(a), load_run(b), settings=Settings(resamples=300, seed=1))
    console = Console(width=80, record=True, force_terminal=False)
    for renderable in two_runs(result, console.width):
        console.print(renderable)
    result = result.to_json()
    lines = [ln for ln in console.export_text().splitlines() if ln.strip()]
    body = lines[lines.index(next(ln for ln in lines if set(ln.strip()) <= set("─ "))) + 1:]
    points = body[:len(result["rows"]) + len(result["summaries"])]
    assert all(len(ln) <= 80 for ln in lines)
    assert all(" 1+1 " in ln and ("[" in ln) for ln in points)            # one line each
    pattern_rows = [r for r in result["rows"] if r["kind"] != "files"]
    keys = [(r["op"], r["access"], r["granularity_bytes"], r["stride_bytes"]) for r in pattern_rows]
    assert keys == sorted(keys)                                         # not the run's shuffled order
