"""Assistant threads: the context Slack passed for each (the channel the person is viewing) and whether the thread
has its title yet, in one small table of the app's database.

It is Bolt's ``AssistantThreadContextStore`` (``save``/``find``), so Bolt's own ``thread_context_changed`` handling
writes here too, instead of into the metadata of the bot's first reply.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from junior_slack.events import default_url, engine_for

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.engine import Engine

__all__ = ["ThreadStore"]

log = logging.getLogger("junior.slack")

TABLE = "junior_slack_threads"
# Slack's own limits on what a context holds are small; anything longer is not a context.
CONTEXT_MAX = 2000


class ThreadStore:
    """Per assistant thread (``channel_id``, ``thread_ts``): the latest context Slack sent, and when it got its
    title."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        self._engine: Engine | None = None
        self._table: Table | None = None
        self._lock = threading.Lock()

    def _ready(self) -> tuple[Engine, Table]:
        with self._lock:
            if self._engine is None or self._table is None:
                from sqlalchemy import Column, DateTime, MetaData, String, Table, Text

                engine = engine_for(self.url)
                table = Table(
                    TABLE, MetaData(),
                    Column("channel_id", String(64), primary_key=True),
                    Column("thread_ts", String(32), primary_key=True),
                    Column("context", Text(), nullable=True),
                    Column("updated_at", DateTime(), nullable=False),
                    Column("titled_at", DateTime(), nullable=True),
                )
                _create(engine, table)
                self._engine, self._table = engine, table
            return self._engine, self._table

    # -- Bolt's AssistantThreadContextStore ----------------------------------------------------------
    def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str] | None) -> None:
        """Keep ``context`` as the thread's latest (a thread started, or the person moved to another channel)."""
        text = json.dumps({str(k): str(v) for k, v in dict(context or {}).items() if v is not None}, sort_keys=True)
        if len(text) > CONTEXT_MAX:
            log.warning("assistant thread %s/%s: a context of %d characters was not kept", channel_id, thread_ts,
                        len(text))
            return
        self._upsert(channel_id, thread_ts, context=text)

    def find(self, *, channel_id: str, thread_ts: str) -> Any:
        """Bolt's ``AssistantThreadContext`` for the thread, or None."""
        found = self.context(channel_id, thread_ts)
        if not found:
            return None
        from slack_bolt.context.assistant.thread_context import AssistantThreadContext

        return AssistantThreadContext(found)

    # -- ours ----------------------------------------------------------------------------------------
    def context(self, channel_id: str, thread_ts: str) -> dict[str, str]:
        """The thread's latest context; empty when none was sent or it cannot be read."""
        engine, table = self._ready()
        with engine.connect() as conn:
            row = conn.execute(table.select().where(table.c.channel_id == channel_id,
                                                    table.c.thread_ts == thread_ts)).first()
        if row is None or not row.context:
            return {}
        try:
            value = json.loads(row.context)
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def take_title(self, channel_id: str, thread_ts: str) -> bool:
        """True once per assistant thread (one whose start was seen): for the message that gives it its title,
        the first. False for any other thread, a DM's own threads included."""
        engine, table = self._ready()
        with engine.begin() as conn:
            taken = conn.execute(
                table.update()
                .where(table.c.channel_id == channel_id, table.c.thread_ts == thread_ts, table.c.titled_at.is_(None))
                .values(titled_at=_now())
            ).rowcount
        return bool(taken == 1)

    def _upsert(self, channel_id: str, thread_ts: str, **values: Any) -> None:
        from sqlalchemy.exc import IntegrityError

        engine, table = self._ready()
        now = _now()
        with engine.begin() as conn:
            updated = conn.execute(
                table.update().where(table.c.channel_id == channel_id, table.c.thread_ts == thread_ts)
                .values(updated_at=now, **values)
            ).rowcount
        if updated:
            return
        try:
            with engine.begin() as conn:
                conn.execute(table.insert().values(channel_id=channel_id, thread_ts=thread_ts, updated_at=now,
                                                   **values))
        except IntegrityError:  # made at the same moment by another delivery: update that one
            with engine.begin() as conn:
                conn.execute(
                    table.update().where(table.c.channel_id == channel_id, table.c.thread_ts == thread_ts)
                    .values(updated_at=now, **values)
                )

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _create(engine: Engine, table: Table) -> None:
    from sqlalchemy.exc import DBAPIError

    try:
        table.metadata.create_all(engine, checkfirst=True)
    except DBAPIError:
        # Two replicas creating the table at once: the loser finds it made by the winner.
        table.metadata.create_all(engine, checkfirst=True)
