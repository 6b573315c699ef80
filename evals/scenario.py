"""Slack-style scenarios: thread events replayed as turns, with strictly valid timestamps."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

import attrs

from junior_core import Actor, Conversation, Message, ToolContext
from junior_core.context import parse_slack_ts

__all__ = [
    "BASE_TS", "AnyScenario", "Event", "Place", "Scenario", "Seed", "Timeline", "TurnInput", "mention",
    "thread_message",
]

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


class _Home:
    """The keys and actors of a scenario's or a timeline's home: its team, channel and visibility."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def team(self) -> str: ...

        @property
        def channel(self) -> str: ...

        @property
        def visibility(self) -> Literal["public", "private"]: ...

    @property
    def workspace_key(self) -> str:
        return f"slack:{self.team}"

    @property
    def shared_key(self) -> str:
        """The conversation scope's key: the workspace for a public channel, the channel for a private one."""
        return self.workspace_key if self.visibility == "public" else f"slack:{self.team}:{self.channel}"

    def actor(self, user: str) -> Actor:
        return Actor("slack", self.team, user)

    def actor_key(self, user: str) -> str:
        return self.actor(user).key


@attrs.frozen
class Scenario(_Home):
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

    def where(self, turn: int) -> str:
        """Where mention number ``turn`` was said, in words."""
        return f"{self.visibility} channel {self.channel}, thread {self.thread_ts}"

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


# -- timelines: several conversations -------------------------------------------------------------

CHANNEL_ID = re.compile(r"^[CDG][A-Z0-9]{1,20}$")


@attrs.frozen
class Place:
    """A conversation a timeline's messages are said in: a channel and its visibility, and a thread label.

    ``thread=None``: every message is top-level, its own conversation, with no earlier messages handed to the
    bot (a DM, or a mention at the top of a channel: what junior-slack sees). Messages with the same label share
    one thread, rooted at the first of them. Channel ids follow Slack: ``D...`` a DM (always private),
    ``C...``/``G...`` a channel.
    """

    channel: str
    visibility: Literal["public", "private"]
    thread: str | None = None
    team: str = TEAM

    def __attrs_post_init__(self) -> None:
        if not CHANNEL_ID.match(self.channel):
            raise ValueError(f"Place.channel must be a Slack channel id like 'D1', 'C1' or 'G1', got {self.channel!r}")
        if self.channel.startswith("D") and self.visibility != "private":
            raise ValueError(f"{self.channel} is a direct message, and a direct message is private")
        if self.visibility not in ("public", "private"):
            raise ValueError(f"Place.visibility must be 'public' or 'private', got {self.visibility!r}")

    def describe(self) -> str:
        kind = "DM" if self.channel.startswith("D") else f"{self.visibility} channel"
        where = f"thread {self.thread!r}" if self.thread else "top level"
        return f"{kind} {self.channel} ({where})"


def _steps(steps: Any) -> tuple[tuple[Place, Event], ...]:
    out = []
    for index, step in enumerate(tuple(steps), start=1):
        place, event = step
        if not isinstance(place, Place) or not isinstance(event, Event):
            raise TypeError(f"a timeline holds (Place, Event) pairs, got {step!r}")
        if place.thread is None and event.kind != "mention":
            raise ValueError(
                f"step {index}: a top-level message that does not mention the bot never reaches it; "
                "give the place a thread, or make it a mention"
            )
        out.append((place, event if event.ts is not None else attrs.evolve(event, ts=f"{BASE_TS}.{index:06d}")))
    return tuple(out)


@attrs.frozen
class Timeline(_Home):
    """Messages in several conversations of one workspace, in order; the first one's conversation is *home*.

    Each mention is a turn in its own conversation, handed the earlier messages of its thread only (none at
    the top level), as junior-slack hands them. Checks read home like a ``Scenario``'s thread: ``source_key``,
    ``visibility`` and the shared scope are home's.
    """

    steps: tuple[tuple[Place, Event], ...] = attrs.field(converter=_steps)

    def __attrs_post_init__(self) -> None:
        if not any(e.kind == "mention" for _, e in self.steps):
            raise ValueError("a timeline needs at least one mention, or the bot never answers")
        seen: dict[tuple[str, str], str] = {}
        for place, _ in self.steps:
            known = seen.setdefault((place.team, place.channel), place.visibility)
            if known != place.visibility:
                raise ValueError(f"channel {place.channel} is both {known} and {place.visibility} in one timeline")

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(e for _, e in self.steps)

    @property
    def home(self) -> Place:
        return self.steps[0][0]

    @property
    def team(self) -> str:
        return self.home.team

    @property
    def channel(self) -> str:
        return self.home.channel

    @property
    def visibility(self) -> Literal["public", "private"]:
        return self.home.visibility

    def _root(self, place: Place) -> str | None:
        """The ts of the thread's first message, or None at the top level."""
        if place.thread is None:
            return None
        return next(e.ts for p, e in self.steps if p == place)

    @property
    def source_key(self) -> str:
        """The source_key of home's first message: what a memory written there carries."""
        place, event = self.steps[0]
        return f"slack:{place.team}:{place.channel}:{self._root(place) or event.ts}"

    def conversation(self, message_ts: str | None = None, thread_ts: str | None = None) -> Conversation:
        """A conversation at home (seeds are written there)."""
        return Conversation("slack", self.team, self.channel, thread_ts=thread_ts, message_ts=message_ts,
                            visibility=self.visibility)

    def place_of(self, turn: int) -> Place:
        """Where mention number ``turn`` (0-based, in order) was said."""
        return [p for p, e in self.steps if e.kind == "mention"][turn]

    def where(self, turn: int) -> str:
        return self.place_of(turn).describe()

    def turns(self, answers: list[str]) -> Iterator[TurnInput]:
        """Each mention as a turn in its own conversation; ``answers`` receives the bot's replies in order."""
        threads: dict[Place, list[Message]] = {}
        turn = 0
        for place, event in self.steps:
            actor = Actor("slack", place.team, event.user)
            history = threads.setdefault(place, []) if place.thread is not None else []
            history.append(Message("user", event.text, actor=actor))
            if event.kind != "mention":
                continue
            # The thread's first message is itself top-level: Slack sends no thread_ts with it.
            root = self._root(place)
            conversation = Conversation("slack", place.team, place.channel,
                                        thread_ts=root if root != event.ts else None, message_ts=event.ts,
                                        visibility=place.visibility)
            yield TurnInput(ToolContext(actor, conversation), tuple(history), turn)
            history.append(Message("assistant", answers[turn] if turn < len(answers) else ""))
            turn += 1


AnyScenario = Scenario | Timeline
