"""A retried forget answers what the first call answered.

A host that lost the first answer (a timeout, a reconnect) sends the same call again with the same
``tool_call_id``. Remember finds its row by idempotency key; forget finds the ``archived`` event its first call
wrote (``tool_removed``, same conversation ``source_key`` and ``tool_call_id``) and answers with that memory,
instead of looking the words up again: they would now find nothing (``not_found``), or worse, another memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from junior_core import ToolError
from junior_memory.content import format_time
from junior_memory.rules import MemoryRecord, record

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from junior_memory.scope import Scope
    from junior_memory.store import MemoryStore

__all__ = ["forgotten_answer", "forgotten_by_call"]


def forgotten_by_call(
    store: MemoryStore, scopes: Sequence[Scope], source_key: str | None, tool_call_id: str | None,
    ident: str | None,
) -> MemoryRecord | None:
    """The memory an earlier forget with this ``tool_call_id`` in this conversation archived, if it is visible in
    ``scopes``; None when there was no such call. A retry naming another id is refused (``rejected``)."""
    if not source_key or not tool_call_id:
        return None
    from sqlalchemy import select

    from junior_memory.tables import Event

    def work(conn: Connection) -> MemoryRecord | None:
        memory_id = conn.execute(
            select(Event.memory_id)
            .where(Event.event == "archived", Event.reason == "tool_removed", Event.source_key == source_key,
                   Event.tool_call_id == tool_call_id)
            .order_by(Event.id)
            .limit(1)
        ).scalar()
        if memory_id is None:
            return None
        row = conn.execute(store.sql.by_id, {"mid": memory_id}).mappings().first()
        return record(dict(row)) if row is not None else None

    found = store.db.unit(work, write=False)
    if found is None or not any((s.scope, s.scope_key) == (found.scope, found.scope_key) for s in scopes):
        return None
    if ident is not None and not found.id.startswith(ident.strip().lower()):
        raise ToolError(
            "rejected",
            "Nothing was forgotten: this tool_call_id was already used to forget a different memory. Retry as a "
            "new tool call (with a new tool_call_id) to forget this one.",
        )
    return found


def forgotten_answer(memory: MemoryRecord) -> dict[str, Any]:
    """What memory__forget answers about the memory it archived (the first time and on every retry)."""
    return {
        "forgotten": {
            **memory.public(),
            "archived_at": format_time(memory.archived_at),
            "archive_reason": memory.archive_reason,
        }
    }
