"""Slack-style scenarios: thread events replayed as turns, with strictly valid timestamps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import attrs

from junior_core import Actor, Conversation, Message, ToolContext, parse_slack_ts

__all__ = ["BASE_TS", "Event", "Scenario", "Seed", "TurnInput", "mention", "thread_message"]

BASE_TS = 1700000000
TEAM = "T1"
CHANNEL = "C1"


def _ts(value: str | None) -> str | None:
    return None if value is None else parse_slack_ts(value)


@attrs.frozen
class Event:
    """One Slack message in the thread: a ``mention`` of the bot starts a turn, a ``thread_message`` does not."""

    kind: Literal["mention", "thread_message"]
    user: str
    text: str
    ts: str | None = attrs.field(default=None, converter=_ts)

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("mention", "thread_message"):
            raise ValueError(f"Event.kind must be 'mention' or 'thread_message', got {self.kind!r}")
        if not self.user or ":" in self.user:
            raise ValueError(f"Event.user must be a Slack user id like 'U1', got {self.user!r}")


def mention(user: str, text: str, ts: str | None = None) -> Event:
    """A message that mentions the bot: the bot answers it, with every unanswered message before it."""
    return Event("mention", user, text, ts)


def thread_message(user: str, text: str, ts: str | None = None) -> Event:
    """A message in the thread that does not mention the bot."""
    return Event("thread_message", user, text, ts)


def _assign(events: Any) -> tuple[Event, ...]:
    events = tuple(events)
    out = []
    for index, event in enumerate(events, start=1):
        if not isinstance(event, Event):
            raise TypeError(f"a scenario holds Event values (mention(...), thread_message(...)), got {event!r}")
        out.append(event if event.ts is not None else attrs.evolve(event, ts=f"{BASE_TS}.{index:06d}"))
    return tuple(out)


@attrs.frozen
class Seed:
    """A memory stored before the scenario, through memory__remember in an earlier thread of the same channel."""

    user: str
    content: str
    kind: Literal["preference", "procedure", "knowledge"] = "preference"
    ts: str = attrs.field(default="1690000000.000100", converter=parse_slack_ts)


@attrs.frozen
class TurnInput:
    """What one mention hands the agent loop: the live context and the thread so far."""

    context: ToolContext
    messages: tuple[Message, ...]
    index: int


@attrs.frozen
class Scenario:
    """A thread in channel ``C1`` of team ``T1``; events get ``1700000000.000001``-style timestamps in order."""

    events: tuple[Event, ...] = attrs.field(converter=_assign)
    visibility: Literal["public", "private"] = "public"
    team: str = TEAM
    channel: str = CHANNEL

    def __attrs_post_init__(self) -> None:
        if not any(e.kind == "mention" for e in self.events):
            raise ValueError("a scenario needs at least one mention, or the bot never answers")

    @property
    def thread_ts(self) -> str:
        ts = self.events[0].ts
        assert ts is not None
        return ts

    @property
    def source_key(self) -> str:
        """The source_key every memory written in this thread carries."""
        return f"slack:{self.team}:{self.channel}:{self.thread_ts}"

    @property
    def workspace_key(self) -> str:
        return f"slack:{self.team}"

    def actor(self, user: str) -> Actor:
        return Actor("slack", self.team, user)

    def actor_key(self, user: str) -> str:
        return self.actor(user).key

    def conversation(self, message_ts: str | None = None, thread_ts: str | None = None) -> Conversation:
        return Conversation(
            "slack",
            self.team,
            self.channel,
            thread_ts=thread_ts or self.thread_ts,
            message_ts=message_ts,
            visibility=self.visibility,
        )

    def turns(self, answers: list[str]) -> Iterator[TurnInput]:
        """Each mention as a turn; ``answers`` receives the bot's replies as the caller produces them."""
        history: list[Message] = []
        turn = 0
        for event in self.events:
            history.append(Message("user", event.text, actor=self.actor(event.user)))
            if event.kind != "mention":
                continue
            context = ToolContext(self.actor(event.user), self.conversation(message_ts=event.ts))
            yield TurnInput(context, tuple(history), turn)
            history.append(Message("assistant", answers[turn] if turn < len(answers) else ""))
            turn += 1
