"""Events by tool call: a retried forget finds what its first call archived without reading every event.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-05
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_junior_memory_events_call", "junior_memory_events", ["tool_call_id", "source_key"])


def downgrade() -> None:
    op.drop_index("ix_junior_memory_events_call", table_name="junior_memory_events")
