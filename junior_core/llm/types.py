"""The model-neutral conversation: requests, replies, tool calls, and the client protocol.

A request is model-neutral (``ModelRequest``); each client (``junior_core.llm.openai``,
``junior_core.llm.anthropic``) maps it to its API's wire format and maps the
answer back to a ``ModelReply``. This module imports no SDK, so code that only
talks to "a model" (the memory plugin's extractor, evals' judge) depends on it alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from junior_core._base.errors import ModelConfigError
from junior_core._protocol.limits import loads

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "ChatItem",
    "ModelClient",
    "ModelConfigError",
    "ModelReply",
    "ModelRequest",
    "StreamingModelClient",
    "TextSink",
    "ToolCall",
    "Wire",
    "call",
    "decode_arguments",
    "dump_response",
    "import_sdk",
    "say",
]

Wire = Literal["openai", "anthropic"]
DEFAULT_MAX_TOKENS = 1024


@attrs.frozen
class ToolCall:
    """One tool call the model asked for.

    ``arguments`` is the decoded object; when the model sent text that is not a
    JSON object, ``arguments`` is None and ``arguments_error`` says why, so the
    loop can answer the model with a structured error instead of raising.
    """

    id: str
    name: str
    arguments: Any = None
    arguments_error: str | None = None


@attrs.frozen
class ChatItem:
    """One message of the model-neutral conversation.

    ``user``: ``text``; ``assistant``: ``text`` and ``tool_calls``; ``tool``: the
    result ``text`` of the call ``tool_call_id`` (``is_error`` when it failed), and
    ``blocks`` a wire format that can carry them sends instead (Anthropic's
    ``tool_reference``).
    """

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    blocks: tuple[Mapping[str, Any], ...] = ()


@attrs.frozen
class ModelRequest:
    """What a model is asked: a system prompt, the conversation, and the tools it may call."""

    system: str
    messages: tuple[ChatItem, ...]
    tools: tuple[Mapping[str, Any], ...] = ()


@attrs.frozen
class ModelReply:
    """The model's answer: text, tool calls, or both."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None
    raw: Any = attrs.field(default=None, eq=False, repr=False)


@runtime_checkable
class ModelClient(Protocol):
    """Anything that answers a ``ModelRequest``; ``name`` identifies it in reports (e.g. ``openai:gpt-4.1``)."""

    name: str

    def complete(self, request: ModelRequest) -> ModelReply: ...


TextSink = Callable[[str], None]


@runtime_checkable
class StreamingModelClient(ModelClient, Protocol):
    """A client whose backend streams: ``stream`` answers as ``complete`` does, and hands each piece of the reply's
    text to ``on_text`` as it arrives (tool calls come whole, in the reply). ``on_text`` must not raise."""

    def stream(self, request: ModelRequest, on_text: TextSink) -> ModelReply: ...


def say(text: str) -> ModelReply:
    """A reply that answers with text and calls nothing."""
    return ModelReply(text=text, stop_reason="stop")


def call(name: str, arguments: Mapping[str, Any] | None = None, *, id: str = "", text: str = "") -> ModelReply:
    """A reply that calls one tool (``id`` is assigned by ``ScriptedModel`` when empty)."""
    return ModelReply(text=text, tool_calls=(ToolCall(id, name, dict(arguments or {})),), stop_reason="tool_calls")


def decode_arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if not isinstance(raw, str):
        return None, f"arguments must be a JSON object, got {type(raw).__name__}"
    try:
        value = loads(raw)  # a model's ~1,000 nested brackets are a JSONDecodeError here, not a RecursionError
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}); send a JSON object"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def import_sdk(module: str, extra: str) -> Any:
    """The SDK module ``module``, or a ``ModelConfigError`` naming the extra that installs it."""
    # Imported by name: the SDKs are optional extras, and importing them costs
    # hundreds of milliseconds a runtime without a model should not pay.
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ModelConfigError(
            f"the {module!r} package is not installed; install it with: pip install 'junior-core[{extra}]'"
        ) from exc


def dump_response(response: Any) -> dict[str, Any]:
    """An SDK response object (pydantic) or a mapping as a plain JSON-shaped dict."""
    if isinstance(response, Mapping):
        return dict(response)
    dumped: dict[str, Any] = response.model_dump(mode="json")
    return dumped
