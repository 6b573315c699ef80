"""The database connection: one engine per store, every wait bounded, one unit-of-work path with one retry.

Every wait has a deadline of ``timeout`` seconds (``JUNIOR_MEMORY_TIMEOUT``, default 5):

- connecting (libpq ``connect_timeout``; TCP keepalives and ``tcp_user_timeout`` for a dead network path);
- statements and lock waits on the server (``statement_timeout``, ``lock_timeout``);
- waiting for a pooled connection (``pool_timeout``);
- a server that stops answering altogether (frozen, partitioned): the server cannot enforce its own timeouts
  then, and the kernel keeps acknowledging our packets, so a watchdog shuts the socket down when a unit of
  work overruns. The call fails at once and the connection is discarded.

The watchdog's deadlines are read from the store's clock (``junior_core.clock.Clock``; a runtime's
``RuntimeOptions.clock``), so a test moves it by hand. The others are enforced by libpq, the kernel, the server
and SQLAlchemy's pool, on the real clock.

Past a deadline the store raises ``MemoryUnavailable``; tools answer ``unavailable`` and recall is skipped.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import math
import os
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from junior_core.clock import MONOTONIC, Clock
from junior_memory.config import connect_url, display_url, mask_urls

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Connection, Engine

T = TypeVar("T")

__all__ = [
    "HEAD_REVISION", "MIGRATE_TIMEOUT", "SQLITE_BUSY_TIMEOUT", "VERSION_TABLE", "Database", "MemoryConfigError",
    "MemorySchemaTooNew", "MemoryUnavailable",
]

log = logging.getLogger("junior.memory")

VERSION_TABLE = "junior_memory_alembic_version"
HEAD_REVISION = "0008"
# A migration may rewrite a large table; it gets its own, longer deadline.
MIGRATE_TIMEOUT = 300.0
# SQLite writers queue on the file lock (BEGIN IMMEDIATE) rather than fail; this bounds the queue.
SQLITE_BUSY_TIMEOUT = 15.0
# Any constant works; it only has to be the same in every process migrating this database.
_PG_LOCK_KEY = 0x6A756E696F72


class MemoryUnavailable(Exception):
    """The database cannot be reached or used; nothing was read or written."""


class MemorySchemaTooNew(MemoryUnavailable):
    """The database is at a revision this junior-memory does not know: a newer one wrote it. Nothing was changed."""

    def __init__(self, revision: str) -> None:
        super().__init__(
            f"this database was written by a newer junior-memory (revision {revision}); upgrade junior-memory"
        )
        self.revision = revision


class MemoryConfigError(Exception):
    """The database URL cannot be used (unparseable, unknown dialect, driver not installed): a setup mistake."""


class _Watchdog:
    """One daemon thread per clock that shuts down the sockets of units of work past their deadline."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, Callable[[], None]] = {}
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, fire: Callable[[], None]) -> int:
        with self._cond:
            token = next(self._ids)
            self._armed[token] = fire
            heapq.heappush(self._heap, (self.clock.now() + seconds, token))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="junior-memory-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()
            return token

    def disarm(self, token: int) -> None:
        with self._cond:
            self._armed.pop(token, None)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                due, token = self._heap[0]
                if self.clock.now() < due:
                    # Until the deadline, or sooner when a unit of work is armed (it may be due first).
                    self.clock.wait(self._cond.wait, due)
                    continue
                heapq.heappop(self._heap)
                fire = self._armed.pop(token)
            try:
                fire()
            except Exception:
                log.debug("memory watchdog could not shut a socket down", exc_info=True)


_watchdogs: dict[Clock, _Watchdog] = {}
_watchdogs_lock = threading.Lock()


def _watchdog(clock: Clock) -> _Watchdog:
    """The watchdog of ``clock``: the monotonic clock's serves every store not given another."""
    with _watchdogs_lock:
        watchdog = _watchdogs.get(clock)
        if watchdog is None:
            watchdog = _watchdogs[clock] = _Watchdog(clock)
        return watchdog


class _Deadline:
    """Shuts the connection's socket down if the unit of work is still running after ``seconds``."""

    def __init__(self, fd: int, seconds: float, clock: Clock) -> None:
        self.fd = fd
        self.fired = False
        self._lock = threading.Lock()
        self._done = False
        self._watchdog = _watchdog(clock)
        self._token = self._watchdog.arm(seconds, self._fire)

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            # shutdown() acts on the socket, not the descriptor: a duplicate is enough, and the driver's own
            # descriptor stays valid until the driver closes it.
            sock = socket.socket(fileno=os.dup(self.fd))
            try:
                sock.shutdown(socket.SHUT_RDWR)
            finally:
                sock.close()

    def cancel(self) -> None:
        with self._lock:
            self._done = True
        self._watchdog.disarm(self._token)


def _restrict_sqlite_file(database: str, create_dirs: bool) -> None:
    """Make the directory 0700 (when we create or own it) and the database file 0600 before SQLite opens it.

    SQLite creates the ``-wal`` and ``-shm`` files with the database file's permissions, so they follow.
    """
    path = Path(database).expanduser()
    if create_dirs:
        # The default location is ours alone: tighten it even when an older version created it 0755.
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not path.parent.stat().st_mode & stat.S_ISVTX:  # never a shared directory such as /tmp
                path.parent.chmod(0o700)
            for suffix in ("", "-wal", "-shm", "-journal"):
                sibling = path.with_name(path.name + suffix)
                if sibling.exists():
                    sibling.chmod(0o600)
        except OSError as exc:
            log.warning("cannot restrict the permissions of %s: %s", path.parent, exc)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    except OSError:
        return  # SQLite reports why it cannot open the file, on first use, as an outage
    os.close(fd)


def _postgres_connect_args(parsed: URL, timeout: float) -> dict[str, Any]:
    """libpq parameters bounding connect, statements, lock waits and dead TCP peers; the URL's own win."""
    seconds = max(1, math.ceil(timeout))
    millis = str(int(timeout * 1000))
    wanted: dict[str, Any] = {
        "connect_timeout": seconds,
        "keepalives": 1,
        "keepalives_idle": seconds,
        "keepalives_interval": 1,
        "keepalives_count": 3,
        "tcp_user_timeout": int(timeout * 1000),
    }
    args = {key: value for key, value in wanted.items() if key not in parsed.query}
    options = parsed.query.get("options", "")
    options = " ".join(options) if isinstance(options, tuple) else options
    settings = [f"-c {name}={millis}" for name in ("statement_timeout", "lock_timeout") if name not in options]
    if settings:
        args["options"] = " ".join([options, *settings]).strip()
    if parsed.get_driver_name() == "psycopg":
        # No server-side prepared statements: after five runs Postgres may switch a prepared search to a
        # generic plan that cannot use the full-text index for the bound tsquery (a sequential scan).
        args["prepare_threshold"] = None
    return args


class Database:
    """One engine on ``url`` with every wait bounded by ``timeout`` seconds; ``unit`` runs all database work.

    ``clock``: what the watchdog's deadlines are read from (default the monotonic clock).
    """

    def __init__(self, url: str, *, timeout: float, create_dirs: bool, clock: Clock | None = None) -> None:
        from sqlalchemy.exc import ArgumentError

        self.url = url
        self.timeout = timeout
        self.clock: Clock = clock or MONOTONIC
        self._ready = False
        self._ready_lock = threading.Lock()
        try:
            self.engine: Engine = self._create_engine(create_dirs)
        except (ArgumentError, ImportError) as exc:  # NoSuchModuleError is an ArgumentError
            # The URL itself is wrong: no retry helps, so this is not MemoryUnavailable. Passwords stay out.
            raise MemoryConfigError(
                f"memory database URL {self.display_url} cannot be used: {type(exc).__name__}: {mask_urls(str(exc))}"
            ) from None
        except ValueError:
            # SQLAlchemy's parse errors quote the part they choke on, which may be part of a password.
            raise MemoryConfigError(
                f"memory database URL {self.display_url} cannot be parsed; check the host and port, and "
                "percent-encode special characters in the user name and password"
            ) from None

    def _create_engine(self, create_dirs: bool) -> Engine:
        from sqlalchemy import create_engine, event
        from sqlalchemy.engine import make_url

        parsed = make_url(connect_url(self.url))
        self.backend = parsed.get_backend_name()
        if self.backend != "sqlite":
            connect_args = _postgres_connect_args(parsed, self.timeout) if self.backend == "postgresql" else {}
            return create_engine(parsed, connect_args=connect_args, pool_timeout=self.timeout)

        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            _restrict_sqlite_file(database, create_dirs)
        engine = create_engine(
            parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT, "check_same_thread": False},
            pool_timeout=self.timeout,
        )

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, record: Any) -> None:
            # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's implicit transactions
            # cannot take the write lock up front).
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT * 1000)}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Any) -> None:
            # A writer takes the lock before reading, so two writers never both read, then deadlock on upgrade.
            immediate = conn.get_execution_options().get("junior_memory_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine

    @property
    def display_url(self) -> str:
        return display_url(self.url)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def _unavailable(self, what: str) -> MemoryUnavailable:
        return MemoryUnavailable(f"memory database {self.display_url} is unavailable: {mask_urls(what)}")

    def _deadline(self, conn: Connection, seconds: float) -> _Deadline | None:
        if self.backend == "sqlite":
            return None  # a local file: SQLite's busy timeout bounds its only wait
        fileno = getattr(conn.connection.driver_connection, "fileno", None)
        if fileno is None:
            return None
        try:
            return _Deadline(fileno(), seconds, self.clock)
        except (OSError, ValueError):
            return None

    def unit(self, work: Callable[[Connection], T], *, write: bool) -> T:
        """``run`` on a database migrated to the head revision: every store operation goes through here."""
        self.ensure_schema()
        return self.run(work, write=write)

    def run(self, work: Callable[[Connection], T], *, write: bool, timeout: float | None = None) -> T:
        """Run ``work`` in one transaction (reads on Postgres: autocommit, one round trip) within the deadline.

        No pre-ping on checkout: a pooled connection the server dropped fails once, is invalidated, and the
        unit runs again on a fresh one (safe for writes too: idempotency keys and dedup find the first try).
        A unit that overran its deadline is not retried: the server is not answering.
        """
        from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
        from sqlalchemy.exc import TimeoutError as PoolTimeout

        seconds = timeout or self.timeout
        for attempt in (1, 2):
            deadline: _Deadline | None = None
            try:
                with self.engine.connect() as conn:
                    # The watchdog leaves the server time to enforce its own statement_timeout first.
                    deadline = self._deadline(conn, seconds + 1)
                    if write:
                        conn.execution_options(junior_memory_write=True)
                    elif self.backend == "postgresql":
                        conn.execution_options(isolation_level="AUTOCOMMIT")
                    with conn.begin():
                        return work(conn)
            except PoolTimeout as exc:
                raise self._unavailable(f"no connection became free within {seconds:g} s") from exc
            except DBAPIError as exc:
                if deadline is not None and deadline.fired:
                    raise self._unavailable(f"it did not answer within {seconds:g} s") from exc
                if attempt == 1 and exc.connection_invalidated:
                    log.info("memory database connection was dropped; retrying once")
                    continue
                if isinstance(exc, (OperationalError, InterfaceError)) or exc.connection_invalidated:
                    raise self._unavailable(str(exc.orig)) from exc
                raise
            finally:
                if deadline is not None:
                    deadline.cancel()
        raise AssertionError("unreachable")

    # -- schema ----------------------------------------------------------------------------------
    def revision(self) -> str | None:
        """The applied schema revision, or None when the database has none yet."""
        return self.run(_current_revision, write=False)

    def ensure_schema(self) -> None:
        """Migrate to the head revision unless this store already saw it there.

        A revision this package does not know raises ``MemorySchemaTooNew`` before any lock or write, on every
        call: an older process must neither touch nor block a database a newer one is using.
        """
        if self._ready:
            return
        with self._ready_lock:
            if self._ready:
                return
            revision = self.revision()
            if revision != HEAD_REVISION:
                _refuse_unknown(revision)
                self.migrate()
            self._ready = True

    def migrate(self) -> str:
        """Upgrade the schema to head under a lock, so processes starting together migrate once.

        Raises ``MemorySchemaTooNew``, having changed nothing, when the database is at a revision this package
        does not know.
        """
        from alembic import command
        from sqlalchemy import text

        config = _alembic_config()

        def work(conn: Connection) -> None:
            if self.backend == "postgresql":
                millis = str(int(MIGRATE_TIMEOUT * 1000))
                conn.execute(
                    text("SELECT set_config('statement_timeout', :ms, true), set_config('lock_timeout', :ms, true)"),
                    {"ms": millis},
                )
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
            # Read again under the lock: a newer process may have upgraded since the caller looked.
            _refuse_unknown(_current_revision(conn))
            config.attributes["connection"] = conn
            command.upgrade(config, "head")

        self.run(work, write=True, timeout=MIGRATE_TIMEOUT)
        revision = self.revision()
        log.info("memory database %s at revision %s", self.display_url, revision)
        self._ready = revision == HEAD_REVISION
        return revision or ""


def _current_revision(conn: Connection) -> str | None:
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table(VERSION_TABLE):
        return None
    value = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
    return str(value) if value is not None else None


def _alembic_config() -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "junior_memory:migrations")
    return config


@functools.cache
def known_revisions() -> frozenset[str]:
    """Every revision this package's migrations define."""
    from alembic.script import ScriptDirectory

    return frozenset(script.revision for script in ScriptDirectory.from_config(_alembic_config()).walk_revisions())


def _refuse_unknown(revision: str | None) -> None:
    if revision is not None and revision not in known_revisions():
        raise MemorySchemaTooNew(revision)
