"""Private conversations: conversation memories belong to the channel, not to one message or thread.

Two kinds of rows move to ``scope_key = <platform>:<team>:<channel>`` with ``subject_type = 'channel'``:

- private rows keyed by their thread or message (``subject_type = 'thread'``): in a DM each top-level message has
  its own timestamp, so such a row was never seen again after the message that wrote it;
- rows written in a Slack DM (channel id starting with ``D``, read from the row's source_key) under the old
  default ``visibility="public"``, which put them in the workspace scope where every public channel read them.

Rows that land on the same active content in one channel and kind are merged: the oldest stays, the others are
archived (``merged``, ``superseded_by`` the one kept). Every moved row gets a ``rescoped`` event.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op
from junior_memory.tables import UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

memories = sa.table(
    "junior_memory_memories",
    sa.column("id", sa.String()),
    sa.column("scope", sa.String()),
    sa.column("scope_key", sa.String()),
    sa.column("kind", sa.String()),
    sa.column("subject_type", sa.String()),
    sa.column("subject_key", sa.String()),
    sa.column("content_hash", sa.String()),
    sa.column("source_key", sa.String()),
    sa.column("created_at", UTCDateTime()),
    sa.column("archived_at", UTCDateTime()),
    sa.column("archive_reason", sa.String()),
    sa.column("superseded_by", sa.String()),
)
events = sa.table(
    "junior_memory_events",
    sa.column("memory_id", sa.String()),
    sa.column("event", sa.String()),
    sa.column("source_key", sa.String()),
    sa.column("origin", sa.String()),
    sa.column("reason", sa.String()),
    sa.column("created_at", UTCDateTime()),
)


def _channel(key: str | None) -> str | None:
    """``platform:team:channel`` of a ``platform:team:channel:ts`` key, or None when it has no channel."""
    parts = (key or "").split(":")
    return ":".join(parts[:3]) if len(parts) >= 4 and all(parts[:3]) else None


def _moves(conn: sa.Connection) -> list[tuple[dict[str, Any], str, str]]:
    """``(row, new scope_key, reason)`` for every row this revision re-keys."""
    rows = conn.execute(
        sa.select(memories).where(
            memories.c.scope == "conversation", memories.c.subject_type.in_(("thread", "workspace"))
        )
    ).mappings()
    moves = []
    for row in rows:
        if row["subject_type"] == "thread":
            key = _channel(row["scope_key"]) or _channel(row["source_key"])
            if key is not None:
                moves.append((dict(row), key, "private_channel"))
            continue
        key = _channel(row["source_key"])
        if key is not None and key.startswith("slack:") and key.split(":")[2].startswith("D"):
            moves.append((dict(row), key, "direct_message"))
    return moves


def upgrade() -> None:
    conn = op.get_bind()
    now = datetime.now(UTC)
    moves = _moves(conn)
    # The oldest active row of each (channel, kind, content) stays; the rest are archived before any key
    # changes, so the unique index on active content never sees two of them at once.
    keep: dict[tuple[str, str, str], str] = {}
    merged: list[dict[str, Any]] = []
    for row, key, _reason in sorted(moves, key=lambda m: (m[0]["created_at"], m[0]["id"])):
        if row["archived_at"] is not None:
            continue
        group = (key, row["kind"], row["content_hash"])
        if group in keep:
            merged.append({"mid": row["id"], "kept": keep[group]})
        else:
            keep[group] = row["id"]
    if merged:
        conn.execute(
            memories.update()
            .where(memories.c.id == sa.bindparam("mid"))
            .values(archived_at=now, archive_reason="merged", superseded_by=sa.bindparam("kept")),
            merged,
        )
    if not moves:
        return
    conn.execute(
        memories.update()
        .where(memories.c.id == sa.bindparam("mid"))
        .values(scope_key=sa.bindparam("key"), subject_key=sa.bindparam("key"), subject_type="channel"),
        [{"mid": row["id"], "key": key} for row, key, _reason in moves],
    )
    history = [
        {"memory_id": row["id"], "event": "rescoped", "source_key": row["source_key"], "origin": "api",
         "reason": reason, "created_at": now}
        for row, _key, reason in moves
    ]
    history += [
        {"memory_id": m["mid"], "event": "archived", "source_key": None, "origin": "api", "reason": "merged",
         "created_at": now}
        for m in merged
    ]
    conn.execute(events.insert(), history)


def downgrade() -> None:
    """Channel rows go back to their thread (the narrower scope); merged rows stay archived."""
    conn = op.get_bind()
    conn.execute(
        memories.update()
        .where(memories.c.subject_type == "channel", memories.c.source_key.is_not(None))
        .values(scope_key=memories.c.source_key, subject_key=memories.c.source_key, subject_type="thread")
    )
