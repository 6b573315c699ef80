"""Where a memory lives and who can read it, derived only from the live context."""

from __future__ import annotations

from typing import Literal

import attrs

from junior_core import ToolContext, ToolError, parse_slack_ts

__all__ = ["KINDS", "Kind", "Scope", "ScopeName", "read_scopes", "source_key", "write_scope"]

Kind = Literal["preference", "procedure", "knowledge"]
ScopeName = Literal["personal", "conversation"]
KINDS: tuple[Kind, ...] = ("preference", "procedure", "knowledge")


@attrs.frozen
class Scope:
    """One scope a memory is written to or read from.

    ``personal``: scope_key and subject_key are the actor key (``platform:team:user``), subject_type ``actor``.
    ``conversation`` in a public channel: the workspace key (``platform:team``), subject_type ``workspace``;
    in a private one: the conversation's source_key (``platform:team:channel:ts``), subject_type ``thread``.
    """

    scope: ScopeName
    scope_key: str
    subject_type: Literal["actor", "workspace", "thread"]

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
        return "only this private conversation"


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
    key = source_key(context)
    if conversation.visibility == "public":
        return Scope("conversation", conversation.workspace_key, "workspace")
    if key is None:
        raise ToolError(
            "missing_context",
            f"A {kind} said in a private conversation is stored for that thread, and the host gave no thread or "
            "message timestamp. Nothing was saved.",
        )
    return Scope("conversation", key, "thread")


def read_scopes(context: ToolContext) -> list[Scope]:
    """Every scope the live context may read: the actor's personal scope and the current conversation scope."""
    scopes: list[Scope] = []
    if context.actor is not None:
        scopes.append(personal_scope(context.actor.key))
    conversation = context.conversation
    if conversation is not None:
        key = source_key(context)
        if conversation.visibility == "public":
            scopes.append(Scope("conversation", conversation.workspace_key, "workspace"))
        elif key is not None:
            scopes.append(Scope("conversation", key, "thread"))
    if not scopes:
        raise ToolError(
            "missing_context",
            "Memory needs to know who is speaking or where, and the host gave neither an actor nor a conversation.",
        )
    return scopes
