"""The Bolt app: Slack events in, one junior turn per user message, the answer posted back."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from junior_core import Message, ModelError, ToolContext
from junior_core.llm.agent import DEFAULT_INSTRUCTIONS, Turn, run_turn
from junior_slack.conversations import (
    HISTORY_LIMIT,
    Visibilities,
    clean_text,
    conversation_for,
    conversation_kind,
    delivered_to,
    installation_team,
    is_shared,
    thread_history,
)
from junior_slack.events import EventLog

if TYPE_CHECKING:
    from slack_bolt import App

    from junior_core import Runtime
    from junior_core.llm import ModelClient

__all__ = ["INSTRUCTIONS", "SlackBot", "create_app"]

log = logging.getLogger("junior.slack")

INSTRUCTIONS = DEFAULT_INSTRUCTIONS + (
    " You are talking in Slack: answer in a few sentences, in Slack's mrkdwn (*bold*, `code`, bullet lines)."
)
MODEL_DOWN = "Sorry, I couldn't finish answering: the model I use isn't responding right now. Please try again " \
             "in a few minutes."
SOMETHING_BROKE = "Sorry, something went wrong on my side while answering. Please try again in a few minutes."
NO_ANSWER = "I couldn't come up with an answer to that. Could you say it another way?"


class SlackBot:
    """Turns one Slack user message into one junior turn; the Bolt listeners call ``handle``."""

    def __init__(
        self,
        runtime: Runtime,
        model: ModelClient,
        *,
        events: EventLog | None = None,
        history_limit: int = HISTORY_LIMIT,
        instructions: str = INSTRUCTIONS,
    ) -> None:
        self.runtime = runtime
        self.model = model
        self.events = events if events is not None else EventLog()
        self.history_limit = history_limit
        self.instructions = instructions
        self.visibilities = Visibilities()

    # -- Bolt listeners --------------------------------------------------------------------------
    def on_app_mention(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any) -> None:
        # A mention in a DM also arrives as message.im (its own event id): that one is answered.
        if event.get("channel_type") == "im" or str(event.get("channel") or "").startswith("D"):
            return
        self.handle(body, event, context, client, in_thread=True)

    def on_message(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any) -> None:
        # Channel messages arrive as app_mention; only a DM is answered without a mention.
        if event.get("channel_type") == "im":
            self.handle(body, event, context, client, in_thread=False)

    # -- one event -------------------------------------------------------------------------------
    def handle(self, body: Mapping[str, Any], event: Mapping[str, Any], context: Any, client: Any, *,
               in_thread: bool) -> Turn | None:
        """Run the turn for ``event`` and post its answer; None when the event is not one to answer."""
        bot_user_id = getattr(context, "bot_user_id", None)
        bot_id = getattr(context, "bot_id", None)
        if event.get("subtype") or event.get("bot_id") or not event.get("user") or event.get("user") == bot_user_id:
            return None  # edits, joins, other bots' and our own messages
        event_id = body.get("event_id")
        channel = str(event.get("channel") or "")
        # Conversations are keyed to the installation's own team (auth.test), never to a team the event names.
        team_id = installation_team(context)
        if team_id is None or not delivered_to(body, team_id):
            log.warning("event %s is for team %s, not this installation's (%s); not answered", event_id,
                        body.get("team_id"), team_id or "unknown")
            return None
        if event_id:
            try:
                first = self.events.claim(str(event_id), team_id or None)
            except Exception:
                # Without the log a retry cannot be told from a new event: no turn, and the user is told.
                log.exception("event %s could not be recorded in the event log; no turn", event_id)
                thread_ts = event.get("thread_ts") or (event.get("ts") if in_thread else None)
                self.post(client, channel, SOMETHING_BROKE, str(thread_ts) if thread_ts else None)
                return None
            if not first:
                log.info("event %s was already taken (a Slack retry); no second turn", event_id)
                return None
        try:
            shared = is_shared(body, event, team_id)
            visibility = self.visibilities.get(client, channel, event.get("channel_type"), shared=shared)
            actor, conversation = conversation_for(team_id, event, visibility)
            kind = conversation_kind(event, visibility, shared=shared)
        except ValueError as exc:
            log.error("event %s cannot be mapped to a conversation, so it gets no answer: %s", event_id, exc)
            if event_id:
                self.events.finish(str(event_id))
            return None
        reply_thread = conversation.thread_ts or (conversation.message_ts if in_thread else None)
        history = thread_history(client, team_id, conversation, bot_user_id, bot_id, limit=self.history_limit)
        messages = [*history, Message("user", clean_text(str(event.get("text") or ""), bot_user_id), actor=actor)]
        turn: Turn | None = None
        try:
            turn = run_turn(self.model, self.runtime, ToolContext(actor, conversation), messages,
                            instructions=self.instructions, conversation_kind=kind)
            text = turn.text.strip() or NO_ANSWER
        except ModelError as exc:
            turn = exc.turn
            done = [r.tool_name for r in (turn.tool_calls if turn else ()) if r.result.get("ok") is True]
            log.warning("turn for event %s in %s stopped: %s; tool calls already made: %s", event_id,
                        conversation.source_key, exc, ", ".join(done) or "none")
            text = MODEL_DOWN
        except Exception:
            log.exception("turn for event %s in %s failed", event_id, conversation.source_key)
            text = SOMETHING_BROKE
        self.post(client, channel, text, reply_thread)
        if event_id:
            self.events.finish(str(event_id))  # answered: no retry runs it again, however late
        return turn

    def post(self, client: Any, channel: str, text: str, thread_ts: str | None) -> None:
        try:
            if thread_ts is None:
                client.chat_postMessage(channel=channel, text=text)
            else:
                client.chat_postMessage(channel=channel, text=text, thread_ts=thread_ts)
        except Exception:
            log.exception("could not post the answer to %s", channel)


def create_app(
    runtime: Runtime,
    model: ModelClient,
    *,
    events: EventLog | None = None,
    history_limit: int = HISTORY_LIMIT,
    instructions: str = INSTRUCTIONS,
    **bolt_kwargs: Any,
) -> App:
    """A ``slack_bolt.App`` answering mentions in channels and messages in DMs with junior turns.

    ``bolt_kwargs`` go to ``App`` (``token``, ``signing_secret``, ``client``, ``listener_executor``...); without
    them Bolt reads ``SLACK_BOT_TOKEN`` and ``SLACK_SIGNING_SECRET``. Without a ``client``, ``SLACK_API_URL``
    (when set) is the Web API base URL. ``events`` dedupes retried events (default: ``EventLog()``).
    """
    from slack_bolt import App

    if "client" not in bolt_kwargs and os.environ.get("SLACK_API_URL", "").strip():
        from slack_sdk import WebClient

        token = bolt_kwargs.pop("token", None) or os.environ.get("SLACK_BOT_TOKEN")
        bolt_kwargs["client"] = WebClient(token=token, base_url=api_base_url(os.environ["SLACK_API_URL"]))
    app = App(**bolt_kwargs)
    bot = SlackBot(runtime, model, events=events, history_limit=history_limit, instructions=instructions)
    app.event("app_mention")(bot.on_app_mention)
    app.event("message")(bot.on_message)
    return app


def api_base_url(url: str) -> str:
    """slack-sdk joins method names onto the base URL, so it must end with ``/``."""
    url = url.strip()
    return url if url.endswith("/") else url + "/"
