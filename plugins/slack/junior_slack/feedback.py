"""Feedback on replies: the buttons under each answer, and each press recorded in the app's database.

An answer carries Slack's ``feedback_buttons`` (in a ``context_actions`` block); each button's value names the
event whose turn made the answer. A press arrives as a ``block_actions`` interaction: it is acknowledged, recorded
(event id, who pressed, good or bad, where) in ``junior_slack_feedback`` and logged in one line. No model is asked.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from junior_slack.events import default_url, engine_for

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.engine import Engine

__all__ = ["ACTION_ID", "Feedback", "FeedbackStore", "buttons", "parse_press"]

log = logging.getLogger("junior.slack")

TABLE = "junior_slack_feedback"
ACTION_ID = "junior_feedback"
VALUES = ("good", "bad")
_EVENT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def buttons(event_id: str) -> dict[str, Any]:
    """The ``context_actions`` block with the two feedback buttons of the answer to ``event_id``."""
    def button(value: str, text: str, label: str) -> dict[str, Any]:
        return {"text": {"type": "plain_text", "text": text}, "accessibility_label": label,
                "value": f"{value}:{event_id}"}

    return {"type": "context_actions", "elements": [{
        "type": "feedback_buttons", "action_id": ACTION_ID,
        "positive_button": button("good", "Good answer", "Mark this answer as good"),
        "negative_button": button("bad", "Bad answer", "Mark this answer as bad"),
    }]}


@dataclass(frozen=True)
class Feedback:
    """One press: on the answer to ``event_id`` (message ``message_ts`` in ``channel_id``), by ``user_id``."""

    event_id: str
    team_id: str
    channel_id: str
    message_ts: str
    user_id: str
    value: str
    at: datetime


def parse_press(body: Mapping[str, Any], action: Mapping[str, Any], at: datetime) -> Feedback:
    """The press a ``block_actions`` payload carries; ``ValueError`` saying what is wrong when it is no press of
    ours."""
    value, _, event_id = str(action.get("value") or "").partition(":")
    if value not in VALUES or not _EVENT_ID.fullmatch(event_id):
        raise ValueError(f"not a feedback value: {str(action.get('value'))[:80]!r}")
    user = body.get("user") or {}
    team = body.get("team") or {}
    channel = body.get("channel") or {}
    container = body.get("container") or {}
    user_id = str(user.get("id") or "")
    if not user_id:
        raise ValueError("the press names no user")
    return Feedback(event_id, str(team.get("id") or user.get("team_id") or ""), str(channel.get("id") or ""),
                    str(container.get("message_ts") or ""), user_id, value, at)


class FeedbackStore:
    """``record`` a press; ``list`` them, newest first."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        self._engine: Engine | None = None
        self._table: Table | None = None
        self._lock = threading.Lock()

    def _ready(self) -> tuple[Engine, Table]:
        with self._lock:
            if self._engine is None or self._table is None:
                from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table
                from sqlalchemy.exc import DBAPIError

                engine = engine_for(self.url)
                table = Table(
                    TABLE, MetaData(),
                    Column("id", Integer, primary_key=True, autoincrement=True),
                    Column("event_id", String(128), nullable=False, index=True),
                    Column("team_id", String(64), nullable=False),
                    Column("channel_id", String(64), nullable=False),
                    Column("message_ts", String(32), nullable=False),
                    Column("user_id", String(64), nullable=False),
                    Column("value", String(8), nullable=False),
                    Column("at", DateTime(), nullable=False),  # naive UTC
                )
                try:
                    table.metadata.create_all(engine, checkfirst=True)
                except DBAPIError:  # two replicas at once: the loser finds it made
                    table.metadata.create_all(engine, checkfirst=True)
                self._engine, self._table = engine, table
            return self._engine, self._table

    def record(self, press: Feedback) -> None:
        engine, table = self._ready()
        with engine.begin() as conn:
            conn.execute(table.insert().values(
                event_id=press.event_id, team_id=press.team_id, channel_id=press.channel_id,
                message_ts=press.message_ts, user_id=press.user_id, value=press.value,
                at=press.at.astimezone(UTC).replace(tzinfo=None)))

    def list(self, limit: int = 100) -> list[Feedback]:
        engine, table = self._ready()
        with engine.connect() as conn:
            rows = conn.execute(table.select().order_by(table.c.at.desc(), table.c.id.desc()).limit(limit)).all()
        return [Feedback(r.event_id, r.team_id, r.channel_id, r.message_ts, r.user_id, r.value,
                         r.at.replace(tzinfo=UTC)) for r in rows]

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
