"""A reply streamed into its thread as the model writes it: ``chat.startStream``, ``appendStream``, ``stopStream``
through slack-sdk's ``chat_stream`` helper, which gathers the text into batches (``buffer_size`` characters) so
the appends stay under Slack's rate limits.

A stream starts only once a batch is full: a short answer is never streamed, and is posted in one message as
before. Text the model writes before calling a tool is dropped unless part of it already reached Slack. The caller
falls back to one ``chat.postMessage`` of the whole reply when a stream cannot finish (``finish`` says why), after
removing what was streamed (``discard``), so the person sees exactly one complete reply.
"""

from __future__ import annotations

import logging
from typing import Any

from junior_core.llm.types import ModelReply, ModelRequest, StreamingModelClient

__all__ = ["STREAM_BUFFER", "ReplyStream", "StreamingModel"]

log = logging.getLogger("junior.slack")

# Characters gathered before each append: a few appends per answer, well under chat.appendStream's rate limit.
STREAM_BUFFER = 256


class ReplyStream:
    """One reply, streamed into ``thread_ts`` of ``channel`` for ``user_id`` of ``team_id`` as its text arrives."""

    def __init__(self, client: Any, channel: str, thread_ts: str, *, team_id: str, user_id: str, event_id: str,
                 buffer_size: int = STREAM_BUFFER) -> None:
        self.client, self.channel, self.thread_ts = client, channel, thread_ts
        self.team_id, self.user_id, self.event_id = team_id, user_id, event_id
        self.buffer_size = max(1, buffer_size)
        self.kept: list[str] = []  # each step's text that is part of the reply
        self._step: list[str] = []
        self._chat: Any = None
        self.broken: str | None = None  # why the stream stopped working, once it did

    @property
    def started(self) -> bool:
        """Whether Slack has a message for this stream (``chat.startStream`` answered)."""
        return self._chat is not None and getattr(self._chat, "ts", None) is not None

    def on_text(self, text: str) -> None:
        """A piece of the model's text; never raises (a failure marks the stream broken)."""
        self._step.append(text)
        if self.broken is not None:
            return
        try:
            if self._chat is None:
                self._chat = self.client.chat_stream(
                    channel=self.channel, thread_ts=self.thread_ts, recipient_team_id=self.team_id,
                    recipient_user_id=self.user_id, buffer_size=self.buffer_size)
            self._chat.append(markdown_text=text)
        except Exception as exc:  # noqa: BLE001 - the reply is posted whole instead
            self._break(exc)

    def end_step(self, reply: ModelReply) -> None:
        """The model's step is over: its text is the answer, or (with tool calls) kept only if it reached Slack."""
        text, self._step = "".join(self._step), []
        if not reply.tool_calls:
            self.kept.append(text)
        elif self.started:
            self.kept.append(text)
            self.on_text("\n\n")
            self._step = []
        else:
            self._chat = None  # nothing reached Slack: the text before the tool call is dropped

    def text(self, answer: str) -> str:
        """The whole reply: what was streamed, or ``answer`` when nothing was."""
        said = "\n\n".join(part.strip() for part in self.kept if part.strip())
        return said if self.started and said else answer

    def finish(self, blocks: list[dict[str, Any]] | None = None, *, extra: str | None = None) -> str | None:
        """Stop the stream, ``blocks`` under the reply; None once done, else why not (the caller then posts)."""
        if not self.started:
            return "not-started"
        if self.broken is not None:
            return self.broken
        try:
            self._chat.stop(markdown_text=extra, blocks=blocks)
            return None
        except Exception as exc:  # noqa: BLE001 - said by the caller's fallback
            self._break(exc)
            return self.broken

    def discard(self) -> None:
        """Remove the streamed message (the whole reply is posted instead)."""
        if not self.started:
            return
        try:
            self.client.chat_delete(channel=self.channel, ts=self._chat.ts)
        except Exception as exc:  # noqa: BLE001 - a part left in the thread is said, not raised
            log.warning("event %s: the part of the reply streamed to %s could not be removed: %s", self.event_id,
                        self.channel, _why(exc))

    def _break(self, exc: Exception) -> None:
        self.broken = _why(exc)
        log.info("event %s: streaming to %s stopped (%s); the reply will be posted whole", self.event_id,
                 self.channel, self.broken)


def _why(exc: Exception) -> str:
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, SlackApiError):
        data = getattr(exc.response, "data", None)
        code = str(data.get("error") or "") if isinstance(data, dict) else ""
        status = int(getattr(exc.response, "status_code", 0) or 0)
        return f"{code or 'error'} (HTTP {status})" if status else code or "error"
    return f"{type(exc).__name__}: {exc}"


class StreamingModel:
    """``model`` whose every step streams its text into ``stream``."""

    def __init__(self, model: StreamingModelClient, stream: ReplyStream) -> None:
        self.model, self.stream = model, stream
        self.name = model.name

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self.model.stream(request, self.stream.on_text)
        self.stream.end_step(reply)
        return reply
