"""The operator's view of the store (every scope, archived rows too), on the same data path as the tools."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from junior_memory.content import format_time, utcnow
from junior_memory.rules import MemoryRecord, record

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from junior_memory.engine import Database
    from junior_memory.queries import Statements

__all__ = ["MemoryAdmin"]

_PURGE_CHUNK = 500


class MemoryAdmin:
    """``junior memory ...`` queries; mixed into ``MemoryStore``, which provides ``db`` and ``sql``."""

    db: Database
    sql: Statements

    def _drop_vectors(self, conn: Connection, memory_ids: Sequence[str]) -> None:
        raise NotImplementedError

    def last_event_id(self) -> int | None:
        """The newest event's id, read without migrating anything; None before the events table exists."""
        def work(conn: Connection) -> int | None:
            from sqlalchemy import inspect, text

            if not inspect(conn).has_table("junior_memory_events"):
                return None
            value = conn.execute(text("SELECT MAX(id) FROM junior_memory_events")).scalar()
            return int(value) if value is not None else 0

        return self.db.run(work, write=False)

    def migration_moves(self, after_event: int | None) -> dict[str, Any]:
        """What a migration did to rows, from the events it wrote after ``after_event``: rows moved to another
        scope by reason (``direct_message``, ``group_conversation``, ``private_channel``) and rows merged."""
        def work(conn: Connection) -> dict[str, Any]:
            from sqlalchemy import text

            found = conn.execute(
                text(
                    "SELECT event, reason, COUNT(*) AS n FROM junior_memory_events WHERE id > :after AND origin = 'api'"
                    " AND (event = 'rescoped' OR (event = 'archived' AND reason = 'merged')) GROUP BY event, reason"
                ),
                {"after": after_event if after_event is not None else -1},
            ).mappings()
            moved: dict[str, int] = {}
            merged = 0
            for row in found:
                if row["event"] == "rescoped":
                    moved[str(row["reason"])] = int(row["n"])
                else:
                    merged = int(row["n"])
            return {"moved": dict(sorted(moved.items())), "merged": merged}

        return self.db.run(work, write=False)

    def get(self, memory_id: str) -> MemoryRecord | None:
        """Any memory by full id, archived or not."""
        def work(conn: Connection) -> MemoryRecord | None:
            row = conn.execute(self.sql.by_id, {"mid": memory_id}).mappings().first()
            return record(row) if row is not None else None

        return self.db.unit(work, write=False)

    def resolve_id(self, prefix: str) -> list[str]:
        """Full ids starting with ``prefix`` (at most 10), across every scope, for the operator."""
        prefix = prefix.strip().lower()
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params = {"low": prefix, "high": prefix + "g", "pattern": escaped + "%"}
        return self.db.unit(
            lambda conn: [str(i) for i in conn.execute(self.sql.ids_by_prefix, params).scalars()], write=False
        )

    def events(self, memory_id: str) -> list[dict[str, Any]]:
        """The event history of one memory, oldest first."""
        def work(conn: Connection) -> list[dict[str, Any]]:
            return [
                {
                    "event": row["event"],
                    "actor_key": row["actor_key"],
                    "source_key": row["source_key"],
                    "origin": row["origin"],
                    "tool_call_id": row["tool_call_id"],
                    "reason": row["reason"],
                    "created_at": format_time(row["created_at"]),
                }
                for row in conn.execute(self.sql.events_of, {"mid": memory_id}).mappings()
            ]

        return self.db.unit(work, write=False)

    def history(self, memory_id: str, *, limit: int = 100) -> list[MemoryRecord | str]:
        """Every version of the memory ``memory_id`` belongs to, oldest first, following ``superseded_by``.

        A version that was purged is its bare id: the row is gone, its events say when.
        """
        def work(conn: Connection) -> list[MemoryRecord | str]:
            seen: dict[str, MemoryRecord | str] = {}
            todo = [memory_id]
            while todo and len(seen) < limit:
                mid = todo.pop()
                if mid in seen:
                    continue
                row = conn.execute(self.sql.by_id, {"mid": mid}).mappings().first()
                if row is None:
                    seen[mid] = mid
                    continue
                found = seen[mid] = record(row)
                if found.superseded_by is not None:
                    todo.append(found.superseded_by)
                todo += [str(r["id"]) for r in conn.execute(self.sql.predecessors, {"mid": mid}).mappings()]
            versions = [v for v in seen.values() if isinstance(v, MemoryRecord)]
            versions.sort(key=lambda v: (v.created_at, v.id))
            gone = [v for v in seen.values() if isinstance(v, str)]
            return [*gone, *versions]

        return self.db.unit(work, write=False)

    def list_all(
        self,
        *,
        limit: int = 50,
        include_archived: bool = False,
        scope: str | None = None,
        kind: str | None = None,
    ) -> list[MemoryRecord]:
        """Memories in every scope, newest first, for the operator."""
        statement = self.sql.list_all(include_archived=include_archived, scope=scope is not None,
                                      kind=kind is not None)
        params: dict[str, Any] = {"limit": limit, "scope": scope, "kind": kind}
        return self.db.unit(
            lambda conn: [record(row) for row in conn.execute(statement, params).mappings()], write=False
        )

    def stats(self, *, now: datetime | None = None) -> dict[str, Any]:
        """Counts by state, scope, kind and origin."""
        params = {"now": now or utcnow()}

        def work(conn: Connection) -> dict[str, Any]:
            out: dict[str, Any] = {"total": 0, "by_state": {}, "by_scope": {}, "by_kind": {}, "by_origin": {}}
            for label, statement in self.sql.counts().items():
                for key, count in conn.execute(statement, params).all():
                    out[label][str(key)] = int(count)
            out["total"] = sum(out["by_state"].values())
            out["events"] = int(conn.execute(self.sql.count_events).scalar() or 0)
            return out

        return self.db.unit(work, write=False)

    def make_private(self, channel_key: str, *, now: datetime | None = None) -> dict[str, int]:
        """Move the workspace-scope rows said in ``channel_key`` (``platform:team:channel``) to that channel.

        For a private channel whose rows an older version stored as workspace knowledge: the rows do not record
        the channel's visibility (private and public Slack channels both have ``C...`` ids), so the operator
        names the channel. A row whose content is already active in the channel is archived as ``merged``.
        """
        import sqlalchemy as sa

        from junior_memory.tables import Event, Memory

        parts = channel_key.split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{channel_key!r} is not a channel key such as slack:T0123:C0456")
        workspace = ":".join(parts[:2])
        at = now or utcnow()
        table = Memory.__table__
        prefix = channel_key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ":%"

        def work(conn: Connection) -> dict[str, int]:
            rows = conn.execute(
                sa.select(table.c.id, table.c.kind, table.c.content_hash, table.c.archived_at)
                .where(table.c.scope == "conversation", table.c.subject_type == "workspace",
                       table.c.scope_key == workspace, table.c.source_key.like(prefix, escape="\\"))
                .order_by(table.c.created_at, table.c.id)
            ).mappings().all()
            active = {
                (r.kind, r.content_hash): r.id for r in conn.execute(
                    sa.select(table.c.id, table.c.kind, table.c.content_hash)
                    .where(table.c.scope_key == channel_key, table.c.archived_at.is_(None))
                )
            }
            merged = 0
            for row in rows:
                if row["archived_at"] is None:
                    group = (row["kind"], row["content_hash"])
                    if group in active:
                        conn.execute(table.update().where(table.c.id == row["id"]).values(
                            archived_at=at, archive_reason="merged", superseded_by=active[group]))
                        merged += 1
                    else:
                        active[group] = row["id"]
                conn.execute(table.update().where(table.c.id == row["id"]).values(
                    scope_key=channel_key, subject_key=channel_key, subject_type="channel"))
            if rows:
                conn.execute(Event.__table__.insert(), [
                    {"memory_id": row["id"], "event": "rescoped", "reason": "private_channel", "origin": "api",
                     "created_at": at, "actor_key": None, "source_key": None, "tool_call_id": None}
                    for row in rows
                ])
            return {"moved": len(rows), "merged": merged}

        return self.db.unit(work, write=True)

    def purge(self, *, archived_before: datetime, now: datetime | None = None) -> int:
        """Delete archived memories archived before ``archived_before``, for good; returns how many."""
        at = now or utcnow()

        def work(conn: Connection) -> int:
            ids = [str(i) for i in conn.execute(self.sql.archived_before, {"before": archived_before}).scalars()]
            for start in range(0, len(ids), _PURGE_CHUNK):
                chunk = ids[start : start + _PURGE_CHUNK]
                conn.execute(self.sql.delete_ids, {"ids": chunk})
                self._drop_vectors(conn, chunk)
                conn.execute(self.sql.insert_event, [
                    {"memory_id": memory_id, "event": "purged", "reason": "admin_purge", "origin": "api",
                     "created_at": at, "actor_key": None, "source_key": None, "tool_call_id": None}
                    for memory_id in chunk
                ])
            return len(ids)

        return self.db.unit(work, write=True)
