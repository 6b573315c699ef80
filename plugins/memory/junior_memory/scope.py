"""Where a memory lives and who can read it, derived only from the live context."""

from __future__ import annotations

from typing import Literal

import attrs

from junior_core import Conversation, ToolContext, ToolError
from junior_core.context import parse_slack_ts

__all__ = [
    "KINDS", "Kind", "Scope", "ScopeName", "channel_key", "conversation_scope", "read_scopes", "source_key",
    "write_scope",
]

Kind = Literal["preference", "procedure", "knowledge"]
ScopeName = Literal["personal", "conversation"]
KINDS: tuple[Kind, ...] = ("preference", "procedure", "knowledge")


@attrs.frozen
class Scope:
    """One scope a memory is written to or read from.

    ``personal``: scope_key and subject_key are the actor key (``platform:team:user``), subject_type ``actor``.
    ``conversation`` in a public channel: the workspace key (``platform:team``), subject_type ``workspace``;
    in a private one (DM, group DM, private channel): the channel key (``platform:team:channel``), subject_type
    ``channel``, for top-level messages and threads alike. Its members see its whole history anyway, and each
    top-level DM message has its own timestamp, so a per-message key would lose the memory at the next message.
    """

    scope: ScopeName
    scope_key: str
    subject_type: Literal["actor", "workspace", "channel"]

    @property
    def subject_key(self) -> str:
        return self.scope_key

    @property
    def visible_to(self) -> str:
        """Who can see a memory in this scope, in words a model can repeat to the user."""
        if self.scope == "personal":
            return "only the person who said it"
        if self.subject_type == "workspace":
            return "everyone in this workspace's public channels"
        platform, _, channel = self.scope_key.split(":", 2)
        if platform == "slack" and channel.startswith("D"):
            return "everyone in this direct message"
        return "everyone in this private conversation"


def source_key(context: ToolContext) -> str | None:
    """The conversation's source_key, re-checking Slack timestamps so a bad one is refused, never re-keyed."""
    conversation = context.conversation
    if conversation is None:
        return None
    if conversation.platform == "slack":
        for ts in (conversation.thread_ts, conversation.message_ts):
            if ts is not None:
                try:
                    parse_slack_ts(ts)
                except ValueError as exc:
                    raise ToolError(
                        "rejected",
                        f"The conversation's timestamp is invalid ({exc}); memory will not key rows to it. "
                        "This is a host problem: tell the user memory cannot be used in this conversation.",
                    ) from exc
    return conversation.source_key


def personal_scope(actor_key: str) -> Scope:
    return Scope("personal", actor_key, "actor")


def conversation_scope(conversation: Conversation) -> Scope:
    """The workspace for a public channel; the channel itself for a private conversation."""
    if conversation.visibility == "public":
        return Scope("conversation", conversation.workspace_key, "workspace")
    return Scope("conversation", channel_key(conversation), "channel")


def channel_key(conversation: Conversation) -> str:
    """``<platform>:<team_id>:<channel_id>``: the key of a private conversation's memories."""
    return f"{conversation.platform}:{conversation.team_id}:{conversation.channel_id}"


def write_scope(kind: Kind, context: ToolContext) -> Scope:
    """The scope a new memory of ``kind`` goes to, or a ``ToolError`` saying what is missing."""
    if kind == "preference":
        if context.actor is None:
            raise ToolError(
                "rejected",
                "A preference is stored for the person who stated it, and this conversation has no known speaker. "
                "Nothing was saved; if this is a team practice, use kind 'procedure' or 'knowledge' instead.",
            )
        return personal_scope(context.actor.key)
    conversation = context.conversation
    if conversation is None:
        raise ToolError(
            "missing_context",
            f"A {kind} is stored for the conversation it was said in, and the host gave no conversation. "
            "Nothing was saved.",
        )
    source_key(context)  # a bad timestamp is refused before anything is keyed to the conversation
    return conversation_scope(conversation)


def read_scopes(context: ToolContext) -> list[Scope]:
    """Every scope the live context may read: the actor's personal scope and the current conversation scope."""
    scopes: list[Scope] = []
    if context.actor is not None:
        scopes.append(personal_scope(context.actor.key))
    conversation = context.conversation
    if conversation is not None:
        source_key(context)
        scopes.append(conversation_scope(conversation))
    if not scopes:
        raise ToolError(
            "missing_context",
            "Memory needs to know who is speaking or where, and the host gave neither an actor nor a conversation.",
        )
    return scopes
