"""Which Slack events were already taken: one small table, so a retried event runs no second turn, and an event
whose turn died with its process is answered by the retry.

Slack resends an event it thinks went unanswered (``X-Slack-Retry-Num``) with the same ``event_id``. The first
process to insert that id takes a lease on it (``lease_until``) and runs the turn, and marks it finished
(``finished_at``) when the answer is posted. A later delivery, to this process or to another replica on the same
database, is refused while the lease is live or once the turn finished; after a lease ran out unfinished (the
process was killed mid-turn) the first delivery to renew it runs the turn again. Each step is one conditional
statement, so two deliveries never both win. SQLite under the user data dir by default; ``JUNIOR_SLACK_URL`` (or,
when that is unset, ``JUNIOR_MEMORY_URL``) puts it on a shared Postgres.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.engine import Engine

__all__ = ["ENV_URL", "EventLog", "default_url", "engine_for"]

log = logging.getLogger("junior.slack")

ENV_URL = "JUNIOR_SLACK_URL"
TABLE = "junior_slack_events"
# Slack retries within minutes; a day is plenty, and the table stays small.
KEEP = timedelta(days=1)
# Slack retries an event about at once, after a minute and after five: a lease shorter than five minutes lets the
# last retry answer an event whose process died mid-turn, and is longer than a turn should take.
LEASE = timedelta(minutes=4)
# Added after the first release; a row without them (made before) counts as finished.
LEASE_COLUMNS = ("lease_until", "finished_at")
PRUNE_EVERY = 500


def default_url() -> str:
    """``JUNIOR_SLACK_URL``, else ``JUNIOR_MEMORY_URL``, else ``<user data dir>/junior/slack.sqlite3``."""
    for name in (ENV_URL, "JUNIOR_MEMORY_URL"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    import platformdirs

    return f"sqlite:///{Path(platformdirs.user_data_dir('junior', appauthor=False)) / 'slack.sqlite3'}"


def engine_for(url: str) -> Engine:
    """An engine on ``url``; a SQLite file (and its folder) made first, readable by this user alone."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database or "").expanduser()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Bot tokens may be kept here (OAuth installs): the file is this user's alone, as the MCP token files are.
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        path.chmod(0o600)
    return create_engine(url)


class EventLog:
    """``claim(event_id)`` leases an event to one delivery at a time; ``finish(event_id)`` ends it for good.

    ``clock`` returns the current time in UTC (tests move it instead of sleeping).
    """

    def __init__(self, url: str | None = None, *, lease: timedelta = LEASE,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.url = url or default_url()
        self.lease = lease
        self._clock = clock or (lambda: datetime.now(UTC))
        self._engine: Engine | None = None
        self._table: Table | None = None
        self._lock = threading.Lock()
        self._claims = 0

    def _ready(self) -> tuple[Engine, Table]:
        if self._engine is not None and self._table is not None:
            return self._engine, self._table
        with self._lock:
            if self._engine is None or self._table is None:
                from sqlalchemy import Column, DateTime, MetaData, String, Table
                from sqlalchemy.exc import DBAPIError

                engine = engine_for(self.url)
                table = Table(
                    TABLE, MetaData(),
                    Column("event_id", String(128), primary_key=True),
                    Column("team_id", String(64)),
                    Column("received_at", DateTime(), nullable=False, index=True),  # naive UTC on every backend
                    Column("lease_until", DateTime(), nullable=True),
                    Column("finished_at", DateTime(), nullable=True),
                )
                try:
                    table.metadata.create_all(engine, checkfirst=True)
                except DBAPIError:
                    # Two replicas creating the table at once: the loser finds it made by the winner.
                    table.metadata.create_all(engine, checkfirst=True)
                _add_lease_columns(engine)
                self._engine, self._table = engine, table
        assert self._engine is not None and self._table is not None
        return self._engine, self._table

    def _now(self) -> datetime:
        return self._clock().astimezone(UTC).replace(tzinfo=None)

    def claim(self, event_id: str, team_id: str | None = None) -> bool:
        """True if this delivery of ``event_id`` should run the turn: the first one, or the first after a lease
        ran out unfinished. False while another delivery's lease is live, or once the turn finished."""
        from sqlalchemy.exc import IntegrityError

        engine, table = self._ready()
        now = self._now()
        try:
            with engine.begin() as conn:
                conn.execute(table.insert().values(event_id=event_id, team_id=team_id, received_at=now,
                                                   lease_until=now + self.lease))
        except IntegrityError:
            # One statement decides, so of two deliveries after the lease ran out only one renews it. A row made
            # before leases has none (NULL <= now is not true): it stays finished.
            with engine.begin() as conn:
                renewed = conn.execute(
                    table.update()
                    .where(table.c.event_id == event_id, table.c.finished_at.is_(None), table.c.lease_until <= now)
                    .values(lease_until=now + self.lease)
                ).rowcount
            if renewed != 1:
                return False
            log.warning("event %s: its turn did not finish within its lease (the process ended?); running it again",
                        event_id)
        self._claims += 1
        if self._claims % PRUNE_EVERY == 0:
            with engine.begin() as conn:
                conn.execute(table.delete().where(table.c.received_at < now - KEEP))
        return True

    def finish(self, event_id: str) -> None:
        """Mark ``event_id``'s turn done: no delivery runs it again. Never raises: a finish not recorded (logged)
        only lets a retry after the lease run the turn a second time."""
        try:
            engine, table = self._ready()
            with engine.begin() as conn:
                conn.execute(table.update().where(table.c.event_id == event_id).values(finished_at=self._now()))
        except Exception:
            log.exception("event %s could not be marked finished; a retry after its lease would answer it again",
                          event_id)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()


def _add_lease_columns(engine: Engine) -> None:
    """Bring a table made before leases up to date: nullable columns, so its rows read as finished."""
    from sqlalchemy import inspect, text
    from sqlalchemy.exc import DBAPIError

    def missing() -> list[str]:
        have = {column["name"] for column in inspect(engine).get_columns(TABLE)}
        return [name for name in LEASE_COLUMNS if name not in have]

    kind = "TIMESTAMP WITHOUT TIME ZONE" if engine.dialect.name == "postgresql" else "DATETIME"
    for name in missing():
        try:
            with engine.begin() as conn:
                conn.execute(text(f"ALTER TABLE {TABLE} ADD COLUMN {name} {kind}"))
        except DBAPIError:
            # Another replica added it first; anything else shows as the column still missing.
            if name in missing():
                raise
