"""The top-level commands: for each, the module that defines it, its name there, and what it does in a line.
`stibium --help` lists them from here without loading any of them (cli.py), and each command's definition takes
its line from here, so that the two never differ."""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("running", "run", "Run a plan (a file or a built-in name) and report it."),
    "resume": ("running", "resume", "Finish an interrupted run (or series), or one after its reboot."),
    "verify": ("running", "verify",
               "Does this drive keep what it is given? Fill it with signed blocks and read them back."),
    "report": ("results", "report", "Analyse a run (or a series): its summary and report page."),
    "compare": ("results", "compare", "Compare runs: B / A with intervals and a verdict."),
    "import": ("results", "import_group", "Read fio's JSON results into a run directory."),
    "history": ("history", "history_group", "Every run remembered, by drive; steps across runs."),
    "plan": ("results", "plan_group", "Check or show a plan."),
    "plans": ("results", "plans", "List the built-in plans."),
    "info": ("results", "info", "The helper, its clock and engines; direct I/O on a target."),
    "selftest": ("results", "selftest", "Prove on this disk that uncached I/O is uncached."),
    "record": ("trace", "record", "Record what a program does to a folder's files, as a trace."),
    "trace": ("trace", "trace_group", "Read a trace that stibium record wrote."),
}


def short_help(name: str) -> str:
    return COMMANDS[name][2]
