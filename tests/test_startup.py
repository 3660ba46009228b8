"""What the command line loads before it does anything: `stibium --version`, `--help`, `plans` and a shell
completion import no statistics, plotting, plan model or table library (robust, unlike a timing; the times
are measured by tests/bench/bench_user_waits.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# the libraries a command must load only when it uses them
HEAVY = ("numpy", "scipy", "statsmodels", "plotly", "pydantic", "pyarrow", "ruptures", "ruamel")

PROBE = r"""
import json, os, sys
from stibium_py.cli import main
try:
    main(sys.argv[1:], prog_name="stibium")
except SystemExit:
    pass
print("\nMODULES " + json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _loaded(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    import os
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("MODULES "))
    if env:                  # the completion answered
        assert "plain,quick" in proc.stdout.splitlines()
    return set(json.loads(line[len("MODULES "):]))


@pytest.mark.parametrize("args,env", [
    (["--version"], None),
    (["--help"], None),
    (["run", "--help"], None),
    (["plans"], None),
    ([], {"_STIBIUM_COMPLETE": "bash_complete", "COMP_WORDS": "stibium run qu", "COMP_CWORD": "2"}),
], ids=["version", "help", "run-help", "plans", "completion"])
def test_the_command_line_starts_without_the_heavy_libraries(args, env):
    loaded = _loaded(args, env)
    assert "stibium_py" in loaded and "click" in loaded
    assert sorted(loaded & set(HEAVY)) == []


@pytest.mark.parametrize("args,env", [
    (["--version"], None),
    (["--help"], None),
    ([], {"_STIBIUM_COMPLETE": "bash_complete", "COMP_WORDS": "stibium run qu", "COMP_CWORD": "2"}),
], ids=["version", "help", "completion"])
def test_the_version_the_help_and_a_completion_load_no_terminal_library_and_no_other_command(args, env):
    """What a bare interpreter and click cost, and stibium's few light modules: rich is imported at the console's
    first use, and each command's module when it is run or completed (cli._Commands, commands/names.py)."""
    from stibium_py.commands.names import COMMANDS
    probe = PROBE.replace('print("\\nMODULES "', 'print("\\nMODULES "')
    proc = subprocess.run([sys.executable, "-c", probe.replace(
        "{m.split(\".\")[0] for m in sys.modules}", "set(sys.modules)"), *args], capture_output=True, text=True,
        env={**__import__("os").environ, **(env or {})})
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("MODULES "))
    loaded = set(json.loads(line[len("MODULES "):]))
    assert "rich" not in loaded
    commands = {f"stibium_py.commands.{module}" for module, _, _ in COMMANDS.values()}
    assert loaded & commands == ({"stibium_py.commands.running"} if env else set())
    # nor what only a run or an unknown plan's hint asks for
    assert loaded & {"stibium_py.registry", "dataclasses", "difflib"} == set()


def test_a_command_that_analyses_loads_them_when_it_runs():
    # the probe itself can see them: plan show needs the plan model
    assert {"pydantic", "numpy"} <= _loaded(["plan", "show", "quick"])


def test_the_listed_descriptions_are_the_plans_own():
    from stibium_py.plan import builtin_plans, load_plan
    from stibium_py.plan.find import plan_description
    plans = builtin_plans()
    assert plans
    for name, path in plans.items():
        assert plan_description(path) == load_plan(path)[0].description, name


def test_the_report_of_an_ordinary_run_loads_no_plotly_objects(tmp_path):
    # the statistics are the named libraries' (scipy, statsmodels, ruptures: analysis/stats), imported by the
    # commands that analyse; the figures are plain records in plotly.js's schema (report/plot.py), without
    # plotly's graph objects and their validators
    import os
    from synthetic import make_run
    run = make_run(tmp_path / "r", rate_bytes_per_s=2e8)
    probe = ("import sys; from stibium_py.report.publish import publish_report; from pathlib import Path; "
             f"publish_report(Path({str(run)!r}), None, False); "
             "print(sorted(m for m in sys.modules if m.startswith(('plotly.graph_objs', "
             "'_plotly_utils.basevalidators'))))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    assert (run / "report.html").stat().st_size > 0


EXIT_PROBE = r"""
import atexit, gc, sys
from stibium_py.cli import command_line
atexit.register(lambda: print(f"at exit: {gc.get_freeze_count() > 0}"))
sys.argv = ["stibium", *sys.argv[1:]]
command_line()
"""


@pytest.mark.parametrize("args,status,out,err", [
    (["plans"], 0, "quick", ""),
    (["plan", "show", "no-such-plan"], 2, "", "stibium: "),
])
def test_the_program_exits_with_the_commands_status_its_output_and_its_exit_handlers(args, status, out, err):
    """The `stibium` program (cli.command_line) exits as the command says, with all it printed, and runs
    the exit handlers (an MPI launcher's finalize is one) after it took the objects out of the last
    collection (gc.freeze: the exit's 0.1 s after a report)."""
    proc = subprocess.run([sys.executable, "-c", EXIT_PROBE, *args], capture_output=True, text=True)
    assert proc.returncode == status, proc.stderr
    assert out in proc.stdout and proc.stderr.startswith(err)
    assert proc.stdout.splitlines()[-1] == "at exit: True"
