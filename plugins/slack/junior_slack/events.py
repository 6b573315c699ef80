"""Which Slack events were already taken: one small table, so a retried event never runs a second turn.

Slack resends an event it thinks went unanswered (``X-Slack-Retry-Num``) with the same ``event_id``. The first
process to insert that id runs the turn; every later delivery, to this process or to another replica on the same
database, finds the row and stops. SQLite under the user data dir by default; ``JUNIOR_SLACK_URL`` (or, when
that is unset, ``JUNIOR_MEMORY_URL``) puts it on a shared Postgres.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.engine import Engine

__all__ = ["ENV_URL", "EventLog", "default_url"]

log = logging.getLogger("junior.slack")

ENV_URL = "JUNIOR_SLACK_URL"
TABLE = "junior_slack_events"
# Slack retries within minutes; a day is plenty, and the table stays small.
KEEP = timedelta(days=1)
PRUNE_EVERY = 500


def default_url() -> str:
    """``JUNIOR_SLACK_URL``, else ``JUNIOR_MEMORY_URL``, else ``<user data dir>/junior/slack.sqlite3``."""
    for name in (ENV_URL, "JUNIOR_MEMORY_URL"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    import platformdirs

    return f"sqlite:///{Path(platformdirs.user_data_dir('junior', appauthor=False)) / 'slack.sqlite3'}"


class EventLog:
    """``claim(event_id)`` is True exactly once per event id, across threads, processes and replicas."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        self._engine: Engine | None = None
        self._table: Table | None = None
        self._lock = threading.Lock()
        self._claims = 0

    def _ready(self) -> tuple[Engine, Table]:
        if self._engine is not None and self._table is not None:
            return self._engine, self._table
        with self._lock:
            if self._engine is None or self._table is None:
                from sqlalchemy import Column, DateTime, MetaData, String, Table, create_engine
                from sqlalchemy.engine import make_url
                from sqlalchemy.exc import DBAPIError

                parsed = make_url(self.url)
                if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
                    Path(parsed.database or "").expanduser().parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                engine = create_engine(self.url)
                table = Table(
                    TABLE, MetaData(),
                    Column("event_id", String(128), primary_key=True),
                    Column("team_id", String(64)),
                    Column("received_at", DateTime(), nullable=False, index=True),  # naive UTC on every backend
                )
                try:
                    table.metadata.create_all(engine, checkfirst=True)
                except DBAPIError:
                    # Two replicas creating the table at once: the loser finds it made by the winner.
                    table.metadata.create_all(engine, checkfirst=True)
                self._engine, self._table = engine, table
        assert self._engine is not None and self._table is not None
        return self._engine, self._table

    def claim(self, event_id: str, team_id: str | None = None) -> bool:
        """True if this is the first delivery of ``event_id`` (and records it), False for a repeat."""
        from sqlalchemy.exc import IntegrityError

        engine, table = self._ready()
        now = datetime.now(UTC).replace(tzinfo=None)
        try:
            with engine.begin() as conn:
                conn.execute(table.insert().values(event_id=event_id, team_id=team_id, received_at=now))
        except IntegrityError:
            return False
        self._claims += 1
        if self._claims % PRUNE_EVERY == 0:
            with engine.begin() as conn:
                conn.execute(table.delete().where(table.c.received_at < now - KEEP))
        return True

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
