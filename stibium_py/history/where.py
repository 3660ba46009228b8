"""Where the history lives. A machine's own history is a SQLite file: a person's choice (--history PATH, then
STIBIUM_HISTORY, then STIBIUM_HOME), else the platform's place for an application's data:
~/Library/Application Support/stibium on macOS, $XDG_DATA_HOME/stibium (~/.local/share/stibium) elsewhere.
A team's history is a PostgreSQL database named by a URL (--history postgresql://..., or STIBIUM_HISTORY): a
run is recorded in the machine's file and sent there too, and the history commands read it. Only a person
names either (a flag, the environment, libpq's own ~/.pgpass and service file): a plan or a run directory
never does. Pure functions of the platform, the environment and the home folder, so that the macOS answer is
tested here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Union

from ..errors import HistoryError

DATABASE_NAME = "history.sqlite"
STEP_TESTS_NAME = "step-tests.sqlite"       # the step searches' tests, kept between commands (step_tests.py)
TEAM_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class TeamUrl:
    """A PostgreSQL database's URL (libpq's form): the password it may hold is never printed."""

    url: str

    @property
    def shown(self) -> str:
        """The URL as a line may show it: user, host, port and database, no password and no options."""
        from urllib.parse import urlsplit
        try:
            parts = urlsplit(self.url)
            user = f"{parts.username}@" if parts.username else ""
            host = parts.hostname or ""
            port = f":{parts.port}" if parts.port else ""
        except ValueError:            # a port that is not a number: libpq will say so; this shows the scheme only
            return self.url.split("://", 1)[0] + "://..."
        return f"{parts.scheme}://{user}{host}{port}{parts.path}"

    def __str__(self) -> str:
        return self.shown


Location = Union[Path, TeamUrl]


def parse_location(text: str) -> Location:
    """--history's or STIBIUM_HISTORY's value: a PostgreSQL URL, else a file's path."""
    if text.startswith(TEAM_SCHEMES):
        return TeamUrl(text)
    scheme = text.split("://", 1)[0] if "://" in text else ""
    if scheme.isalpha():
        raise HistoryError(f"--history {scheme}://...: a history is a SQLite file's path or a PostgreSQL URL "
                           f"(postgresql://user@host/database); give one of those", 2)
    return Path(text)


def database_path(platform: str, environ: Mapping[str, str], home: Path, given: Path | None = None) -> Path:
    """The machine's own history file: `given` (--history PATH), else STIBIUM_HISTORY where it is a path, else
    STIBIUM_HOME/history.sqlite, else the platform's."""
    if given is not None:
        return given
    chosen = environ.get("STIBIUM_HISTORY", "")
    if chosen and not chosen.startswith(TEAM_SCHEMES):
        return Path(chosen)
    if environ.get("STIBIUM_HOME"):
        return Path(environ["STIBIUM_HOME"]) / DATABASE_NAME
    if platform == "darwin":
        return home / "Library" / "Application Support" / "stibium" / DATABASE_NAME
    xdg = environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"   # the spec: relative is invalid
    return base / "stibium" / DATABASE_NAME


def step_tests_path(platform: str, environ: Mapping[str, str], home: Path) -> Path:
    """The machine's kept step tests (history/step_tests.py): STIBIUM_HOME/step-tests.sqlite, else in the platform's
    cache folder (~/Library/Caches/stibium on macOS, $XDG_CACHE_HOME/stibium or ~/.cache/stibium elsewhere)."""
    if environ.get("STIBIUM_HOME"):
        return Path(environ["STIBIUM_HOME"]) / STEP_TESTS_NAME
    if platform == "darwin":
        return home / "Library" / "Caches" / "stibium" / STEP_TESTS_NAME
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"      # the spec: relative is invalid
    return base / "stibium" / STEP_TESTS_NAME


def step_tests_here() -> Path:
    import os
    import sys
    return step_tests_path(sys.platform, os.environ, Path.home())


@dataclass(frozen=True)
class Where:
    """Where the history commands read and a run is recorded: the machine's file, and the team's database where
    the person named one."""

    local: Path
    team: TeamUrl | None

    @property
    def read(self) -> Location:
        """What the history commands read and add to: the team's database where one is named."""
        return self.team if self.team is not None else self.local


def locate(platform: str, environ: Mapping[str, str], home: Path, given: str | None = None) -> Where:
    """--history's value (a path or a URL), else STIBIUM_HISTORY's, then the defaults above."""
    chosen = given if given else environ.get("STIBIUM_HISTORY", "") or None
    location = parse_location(chosen) if chosen else None
    team = location if isinstance(location, TeamUrl) else None
    local = database_path(platform, {k: v for k, v in environ.items() if k != "STIBIUM_HISTORY"}, home,
                          location if isinstance(location, Path) else None)
    return Where(local, team)


def where_here(given: str | None = None) -> Where:
    import os
    import sys
    return locate(sys.platform, os.environ, Path.home(), given)


def default_database(given: Path | None = None) -> Path:
    """The machine's own history file (where a run started here is looked up to resume it)."""
    import os
    import sys
    return database_path(sys.platform, os.environ, Path.home(), given)
