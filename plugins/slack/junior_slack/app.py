"""The Bolt app: Slack events in, one junior turn per user message, the answer posted back."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from junior_core import Actor, Conversation, Message, ModelError, ToolContext
from junior_core.llm.agent import DEFAULT_INSTRUCTIONS, RuntimeToolbox, ToolResult, Turn, run_turn
from junior_core.llm.types import StreamingModelClient
from junior_slack.conversations import (
    HISTORY_LIMIT,
    ChannelKind,
    Visibilities,
    clean_text,
    conversation_for,
    delivered_to,
    installation_team,
    is_shared,
    prompt_kind,
    thread_history,
    visibility_of,
)
from junior_slack.events import EventLog
from junior_slack.feedback import ACTION_ID, FeedbackStore, buttons, parse_press
from junior_slack.streaming import STREAM_BUFFER, ReplyStream, StreamingModel
from junior_slack.threads import ThreadStore

if TYPE_CHECKING:
    from slack_bolt import App

    from junior_core import Runtime
    from junior_core.llm import ModelClient

__all__ = ["DEFAULT_PROMPTS", "INSTRUCTIONS", "Prompt", "SlackBot", "bolt_app", "create_app", "retry_number"]

log = logging.getLogger("junior.slack")

INSTRUCTIONS = DEFAULT_INSTRUCTIONS + (
    " You are talking in Slack: answer in a few sentences, in Slack's mrkdwn (*bold*, `code`, bullet lines)."
)
MODEL_DOWN = "Sorry, I couldn't finish answering: the model I use isn't responding right now. Please try again " \
             "in a few minutes."
SOMETHING_BROKE = "Sorry, something went wrong on my side while answering. Please try again in a few minutes."
NO_ANSWER = "I couldn't come up with an answer to that. Could you say it another way?"
STOPPED = "Sorry, I was restarted before I could finish answering. Please ask again."

# chat.postMessage: how many tries, the first wait between two (doubling at each try), and the longest wait, a
# Retry-After included: Slack asking for longer is given up on at once.
POST_TRIES = 4
POST_BACKOFF_S = 1.0
POST_WAIT_MAX_S = 30.0
# Errors of Slack's own (and rate limits) that a later try may not meet; any other error (channel_not_found,
# not_in_channel, invalid_auth, msg_too_long...) fails the same way every time.
_TRANSIENT = frozenset({"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"})
# The outcomes of an event that are how things should go; any other is logged as a warning.
_FINE = frozenset({"answered", "duplicate", "ignored", "welcomed", "noted"})

# What a turn shows while it works ("junior is thinking…" in Slack): tool names only, never their arguments.
THINKING = "is thinking…"
SEARCHING = "is searching tools…"
RUNNING = "is running {tool}…"
RUNNING_A_TOOL = "is running a tool…"
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
# A thread's title: its first message, up to this many characters.
TITLE_MAX = 80
# A channel id as Slack writes it; anything else in a thread's context is not given to the model.
_CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,31}")


@dataclass(frozen=True)
class Prompt:
    """One suggested prompt of a new assistant thread: its button ``title``, and the ``message`` it sends."""

    title: str
    message: str


DEFAULT_PROMPTS: tuple[Prompt, ...] = (
    Prompt("What can you do?", "What can you do, and which tools do you have?"),
    Prompt("Remember something", "Remember that "),
    Prompt("What do you remember?", "What do you remember about this conversation?"),
)
PROMPTS_TITLE = "Try one of these:"
COMMAND = "/junior"
COMMAND_USAGE = "Ask me something after the command, e.g. `/junior what do you remember about deploys?`"
NO_DM = "Sorry, I couldn't open our direct message, where what you tell me here is kept. Please try again later."
PROMPTS_ENV = "JUNIOR_SLACK_PROMPTS"
PROMPTS_MAX = 4  # Slack shows at most four


def prompts_from(value: str | None) -> tuple[Prompt, ...]:
    """The suggested prompts ``JUNIOR_SLACK_PROMPTS`` sets: a JSON list of texts or of ``{"title", "message"}``
    objects (``[]``: none); unset or blank, the defaults. A value that is none of these raises ``ValueError``."""
    if value is None or not value.strip():
        return DEFAULT_PROMPTS
    try:
        loaded = json.loads(value)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc.msg} at position {exc.pos}); give a list such as "
                         '["Summarise this channel", {"title": "Remember", "message": "Remember that "}]') from None
    if not isinstance(loaded, list) or len(loaded) > PROMPTS_MAX:
        raise ValueError(f"give a JSON list of at most {PROMPTS_MAX} prompts (Slack shows no more)")
    prompts = []
    for item in loaded:
        if isinstance(item, str) and item.strip():
            prompts.append(Prompt(item.strip(), item.strip()))
        elif (isinstance(item, dict) and isinstance(item.get("title"), str) and item["title"].strip()
              and isinstance(item.get("message"), str) and item["message"].strip()):
            prompts.append(Prompt(item["title"].strip(), item["message"]))
        else:
            raise ValueError(f"each prompt is a text or an object with a title and a message, not {item!r}")
    return tuple(prompts)


@dataclass
class Delivery:
    """One event as its log line tells it: where it came from, which delivery it was, what became of it."""

    event_id: str
    team: str
    channel: str
    kind: ChannelKind
    retry: int
    outcome: str = "failed"
    why: str = ""

    def end(self, outcome: str, why: str = "") -> None:
        self.outcome, self.why = outcome, why

    def line(self, took_s: float) -> str:
        why = f" why={self.why}" if self.why else ""
        return (f"event {self.event_id} team={self.team} channel={self.channel} kind={self.kind} retry={self.retry} "
                f"outcome={self.outcome}{why} took={took_s:.3f}s")


@dataclass
class _Reply:
    """Where a turn in flight posts its answer."""

    event_id: str | None
    client: Any
    channel: str
    thread_ts: str | None


class _Status:
    """The status a turn shows on its thread (``assistant.threads.setStatus``) while it works.

    Shown where Slack allows it: the first refusal (a thread Slack gives no status, a missing scope) ends it for
    the turn, quietly. ``clear`` empties it when something was shown.
    """

    def __init__(self, client: Any, channel: str, thread_ts: str | None, event_id: str) -> None:
        self.client, self.channel, self.thread_ts, self.event_id = client, channel, thread_ts, event_id
        self.working = thread_ts is not None
        self.shown = False

    def show(self, status: str) -> None:
        if not self.working:
            return
        try:
            self.client.assistant_threads_setStatus(channel_id=self.channel, thread_ts=self.thread_ts, status=status)
            self.shown = bool(status)
        except Exception as exc:  # noqa: BLE001 - a status is a nicety: the turn goes on without it
            self.working = False
            log.info("event %s: no status shown on %s/%s (%s)", self.event_id, self.channel, self.thread_ts,
                     _post_error(exc, 0.0)[0] if isinstance(exc, Exception) else exc)

    def clear(self) -> None:
        if self.shown:
            self.show("")


def status_of(tool_name: str, arguments: Any) -> str:
    """What a tool call shows as the status: which tool runs, never what it was given."""
    if tool_name == "searchTools":
        return SEARCHING
    if tool_name == "executeTool":
        name = arguments.get("tool_name") if isinstance(arguments, Mapping) else None
        return RUNNING.format(tool=name) if isinstance(name, str) and _TOOL_NAME.fullmatch(name) else RUNNING_A_TOOL
    return RUNNING.format(tool=tool_name) if _TOOL_NAME.fullmatch(tool_name) else RUNNING_A_TOOL


class _ShowingToolbox:
    """The runtime's tools, each call shown as the turn's status first."""

    def __init__(self, runtime: Runtime, status: _Status) -> None:
        self.inner = RuntimeToolbox(runtime)
        self.status = status

    def model_tools(self, context: ToolContext | None = None) -> list[dict[str, Any]]:
        return self.inner.model_tools(context)

    def call(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        self.status.show(status_of(name, arguments))
        return self.inner.call(name, arguments, context)

    async def acall(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        self.status.show(status_of(name, arguments))
        return await self.inner.acall(name, arguments, context)


def title_of(text: str) -> str:
    """A thread's title from its first message: the first line, shortened."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "") or "New chat"
    return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1].rstrip() + "…"


def retry_number(request: Any) -> int:
    """Which delivery of its event a request is: 0 for the first, Slack's ``X-Slack-Retry-Num`` for a retry."""
    headers = getattr(request, "headers", None) or {}
    values = headers.get("x-slack-retry-num") or ()
    value = values[0] if isinstance(values, (list, tuple)) and values else values
    try:
        return max(int(str(value)), 0)
    except ValueError:
        return 0


class SlackBot:
    """Turns one Slack user message into one junior turn; the Bolt listeners call ``handle``.

    Each event gets one log line (``junior.slack``, INFO, or WARNING when it was dropped or failed) saying where it
    came from, which delivery it was and what became of it, timed with ``clock``. A post Slack refuses for a reason
    of its own is tried again after ``sleep``.
    """

    def __init__(
        self,
        runtime: Runtime,
        model: ModelClient,
        *,
        events: EventLog | None = None,
        history_limit: int = HISTORY_LIMIT,
        instructions: str = INSTRUCTIONS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        post_tries: int = POST_TRIES,
        threads: ThreadStore | None = None,
        prompts: Sequence[Prompt] = DEFAULT_PROMPTS,
        stream_buffer: int = STREAM_BUFFER,
        feedback: FeedbackStore | None = None,
    ) -> None:
        self.runtime = runtime
        self.model = model
        self.events = events if events is not None else EventLog()
        self.history_limit = history_limit
        self.instructions = instructions
        self.visibilities = Visibilities()
        self.clock = clock
        self.sleep = sleep
        self.post_tries = max(1, post_tries)
        self.threads = threads if threads is not None else ThreadStore(self.events.url)
        self.prompts = tuple(prompts)
        self.feedback = feedback if feedback is not None else FeedbackStore(self.events.url)
        self.stream_buffer = stream_buffer  # characters per chat.appendStream; 0: never stream
        self._lock = threading.Lock()
        self._in_flight: dict[int, _Reply] = {}
        self._keys = itertools.count()
        self._stopped = False

    def listen(self, app: App) -> App:
        """Answer ``app``'s mentions in channels, messages in DMs and in assistant threads."""
        from slack_bolt import Assistant

        assistant = Assistant(thread_context_store=self.threads)
        assistant.thread_started(self.on_thread_started)
        assistant.user_message(self.on_assistant_message)
        assistant.thread_context_changed(self.on_thread_context_changed)
        app.use(assistant)
        app.action(ACTION_ID)(self.on_feedback)
        app.command(COMMAND)(self.on_command)
        app.event("app_mention")(self.on_app_mention)
        app.event("message")(self.on_message)
        return app

    # -- Bolt listeners --------------------------------------------------------------------------
    def on_app_mention(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any,
                       request: Any = None) -> None:
        # A mention in a DM also arrives as message.im (its own event id): that one is answered.
        in_dm = event.get("channel_type") == "im" or str(event.get("channel") or "").startswith("D")
        self.handle(body, event, context, client, in_thread=True, retry=retry_number(request),
                    skip="dm-mention" if in_dm else None)

    def on_message(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any,
                   request: Any = None) -> None:
        # Channel messages arrive as app_mention; only a DM is answered without a mention.
        self.handle(body, event, context, client, in_thread=False, retry=retry_number(request),
                    skip=None if event.get("channel_type") == "im" else "not-dm")

    def on_feedback(self, ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        """A feedback button pressed: acknowledged, recorded and logged in one line; no model is asked."""
        from datetime import UTC, datetime

        ack()
        started = self.clock()
        try:
            press = parse_press(body, action, datetime.now(UTC))
        except ValueError as exc:
            log.warning("feedback not recorded: %s", exc)
            return
        outcome = "recorded"
        try:
            self.feedback.record(press)
        except Exception:
            log.exception("feedback on event %s could not be recorded", press.event_id)
            outcome = "failed"
        log.log(logging.INFO if outcome == "recorded" else logging.WARNING,
                "feedback %s team=%s channel=%s user=%s value=%s outcome=%s took=%.3fs", press.event_id,
                press.team_id or "-", press.channel_id or "-", press.user_id, press.value, outcome,
                self.clock() - started)

    def on_command(self, ack: Any, body: dict[str, Any], respond: Any, client: Any, context: Any) -> None:
        """``/junior <text>``: a turn only the caller sees the answer to, its memory that of the caller's DM with
        the app (so what is saved from a public channel stays private to them). Acknowledged at once."""
        ack()
        started = self.clock()
        trigger = str(body.get("trigger_id") or "-")
        channel = str(body.get("channel_id") or "-")
        delivery = Delivery(f"{COMMAND}:{trigger}", str(body.get("team_id") or "-"), channel, "dm", 0)
        try:
            self._command(delivery, body, respond, client, context)
        except BaseException:
            delivery.end("failed", "error")
            raise
        finally:
            level = logging.INFO if delivery.outcome in _FINE else logging.WARNING
            log.log(level, "%s", delivery.line(self.clock() - started))

    def _command(self, delivery: Delivery, body: Mapping[str, Any], respond: Any, client: Any,
                 context: Any) -> None:
        def say(text: str) -> bool:
            try:
                respond(text=text, response_type="ephemeral", replace_original=False)
                return True
            except Exception as exc:  # noqa: BLE001 - said in the command's line
                log.warning("%s: the answer could not be sent to its response_url: %s", delivery.event_id,
                            type(exc).__name__)
                return False

        team_id = installation_team(context)
        if team_id is None or str(body.get("team_id") or "") != team_id:
            delivery.end("dropped", "other-team")
            return
        user = str(body.get("user_id") or "")
        text = str(body.get("text") or "").strip()
        if not user or not text:
            delivery.end("ignored", "no-text")
            say(COMMAND_USAGE)
            return
        try:
            dm_channel = str(client.conversations_open(users=user)["channel"]["id"])
        except Exception as exc:  # noqa: BLE001 - without the DM there is no private place for its memory
            log.warning("%s: conversations.open for %s failed: %s", delivery.event_id, user, _post_error(exc, 0)[0])
            delivery.end("failed", "no-dm")
            say(NO_DM)
            return
        actor = Actor("slack", team_id, user)
        conversation = Conversation("slack", team_id, dm_channel, visibility="private")
        status = _Status(client, dm_channel, None, delivery.event_id)  # an ephemeral answer has no thread
        _turn, answer, why = self._turn(ToolContext(actor, conversation), [Message("user", text, actor=actor)],
                                        self.instructions, "dm", status, delivery.event_id)
        if not say(answer):
            why = "+".join(filter(None, (why, "post-failed")))
        if why:
            delivery.end("failed", why)
        else:
            delivery.end("answered")

    def on_assistant_message(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any,
                             request: Any = None) -> None:
        # A message in an assistant thread (or any DM thread: Bolt cannot tell them apart) is a DM's.
        self.handle(body, event, context, client, in_thread=True, retry=retry_number(request), assistant=True)

    def on_thread_started(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any,
                          request: Any = None) -> None:
        """A person opened an assistant thread: keep what they are viewing, offer the suggested prompts."""
        self._thread_event(body, event, context, client, request, welcome=True)

    def on_thread_context_changed(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any,
                                  request: Any = None) -> None:
        """The person of an assistant thread moved to another channel: keep it for the thread's next turns."""
        self._thread_event(body, event, context, client, request, welcome=False)

    def _thread_event(self, body: dict[str, Any], event: dict[str, Any], context: Any, client: Any, request: Any,
                      *, welcome: bool) -> None:
        started = self.clock()
        thread = event.get("assistant_thread") or {}
        channel, thread_ts = str(thread.get("channel_id") or ""), str(thread.get("thread_ts") or "")
        delivery = Delivery(str(body.get("event_id") or "-"), str(body.get("team_id") or "-"), channel or "-", "dm",
                            retry_number(request))
        try:
            team_id = installation_team(context)
            if team_id is None or not delivered_to(body, team_id):
                delivery.end("dropped", "other-team")
                return
            if not channel or not thread_ts:
                delivery.end("dropped", "bad-event")
                return
            self.threads.save(channel_id=channel, thread_ts=thread_ts, context=thread.get("context") or {})
            if not welcome:
                delivery.end("noted")
                return
            if self.prompts:
                prompts = [{"title": p.title, "message": p.message} for p in self.prompts]
                try:
                    client.assistant_threads_setSuggestedPrompts(channel_id=channel, thread_ts=thread_ts,
                                                                 prompts=prompts, title=PROMPTS_TITLE)
                except Exception as exc:  # noqa: BLE001 - said in the event's line
                    delivery.end("failed", f"prompts:{_post_error(exc, 0.0)[0].split(' ')[0]}")
                    return
            delivery.end("welcomed")
        except BaseException:
            delivery.end("failed", "error")
            raise
        finally:
            level = logging.INFO if delivery.outcome in _FINE else logging.WARNING
            log.log(level, "%s", delivery.line(self.clock() - started))

    # -- one event -------------------------------------------------------------------------------
    def handle(self, body: Mapping[str, Any], event: Mapping[str, Any], context: Any, client: Any, *,
               in_thread: bool, retry: int = 0, skip: str | None = None, assistant: bool = False) -> Turn | None:
        """Run the turn for ``event`` and post its answer; None when the event is not one to answer (``skip``
        says why, when the listener already knows). One log line tells what became of the event."""
        started = self.clock()
        channel = str(event.get("channel") or "")
        delivery = Delivery(str(body.get("event_id") or "-"), str(body.get("team_id") or "-"), channel or "-",
                            self.visibilities.peek(channel, event.get("channel_type")), retry)
        try:
            if skip is not None:
                delivery.end("ignored", skip)
                return None
            return self._handle(delivery, body, event, context, client, in_thread=in_thread, assistant=assistant)
        except BaseException:
            delivery.end("failed", "error")
            raise
        finally:
            level = logging.INFO if delivery.outcome in _FINE else logging.WARNING
            log.log(level, "%s", delivery.line(self.clock() - started))

    def _handle(self, delivery: Delivery, body: Mapping[str, Any], event: Mapping[str, Any], context: Any,
                client: Any, *, in_thread: bool, assistant: bool = False) -> Turn | None:
        bot_user_id = getattr(context, "bot_user_id", None)
        bot_id = getattr(context, "bot_id", None)
        ignored = _not_for_a_turn(event, bot_user_id, bot_id)
        if ignored is not None:
            delivery.end("ignored", ignored)  # edits, joins, other bots' and our own messages
            return None
        event_id = body.get("event_id")
        channel = delivery.channel
        # Conversations are keyed to the installation's own team (auth.test), never to a team the event names.
        team_id = installation_team(context)
        if team_id is None or not delivered_to(body, team_id):
            delivery.end("dropped", "other-team")  # never answered with this installation's token
            return None
        if event_id:
            try:
                first = self.events.claim(str(event_id), team_id or None)
            except Exception:
                # Without the log a retry cannot be told from a new event: no turn, and the user is told.
                log.exception("event %s could not be recorded in the event log; no turn", event_id)
                thread_ts = event.get("thread_ts") or (event.get("ts") if in_thread else None)
                self.post(client, channel, SOMETHING_BROKE, str(thread_ts) if thread_ts else None,
                          event_id=str(event_id))
                delivery.end("failed", "event-log-down")
                return None
            if not first:
                delivery.end("duplicate")  # a Slack retry of an event taken already: no second turn
                return None
        try:
            kind = self.visibilities.kind(client, channel, event.get("channel_type"),
                                          shared=is_shared(body, event, team_id))
            delivery.kind = kind
            actor, conversation = conversation_for(team_id, event, visibility_of(kind))
        except ValueError as exc:
            log.error("event %s cannot be mapped to a conversation, so it gets no answer: %s", event_id, exc)
            if event_id:
                self.events.finish(str(event_id))
            delivery.end("dropped", "bad-event")
            return None
        reply_thread = conversation.thread_ts or (conversation.message_ts if in_thread else None)
        text = clean_text(str(event.get("text") or ""), bot_user_id)
        instructions = self.instructions
        if assistant and conversation.thread_ts:
            instructions += self._assistant_thread(client, delivery, conversation.thread_ts, text)
        status = _Status(client, channel, reply_thread or conversation.message_ts, delivery.event_id)
        ctx = ToolContext(actor, conversation)
        stream = None
        if reply_thread is not None and self.stream_buffer > 0 and isinstance(self.model, StreamingModelClient) \
                and callable(getattr(client, "chat_stream", None)):  # chat.startStream answers only in a thread
            stream = ReplyStream(client, channel, reply_thread, team_id=actor.team_id, user_id=actor.user_id,
                                 event_id=delivery.event_id, buffer_size=self.stream_buffer)
        with self._in_flight_as(_Reply(str(event_id) if event_id else None, client, channel, reply_thread)) as key:
            try:
                status.show(THINKING)
                history = thread_history(client, team_id, conversation, bot_user_id, bot_id,
                                         limit=self.history_limit)
                turn, answer, why = self._turn(ctx, [*history, Message("user", text, actor=actor)], instructions,
                                               kind, status, str(event_id or "-"), stream)
                if not self._still_ours(key):
                    if stream is not None:
                        stream.discard()  # the person was told to ask again: no half answer left above that
                    delivery.end("failed", "stopped")  # the process stopped first; the person was told to ask again
                    return turn
                if not self._deliver(client, channel, reply_thread, answer, stream, failed=bool(why),
                                     event_id=str(event_id) if event_id else None):
                    why = "+".join(filter(None, (why, "post-failed")))
            finally:
                status.clear()  # on every outcome: answered, failed, or stopped
        if event_id:
            self.events.finish(str(event_id))  # answered: no retry runs it again, however late
        if why:
            delivery.end("failed", why)
        else:
            delivery.end("answered")
        return turn

    def _deliver(self, client: Any, channel: str, thread_ts: str | None, answer: str, stream: ReplyStream | None, *,
                 failed: bool, event_id: str | None) -> bool:
        """Give the person exactly one complete reply: the stream finished, or else one post of the whole reply
        (what was streamed removed first). True once delivered."""
        feedback = [buttons(event_id)] if event_id and not failed else []
        if stream is not None and stream.started:
            if not failed:
                why = stream.finish(feedback or None, extra=None if stream.text("") else answer)
                if why is None:
                    return True
                log.warning("event %s: the streamed reply to %s could not be finished (%s); posting it whole",
                            event_id or "-", channel, why)
                answer = stream.text(answer)
            stream.discard()
        blocks = [*_sections(answer), *feedback] if feedback else None
        return self.post(client, channel, answer, thread_ts, event_id=event_id, blocks=blocks) is None

    def _turn(self, context: ToolContext, messages: list[Message], instructions: str, kind: ChannelKind,
              status: _Status, event_id: str, stream: ReplyStream | None = None) -> tuple[Turn | None, str, str]:
        """Run the turn, its text streamed into ``stream`` when there is one: the turn (None when it failed before
        one existed), the answer to post, and what went wrong in a word (empty when nothing)."""
        conversation = context.conversation
        where = conversation.source_key if conversation is not None else "-"
        model: ModelClient = self.model
        if stream is not None and isinstance(self.model, StreamingModelClient):
            model = StreamingModel(self.model, stream)
        try:
            turn = run_turn(model, self.runtime, context, messages, instructions=instructions,
                            toolbox=_ShowingToolbox(self.runtime, status), conversation_kind=prompt_kind(kind))
            return turn, turn.text.strip() or NO_ANSWER, ""
        except ModelError as exc:
            done = [r.tool_name for r in (exc.turn.tool_calls if exc.turn else ()) if r.result.get("ok") is True]
            log.warning("turn for event %s in %s stopped: %s; tool calls already made: %s", event_id, where, exc,
                        ", ".join(done) or "none")
            return exc.turn, MODEL_DOWN, "model-down"
        except Exception:
            log.exception("turn for event %s in %s failed", event_id, where)
            return None, SOMETHING_BROKE, "turn-error"

    def _assistant_thread(self, client: Any, delivery: Delivery, thread_ts: str, text: str) -> str:
        """In an assistant thread: its title from the first message, and what the person is viewing as words
        for the system prompt (empty when nothing). Never changes what memory the turn sees."""
        channel = delivery.channel
        try:
            if self.threads.take_title(channel, thread_ts):
                client.assistant_threads_setTitle(channel_id=channel, thread_ts=thread_ts, title=title_of(text))
            viewing = self.threads.context(channel, thread_ts).get("channel_id", "")
        except Exception as exc:  # noqa: BLE001 - a title or a context is a nicety: the turn goes on without it
            log.info("event %s: assistant thread %s/%s without title or context (%s)", delivery.event_id, channel,
                     thread_ts, type(exc).__name__)
            return ""
        if not _CHANNEL_ID.fullmatch(viewing):
            return ""
        return (f" The person is viewing the Slack channel <#{viewing}> while talking to you here; what they ask may "
                "be about it. This conversation is still their direct message with you: memory here is this direct "
                "message's, whatever channel they view.")

    # -- turns in flight -------------------------------------------------------------------------
    @contextmanager
    def _in_flight_as(self, reply: _Reply) -> Iterator[int]:
        key = next(self._keys)
        with self._lock:
            self._in_flight[key] = reply
        try:
            yield key
        finally:
            with self._lock:
                self._in_flight.pop(key, None)

    def _still_ours(self, key: int) -> bool:
        """True if the turn ``key`` may post its answer; after ``stop`` none may."""
        with self._lock:
            return self._in_flight.pop(key, None) is not None and not self._stopped

    def stop(self) -> list[str]:
        """Give up the turns still running (the process is stopping and their grace ran out): each person is told
        to ask again, no answer is posted after this, and their events stay unfinished, so a later delivery of
        one after its lease runs it. The event ids given up."""
        with self._lock:
            self._stopped = True
            left = list(self._in_flight.values())
            self._in_flight.clear()
        for reply in left:
            self.post(reply.client, reply.channel, STOPPED, reply.thread_ts, event_id=reply.event_id, tries=1)
        return [reply.event_id or "-" for reply in left]

    # -- posting ---------------------------------------------------------------------------------
    def post(self, client: Any, channel: str, text: str, thread_ts: str | None, *, event_id: str | None = None,
             tries: int | None = None, blocks: list[dict[str, Any]] | None = None) -> str | None:
        """Post ``text``; None once posted, else why not, said in one log line.

        An error of Slack's own (5xx, ``internal_error``...), a rate limit or a network error is tried again, up to
        ``post_tries`` tries in all, after 1, 2, 4... seconds, or as long as a 429's ``Retry-After`` asks (longer
        than ``POST_WAIT_MAX_S``: given up at once). Any other error is final at the first try.
        """
        arguments: dict[str, Any] = {"channel": channel, "text": text}
        if thread_ts is not None:
            arguments["thread_ts"] = thread_ts
        if blocks:
            arguments["blocks"] = blocks
        limit = max(1, tries if tries is not None else self.post_tries)
        for attempt in range(1, limit + 1):
            try:
                client.chat_postMessage(**arguments)
                return None
            except Exception as exc:  # noqa: BLE001 - every failure is said in one line, with what to do
                error, wait = _post_error(exc, POST_BACKOFF_S * 2 ** (attempt - 1))
            last = attempt == limit or wait is None or wait > POST_WAIT_MAX_S
            if last:
                waited = (f"; Slack asked to wait {wait:g} s, longer than {POST_WAIT_MAX_S:g} s"
                          if wait is not None and wait > POST_WAIT_MAX_S else "")
                log.warning("could not post to %s (event %s) after %d %s: %s%s", channel, event_id or "-", attempt,
                            "try" if attempt == 1 else "tries", error, waited)
                return error
            assert wait is not None
            log.info("posting to %s (event %s) failed: %s; trying again in %g s", channel, event_id or "-", error,
                     wait)
            self.sleep(wait)
        return "no try made"  # pragma: no cover - the loop makes at least one


# A section block's text holds at most 3,000 characters; a message at most 50 blocks.
_SECTION_MAX = 3000


def _sections(text: str) -> list[dict[str, Any]]:
    """``text`` as mrkdwn section blocks (the reply shown above its feedback buttons)."""
    parts = [text[i:i + _SECTION_MAX] for i in range(0, len(text), _SECTION_MAX)] or [" "]
    return [{"type": "section", "text": {"type": "mrkdwn", "text": part}} for part in parts[:49]]


def _not_for_a_turn(event: Mapping[str, Any], bot_user_id: str | None, bot_id: str | None) -> str | None:
    """Why ``event`` gets no turn (an edit, a join, a bot's or our own message), or None when it is one."""
    if (bot_user_id and event.get("user") == bot_user_id) or (bot_id and event.get("bot_id") == bot_id):
        return "own-message"
    if event.get("subtype"):
        return f"subtype:{event.get('subtype')}"
    if event.get("bot_id"):
        return "bot-message"
    if not event.get("user"):
        return "no-user"
    return None


def _post_error(exc: Exception, backoff_s: float) -> tuple[str, float | None]:
    """What went wrong with a post, in a few words, and how long to wait before another try (None: no other)."""
    import http.client

    from slack_sdk.errors import SlackApiError

    if isinstance(exc, SlackApiError):
        response = exc.response
        status = int(getattr(response, "status_code", 0) or 0)
        data = getattr(response, "data", None)
        code = str(data.get("error") or "") if isinstance(data, dict) else ""
        if code.startswith("Received a response in a non-JSON format"):
            code = ""
        said = f"{code or 'error'} (HTTP {status})" if status else code or "error"
        if status == 429 or code == "ratelimited":
            after = _retry_after(getattr(response, "headers", None) or {})
            return said, after if after is not None else backoff_s
        if status >= 500 or code in _TRANSIENT:
            return said, backoff_s
        return said, None
    if isinstance(exc, (OSError, http.client.HTTPException)):  # URLError, timeouts, resets
        return f"{type(exc).__name__}: {exc}", backoff_s
    return f"{type(exc).__name__}: {exc}", None


def _retry_after(headers: Mapping[str, Any]) -> float | None:
    """A 429's ``Retry-After`` in seconds; None when absent or not a number of seconds."""
    for name, value in headers.items():
        if str(name).lower() == "retry-after":
            value = value[0] if isinstance(value, (list, tuple)) and value else value
            try:
                return max(float(str(value).strip()), 0.0)
            except ValueError:
                return None
    return None


def bolt_app(**bolt_kwargs: Any) -> App:
    """A ``slack_bolt.App``: ``bolt_kwargs`` go to ``App``; without a ``client``, ``SLACK_API_URL`` (when set) is the
    Web API base URL.

    With that client Bolt still reads ``SLACK_BOT_TOKEN`` and warns that it "will be unused"; the client carries that
    same token, so that one warning is kept out of the log while the app is made.
    """
    from slack_bolt import App

    token_in_client = False
    if "client" not in bolt_kwargs and os.environ.get("SLACK_API_URL", "").strip():
        from slack_sdk import WebClient

        token = bolt_kwargs.pop("token", None) or os.environ.get("SLACK_BOT_TOKEN")
        bolt_kwargs["client"] = WebClient(token=token, base_url=api_base_url(os.environ["SLACK_API_URL"]))
        token_in_client = True
    if not token_in_client:
        return App(**bolt_kwargs)
    from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped

    unused = warning_client_prioritized_and_token_skipped()
    quiet = _Without(unused)
    bolt_logger = bolt_kwargs.get("logger") or logging.getLogger("slack_bolt.App")
    bolt_logger.addFilter(quiet)
    try:
        return App(**bolt_kwargs)
    finally:
        bolt_logger.removeFilter(quiet)


class _Without(logging.Filter):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.message


def create_app(
    runtime: Runtime,
    model: ModelClient,
    *,
    events: EventLog | None = None,
    history_limit: int = HISTORY_LIMIT,
    instructions: str = INSTRUCTIONS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    **bolt_kwargs: Any,
) -> App:
    """A ``slack_bolt.App`` answering mentions in channels and messages in DMs with junior turns.

    ``bolt_kwargs`` go to ``App`` (``token``, ``signing_secret``, ``client``, ``listener_executor``...); without
    them Bolt reads ``SLACK_BOT_TOKEN`` and ``SLACK_SIGNING_SECRET``. Without a ``client``, ``SLACK_API_URL``
    (when set) is the Web API base URL. ``events`` dedupes retried events (default: ``EventLog()``). ``clock``
    times each event for its log line and ``sleep`` waits between tries of a post (tests pass their own).
    """
    app = bolt_app(**bolt_kwargs)
    bot = SlackBot(runtime, model, events=events, history_limit=history_limit, instructions=instructions,
                   clock=clock, sleep=sleep)
    return bot.listen(app)


def api_base_url(url: str) -> str:
    """slack-sdk joins method names onto the base URL, so it must end with ``/``."""
    url = url.strip()
    return url if url.endswith("/") else url + "/"
