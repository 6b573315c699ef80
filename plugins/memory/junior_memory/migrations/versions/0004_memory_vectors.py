"""Semantic recall: one embedding per memory and model, in a table of its own (SQLite and Postgres alike).

Written with its memory in one transaction and deleted when the memory is archived or purged. ``seq`` only
grows, so a process holding the vectors in memory catches up by reading the rows after the last it saw.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from junior_memory.tables import UTCDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "junior_memory_vectors",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("memory_id", sa.String(32), nullable=False),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_junior_memory_vectors"),
        sa.UniqueConstraint("memory_id", "model", name="uq_junior_memory_vectors_memory_id_model"),
    )
    op.create_index("ix_junior_memory_vectors_model", "junior_memory_vectors", ["model", "seq"])


def downgrade() -> None:
    op.drop_table("junior_memory_vectors")
