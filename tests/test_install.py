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


def test_an_install_into_a_python_of_its_own_says_where(tmp_path):
    """A Python without PEP 668's marker (pyenv's, python.org's) takes stibium into its own packages: install.sh
    says where, and how to take it out; as root, that every user of the machine gets it. The Python is a stand-in
    that answers the marker's question and records what pip was asked; the rest is this Python's."""
    real = sys.executable            # a virtual environment's own: its packages are this process's
    tools = _tools(tmp_path / "tools")
    os.symlink(shutil.which("id"), tools / "id")
    asked = tmp_path / "asked"
    stub = tmp_path / "py" / "python3"
    stub.parent.mkdir()
    # a Python without the marker, whatever this one's base has: install.sh's question answered so
    stub.write_text(f'#!/bin/sh\nif [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" > {asked}; exit 0; fi\n'
                    f'case "$2" in *EXTERNALLY-MANAGED*) echo False; exit 0;; esac\nexec {real} "$@"\n')
    stub.chmod(0o755)
    env = {"PATH": str(tools), "HOME": str(tmp_path / "home"), "PYTHON": str(stub)}
    proc = subprocess.run(["/bin/bash", str(INSTALL)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert asked.read_text().split()[:3] == ["-m", "pip", "install"]
    import sysconfig
    said = [line for line in proc.stderr.splitlines() if line.startswith("install.sh: installed")]
    assert said == [f"install.sh: installed into {stub}'s own packages ({sysconfig.get_path('purelib')}), the stibium "
                    f"command in {sysconfig.get_path('scripts')}; `{stub} -m pip uninstall stibium` removes it"]
    as_root = "install.sh: as root, into that Python for every user of this machine" in proc.stderr
    assert as_root == (os.getuid() == 0)
