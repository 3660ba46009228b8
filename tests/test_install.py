"""install.sh finds a Python 3.10 or later even when an older python3 comes first on PATH (a pyenv
shim or a wrapper script), and otherwise stops with one line that says what to install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

INSTALL = Path(__file__).resolve().parent.parent / "install.sh"


def _fake_python(folder: Path) -> None:
    folder.mkdir()
    script = folder / "python3"
    script.write_text('#!/bin/sh\necho "3.9.6 old"\n')     # what a 3.9 answers to install.sh's question
    script.chmod(0o755)


def _tools(folder: Path) -> Path:
    """A PATH folder with the few commands install.sh needs to get as far as its Python, and no Python."""
    folder.mkdir()
    for tool in ("dirname", "uname"):
        os.symlink(shutil.which(tool), folder / tool)
    return folder


def _find(path: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": path, "HOME": str(tmp_path / "home")}
    return subprocess.run(["/bin/bash", str(INSTALL), "--find-python"], capture_output=True, text=True, env=env)


def test_an_older_python3_first_on_path_is_passed_over(tmp_path):
    _fake_python(tmp_path / "old")
    real = Path(sys.executable).resolve()
    newer = tmp_path / "newer"
    newer.mkdir()
    os.symlink(real, newer / f"python3.{sys.version_info.minor}")
    proc = _find(f"{tmp_path / 'old'}:{_tools(tmp_path / 'tools')}:{newer}", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(newer / f"python3.{sys.version_info.minor}")


# Places install.sh also looks, outside PATH (Homebrew, python.org): where one exists, it is found instead.
WELL_KNOWN = ["/opt/homebrew/bin/python3", "/usr/local/bin/python3",
              "/Library/Frameworks/Python.framework/Versions/Current/bin/python3"]


def test_only_an_older_python_stops_with_one_line(tmp_path):
    _fake_python(tmp_path / "old")
    proc = _find(f"{tmp_path / 'old'}:{_tools(tmp_path / 'tools')}", tmp_path)
    present = [p for p in WELL_KNOWN if os.access(p, os.X_OK)]
    if present:                         # a Mac with Homebrew: that Python is the answer
        assert proc.returncode == 0 and proc.stdout.strip() in present
        return
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("install.sh: stibium needs Python 3.10 or later, but found only python3 3.9.6; install one "
                           "(macOS: brew install python, or python.org; Debian/Ubuntu: apt-get install python3) or "
                           "set PYTHON=/path/to/python3\n")
