"""The memory tables (DESIGN §6 names) as SQLAlchemy 2 typed ORM models, equal to what the migrations build.

A test compares this metadata with the migrated schema on SQLite and Postgres. Objects that exist on one
dialect only (the Postgres ``search_vector`` column and its GIN index) say so in ``info["dialects"]``; the
SQLite FTS5 table and its triggers are raw DDL in the migration and are left out of the comparison by name.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Computed,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

__all__ = ["FTS_TABLE", "Base", "Event", "Memory", "UTCDateTime", "Vector", "include_object"]

# SQLite FTS5 (its virtual table and shadow tables start with this name): built by raw DDL, not mapped.
FTS_TABLE = "junior_memory_fts"
POSTGRES_ONLY = {"dialects": ("postgresql",)}

KEY = 512  # platform:team:channel:ts keys stay far below this


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite stores naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        parsed: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_N_name)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "pk": "pk_%(table_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
        }
    )


class Memory(Base):
    """One memory. Archived rows stay (forget archives); an admin purge deletes them."""

    __tablename__ = "junior_memory_memories"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16))
    scope_key: Mapped[str] = mapped_column(String(KEY))
    kind: Mapped[str] = mapped_column(String(16))
    subject_type: Mapped[str] = mapped_column(String(16))
    subject_key: Mapped[str] = mapped_column(String(KEY))
    content: Mapped[str] = mapped_column(Text)
    # Not in the DESIGN column list: SHA-256 of the normalised content, so dedup is an index lookup.
    content_hash: Mapped[str] = mapped_column(String(64))
    actor_key: Mapped[str | None] = mapped_column(String(KEY))
    source_key: Mapped[str | None] = mapped_column(String(KEY))
    origin: Mapped[str] = mapped_column(String(16))
    tool_call_id: Mapped[str | None] = mapped_column(String(256))
    idempotency_key: Mapped[str | None] = mapped_column(String(1024), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    observed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    archive_reason: Mapped[str | None] = mapped_column(String(32))
    superseded_by: Mapped[str | None] = mapped_column(String(32))
    # Postgres only (migration 0002): what full-text search matches and ranks. Generated, so never written;
    # deferred, so rows never carry it back.
    search_vector: Mapped[Any] = mapped_column(
        TSVECTOR(), Computed("to_tsvector('english'::regconfig, content)", persisted=True), deferred=True,
        info=POSTGRES_ONLY,
    )

    __table_args__ = (
        Index("ix_junior_memory_memories_scope", "scope", "scope_key", "observed_at"),
        # One active memory per normalised content, scope and kind, even under concurrent writers.
        Index(
            "uq_junior_memory_memories_active_content",
            "scope",
            "scope_key",
            "kind",
            "content_hash",
            unique=True,
            sqlite_where=text("archived_at IS NULL"),
            postgresql_where=text("archived_at IS NULL"),
        ),
        Index("ix_junior_memory_memories_archived_at", "archived_at"),
        # The memories a caller can see, counted from the index alone (migration 0005).
        Index(
            "ix_junior_memory_memories_live",
            "scope",
            "scope_key",
            "expires_at",
            "archived_at",
            sqlite_where=text("archived_at IS NULL"),
            postgresql_where=text("archived_at IS NULL"),
        ),
        Index("ix_junior_memory_memories_search_vector", "search_vector", postgresql_using="gin", info=POSTGRES_ONLY),
        # An actor's current memories, counted against their write limit (migration 0008). Not partial: a partial
        # index on archived_at IS NULL would be the planner's pick for every count of current memories.
        Index("ix_junior_memory_memories_actor", "actor_key", "archived_at"),
        CheckConstraint("scope IN ('personal', 'conversation')", name="scope"),
        CheckConstraint("kind IN ('preference', 'procedure', 'knowledge')", name="kind"),
        CheckConstraint("origin IN ('tool', 'extraction', 'api')", name="origin"),
    )


class Event(Base):
    """Append-only history: created, deduplicated, superseded, archived, expired, purged."""

    __tablename__ = "junior_memory_events"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    memory_id: Mapped[str] = mapped_column(String(32), index=True)
    event: Mapped[str] = mapped_column(String(16))
    actor_key: Mapped[str | None] = mapped_column(String(KEY))
    source_key: Mapped[str | None] = mapped_column(String(KEY))
    origin: Mapped[str | None] = mapped_column(String(16))
    tool_call_id: Mapped[str | None] = mapped_column(String(256))
    reason: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    # A retried forget looks up its first call's event (migration 0007).
    __table_args__ = (Index("ix_junior_memory_events_call", "tool_call_id", "source_key"),)


class Vector(Base):
    """One memory's embedding under one model (migration 0004): float32, unit length, for semantic recall."""

    __tablename__ = "junior_memory_vectors"

    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    memory_id: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(256))
    dimensions: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    __table_args__ = (
        UniqueConstraint("memory_id", "model"),
        Index("ix_junior_memory_vectors_model", "model", "seq"),
    )


def include_object(dialect: str) -> Callable[[Any, str | None, str, bool, Any], bool]:
    """Alembic's ``include_object`` for ``dialect``: other dialects' objects and the FTS5 tables are left out."""

    def include(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
        if type_ == "table" and name is not None and name.startswith(FTS_TABLE):
            return False
        dialects = getattr(obj, "info", {}).get("dialects")
        return dialects is None or dialect in dialects

    return include
