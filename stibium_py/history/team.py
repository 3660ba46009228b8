"""A team's history on PostgreSQL (psycopg 3, the `postgresql` extra): the schema of schema.py, its version in
a table of its own, brought up to date under an advisory lock (two machines opening an empty database at once
make it once). Many machines write at once: a run's identity is its key, a write replaces the run it names, and
a write that meets another's (the same run or drive written at that moment: a unique row taken, a deadlock) is
done again from its start, so no run is lost or kept twice. The URL and its credentials are the person's (a
flag, STIBIUM_HISTORY, libpq's ~/.pgpass and service file); every statement is parametrised; what is read is
held to the types an export is held to (exchange.py), as a database anyone may write to is data."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..errors import HistoryError
from .entry import RunEntry
from .schema import SCHEMA, migration
from .store import Store
from .where import TeamUrl

CONNECT_TIMEOUT_S = 10           # a server that does not answer: the run's end waits no longer than this
STATEMENT_LIMIT_S = 60.0         # as the SQLite file's: a statement that runs longer is ended
RETRIES = 8                      # a write that met another's is done again, up to this many times
MIGRATION_LOCK = 0x57_1B_1B      # pg_advisory_xact_lock's key: the migrations of one database run one at a time
OWN_TABLES = ("drives", "runs", "points", "notes")

T = TypeVar("T")


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise HistoryError("a history on PostgreSQL needs psycopg: install stibium with its postgresql extra "
                           "(pip install 'stibium[postgresql]', or ./install.sh --test)", 2) from None
    return psycopg


def _reason(e: Exception) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:300]


class TeamHistory(Store):
    hosts_of_drive = "string_agg(DISTINCT r.host, ',')"

    def __init__(self, url: TeamUrl, create: bool = True):
        psycopg = self.psycopg = _psycopg()
        from psycopg.rows import dict_row
        self.where = url.shown
        try:
            self.db = psycopg.connect(url.url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True, row_factory=dict_row,
                                      application_name="stibium",
                                      options=f"-c statement_timeout={int(STATEMENT_LIMIT_S * 1000)}")
        except psycopg.Error as e:
            raise HistoryError(f"{self.where}: cannot reach the team's history ({_reason(e)}); check the URL and that "
                               f"its server runs", 1) from None
        try:
            self._migrate(create)
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def _failure(self, e: Exception) -> HistoryError:
        errors = self.psycopg.errors
        if isinstance(e, errors.QueryCanceled):
            return HistoryError(f"{self.where}: a statement on the team's history ran past {STATEMENT_LIMIT_S:g} s "
                                f"and was ended; try again when the server is less busy", 1)
        if isinstance(e, errors.InsufficientPrivilege):
            return HistoryError(f"{self.where}: the team's history refused ({_reason(e)}); ask its owner for the "
                                f"rights to read and write its tables", 1)
        if isinstance(e, self.psycopg.OperationalError):
            return HistoryError(f"{self.where}: the connection to the team's history failed ({_reason(e)}); check "
                                f"that its server runs, then try again", 1)
        return HistoryError(f"{self.where}: the team's history refused a statement ({_reason(e)}); it may not be a "
                            f"history stibium wrote", 2)

    def _migrate(self, create: bool) -> None:
        made = self._schema_made()
        if not made and not create:
            raise HistoryError(f"{self.where}: no history there yet (a run sent there, or `stibium history push`, "
                               f"makes it)", 2)
        if made and self._read("SELECT version FROM stibium_schema")[0]["version"] == SCHEMA:
            return

        def work() -> None:
            # under the lock, everything is looked at again: another machine may have made the schema meanwhile
            self._execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            if not self._schema_made():
                strange = self._read("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                     "current_schema() AND table_name IN (?, ?, ?, ?)", OWN_TABLES)
                if strange:
                    raise HistoryError(f"{self.where}: it holds a table {strange[0]['table_name']!r} but not "
                                       f"stibium's schema: not a stibium history; give another database", 2)
                self._execute("CREATE TABLE stibium_schema (version BIGINT NOT NULL)")
                self._execute("INSERT INTO stibium_schema (version) VALUES (0)")
            version = self._read("SELECT version FROM stibium_schema")[0]["version"]
            if version > SCHEMA:
                raise HistoryError(f"{self.where}: the history was written by a newer stibium (schema {version}, "
                                   f"this one knows {SCHEMA}); upgrade stibium", 2)
            for number in range(version, SCHEMA):
                for statement in migration(number, "postgresql"):
                    self._execute(statement)
                self._execute("UPDATE stibium_schema SET version = ?", (number + 1,))
        self._in_transaction(work)

    def _schema_made(self) -> bool:
        """Whether the version's table is there, by a query of the catalog (each statement sees what others
        committed before it; to_regclass reads a cache an advisory lock does not refresh, and missed a schema
        another writer had just made)."""
        return bool(self._read("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = "
                               "current_schema() AND table_name = 'stibium_schema'")[0]["n"])

    def _in_transaction(self, work: Callable[[], T]) -> T:
        errors = self.psycopg.errors
        for attempt in range(RETRIES):
            try:
                with self.db.transaction():
                    return work()
            except (errors.UniqueViolation, errors.DeadlockDetected, errors.SerializationFailure) as e:
                if attempt == RETRIES - 1:
                    raise self._failure(e) from None
            except self.psycopg.Error as e:
                raise self._failure(e) from None
        raise AssertionError("unreachable")

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self.db.execute(sql.replace("?", "%s"), tuple(args))

    def _executemany(self, sql: str, rows: list[Sequence[Any]]) -> None:
        with self.db.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), rows)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Mapping[str, Any]]:
        try:
            return self.db.execute(sql.replace("?", "%s"), tuple(args)).fetchall()
        except self.psycopg.Error as e:
            if self.db.info.transaction_status != self.psycopg.pq.TransactionStatus.IDLE:
                raise                   # inside a write: its transaction says it (and tries again where it may)
            raise self._failure(e) from None

    def _held_to_types(self, entries: list[RunEntry]) -> list[RunEntry]:
        from .exchange import held_to_format
        return held_to_format(entries, self.where)
