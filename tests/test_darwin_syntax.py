"""The helper's Objective-C files compile as Apple's compiler sees them (clang -fsyntax-only -D__APPLE__
against GNUstep's Foundation headers and the Apple declarations GNUstep lacks: helper/darwin-check/check.sh).
Not a Mac build: it catches typos and type errors in code no machine here runs; the C files are built for
macOS against the real SDK in test_macos_build.py. A planted typo must make it fail, so the check can fail."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HELPER_SRC = Path(__file__).resolve().parent.parent / "helper"
CHECK = HELPER_SRC / "darwin-check" / "check.sh"


@pytest.fixture(scope="module")
def tools() -> None:
    for tool in ("clang", "gnustep-config", "gcc"):
        assert shutil.which(tool), f"{tool} not found: install.sh --test installs it"


def test_apple_only_code_compiles(tools):
    proc = subprocess.run(["bash", str(CHECK)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "the Objective-C files compile for Apple" in proc.stdout


@pytest.mark.parametrize("file,good,typo", [
    ("sb_foundation.m", "options:NSDataReadingUncached", "options:NSDataReadingUncahced"),
    ("main.m", '{"app", &sb_engine_foundation,', '{"app", &sb_engine_foundaton,'),
])
def test_a_planted_typo_in_apple_only_code_fails_the_check(tools, tmp_path, file, good, typo):
    copy = tmp_path / "helper"
    shutil.copytree(HELPER_SRC, copy, ignore=shutil.ignore_patterns("darwin-check"))
    text = (copy / file).read_text()
    assert good in text
    (copy / file).write_text(text.replace(good, typo))
    proc = subprocess.run(["bash", str(CHECK), str(copy)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert file in proc.stderr
