"""What the model is told about the host before a turn: today's date (UTC) and what the conversation's kind means.

The runtime's ``prompt_context`` opens with it, so every host that embeds the runtime gives the model a date, and
the agent loop puts it in the system prompt.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from junior_core.context import ToolContext

__all__ = ["CONVERSATION_KINDS", "ConversationKind", "host_context", "implied_kind", "utcnow"]

ConversationKind = Literal["direct_message", "private_channel", "public_channel", "shared_channel"]

# What each kind of conversation means for what is said and remembered there: who reads it, and who will see a
# memory saved in it, in the words a memory's answer uses (a preference is always seen only by the person who said
# it, wherever it is said).
CONVERSATION_KINDS: dict[str, str] = {
    "direct_message": (
        "This conversation is a direct message: only its members read it. A procedure or knowledge memory saved "
        "here is seen by everyone in this direct message; a preference only by the person who said it, in every "
        "conversation."
    ),
    "private_channel": (
        "This conversation is a private channel: only its members read it. A procedure or knowledge memory saved "
        "here is seen by everyone in this private conversation; a preference only by the person who said it. Do "
        "not repeat here what you know from other conversations unless the person asking said it."
    ),
    "public_channel": (
        "This conversation is a public channel: anyone in the workspace can read it. A procedure or knowledge "
        "memory saved here is seen by everyone in this workspace's public channels; a preference only by the "
        "person who said it. Do not bring up a person's personal details (health, family, preferences) here "
        "unless they ask."
    ),
    "shared_channel": (
        "This conversation is a channel shared with another organisation: some members are not this workspace's "
        "people. Workspace memories are not available here, and a procedure or knowledge memory saved here is seen "
        "by everyone in this private conversation (this channel) only. Do not reveal anything about this workspace "
        "that was not said here."
    ),
}


def implied_kind(context: ToolContext) -> ConversationKind | None:
    """The kind the context's conversation implies when the host did not say: a private Slack channel whose id
    starts with ``D`` is a direct message; otherwise its visibility decides. None without a conversation."""
    conversation = context.conversation
    if conversation is None:
        return None
    if conversation.visibility == "public":
        return "public_channel"
    if conversation.platform == "slack" and conversation.channel_id.startswith("D"):
        return "direct_message"
    return "private_channel"


def host_context(now: datetime, kind: ConversationKind | None) -> str:
    """The lines about the host: today's date (UTC) and what the conversation's kind means."""
    today = now.astimezone(UTC)
    lines = [f"Today is {today:%A} {today.date().isoformat()} (UTC); the time is {today:%H:%M} UTC."]
    if kind is not None:
        if kind not in CONVERSATION_KINDS:
            raise ValueError(f"conversation_kind must be one of {', '.join(CONVERSATION_KINDS)}, got {kind!r}")
        lines.append(CONVERSATION_KINDS[kind])
    return " ".join(lines)


def utcnow() -> datetime:
    """The system's wall clock, in UTC: what a clock without ``utcnow`` of its own reads."""
    return datetime.now(UTC)


def clock_utcnow(clock: object) -> datetime:
    """The wall-clock time in UTC from ``clock`` when it has a ``utcnow`` (``ManualClock`` does), else the system's."""
    read = getattr(clock, "utcnow", None)
    now = read() if callable(read) else utcnow()
    # A clock's naive time is taken as UTC, as its name says, never as the machine's local time.
    return now.replace(tzinfo=UTC) if now.tzinfo is None else now
