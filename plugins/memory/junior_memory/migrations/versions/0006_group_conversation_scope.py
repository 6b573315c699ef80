"""Group conversations: 0.1's rows from a Slack group DM or legacy private channel leave the workspace.

Slack ids a group DM (an mpim) and a private channel created before 2021 with ``G``. junior-memory 0.1 wrote
procedures and knowledge said there under its default ``visibility="public"``, that is into the workspace
scope, where every public channel recalled them; revision 0003 moved such rows out of the workspace for DMs
(``D``) only. These rows move the same way: to ``scope_key = slack:<team>:<channel>`` with ``subject_type =
'channel'``, the channel's members alone seeing them. Rows that land on the same active content in one channel
and kind are merged (the oldest stays; the others are archived, ``merged``, ``superseded_by`` the one kept).
Every moved row gets a ``rescoped`` event with reason ``group_conversation``.

A private channel whose id starts with ``C`` (created since 2021) cannot be told from a public one by its id;
rows 0.1 wrote there stay where they are (see docs/memory.md, Migrations).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op
from junior_memory.tables import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

REASON = "group_conversation"

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


def _group_channel(source_key: str | None) -> str | None:
    """``slack:team:G...`` of a ``slack:team:G...:ts`` source key, or None."""
    parts = (source_key or "").split(":")
    if len(parts) >= 4 and parts[0] == "slack" and parts[1] and parts[2].startswith("G"):
        return ":".join(parts[:3])
    return None


def _moves(conn: sa.Connection) -> list[tuple[dict[str, Any], str]]:
    rows = conn.execute(
        sa.select(memories).where(
            memories.c.scope == "conversation", memories.c.subject_type == "workspace",
            memories.c.source_key.like("slack:%:G%"),
        )
    ).mappings()
    return [(dict(row), key) for row in rows if (key := _group_channel(row["source_key"])) is not None]


def upgrade() -> None:
    conn = op.get_bind()
    now = datetime.now(UTC)
    moves = _moves(conn)
    if not moves:
        return
    # Rows already in the channel (written since, under the private rule) count as kept first.
    held = conn.execute(
        sa.select(memories.c.id, memories.c.scope_key, memories.c.kind, memories.c.content_hash).where(
            memories.c.scope == "conversation", memories.c.subject_type == "channel",
            memories.c.scope_key.in_({key for _, key in moves}), memories.c.archived_at.is_(None),
        )
    ).mappings()
    keep: dict[tuple[str, str, str], str] = {(r["scope_key"], r["kind"], r["content_hash"]): r["id"] for r in held}
    merged: list[dict[str, Any]] = []
    for row, key in sorted(moves, key=lambda m: (m[0]["created_at"], m[0]["id"])):
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
    conn.execute(
        memories.update()
        .where(memories.c.id == sa.bindparam("mid"))
        .values(scope_key=sa.bindparam("key"), subject_key=sa.bindparam("key"), subject_type="channel"),
        [{"mid": row["id"], "key": key} for row, key in moves],
    )
    history = [
        {"memory_id": row["id"], "event": "rescoped", "source_key": row["source_key"], "origin": "api",
         "reason": REASON, "created_at": now}
        for row, _key in moves
    ]
    history += [
        {"memory_id": m["mid"], "event": "archived", "source_key": None, "origin": "api", "reason": "merged",
         "created_at": now}
        for m in merged
    ]
    conn.execute(events.insert(), history)


def downgrade() -> None:
    """The moved rows go back to the workspace scope; merged rows stay archived."""
    conn = op.get_bind()
    moved = sa.select(events.c.memory_id).where(events.c.event == "rescoped", events.c.reason == REASON)
    rows = conn.execute(
        sa.select(memories.c.id, memories.c.scope_key).where(
            memories.c.id.in_(moved), memories.c.subject_type == "channel"
        )
    ).mappings().all()
    if rows:
        conn.execute(
            memories.update()
            .where(memories.c.id == sa.bindparam("mid"))
            .values(scope_key=sa.bindparam("key"), subject_key=sa.bindparam("key"), subject_type="workspace"),
            [{"mid": r["id"], "key": ":".join(r["scope_key"].split(":")[:2])} for r in rows],
        )
