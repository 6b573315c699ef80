"""The memory store: one engine per store, a session per unit of work, migrations applied on first use."""

from __future__ import annotations

import functools
import logging
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import attrs

from junior_memory.config import display_url, resolve_url
from junior_memory.content import content_hash, format_time, utcnow
from junior_memory.scope import Scope

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.engine import Connection, Engine, RowMapping
    from sqlalchemy.orm import Session
    from sqlalchemy.sql.elements import ColumnElement

    from junior_memory.models import Memory

T = TypeVar("T")

__all__ = [
    "HEAD_REVISION", "VERSION_TABLE", "IdempotencyConflict", "MemoryConfigError", "MemoryRecord", "MemoryStore",
    "MemoryUnavailable", "search_terms",
]

log = logging.getLogger("junior.memory")

VERSION_TABLE = "junior_memory_alembic_version"
HEAD_REVISION = "0002"
# Any constant works; it only has to be the same in every process migrating this database.
_PG_LOCK_KEY = 0x6A756E696F72
Origin = Literal["tool", "extraction", "api"]

_STOP_WORDS = frozenset(
    """a about an and are as at be but by can do does for from had has have he her his how i i'd i'm in is it its
    me my of on or our she so that the their them they this to us was we were what when where which who why will
    with you your remember forget memory memories please""".split()
)
_WORD = re.compile(r"[^\W_]+")
_MAX_TERMS = 24


class MemoryUnavailable(Exception):
    """The database cannot be reached or used; nothing was read or written."""


class MemoryConfigError(Exception):
    """The database URL cannot be used (unparseable, unknown dialect, driver not installed): a setup mistake."""


class IdempotencyConflict(Exception):
    """The idempotency key already belongs to a memory with another scope or content; nothing was written."""


@attrs.frozen
class MemoryRecord:
    """A memory row, detached from any session."""

    id: str
    scope: str
    scope_key: str
    kind: str
    subject_type: str
    subject_key: str
    content: str
    actor_key: str | None
    source_key: str | None
    origin: str
    tool_call_id: str | None
    created_at: datetime
    observed_at: datetime
    expires_at: datetime | None
    archived_at: datetime | None
    archive_reason: str | None

    def public(self) -> dict[str, Any]:
        """What a model may see: never scope keys or platform ids."""
        return {
            "id": self.id,
            "content": self.content,
            "kind": self.kind,
            "created_at": format_time(self.created_at),
            "observed_at": format_time(self.observed_at),
            "expires_at": format_time(self.expires_at),
        }

    def admin(self) -> dict[str, Any]:
        """Every column, for the operator's CLI."""
        out = attrs.asdict(self)
        for key, value in out.items():
            if isinstance(value, datetime):
                out[key] = format_time(value)
        return out


def _record(row: Memory) -> MemoryRecord:
    return MemoryRecord(
        id=row.id,
        scope=row.scope,
        scope_key=row.scope_key,
        kind=row.kind,
        subject_type=row.subject_type,
        subject_key=row.subject_key,
        content=row.content,
        actor_key=row.actor_key,
        source_key=row.source_key,
        origin=row.origin,
        tool_call_id=row.tool_call_id,
        created_at=row.created_at,
        observed_at=row.observed_at,
        expires_at=row.expires_at,
        archived_at=row.archived_at,
        archive_reason=row.archive_reason,
    )


_RECORD_FIELDS = tuple(field.name for field in attrs.fields(MemoryRecord))


def _from_row(row: Mapping[str, Any] | RowMapping) -> MemoryRecord:
    return MemoryRecord(**{name: row[name] for name in _RECORD_FIELDS})


def search_terms(text: str) -> list[str]:
    """Lower-cased words of ``text`` for keyword search, stop words dropped unless nothing else is left."""
    words = list(dict.fromkeys(_WORD.findall(text.casefold())))
    kept = [word for word in words if word not in _STOP_WORDS]
    return (kept or words)[:_MAX_TERMS]


class MemoryStore:
    """Memories in one database (SQLite or Postgres), reached through ``url``.

    Creating a store opens no connection; the first operation checks the schema
    and migrates it if needed. Every public method raises ``MemoryUnavailable``
    when the database cannot be reached.
    """

    def __init__(self, url: str | None = None, *, create_dirs: bool | None = None) -> None:
        from sqlalchemy.exc import ArgumentError

        self.url = resolve_url(url)
        self._ready = False
        self._ready_lock = threading.Lock()
        try:
            self._create_engine(url, create_dirs)
        except (ArgumentError, ImportError) as exc:  # NoSuchModuleError is an ArgumentError
            # The URL itself is wrong: no retry helps, so this is not MemoryUnavailable. Passwords stay out.
            raise MemoryConfigError(
                f"memory database URL {self.display_url} cannot be used: {type(exc).__name__}: "
                f"{display_url(str(exc))}"
            ) from None

    def _create_engine(self, url: str | None, create_dirs: bool | None) -> None:
        from sqlalchemy import create_engine, event
        from sqlalchemy.engine import make_url

        parsed = make_url(self.url)
        self.backend = parsed.get_backend_name()
        if self.backend == "sqlite":
            database = parsed.database or ""
            if create_dirs is None:
                create_dirs = url is None
            if create_dirs and database and database != ":memory:":
                from pathlib import Path

                try:
                    Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    log.warning("cannot create the directory of %s: %s", database, exc)
            self.engine: Engine = create_engine(
                parsed, connect_args={"timeout": 15, "check_same_thread": False}
            )

            @event.listens_for(self.engine, "connect")
            def _on_connect(dbapi_connection: Any, record: Any) -> None:
                # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's implicit transactions
                # cannot take the write lock up front).
                dbapi_connection.isolation_level = None
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA busy_timeout = 15000")
                cursor.execute("PRAGMA journal_mode = WAL")
                cursor.execute("PRAGMA synchronous = NORMAL")
                cursor.close()

            @event.listens_for(self.engine, "begin")
            def _on_begin(conn: Any) -> None:
                # A writer takes the lock before reading, so two writers never both read, then deadlock on upgrade.
                immediate = conn.get_execution_options().get("junior_memory_write", False)
                conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        else:
            connect_args: dict[str, Any] = {}
            if self.backend == "postgresql":
                if "connect_timeout" not in parsed.query:
                    connect_args["connect_timeout"] = 5
                if parsed.get_driver_name() == "psycopg":
                    # No server-side prepared statements: after five runs Postgres may switch a prepared search to
                    # a generic plan that cannot use the full-text index for the bound tsquery (a sequential scan).
                    connect_args["prepare_threshold"] = None
            self.engine = create_engine(parsed, connect_args=connect_args)

    def __repr__(self) -> str:
        return f"<MemoryStore {display_url(self.url)}>"

    @property
    def display_url(self) -> str:
        return display_url(self.url)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    # -- connections and schema ------------------------------------------------------------------
    @contextmanager
    def _errors(self, *, retry: bool = False) -> Iterator[None]:
        """Database-down errors become ``MemoryUnavailable``; with ``retry``, a dropped connection propagates."""
        from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
        from sqlalchemy.exc import TimeoutError as PoolTimeout

        try:
            yield
        except PoolTimeout as exc:
            raise MemoryUnavailable(f"memory database {self.display_url} is unavailable: {exc}") from exc
        except DBAPIError as exc:
            if retry and exc.connection_invalidated:
                raise
            if isinstance(exc, (OperationalError, InterfaceError)) or exc.connection_invalidated:
                raise MemoryUnavailable(f"memory database {self.display_url} is unavailable: {exc.orig}") from exc
            raise

    @contextmanager
    def session(self, *, write: bool = False) -> Iterator[Session]:
        """A session in one transaction, committed on success; for writes on SQLite it holds the write lock."""
        from sqlalchemy.orm import Session

        self.ensure_schema()
        with self._errors(), self.engine.connect() as conn:
            if write:
                conn.execution_options(junior_memory_write=True)
            with Session(bind=conn, expire_on_commit=False) as session, session.begin():
                yield session

    def revision(self) -> str | None:
        """The applied schema revision, or None when the database has none yet."""
        from sqlalchemy import inspect, text

        with self._errors(), self.engine.connect() as conn:
            if not inspect(conn).has_table(VERSION_TABLE):
                return None
            value = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
            return str(value) if value is not None else None

    def ensure_schema(self) -> None:
        """Migrate to the head revision unless this store already saw it there."""
        if self._ready:
            return
        with self._ready_lock:
            if self._ready:
                return
            if self.revision() != HEAD_REVISION:
                self.migrate()
            self._ready = True

    def migrate(self) -> str:
        """Upgrade the schema to head under a lock, so processes starting together migrate once."""
        from alembic import command
        from alembic.config import Config
        from sqlalchemy import text

        config = Config()
        config.set_main_option("script_location", "junior_memory:migrations")
        with self._errors(), self.engine.connect() as conn:
            conn.execution_options(junior_memory_write=True)
            with conn.begin():
                if self.backend == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
                config.attributes["connection"] = conn
                command.upgrade(config, "head")
        revision = self.revision()
        log.info("memory database %s at revision %s", self.display_url, revision)
        self._ready = revision == HEAD_REVISION
        return revision or ""

    # -- units of work -------------------------------------------------------------------------
    def _unit(self, work: Callable[[Connection], T], *, write: bool) -> T:
        """Run ``work`` in one transaction (reads on Postgres: autocommit, one round trip).

        No pre-ping on checkout: a pooled connection the server dropped fails once, is invalidated, and the
        unit runs again on a fresh one (safe for writes too: idempotency keys and dedup find the first try).
        """
        from sqlalchemy.exc import DBAPIError

        self.ensure_schema()
        for attempt in (1, 2):
            try:
                with self._errors(retry=attempt == 1), self.engine.connect() as conn:
                    if write:
                        conn.execution_options(junior_memory_write=True)
                    elif self.backend == "postgresql":
                        conn.execution_options(isolation_level="AUTOCOMMIT")
                    with conn.begin():
                        return work(conn)
            except DBAPIError as exc:
                if attempt == 1 and exc.connection_invalidated:
                    log.info("memory database connection was dropped; retrying once")
                    continue
                raise
        raise AssertionError("unreachable")

    @staticmethod
    def _event(session: Session, memory_id: str, event: str, now: datetime, **fields: Any) -> None:
        from junior_memory.models import Event

        session.add(Event(memory_id=memory_id, event=event, created_at=now, **fields))

    @functools.cached_property
    def _sql(self) -> _Statements:
        return _Statements(self.backend)

    def _events_insert(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
        conn.execute(self._sql.insert_event, rows)

    # -- writes ----------------------------------------------------------------------------------
    def remember(
        self,
        *,
        content: str,
        kind: str,
        scope: Scope,
        actor_key: str | None,
        source_key: str | None,
        origin: Origin,
        tool_call_id: str | None = None,
        idempotency_key: str | None = None,
        expires_at: datetime | None = None,
        now: datetime | None = None,
    ) -> tuple[MemoryRecord, bool]:
        """Store a memory; returns ``(record, created)``.

        A replayed idempotency key, or the same normalised content in the same scope and kind, returns the
        existing row with ``created`` False. A key replayed with another scope or content raises
        ``IdempotencyConflict``: the key alone must never hand back someone else's memory.
        """
        from sqlalchemy.exc import IntegrityError

        at = now or utcnow()
        digest = content_hash(content)
        provenance = {"actor_key": actor_key, "source_key": source_key, "origin": origin, "tool_call_id": tool_call_id}
        sql = self._sql

        def work(conn: Connection) -> tuple[MemoryRecord, bool]:
            found = conn.execute(
                sql.existing,
                {"idem": idempotency_key, "scope": scope.scope, "scope_key": scope.scope_key, "kind": kind,
                 "hash": digest},
            ).mappings().all()
            replay = [row for row in found if idempotency_key is not None and row["idempotency_key"] == idempotency_key]
            if replay:
                held = replay[0]
                if (held["scope"], held["scope_key"], held["content_hash"]) != (scope.scope, scope.scope_key, digest):
                    raise IdempotencyConflict("idempotency key already used for a different memory")
                return _from_row(held), False
            active = [row for row in found if row["archived_at"] is None and row["content_hash"] == digest]
            event = {"created_at": at, "reason": None, **provenance}
            if active:
                row = dict(active[0])
                if row["expires_at"] is not None and row["expires_at"] <= at:
                    conn.execute(sql.archive, {"mid": row["id"], "at": at, "reason": "expired"})
                    self._events_insert(conn, [{**event, "memory_id": row["id"], "event": "expired",
                                                "reason": "expired"}])
                else:
                    if row["expires_at"] is not None and (expires_at is None or expires_at > row["expires_at"]):
                        # Restating a fact keeps it at least as long as the new statement asks.
                        conn.execute(sql.set_expiry, {"mid": row["id"], "new_expiry": expires_at})
                        row["expires_at"] = expires_at
                    self._events_insert(conn, [{**event, "memory_id": row["id"], "event": "deduplicated"}])
                    return _from_row(row), False
            row = {
                "id": uuid.uuid4().hex, "scope": scope.scope, "scope_key": scope.scope_key, "kind": kind,
                "subject_type": scope.subject_type, "subject_key": scope.subject_key, "content": content,
                "content_hash": digest, "idempotency_key": idempotency_key, "created_at": at, "observed_at": at,
                "expires_at": expires_at, "archived_at": None, "archive_reason": None, "superseded_by": None,
                **provenance,
            }
            created = {**event, "memory_id": row["id"], "event": "created"}
            if sql.insert_memory_and_event is not None:
                # One round trip for both rows: the memory goes in through a data-modifying CTE.
                conn.execute(sql.insert_memory_and_event, {**{f"m_{k}": v for k, v in row.items()}, **created})
            else:
                conn.execute(sql.insert_memory, row)
                self._events_insert(conn, [created])
            return _from_row(row), True

        for attempt in range(5):
            try:
                return self._unit(work, write=True)
            except IntegrityError:
                # A concurrent writer inserted the same idempotency key or content first; the next pass finds it.
                # Five in a row is no race but a broken constraint: a plain error (tool_failed), not "unavailable".
                if attempt == 4:
                    raise
                log.debug("remember raced a concurrent writer; retrying", exc_info=True)
        raise AssertionError("unreachable")

    def archive(
        self,
        memory_id: str,
        *,
        reason: str,
        actor_key: str | None = None,
        source_key: str | None = None,
        origin: Origin = "tool",
        tool_call_id: str | None = None,
        now: datetime | None = None,
    ) -> MemoryRecord | None:
        """Archive one memory (idempotent); None if no such row."""
        at = now or utcnow()
        sql = self._sql

        def work(conn: Connection) -> MemoryRecord | None:
            if conn.execute(sql.archive, {"mid": memory_id, "at": at, "reason": reason}).rowcount:
                self._events_insert(conn, [{
                    "memory_id": memory_id, "event": "archived", "reason": reason, "created_at": at,
                    "actor_key": actor_key, "source_key": source_key, "origin": origin, "tool_call_id": tool_call_id,
                }])
            row = conn.execute(sql.by_id, {"mid": memory_id}).mappings().first()
            return _from_row(row) if row is not None else None

        return self._unit(work, write=True)

    def purge(self, *, archived_before: datetime, now: datetime | None = None) -> int:
        """Delete archived memories archived before ``archived_before``, for good; returns how many."""
        from sqlalchemy import delete, select

        from junior_memory.models import Memory

        now = now or utcnow()
        with self.session(write=True) as session:
            ids = list(
                session.scalars(
                    select(Memory.id).where(Memory.archived_at.is_not(None), Memory.archived_at < archived_before)
                )
            )
            for chunk_start in range(0, len(ids), 500):
                chunk = ids[chunk_start : chunk_start + 500]
                session.execute(delete(Memory).where(Memory.id.in_(chunk)))
                for memory_id in chunk:
                    self._event(session, memory_id, "purged", now, reason="admin_purge", origin="api")
            return len(ids)

    # -- reads -----------------------------------------------------------------------------------
    @staticmethod
    def _scope_params(scopes: Sequence[Scope], now: datetime | None) -> dict[str, Any]:
        params: dict[str, Any] = {"now": now or utcnow()}
        for i, scope in enumerate(scopes):
            params[f"s{i}"], params[f"k{i}"] = scope.scope, scope.scope_key
        return params

    def _read(self, statement: Any, params: dict[str, Any]) -> list[MemoryRecord]:
        return self._unit(lambda conn: [_from_row(row) for row in conn.execute(statement, params).mappings()],
                          write=False)

    def visible(self, scopes: Sequence[Scope], *, limit: int = 20, now: datetime | None = None) -> list[MemoryRecord]:
        """Active, unexpired memories in ``scopes``, most recently observed first."""
        return self._read(self._sql.visible(len(scopes)), {**self._scope_params(scopes, now), "limit": limit})

    def by_id_prefix(
        self, scopes: Sequence[Scope], prefix: str, *, limit: int = 10, now: datetime | None = None
    ) -> list[MemoryRecord]:
        """Visible memories whose id starts with ``prefix`` (lower-case hex)."""
        params = {**self._scope_params(scopes, now), "limit": limit, "low": prefix, "high": prefix + "g",
                  "pattern": prefix + "%"}
        return self._read(self._sql.by_prefix(len(scopes)), params)

    def search(
        self,
        scopes: Sequence[Scope],
        query: str,
        *,
        limit: int = 10,
        match: Literal["any", "all"] = "any",
        now: datetime | None = None,
    ) -> list[MemoryRecord]:
        """Visible memories matching ``query`` by keywords, most relevant first, recency breaking ties.

        ``match="any"`` needs one of the words (recall, search); ``"all"`` needs every one (forget by query).
        """
        prepared = self._search(scopes, query, limit=limit, match=match, now=now)
        return self._read(*prepared) if prepared is not None else []

    def _search(
        self, scopes: Sequence[Scope], query: str, *, limit: int, match: Literal["any", "all"], now: datetime | None
    ) -> tuple[Any, dict[str, Any]] | None:
        terms = search_terms(query)
        if not terms:
            return None
        params = {**self._scope_params(scopes, now), "limit": limit}
        if self.backend == "postgresql":
            params["tsquery"] = (" | " if match == "any" else " & ").join(terms)
        elif self.backend == "sqlite":
            params["fts_query"] = (" OR " if match == "any" else " AND ").join(f'"{term}"' for term in terms)
        else:
            params.update({f"t{i}": f"%{term}%" for i, term in enumerate(terms)})
        return self._sql.search(len(scopes), match, len(terms)), params

    def explain_search(self, scopes: Sequence[Scope], query: str, *, limit: int = 10) -> str:
        """The database's EXPLAIN ANALYZE of a search (Postgres; benchmarks show the GIN index in use)."""
        prepared = self._search(scopes, query, limit=limit, match="any", now=None)
        if prepared is None:
            return ""
        statement, params = prepared
        compiled = statement.compile(self.engine)
        prefix = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " if self.backend == "postgresql" else "EXPLAIN QUERY PLAN "

        def work(conn: Connection) -> str:
            rows = conn.exec_driver_sql(prefix + str(compiled), compiled.construct_params(params)).all()
            return "\n".join(str(row[-1]) for row in rows)

        return self._unit(work, write=False)

    # -- admin -----------------------------------------------------------------------------------
    def get(self, memory_id: str) -> MemoryRecord | None:
        """Any memory by full id, archived or not."""
        from junior_memory.models import Memory

        with self.session() as session:
            row = session.get(Memory, memory_id)
            return _record(row) if row is not None else None

    def resolve_id(self, prefix: str) -> list[str]:
        """Full ids starting with ``prefix`` (at most 10), across every scope, for the operator."""
        from sqlalchemy import select

        from junior_memory.models import Memory

        prefix = prefix.strip().lower()
        with self.session() as session:
            return list(
                session.scalars(
                    select(Memory.id)
                    .where(Memory.id >= prefix, Memory.id < prefix + "g", Memory.id.startswith(prefix, autoescape=True))
                    .order_by(Memory.id)
                    .limit(10)
                )
            )

    def events(self, memory_id: str) -> list[dict[str, Any]]:
        """The event history of one memory, oldest first."""
        from sqlalchemy import select

        from junior_memory.models import Event

        with self.session() as session:
            rows = session.scalars(select(Event).where(Event.memory_id == memory_id).order_by(Event.id))
            return [
                {
                    "event": row.event,
                    "actor_key": row.actor_key,
                    "source_key": row.source_key,
                    "origin": row.origin,
                    "tool_call_id": row.tool_call_id,
                    "reason": row.reason,
                    "created_at": format_time(row.created_at),
                }
                for row in rows
            ]

    def list_all(
        self,
        *,
        limit: int = 50,
        include_archived: bool = False,
        scope: str | None = None,
        kind: str | None = None,
    ) -> list[MemoryRecord]:
        """Memories in every scope, newest first, for the operator."""
        from sqlalchemy import select

        from junior_memory.models import Memory

        statement = select(Memory)
        if not include_archived:
            statement = statement.where(Memory.archived_at.is_(None))
        if scope is not None:
            statement = statement.where(Memory.scope == scope)
        if kind is not None:
            statement = statement.where(Memory.kind == kind)
        with self.session() as session:
            rows = session.scalars(statement.order_by(Memory.created_at.desc(), Memory.id).limit(limit))
            return [_record(row) for row in rows]

    def stats(self, *, now: datetime | None = None) -> dict[str, Any]:
        """Counts by state, scope, kind and origin."""
        from sqlalchemy import case, func, select

        from junior_memory.models import Event, Memory

        now = now or utcnow()
        state = case(
            (Memory.archived_at.is_not(None), "archived"),
            (Memory.expires_at.is_not(None) & (Memory.expires_at <= now), "expired"),
            else_="active",
        )
        out: dict[str, Any] = {"total": 0, "by_state": {}, "by_scope": {}, "by_kind": {}, "by_origin": {}}
        with self.session() as session:
            for label, col in (("by_state", state), ("by_scope", Memory.scope), ("by_kind", Memory.kind),
                               ("by_origin", Memory.origin)):
                for key, count in session.execute(select(col, func.count()).group_by(col)).all():
                    out[label][str(key)] = int(count)
            out["total"] = sum(out["by_state"].values())
            out["events"] = int(session.scalar(select(func.count()).select_from(Event)) or 0)
        return out


class _Statements:
    """The hot-path statements, built once per store so each call only binds parameters."""

    def __init__(self, backend: str) -> None:
        from sqlalchemy import Integer, and_, bindparam, insert, or_, select, update

        from junior_memory.models import Event, Memory, UTCDateTime

        t: Table = Memory.__table__  # type: ignore[assignment]
        self.backend = backend
        self.t = t
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._limit = bindparam("limit", type_=Integer())
        self.existing = select(t).where(
            or_(
                t.c.idempotency_key == bindparam("idem"),
                and_(
                    t.c.scope == bindparam("scope"),
                    t.c.scope_key == bindparam("scope_key"),
                    t.c.kind == bindparam("kind"),
                    t.c.content_hash == bindparam("hash"),
                    t.c.archived_at.is_(None),
                ),
            )
        )
        self.insert_memory = insert(t)
        events: Table = Event.__table__  # type: ignore[assignment]
        self.insert_event = insert(events)
        self.insert_memory_and_event: Any = None
        if backend == "postgresql":
            values = {c.name: bindparam(f"m_{c.name}", type_=c.type) for c in t.c}
            new_memory = insert(t).values(values).cte("new_memory")
            self.insert_memory_and_event = insert(events).add_cte(new_memory)
        self.by_id = select(t).where(t.c.id == bindparam("mid"))
        self.archive = (
            update(t)
            .where(t.c.id == bindparam("mid"), t.c.archived_at.is_(None))
            .values(archived_at=bindparam("at", type_=UTCDateTime()), archive_reason=bindparam("reason"))
        )
        self.set_expiry = (
            update(t).where(t.c.id == bindparam("mid")).values(expires_at=bindparam("new_expiry", type_=UTCDateTime()))
        )

    def _visible(self, scopes: int) -> list[ColumnElement[bool]]:
        from sqlalchemy import and_, bindparam, or_

        t = self.t
        return [
            or_(*(and_(t.c.scope == bindparam(f"s{i}"), t.c.scope_key == bindparam(f"k{i}")) for i in range(scopes))),
            t.c.archived_at.is_(None),
            or_(t.c.expires_at.is_(None), t.c.expires_at > bindparam("now")),
        ]

    def _cached(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        statement = self._cache.get(key)
        if statement is None:
            statement = self._cache[key] = build()
        return statement

    def visible(self, scopes: int) -> Any:
        from sqlalchemy import select

        t = self.t
        return self._cached(
            ("visible", scopes),
            lambda: select(t).where(*self._visible(scopes)).order_by(t.c.observed_at.desc(), t.c.id).limit(self._limit),
        )

    def by_prefix(self, scopes: int) -> Any:
        from sqlalchemy import bindparam, select

        t = self.t
        return self._cached(
            ("prefix", scopes),
            lambda: select(t)
            .where(t.c.id >= bindparam("low"), t.c.id < bindparam("high"), t.c.id.like(bindparam("pattern")))
            .where(*self._visible(scopes))
            .order_by(t.c.id)
            .limit(self._limit),
        )

    def search(self, scopes: int, match: str, terms: int) -> Any:
        return self._cached(("search", scopes, match, terms if self.backend not in ("postgresql", "sqlite") else 0),
                            lambda: self._build_search(scopes, match, terms))

    def _build_search(self, scopes: int, match: str, terms: int) -> Any:
        from sqlalchemy import String, and_, bindparam, column, func, literal_column, or_, select, table, text

        t = self.t
        statement = select(t).where(*self._visible(scopes))
        if self.backend == "postgresql":
            # search_vector is a generated column (migration 0002) with the GIN index; it is not mapped, so
            # rows never carry it back.
            config: ColumnElement[Any] = literal_column("'english'::regconfig")
            vector: ColumnElement[Any] = literal_column("junior_memory_memories.search_vector")
            tsquery = func.to_tsquery(config, bindparam("tsquery", type_=String()))
            statement = statement.where(vector.op("@@")(tsquery)).order_by(func.ts_rank(vector, tsquery).desc())
        elif self.backend == "sqlite":
            fts = table("junior_memory_fts", column("memory_id"))
            statement = (
                statement.join(fts, fts.c.memory_id == t.c.id)
                .where(text("junior_memory_fts MATCH :fts_query"))
                .order_by(text("bm25(junior_memory_fts)"))
            )
        else:
            like = [t.c.content.ilike(bindparam(f"t{i}")) for i in range(terms)]
            statement = statement.where(or_(*like) if match == "any" else and_(*like))
        return statement.order_by(t.c.observed_at.desc(), t.c.id).limit(self._limit)
