"""From a Slack event to junior's live context: who speaks, where, how private it is, and what was said before."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Mapping
from typing import Any, Literal

from junior_core import Actor, Conversation, Message
from junior_core.context import parse_slack_ts
from junior_core.llm.agent import ConversationKind

__all__ = [
    "HISTORY_LIMIT",
    "ChannelKind",
    "Visibilities",
    "Visibility",
    "clean_text",
    "conversation_for",
    "delivered_to",
    "installation_team",
    "is_shared",
    "prompt_kind",
    "thread_history",
    "visibility_of",
]

log = logging.getLogger("junior.slack")

Visibility = Literal["public", "private"]
# What kind of conversation an event came from, as the log names it: a DM, a private channel or group DM, the
# workspace's public channel, a channel shared with another organisation, or one Slack could not describe.
ChannelKind = Literal["dm", "private", "public", "shared", "unknown"]
HISTORY_LIMIT = 20  # earlier thread messages given to the model, newest kept
HISTORY_PAGE = 200  # one conversations.replies page: the bound on what one event may fetch
VISIBILITY_TTL_S = 600.0  # a channel made private is seen as private within this long
_CACHE_MAX = 10_000
# conversations.info flags of a channel that is not the workspace's own public one: private kinds, and channels
# shared with another organisation (or on their way to be), whose members are not all this workspace's people.
_PRIVATE_FLAGS = ("is_private", "is_im", "is_mpim", "is_group")
_SHARED_FLAGS = ("is_ext_shared", "is_shared", "is_pending_ext_shared")


class Visibilities:
    """Each channel's kind and visibility from ``conversations.info``, cached; when Slack cannot say, ``private``.

    Unknown is private on purpose: memory said there would otherwise reach every public channel. A channel shared
    with another organisation (Slack Connect) is private too: its own conversation, never the workspace's.
    """

    def __init__(self, ttl_s: float = VISIBILITY_TTL_S) -> None:
        self.ttl_s = ttl_s
        self._cache: dict[str, tuple[ChannelKind, float]] = {}
        self._lock = threading.Lock()

    def get(self, client: Any, channel: str, channel_type: str | None = None, *, shared: bool = False) -> Visibility:
        return visibility_of(self.kind(client, channel, channel_type, shared=shared))

    def kind(self, client: Any, channel: str, channel_type: str | None = None, *, shared: bool = False) -> ChannelKind:
        """The channel's kind, asking ``conversations.info`` when the event does not say; ``unknown`` (private)
        when Slack cannot say."""
        known = self.peek(channel, channel_type, shared=shared)
        if known != "unknown":
            return known
        kind: ChannelKind
        try:
            info = client.conversations_info(channel=channel)["channel"]
            kind = _kind_of(info)
        except Exception as exc:  # noqa: BLE001 - SlackApiError, a network error: either way Slack did not say
            log.warning("conversations.info for %s failed (%s); treating the channel as private", channel, exc)
            return "unknown"  # not cached: the next event asks again
        with self._lock:
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[channel] = (kind, time.monotonic() + self.ttl_s)
        return kind

    def peek(self, channel: str, channel_type: str | None = None, *, shared: bool = False) -> ChannelKind:
        """The channel's kind from the event and the cache alone, without asking Slack; ``unknown`` when neither
        says."""
        if shared:
            return "shared"
        if channel_type == "im" or channel.startswith("D"):
            return "dm"
        if channel_type in ("mpim", "group"):
            return "private"
        with self._lock:
            hit = self._cache.get(channel)
        return hit[0] if hit is not None and hit[1] > time.monotonic() else "unknown"


def _kind_of(info: Mapping[str, Any]) -> ChannelKind:
    if any(info.get(flag) for flag in _SHARED_FLAGS):
        return "shared"
    if info.get("is_im"):
        return "dm"
    return "private" if any(info.get(flag) for flag in _PRIVATE_FLAGS) else "public"


def visibility_of(kind: ChannelKind) -> Visibility:
    """Only the workspace's own public channels are public; a DM, a private, shared or unknown channel is not."""
    return "public" if kind == "public" else "private"


def clean_text(text: str, bot_user_id: str | None) -> str:
    """The message without the mention of the bot (``<@U123>``)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", "", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def installation_team(context: Any) -> str | None:
    """The team the app's token belongs to (Bolt's ``auth.test`` result); None when Bolt authorized nothing."""
    result = getattr(context, "authorize_result", None)
    team = getattr(result, "team_id", None)
    return str(team) if team else None


def delivered_to(body: Mapping[str, Any], team_id: str) -> bool:
    """Whether the envelope is for the installation on ``team_id``: its ``team_id`` or one of its
    ``authorizations``. An event for another team is never answered with this installation's token."""
    teams = {body.get("team_id")}
    for authorization in body.get("authorizations") or ():
        if isinstance(authorization, Mapping):
            teams.add(authorization.get("team_id"))
    return team_id in teams


def speaker_team(event: Mapping[str, Any], team_id: str) -> str:
    """The team of the person who spoke: their own organisation's in a channel shared with another one."""
    return str(event.get("user_team") or event.get("team") or team_id)


def is_shared(body: Mapping[str, Any], event: Mapping[str, Any], team_id: str) -> bool:
    """Whether the event comes from a channel shared with another organisation, by what the event itself says:
    the envelope's flag, or a speaker, source or envelope team other than the installation's."""
    if body.get("is_ext_shared_channel"):
        return True
    teams = {body.get("team_id"), event.get("user_team"), event.get("source_team"), event.get("team")}
    return any(team and team != team_id for team in teams)


def prompt_kind(kind: ChannelKind) -> ConversationKind:
    """What the system prompt calls a conversation of this kind; a channel Slack cannot describe is private."""
    return _PROMPT_KINDS[kind]


_PROMPT_KINDS: dict[ChannelKind, ConversationKind] = {
    "dm": "direct_message", "private": "private_channel", "public": "public_channel", "shared": "shared_channel",
    "unknown": "private_channel",
}


def conversation_for(team_id: str, event: Mapping[str, Any], visibility: Visibility) -> tuple[Actor, Conversation]:
    """The actor and conversation of a user's message event; a bad timestamp raises ``ValueError``.

    The conversation is keyed to the installation's team; the actor to the speaker's own team, so a person of
    another organisation in a shared channel never speaks as one of this workspace's people.
    """
    actor = Actor("slack", speaker_team(event, team_id), str(event.get("user") or ""))
    conversation = Conversation(
        "slack", team_id, str(event.get("channel") or ""),
        thread_ts=event.get("thread_ts"), message_ts=event.get("ts"), visibility=visibility,
    )
    return actor, conversation


def thread_history(
    client: Any, team_id: str, conversation: Conversation, bot_user_id: str | None, bot_id: str | None,
    *, limit: int = HISTORY_LIMIT,
) -> list[Message]:
    """The thread's messages before this one (at most ``limit``, newest kept): people's as user messages with
    their actor, the bot's own as assistant messages; other bots' are left out. Empty outside a thread or when
    Slack cannot be asked."""
    if conversation.thread_ts is None or conversation.message_ts is None or limit < 1:
        return []
    current = float(parse_slack_ts(conversation.message_ts))
    try:
        answer = client.conversations_replies(
            channel=conversation.channel_id, ts=conversation.thread_ts, limit=HISTORY_PAGE
        )
    except Exception as exc:  # noqa: BLE001 - without history the turn still runs
        log.warning("conversations.replies for %s failed (%s); answering without the thread", conversation, exc)
        return []
    history: list[Message] = []
    for raw in answer.get("messages") or ():
        try:
            ts = float(parse_slack_ts(str(raw.get("ts", ""))))
        except ValueError:
            continue
        if ts >= current:
            continue
        text = clean_text(str(raw.get("text") or ""), bot_user_id)
        if not text:
            continue
        if (bot_user_id and raw.get("user") == bot_user_id) or (bot_id and raw.get("bot_id") == bot_id):
            history.append(Message("assistant", text))
        elif raw.get("user") and not raw.get("bot_id") and not raw.get("subtype"):
            history.append(Message("user", text, actor=Actor("slack", speaker_team(raw, team_id), str(raw["user"]))))
    return history[-limit:]
