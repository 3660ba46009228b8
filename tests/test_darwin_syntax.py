"""The helper's Apple-only code compiles (clang -fsyntax-only -D__APPLE__ against declarations written
from Apple's open-source headers: helper/darwin-check). Not a Mac build: it catches typos and type
errors in code no machine here runs. A planted typo must make it fail, so the check can fail."""

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
    assert "the Apple-only code compiles" in proc.stdout


@pytest.mark.parametrize("file,good,typo", [
    ("sb_platform_darwin.c", "vm_kernel_page_size", "vm_kernel_pagesize"),
    ("sb_platform_darwin.c", "fcntl(fd, F_NOCACHE, 1)", "fcntl(fd, F_NOCAHCE, 1)"),
    ("sb_clock.c", "mach_timebase_info(&sb_timebase)", "mach_timebase_info(sb_timebase)"),
    ("sb_foundation.m", "options:NSDataReadingUncached", "options:NSDataReadingUncahced"),
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
