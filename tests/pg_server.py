"""A PostgreSQL server of the tests' own: `initdb` in a temporary folder, `pg_ctl` on a Unix socket in it, no TCP
port, trust for its own socket, fsync off (the tests measure no database). Never a server of the machine. As
root, the server runs as the `postgres` user Debian's package makes (initdb refuses root), else as `nobody`."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path


def _bin(tool: str) -> str:
    """A PostgreSQL program: Debian keeps them in /usr/lib/postgresql/VERSION/bin, off PATH."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"), key=lambda p: int(p.split("/")[4]))
    if found:
        return found[-1]
    on_path = shutil.which(tool)
    if on_path is None:
        raise RuntimeError(f"{tool}: not found; ./install.sh --test installs PostgreSQL")
    return on_path


class PgServer:
    """listen: an address to take TCP connections on as well (trusted from its /24), in the network namespace
    `netns` where one is given (a host of tests/hosts.py)."""

    def __init__(self, listen: str | None = None, netns: str | None = None, port: int = 5432) -> None:
        self.listen, self.netns, self.port = listen, netns, port
        self.folder = Path(tempfile.mkdtemp(prefix="stibium-pg-"))
        self.data = self.folder / "data"
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                self.user = pwd.getpwnam("postgres").pw_name
            except KeyError:
                self.user = "nobody"
            entry = pwd.getpwnam(self.user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        self._as_owner([_bin("initdb"), "-D", str(self.data), "-U", "stibium", "-A", "trust", "-E", "UTF8",
                        "--no-sync"])
        if listen is not None:
            subnet = ".".join(listen.split(".")[:3]) + ".0/24"
            with open(self.data / "pg_hba.conf", "a") as hba:
                hba.write(f"host all all {subnet} trust\n")
        self.start()

    def _as_owner(self, argv: list[str]) -> None:
        if self.user is not None:
            argv = ["runuser", "-u", self.user, "--", *argv]
        if self.netns is not None:
            argv = ["nsenter", f"--net=/run/netns/{self.netns}", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")

    def start(self) -> None:
        self._as_owner([_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-t", "60", "-o",
                        f"-k {self.folder} -c listen_addresses='{self.listen or ''}' -c fsync=off -c max_connections=60 -p {self.port}",
                        "start"])

    def stop(self) -> None:
        self._as_owner([_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"])

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://stibium@/{database}?host={self.folder}&port={self.port}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def close(self) -> None:
        try:
            self.stop()
        except RuntimeError:
            pass
        shutil.rmtree(self.folder, ignore_errors=True)
