"""Who is speaking and where: the live context a tool is called in."""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs

from junior_core._base.errors import ToolError

__all__ = ["Actor", "Conversation", "Message", "ToolContext", "local_context", "parse_slack_ts"]

_SLACK_TS = re.compile(r"^\d+(\.\d+)?$")
_ID = re.compile(r"^[^:\s]+$")


def parse_slack_ts(value: str) -> str:
    """Return the trimmed Slack timestamp, or raise ``ValueError`` naming the value.

    An invalid timestamp is never dropped or replaced: a fixture or event with a
    label such as ``17000000.memory-explicit`` must fail loudly, not key rows to
    nothing.
    """
    if not isinstance(value, str):
        raise ValueError(f"invalid Slack timestamp {value!r}: expected a string like '1700000000.000100'")
    trimmed = value.strip()
    if not _SLACK_TS.match(trimmed):
        raise ValueError(f"invalid Slack timestamp {value!r}: expected digits with an optional '.digits' part")
    return trimmed


def _non_empty_id(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not _ID.match(value):
        raise ValueError(
            f"{type(instance).__name__}.{attribute.name} must be a non-empty string without ':' or spaces, "
            f"got {value!r}"
        )


def _optional_ts(instance: Conversation, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and instance.platform == "slack":
        parse_slack_ts(value)
    elif value is not None:
        _non_empty_id(instance, attribute, value)


def _trim_ts(value: str | None) -> str | None:
    return value.strip() if isinstance(value, str) else value


@attrs.frozen
class Actor:
    """Who is speaking: a user on a platform, within a team or workspace."""

    platform: str = attrs.field(validator=_non_empty_id)
    team_id: str = attrs.field(validator=_non_empty_id)
    user_id: str = attrs.field(validator=_non_empty_id)

    @property
    def key(self) -> str:
        """``<platform>:<team_id>:<user_id>``, the key personal memories are stored under."""
        return f"{self.platform}:{self.team_id}:{self.user_id}"


@attrs.frozen
class Conversation:
    """Where the conversation happens; Slack timestamps are validated strictly.

    ``visibility`` has no default: a host that forgot to mark a direct message would
    otherwise share what is said there with the whole workspace.
    """

    platform: str = attrs.field(validator=_non_empty_id)
    team_id: str = attrs.field(validator=_non_empty_id)
    channel_id: str = attrs.field(validator=_non_empty_id)
    thread_ts: str | None = attrs.field(default=None, converter=_trim_ts, validator=_optional_ts)
    message_ts: str | None = attrs.field(default=None, converter=_trim_ts, validator=_optional_ts)
    visibility: Literal["public", "private"] = attrs.field(kw_only=True)

    @visibility.validator
    def _check_visibility(self, attribute: attrs.Attribute[Any], value: str) -> None:
        if value not in ("public", "private"):
            raise ValueError(f"Conversation.visibility must be 'public' or 'private', got {value!r}")
        if value == "public" and self.platform == "slack" and self.channel_id.startswith("D"):
            raise ValueError(
                f"Conversation.visibility: Slack channel {self.channel_id!r} is a direct message, "
                "so it must be 'private', not 'public'"
            )

    @property
    def workspace_key(self) -> str:
        """``<platform>:<team_id>``: the scope shared by a workspace's public channels."""
        return f"{self.platform}:{self.team_id}"

    @property
    def source_key(self) -> str | None:
        """``<platform>:<team_id>:<channel_id>:<thread_ts or message_ts>``, or None without a timestamp."""
        ts = self.thread_ts or self.message_ts
        if ts is None:
            return None
        return f"{self.platform}:{self.team_id}:{self.channel_id}:{ts}"


@attrs.frozen
class ToolContext:
    """The live context of one tool call. It comes from the host, never from model arguments."""

    actor: Actor | None = None
    conversation: Conversation | None = None
    tool_call_id: str | None = None

    def for_call(self, tool_call_id: str | None) -> ToolContext:
        """This context for the tool call ``tool_call_id`` (the id the model gave the call)."""
        return attrs.evolve(self, tool_call_id=tool_call_id or None)

    def require_actor(self) -> Actor:
        """Return the actor or raise ``ToolError('missing_context')``."""
        if self.actor is None:
            raise ToolError("missing_context", "This tool needs to know who is speaking, and the host gave no actor.")
        return self.actor

    def require_conversation(self) -> Conversation:
        """Return the conversation or raise ``ToolError('missing_context')``."""
        if self.conversation is None:
            raise ToolError("missing_context", "This tool needs a conversation, and the host gave none.")
        return self.conversation

    def require_source_key(self) -> str:
        """Return the conversation's source_key or raise ``ToolError('missing_context')``."""
        key = self.require_conversation().source_key
        if key is None:
            raise ToolError(
                "missing_context",
                "This tool needs a conversation with a thread or message timestamp, and the host gave neither.",
            )
        return key


@attrs.frozen
class Message:
    """One message of a finished turn, as ``after_turn`` observes it.

    ``role`` is ``user``, ``assistant`` or ``tool``. User messages carry their
    ``actor``; tool messages carry the ``tool_name`` called and its ``result``
    (the executeTool-style dict the model saw).
    """

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    actor: Actor | None = None
    tool_name: str | None = None
    arguments: Any = None
    result: Any = None


def local_context(
    *,
    platform: str = "local",
    team: str = "local",
    user: str | None = None,
    channel: str = "cli",
    thread: str | None = "main",
    private: bool = False,
) -> ToolContext:
    """The context CLI calls run in: the OS user on platform ``local``, one local conversation."""
    actor = Actor(platform, team, user or _os_user())
    conversation = Conversation(
        platform, team, channel, thread_ts=thread, visibility="private" if private else "public"
    )
    return ToolContext(actor=actor, conversation=conversation, tool_call_id=None)


def _os_user() -> str:
    import getpass  # only for the CLI's local context: getpass brings termios and pwd

    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = "user"
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name) or "user"
