"""An actor's current memories by index: the per-actor write limit counts them on every write.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_junior_memory_memories_actor_live",
        "junior_memory_memories",
        ["actor_key", "archived_at"],
        sqlite_where=sa.text("archived_at IS NULL"),
        postgresql_where=sa.text("archived_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_junior_memory_memories_actor_live", table_name="junior_memory_memories")
