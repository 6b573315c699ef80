"""The memory store: one engine per store, a session per unit of work, migrations applied on first use."""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import attrs

from junior_memory.config import display_url, resolve_url
from junior_memory.content import content_hash, format_time, utcnow
from junior_memory.scope import Scope

if TYPE_CHECKING:
    from sqlalchemy import Select
    from sqlalchemy.engine import Engine
    from sqlalchemy.orm import Session
    from sqlalchemy.sql.elements import ColumnElement

    from junior_memory.models import Memory

__all__ = ["HEAD_REVISION", "VERSION_TABLE", "MemoryRecord", "MemoryStore", "MemoryUnavailable", "search_terms"]

log = logging.getLogger("junior.memory")

VERSION_TABLE = "junior_memory_alembic_version"
HEAD_REVISION = "0001"
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
        from sqlalchemy import create_engine, event
        from sqlalchemy.engine import make_url

        self.url = resolve_url(url)
        parsed = make_url(self.url)
        self.backend = parsed.get_backend_name()
        self._ready = False
        self._ready_lock = threading.Lock()
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
            if self.backend == "postgresql" and "connect_timeout" not in parsed.query:
                connect_args["connect_timeout"] = 5
            self.engine = create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)

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
    def _errors(self) -> Iterator[None]:
        from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

        try:
            yield
        except (OperationalError, InterfaceError) as exc:
            raise MemoryUnavailable(f"memory database {self.display_url} is unavailable: {exc.orig}") from exc
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise MemoryUnavailable(f"memory database {self.display_url} dropped the connection") from exc
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

    # -- filters ---------------------------------------------------------------------------------
    @staticmethod
    def _visible(scopes: Sequence[Scope], now: datetime) -> list[ColumnElement[bool]]:
        from sqlalchemy import and_, or_

        from junior_memory.models import Memory

        return [
            or_(*(and_(Memory.scope == s.scope, Memory.scope_key == s.scope_key) for s in scopes)),
            Memory.archived_at.is_(None),
            or_(Memory.expires_at.is_(None), Memory.expires_at > now),
        ]

    @staticmethod
    def _event(session: Session, memory_id: str, event: str, now: datetime, **fields: Any) -> None:
        from junior_memory.models import Event

        session.add(Event(memory_id=memory_id, event=event, created_at=now, **fields))

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
        existing row with ``created`` False.
        """
        from sqlalchemy import select
        from sqlalchemy.exc import IntegrityError

        from junior_memory.models import Memory

        now = now or utcnow()
        digest = content_hash(content)
        provenance = {"actor_key": actor_key, "source_key": source_key, "origin": origin, "tool_call_id": tool_call_id}
        for _attempt in range(5):
            try:
                with self.session(write=True) as session:
                    if idempotency_key is not None:
                        replay = session.scalar(select(Memory).where(Memory.idempotency_key == idempotency_key))
                        if replay is not None:
                            return _record(replay), False
                    existing = session.scalar(
                        select(Memory).where(
                            Memory.scope == scope.scope,
                            Memory.scope_key == scope.scope_key,
                            Memory.kind == kind,
                            Memory.content_hash == digest,
                            Memory.archived_at.is_(None),
                        )
                    )
                    if existing is not None and existing.expires_at is not None and existing.expires_at <= now:
                        existing.archived_at = now
                        existing.archive_reason = "expired"
                        self._event(session, existing.id, "expired", now, reason="expired", **provenance)
                        session.flush()
                        existing = None
                    if existing is not None:
                        if existing.expires_at is not None and (expires_at is None or expires_at > existing.expires_at):
                            existing.expires_at = expires_at  # restating a fact keeps it at least as long
                        self._event(session, existing.id, "deduplicated", now, **provenance)
                        return _record(existing), False
                    row = Memory(
                        id=uuid.uuid4().hex,
                        scope=scope.scope,
                        scope_key=scope.scope_key,
                        kind=kind,
                        subject_type=scope.subject_type,
                        subject_key=scope.subject_key,
                        content=content,
                        content_hash=digest,
                        idempotency_key=idempotency_key,
                        created_at=now,
                        observed_at=now,
                        expires_at=expires_at,
                        **provenance,
                    )
                    session.add(row)
                    self._event(session, row.id, "created", now, **provenance)
                    session.flush()
                    return _record(row), True
            except IntegrityError:
                # A concurrent writer inserted the same idempotency key or content first; the next pass finds it.
                log.debug("remember raced a concurrent writer; retrying", exc_info=True)
        raise MemoryUnavailable("memory database kept refusing the write after 5 attempts")

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
        from junior_memory.models import Memory

        now = now or utcnow()
        with self.session(write=True) as session:
            row = session.get(Memory, memory_id)
            if row is None:
                return None
            if row.archived_at is None:
                row.archived_at = now
                row.archive_reason = reason
                self._event(
                    session, row.id, "archived", now, reason=reason, actor_key=actor_key, source_key=source_key,
                    origin=origin, tool_call_id=tool_call_id,
                )
                session.flush()
            return _record(row)

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
    def visible(self, scopes: Sequence[Scope], *, limit: int = 20, now: datetime | None = None) -> list[MemoryRecord]:
        """Active, unexpired memories in ``scopes``, most recently observed first."""
        from sqlalchemy import select

        from junior_memory.models import Memory

        now = now or utcnow()
        with self.session() as session:
            rows = session.scalars(
                select(Memory)
                .where(*self._visible(scopes, now))
                .order_by(Memory.observed_at.desc(), Memory.id)
                .limit(limit)
            )
            return [_record(row) for row in rows]

    def by_id_prefix(
        self, scopes: Sequence[Scope], prefix: str, *, limit: int = 10, now: datetime | None = None
    ) -> list[MemoryRecord]:
        """Visible memories whose id starts with ``prefix`` (lower-case hex)."""
        from sqlalchemy import select

        from junior_memory.models import Memory

        now = now or utcnow()
        with self.session() as session:
            rows = session.scalars(
                select(Memory)
                .where(Memory.id >= prefix, Memory.id < prefix + "g", Memory.id.startswith(prefix, autoescape=True))
                .where(*self._visible(scopes, now))
                .order_by(Memory.id)
                .limit(limit)
            )
            return [_record(row) for row in rows]

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
        statement = self.search_statement(scopes, query, limit=limit, match=match, now=now)
        if statement is None:
            return []
        with self.session() as session:
            return [_record(row) for row in session.scalars(statement)]

    def search_statement(
        self,
        scopes: Sequence[Scope],
        query: str,
        *,
        limit: int = 10,
        match: Literal["any", "all"] = "any",
        now: datetime | None = None,
    ) -> Select[tuple[Memory]] | None:
        """The SELECT ``search`` runs (None when the query has no searchable words); benchmarks EXPLAIN it."""
        from sqlalchemy import and_, bindparam, column, func, literal_column, or_, select, table, text

        from junior_memory.models import Memory

        terms = search_terms(query)
        if not terms:
            return None
        now = now or utcnow()
        statement = select(Memory).where(*self._visible(scopes, now))
        if self.backend == "postgresql":
            # Must repeat the GIN index's expression exactly for the planner to use it.
            config = literal_column("'english'::regconfig")
            vector = func.to_tsvector(config, Memory.content)
            tsquery = func.to_tsquery(config, bindparam("tsquery", (" | " if match == "any" else " & ").join(terms)))
            statement = statement.where(vector.op("@@")(tsquery)).order_by(func.ts_rank_cd(vector, tsquery).desc())
        elif self.backend == "sqlite":
            fts = table("junior_memory_fts", column("memory_id"))
            joiner = " OR " if match == "any" else " AND "
            fts_query = joiner.join(f'"{term}"' for term in terms)
            statement = (
                statement.join(fts, fts.c.memory_id == Memory.id)
                .where(text("junior_memory_fts MATCH :fts_query").bindparams(fts_query=fts_query))
                .order_by(text("bm25(junior_memory_fts)"))
            )
        else:
            like = [Memory.content.ilike(f"%{term}%") for term in terms]  # terms are letters and digits only
            statement = statement.where(or_(*like) if match == "any" else and_(*like))
        return statement.order_by(Memory.observed_at.desc(), Memory.id).limit(limit)

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
