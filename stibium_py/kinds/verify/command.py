"""`stibium verify TARGET`: a plan of one verify test, run by the driver as every plan is (its signals, resume,
history, report and sizes are every run's), and the exit status its verdict gives. The command names the drive
itself, so its test folder may go at a file system's root or beside the person's files (RunOptions.whole_drive,
allow_nonempty): it writes only in a folder of its own there, stibium-<run>, removed at the end unless kept."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...errors import PlanError, RunError, SizeError
from ...plan.model import MAX_OPS
from ...run.options import LoadedPlan
from ...units import format_size, parse_bytes

PLAN_NAME = "verify"
TEST_NAME = "fill"
# without --size: the most the run's margin leaves (plan/expand.room_in: 5 % of the fill and 64 MB stay free)
MOST_OF_FREE = 0.98
SOURCE = Path("stibium verify")          # run.json's plan source: the command, not a file
MAX_FILES = MAX_OPS // 2                 # a file is written and read back: two measurements
# a refusal of the plan's key, in the command's words: its option
OPTION_OF = {"bytes": "--size", "fraction_of_free": "--size", "max_bytes": "--size", "file_size": "--file-size"}


def size_given(option: str, value: str) -> int:
    """A size on the command line, read as a plan reads it (MB 1,000,000 bytes, MiB 1,048,576): the number on a
    card's label is what a person types for a fake-capacity check."""
    try:
        size = parse_bytes(value, "decimal")
    except SizeError as e:
        raise RunError(f"{option}: {e}", 2) from None
    if size <= 0:
        raise RunError(f"{option}: {value} is no size to fill; give a size above 0 (such as 1GB)", 2)
    return size


def files_checked(size_bytes: int | None, file_bytes: int) -> None:
    """A fill of more files than a test holds, refused in the options' words (the free space's fill is held to
    it when the run expands its plan: in_command_words)."""
    if size_bytes is not None and -(-size_bytes // file_bytes) > MAX_FILES:
        raise RunError(f"--size {format_size(size_bytes)} in files of {format_size(file_bytes)} makes "
                       f"{-(-size_bytes // file_bytes):,} files, and a verify holds at most {MAX_FILES:,}; give a "
                       f"larger --file-size", 2)


def in_command_words(e: PlanError) -> RunError:
    """A refusal of the plan `stibium verify` made, said with the option that gave the key it names."""
    found = re.match(rf"^{re.escape(str(SOURCE))}(?::\d+)?: tests\[0\] \({TEST_NAME}\)\.(\w+): (.*)$", str(e),
                     re.S)
    if found is None:
        return RunError(str(e), e.exit_code)
    return RunError(f"{OPTION_OF.get(found[1], found[1])}: {found[2]}", e.exit_code)


def verify_plan(size_bytes: int | None, file_bytes: int) -> LoadedPlan:
    """The plan `stibium verify` runs: one verify test of size_bytes (or the most of the free space), its files
    file_bytes each; its text is JSON (which YAML reads), kept in run.json as any plan's text is."""
    from ...plan import load_plan
    test: dict[str, Any] = {"name": TEST_NAME, "kind": "verify", "file_size": file_bytes}
    if size_bytes is None:
        test["fraction_of_free"] = MOST_OF_FREE
    else:
        test["bytes"] = size_bytes
    what = f"{size_bytes:,} bytes" if size_bytes is not None else "the free space less the run's margin"
    data = {"name": PLAN_NAME, "description": f"stibium verify: {what} written as signed blocks and read back",
            "tests": [test]}
    text = json.dumps(data, indent=2) + "\n"
    plan, text = load_plan(SOURCE, text=text)
    return LoadedPlan(SOURCE, plan, text)


def kept_everything(summary: dict[str, Any]) -> bool:
    """Whether every verify test of a run's summary read back every byte written, as written (its exit status:
    0, else 1)."""
    reads = [t for t in summary.get("tests", []) if t.get("kind") == "verify" and t.get("op") == "read"]
    return bool(reads) and all(t["written_bytes"] > 0 and t["ok_bytes"] == t["written_bytes"] and
                               not t["unknown_bytes"] and not t["rejected_files"] for t in reads)


def is_verify(plan_as_given: dict[str, Any] | None) -> bool:
    """Whether a run's plan (run.json's `plan.as_given`) is a verify's: its tests all of kind verify."""
    tests = (plan_as_given or {}).get("tests")
    return isinstance(tests, list) and bool(tests) and all(isinstance(t, dict) and t.get("kind") == "verify"
                                                           for t in tests)
