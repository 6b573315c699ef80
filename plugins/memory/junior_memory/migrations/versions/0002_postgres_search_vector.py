"""Postgres: rank from a stored tsvector instead of recomputing it for every match.

Ranking needs each match's tsvector; computing ``to_tsvector(content)`` per row made a 1,000-match search cost
tens of milliseconds. A generated, stored column keeps it next to the row, and the GIN index moves onto it.
SQLite (FTS5 keeps its own index) is unchanged.

Revision ID: 0002
Revises: 0001
Create Date: 2026-01-02
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "ALTER TABLE junior_memory_memories ADD COLUMN search_vector tsvector "
        "GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED"
    )
    op.execute(
        "CREATE INDEX ix_junior_memory_memories_search_vector ON junior_memory_memories USING gin (search_vector)"
    )
    op.execute("DROP INDEX ix_junior_memory_memories_fts")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE INDEX ix_junior_memory_memories_fts ON junior_memory_memories "
        "USING gin (to_tsvector('english'::regconfig, content))"
    )
    op.execute("DROP INDEX ix_junior_memory_memories_search_vector")
    op.execute("ALTER TABLE junior_memory_memories DROP COLUMN search_vector")
