"""An actor's current memories by index: the per-actor write limit counts them on every write.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Not partial (WHERE archived_at IS NULL): the planner would then take it for every count of current
    # memories, in place of the scope's live index.
    op.create_index("ix_junior_memory_memories_actor", "junior_memory_memories", ["actor_key", "archived_at"])


def downgrade() -> None:
    op.drop_index("ix_junior_memory_memories_actor", table_name="junior_memory_memories")
