"""Memories, their event history, and keyword search (Postgres GIN full-text index or SQLite FTS5).

Revision ID: 0001
Revises:
Create Date: 2026-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from junior_memory.tables import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

KEY = 512


def upgrade() -> None:
    op.create_table(
        "junior_memory_memories",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("scope_key", sa.String(KEY), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("subject_type", sa.String(16), nullable=False),
        sa.Column("subject_key", sa.String(KEY), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("actor_key", sa.String(KEY), nullable=True),
        sa.Column("source_key", sa.String(KEY), nullable=True),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("tool_call_id", sa.String(256), nullable=True),
        sa.Column("idempotency_key", sa.String(1024), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("observed_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("archived_at", UTCDateTime(), nullable=True),
        sa.Column("archive_reason", sa.String(32), nullable=True),
        sa.Column("superseded_by", sa.String(32), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_junior_memory_memories"),
        sa.UniqueConstraint("idempotency_key", name="uq_junior_memory_memories_idempotency_key"),
        sa.CheckConstraint("scope IN ('personal', 'conversation')", name=op.f("ck_junior_memory_memories_scope")),
        sa.CheckConstraint(
            "kind IN ('preference', 'procedure', 'knowledge')", name=op.f("ck_junior_memory_memories_kind")
        ),
        sa.CheckConstraint("origin IN ('tool', 'extraction', 'api')", name=op.f("ck_junior_memory_memories_origin")),
    )
    op.create_index(
        "ix_junior_memory_memories_scope", "junior_memory_memories", ["scope", "scope_key", "observed_at"]
    )
    op.create_index(
        "uq_junior_memory_memories_active_content",
        "junior_memory_memories",
        ["scope", "scope_key", "kind", "content_hash"],
        unique=True,
        sqlite_where=sa.text("archived_at IS NULL"),
        postgresql_where=sa.text("archived_at IS NULL"),
    )
    op.create_index("ix_junior_memory_memories_archived_at", "junior_memory_memories", ["archived_at"])

    op.create_table(
        "junior_memory_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("memory_id", sa.String(32), nullable=False),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("actor_key", sa.String(KEY), nullable=True),
        sa.Column("source_key", sa.String(KEY), nullable=True),
        sa.Column("origin", sa.String(16), nullable=True),
        sa.Column("tool_call_id", sa.String(256), nullable=True),
        sa.Column("reason", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_junior_memory_events"),
    )
    op.create_index("ix_junior_memory_events_memory_id", "junior_memory_events", ["memory_id"])

    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        # The search query repeats this exact expression so the planner can use the index.
        op.execute(
            "CREATE INDEX ix_junior_memory_memories_fts ON junior_memory_memories "
            "USING gin (to_tsvector('english'::regconfig, content))"
        )
    elif dialect == "sqlite":
        # A standalone FTS5 table carrying the memory id: search joins on that id, so results never depend
        # on the memories table's implicit rowid (which VACUUM may renumber); the rowid only makes the
        # triggers' maintenance a keyed lookup.
        op.execute(
            "CREATE VIRTUAL TABLE junior_memory_fts USING fts5("
            "content, memory_id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        op.execute(
            "CREATE TRIGGER junior_memory_fts_insert AFTER INSERT ON junior_memory_memories BEGIN "
            "INSERT INTO junior_memory_fts(rowid, content, memory_id) VALUES (new.rowid, new.content, new.id); END"
        )
        op.execute(
            "CREATE TRIGGER junior_memory_fts_delete AFTER DELETE ON junior_memory_memories BEGIN "
            "DELETE FROM junior_memory_fts WHERE rowid = old.rowid AND memory_id = old.id; END"
        )
        op.execute(
            "CREATE TRIGGER junior_memory_fts_update AFTER UPDATE OF content ON junior_memory_memories BEGIN "
            "UPDATE junior_memory_fts SET content = new.content WHERE rowid = old.rowid AND memory_id = old.id; END"
        )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for trigger in ("junior_memory_fts_insert", "junior_memory_fts_delete", "junior_memory_fts_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS junior_memory_fts")
    op.drop_table("junior_memory_events")
    op.drop_table("junior_memory_memories")
