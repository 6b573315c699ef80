"""The agent loop: one user turn through a model and the runtime's tools."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from junior_core.context import Message, ToolContext
from junior_core.discovery import EXECUTE_TOOL, error
from junior_core.llm.types import ChatItem, ModelClient, ModelRequest, ToolCall

if TYPE_CHECKING:
    from junior_core.runtime import Runtime

__all__ = ["DEFAULT_INSTRUCTIONS", "ToolCallRecord", "Turn", "run_turn"]

DEFAULT_MAX_STEPS = 8

DEFAULT_INSTRUCTIONS = (
    "You are junior, an assistant in a team chat. Most of your tools are deferred: find them with searchTools "
    "(pass `source` to look inside one source) and run them with executeTool, using the exact tool_name that "
    "searchTools returned. Use a tool only when the request needs one. A tool result says whether it worked; "
    "never say a tool failed or is unavailable unless a call returned an error."
)


@attrs.frozen
class ToolCallRecord:
    """One tool call of a turn: the model-facing ``name`` (``searchTools``, ``executeTool``...) and what it returned."""

    id: str
    name: str
    arguments: Any
    result: dict[str, Any]

    @property
    def tool_name(self) -> str:
        """The tool actually run: the inner tool_name of an executeTool call, otherwise ``name``."""
        if (
            self.name == EXECUTE_TOOL
            and isinstance(self.arguments, dict)
            and isinstance(self.arguments.get("tool_name"), str)
        ):
            return str(self.arguments["tool_name"])
        return self.name


@attrs.frozen
class Turn:
    """A finished turn: the final answer, every tool call, and the transcript ``after_turn`` saw."""

    text: str
    transcript: tuple[Message, ...]
    tool_calls: tuple[ToolCallRecord, ...]
    steps: int
    stop_reason: Literal["answered", "max_steps"]
    system: str
    context_blocks: tuple[str, ...] = ()


def _speaker(message: Message) -> str:
    return f"<@{message.actor.user_id}>: " if message.actor is not None else ""


def _items(messages: Sequence[Message]) -> list[ChatItem]:
    # Earlier turns are replayed as text only, the way a chat platform shows a thread;
    # their tool calls were already acted upon.
    items: list[ChatItem] = []
    for message in messages:
        if message.role == "user":
            items.append(ChatItem("user", _speaker(message) + message.text))
        elif message.role == "assistant" and message.text:
            items.append(ChatItem("assistant", message.text))
    return items


def _system(instructions: str, context: ToolContext, blocks: Sequence[str]) -> str:
    parts = [instructions]
    if context.actor is not None:
        parts.append(
            f"The person talking to you now is <@{context.actor.user_id}>. Messages are prefixed with their author."
        )
    parts.extend(blocks)
    return "\n\n".join(p for p in parts if p)


def _record(call: ToolCall, result: dict[str, Any]) -> Message:
    # after_turn observers care about the tool that ran (memory__remember), not the
    # executeTool wrapper; the result is the executeTool dict the model saw.
    arguments = call.arguments
    name = call.name
    if name == EXECUTE_TOOL and isinstance(arguments, dict) and isinstance(arguments.get("tool_name"), str):
        name = arguments["tool_name"]
        arguments = arguments.get("arguments", {})
    return Message("tool", tool_name=name, arguments=arguments, result=result)


def run_turn(
    model: ModelClient,
    runtime: Runtime,
    context: ToolContext,
    messages: Sequence[Message],
    *,
    instructions: str = DEFAULT_INSTRUCTIONS,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Turn:
    """Answer the trailing user messages of ``messages``.

    Injects the runtime's ``prompt_context`` into the system prompt, offers
    ``model_tools()``, runs every tool call through the runtime in ``context``
    (each call's id becomes ``context.tool_call_id``) until the model answers
    without calling a tool or ``max_steps`` model calls were made, then calls
    ``after_turn`` with this turn's messages. ``messages`` is the conversation so
    far; the user messages after the last assistant message are this turn's.
    """
    if max_steps < 1:
        raise ValueError("max_steps must be at least 1")
    start = len(messages)
    while start > 0 and messages[start - 1].role == "user":
        start -= 1
    new = list(messages[start:])
    if not new:
        raise ValueError("run_turn needs at least one user message after the last assistant message")
    user_text = "\n".join(m.text for m in new)
    blocks = tuple(runtime.prompt_context(context, user_text))
    system = _system(instructions, context, blocks)
    items = _items(messages)
    tools = tuple(runtime.model_tools())
    transcript: list[Message] = list(new)
    records: list[ToolCallRecord] = []
    text = ""
    stop: Literal["answered", "max_steps"] = "max_steps"
    steps = 0
    while steps < max_steps:
        steps += 1
        reply = model.complete(ModelRequest(system, tuple(items), tools))
        text = reply.text
        items.append(ChatItem("assistant", reply.text, reply.tool_calls))
        if not reply.tool_calls:
            stop = "answered"
            break
        if reply.text:
            transcript.append(Message("assistant", text=reply.text))
        for tool_call in reply.tool_calls:
            if tool_call.arguments_error is not None:
                result = error("invalid_arguments", f"{tool_call.name}: {tool_call.arguments_error}.")
            else:
                call_context = attrs.evolve(context, tool_call_id=tool_call.id or None)
                result = runtime.call_model_tool(tool_call.name, tool_call.arguments, call_context)
            records.append(ToolCallRecord(tool_call.id, tool_call.name, tool_call.arguments, result))
            transcript.append(_record(tool_call, result))
            items.append(
                ChatItem(
                    "tool",
                    json.dumps(result, ensure_ascii=False),
                    tool_call_id=tool_call.id,
                    is_error=result.get("ok") is False,
                )
            )
    transcript.append(Message("assistant", text=text))
    runtime.after_turn(context, transcript)
    return Turn(text, tuple(transcript), tuple(records), steps, stop, system, blocks)
