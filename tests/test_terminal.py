"""What a new user meets in the terminal: the summary at 80 columns, one line per row; shell completion."""

from __future__ import annotations

import os
import subprocess

import pytest
from rich.console import Console

from stibium_py.analysis.settings import Settings
from stibium_py.analysis.summary import summarize
from stibium_py.report.build import terminal_table
from stibium_py.rundir.csvread import read_measurements
from synthetic import make_run


LONG_NAME = "random-reads-of-the-whole-span-as-a-database-would-make-them-q1"      # 64 characters, the most


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_summary_is_one_line_per_row_with_every_value_whole(tmp_path, width):
    from stibium_py.report.build import headline
    from stibium_py.rundir.table import Table
    run = make_run(tmp_path / "r", rate_bytes_per_s=4.88e8, repeats=4, trials=5)
    rows, _ = read_measurements(run)
    rows = Table.from_rows(m._replace(test=LONG_NAME) if m.test == "pat" else m
                           for m in (rows.row(k) for k in range(len(rows))))
    summary = summarize(rows, Settings(resamples=300))
    console = Console(width=width, record=True, force_terminal=False)
    console.print(terminal_table(summary, console.width))
    lines = console.export_text().splitlines()
    assert all(len(ln) <= width for ln in lines)
    rule = next(k for k, ln in enumerate(lines) if set(ln.strip()) == {"─"})
    body = lines[rule + 1: rule + 1 + len(summary.tests)]
    for e, line in zip(summary.tests, body):                 # one line a row, in the order of the tests
        what, brief, _ = headline(e, compact=True)
        _, full, _ = headline(e)
        assert what in line and (brief in line or full in line), line      # the op, the point, the rate whole
        name = line.split()[0]
        assert name == e.name or ("…" in name and e.name.startswith(name.split("…")[0])
                                  and e.name.endswith(name.split("…")[1]))


def test_a_wide_terminal_shows_the_exact_intervals(tmp_path):
    run = make_run(tmp_path / "r", rate_bytes_per_s=4.88e8, repeats=4, trials=5)
    rows, _ = read_measurements(run)
    console = Console(width=160, record=True, force_terminal=False)
    console.print(terminal_table(summarize(rows, Settings(resamples=300)), console.width))
    assert "MB/s [" in console.export_text()


@pytest.mark.parametrize("width, note", [
    (200, "intervals: 95 %; one marked (N%) is the range of too few trials for 95 %: an N % interval"),
    (80, "intervals: 95 %; one marked * is the range of too few trials for 95 % (the report gives its confidence)")])
def test_the_legend_says_what_the_marks_the_table_shows_mean(tmp_path, width, note):
    """Two trials give the range of too few trials for 95 %: the legend names the mark the table shows, (N%) in
    full or * in brief, one at a time."""
    run = make_run(tmp_path / "r", rate_bytes_per_s=4.88e8, repeats=2, trials=2)
    rows, _ = read_measurements(run)
    console = Console(width=width, record=True, force_terminal=False)
    console.print(terminal_table(summarize(rows, Settings(resamples=300)), console.width))
    text = console.export_text()
    assert ("%)" in text) == (width == 200) and ("*" in text) == (width == 80)
    assert " ".join(note.split()) in " ".join(text.split())


def test_a_table_without_an_interval_says_nothing_of_intervals(tmp_path):
    """A verify's rows (the median chunk, done once): no "intervals: 95 %" over no interval."""
    from test_verify_kind import SMALL, _plan, _run
    from fake_helper import FakeHelpers
    from stibium_py.results.pipeline import load_run
    run = _run(tmp_path, _plan(SMALL), FakeHelpers())
    console = Console(width=120, record=True, force_terminal=False)
    console.print(terminal_table(summarize(load_run(run).measurements, Settings(resamples=300)), console.width))
    text = console.export_text()
    assert "fill" in text and "intervals" not in text


@pytest.mark.parametrize("width", [80, 120])
def test_plan_show_gives_every_operation_one_line_with_its_values_whole(width):
    """`plan show quick | less` at 80 columns wrapped cells over three lines and cut "sequential" to "sequen…":
    one line a row, the columns that may go left out and said under the table."""
    from click.testing import CliRunner
    from stibium_py import cli
    console = cli.console
    saved = console._width
    console._width = width
    try:
        out = CliRunner().invoke(cli.main, ["plan", "show", "quick"]).output
    finally:
        console._width = saved
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    rows = [line.split() for line in lines if line.strip()[:3].strip().isdigit()]
    assert len(rows) == 6 + 5 + 6 and all(r[1] in ("files", "random-4k", "sequential-1m") for r in rows)
    assert all(r[-1].isdigit() or r[-1].endswith(".bin") for r in rows)       # the trial (or the file) ends the line
    if width == 80:
        assert "left out at this width: file, stride (a wider terminal has them)" in out


def test_bash_completion_of_commands_and_plans():
    env = dict(os.environ, _STIBIUM_COMPLETE="bash_source")
    script = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout
    assert "complete -o nosort -F _stibium_completion stibium" in script
    env = dict(os.environ, _STIBIUM_COMPLETE="bash_complete", COMP_WORDS="stibium se", COMP_CWORD="1")
    out = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout.split()
    assert out == ["plain,selftest"]
    env.update(COMP_WORDS="stibium run qu", COMP_CWORD="2")
    out = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout.split()
    assert out == ["plain,quartet", "plain,quick"]          # names alone: a file item would empty bash's list
    env.update(COMP_WORDS="stibium run ./pl", COMP_CWORD="2")
    out = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout.split()
    assert out == ["file,./pl"]


def test_tab_in_bash_offers_the_built_in_plans(tmp_path):
    """The script `eval "$(_STIBIUM_COMPLETE=bash_source stibium)"` installs, called as bash calls it on TAB after
    `stibium run qu`: its list (COMPREPLY) holds the plans' names."""
    env = dict(os.environ, _STIBIUM_COMPLETE="bash_source")
    script = subprocess.run(["stibium"], env=env, capture_output=True, text=True).stdout
    (tmp_path / "complete.sh").write_text(script)
    said = subprocess.run(["bash", "-c", f"source {tmp_path / 'complete.sh'}; COMP_WORDS=(stibium run qu); "
                           "COMP_CWORD=2; _stibium_completion stibium; printf '%s\\n' \"${COMPREPLY[@]}\""],
                          capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                               if not k.startswith("_STIBIUM")})
    assert said.stdout.split() == ["quartet", "quick"], said.stderr


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_comparison_is_one_line_per_point_in_a_readable_order(tmp_path, width):
    from stibium_py.results.compare import compare_runs, load_side
    from stibium_py.report.compare_terminal import two_runs
    a = make_run(tmp_path / "a", rate_bytes_per_s=2e8, seed=1)
    b = make_run(tmp_path / "b", rate_bytes_per_s=3e8, seed=2)
    result = compare_runs(load_side(a), load_side(b), settings=Settings(resamples=300, seed=1))
    console = Console(width=width, record=True, force_terminal=False)
    for renderable in two_runs(result, console.width):
        console.print(renderable)
    ratios = [r["ratio"] for r in result.to_json()["rows"]] + [g["ratio"] for g in result.to_json()["summaries"]]
    result = result.to_json()
    lines = [ln for ln in console.export_text().splitlines() if ln.strip()]
    body = lines[lines.index(next(ln for ln in lines if set(ln.strip()) <= set("─ "))) + 1:]
    points = body[:len(result["rows"]) + len(result["summaries"])]
    assert all(len(ln) <= width for ln in lines)
    assert all("[" in ln and "]" in ln and "…" not in ln for ln in points)            # one line each, whole
    assert sorted(f"{r['estimate']:.3f}" for r in ratios) == sorted(
        next(w for w in ln.split() if w[0].isdigit() and "." in w and "[" not in w) for ln in points)
    pattern_rows = [r for r in result["rows"] if r["kind"] != "files"]
    keys = [(r["op"], r["access"], r["granularity_bytes"], r["stride_bytes"]) for r in pattern_rows]
    assert keys == sorted(keys)                                         # not the run's shuffled order


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_disk_mark_table_is_one_line_a_row_with_every_value_whole(tmp_path, width):
    from pathlib import Path
    from click.testing import CliRunner
    from stibium_py.cli import main
    from stibium_py.results.pipeline import summarize_run
    from stibium_py.kinds.pattern.in_flight import mark_rows, mark_table_terminal
    fixtures = Path(__file__).parent / "fixtures" / "fio"
    done = CliRunner().invoke(main, ["import", "fio", str(fixtures / "shapes.json"), str(fixtures / "shapes-2.json"),
                                     "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    (run,) = tmp_path.iterdir()
    _, _, summary = summarize_run(run)
    console = Console(width=width, record=True, force_terminal=False)
    console.print(mark_table_terminal(summary, width))
    lines = console.export_text().splitlines()
    assert all(len(ln) <= width for ln in lines)
    rule = next(k for k, ln in enumerate(lines) if set(ln.strip()) == {"─"})
    body = lines[rule + 1:rule + 1 + len(mark_rows(summary))]
    assert len(body) == len(mark_rows(summary)) and not any("…" in ln for ln in body)
    assert all(("B/s" in ln) for ln in body)
