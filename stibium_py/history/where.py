"""Where the history database lives: a person's choice (--history, then STIBIUM_HOME), else the platform's
place for an application's data: ~/Library/Application Support/stibium on macOS, $XDG_DATA_HOME/stibium
(~/.local/share/stibium) elsewhere. A pure function of the platform, the environment and the home folder, so
that the macOS answer is tested here."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

DATABASE_NAME = "history.sqlite"


def database_path(platform: str, environ: Mapping[str, str], home: Path, given: Path | None = None) -> Path:
    """The database file: `given` (--history PATH), else STIBIUM_HOME/history.sqlite, else the platform's."""
    if given is not None:
        return given
    if environ.get("STIBIUM_HOME"):
        return Path(environ["STIBIUM_HOME"]) / DATABASE_NAME
    if platform == "darwin":
        return home / "Library" / "Application Support" / "stibium" / DATABASE_NAME
    xdg = environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"   # the spec: relative is invalid
    return base / "stibium" / DATABASE_NAME


def default_database(given: Path | None = None) -> Path:
    import os
    import sys
    return database_path(sys.platform, os.environ, Path.home(), given)
