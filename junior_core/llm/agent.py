"""The agent loop: one user turn through a model and the runtime's tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import attrs

from junior_core._base.errors import ModelError
from junior_core._protocol import EXECUTE_TOOL, error
from junior_core._runtime.host import CONVERSATION_KINDS, ConversationKind, host_context, implied_kind, utcnow
from junior_core.context import Message, ToolContext
from junior_core.llm.types import ChatItem, ModelClient, ModelReply, ModelRequest, ToolCall

if TYPE_CHECKING:
    from junior_core._runtime.runtime import Runtime

__all__ = [
    "CONVERSATION_KINDS", "DEFAULT_INSTRUCTIONS", "ConversationKind", "RuntimeToolbox", "StopReason", "ToolCallRecord",
    "ToolResult", "Toolbox", "Turn", "arun_turn", "host_context", "implied_kind", "run_turn",
]

DEFAULT_MAX_STEPS = 8

DEFAULT_INSTRUCTIONS = (
    "You are junior, an assistant in a team chat. Most of your tools are deferred: find them with searchTools "
    "(pass `source` to look inside one source) and run them with executeTool, using the exact tool_name that "
    "searchTools returned. Use a tool only when the request needs one. A tool result says whether it worked; "
    "never say a tool failed or is unavailable unless a call returned an error."
)


@attrs.frozen
class ToolResult:
    """What a tool call answered: the executeTool-style dict, and content blocks to send instead of its JSON.

    ``blocks`` lets a wire format carry more than text (Anthropic's ``tool_reference``
    blocks); a client that cannot send them sends ``answer`` as JSON.
    """

    answer: dict[str, Any]
    blocks: tuple[Mapping[str, Any], ...] = ()


@runtime_checkable
class Toolbox(Protocol):
    """The tools a turn offers the model and how their calls are answered (default: the runtime's own)."""

    def model_tools(self, context: ToolContext | None = None) -> list[dict[str, Any]]: ...

    def call(self, name: str, arguments: Any, context: ToolContext) -> ToolResult: ...

    async def acall(self, name: str, arguments: Any, context: ToolContext) -> ToolResult: ...


@attrs.define
class RuntimeToolbox:
    """searchTools, executeTool and the direct tools, answered by ``runtime.call_model_tool``."""

    runtime: Runtime

    def model_tools(self, context: ToolContext | None = None) -> list[dict[str, Any]]:
        return self.runtime.model_tools(context)

    def call(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        return ToolResult(self.runtime.call_model_tool(name, arguments, context))

    async def acall(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        return ToolResult(await self.runtime.acall_model_tool(name, arguments, context))


@attrs.frozen
class ToolCallRecord:
    """One tool call of a turn: the call's ``id``, the model-facing ``name`` (``searchTools``, ``executeTool``...),
    the decoded ``arguments`` the model sent, and the ``result`` dict it got back (``{"ok": ..., ...}``)."""

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


StopReason = Literal["answered", "max_steps", "model_error"]


@attrs.frozen
class Turn:
    """One turn, finished or stopped by a model failure (documented in docs/architecture.md, "A bot turn").

    ``text``: the final answer ("" when the model failed before answering); ``transcript``: this turn's user
    messages, the tool calls as ``Message("tool", ...)`` and the answer, exactly what ``after_turn`` saw;
    ``tool_calls``: one ``ToolCallRecord`` per call, in order; ``steps``: model calls made; ``stop_reason``:
    ``answered``, ``max_steps`` (the last reply still asked for tools), or ``model_error`` (``error`` says why);
    ``system``: the system prompt sent; ``context_blocks``: the ``prompt_context`` blocks injected (recall).
    """

    text: str
    transcript: tuple[Message, ...]
    tool_calls: tuple[ToolCallRecord, ...]
    steps: int
    stop_reason: StopReason
    system: str
    context_blocks: tuple[str, ...] = ()
    error: str | None = None


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


def _system(instructions: str, context: ToolContext, blocks: Sequence[str], host: str = "") -> str:
    parts = [instructions, host]
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


class _TurnState:
    """One turn's bookkeeping, shared by ``run_turn`` and ``arun_turn`` (which differ only in how they wait)."""

    def __init__(
        self,
        context: ToolContext,
        messages: Sequence[Message],
        max_steps: int,
        *,
        kind: ConversationKind | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.host = host_context((clock or utcnow)(), kind if kind is not None else implied_kind(context))
        start = len(messages)
        while start > 0 and messages[start - 1].role == "user":
            start -= 1
        self.new = list(messages[start:])
        if not self.new:
            raise ValueError("run_turn needs at least one user message after the last assistant message")
        self.context = context
        self.messages = messages
        self.max_steps = max_steps
        self.user_text = "\n".join(m.text for m in self.new)
        self.transcript: list[Message] = list(self.new)
        self.records: list[ToolCallRecord] = []
        self.text = ""
        self.stop: StopReason = "max_steps"
        self.error: str | None = None
        self.steps = 0
        self.system = ""
        self.blocks: tuple[str, ...] = ()
        self.items: list[ChatItem] = []
        self.tools: tuple[Mapping[str, Any], ...] = ()

    def begin(self, instructions: str, blocks: Sequence[str], tools: Sequence[Mapping[str, Any]]) -> None:
        self.blocks = tuple(blocks)
        self.system = _system(instructions, self.context, self.blocks, self.host)
        self.items = _items(self.messages)
        self.tools = tuple(tools)

    def next_request(self) -> ModelRequest | None:
        """The next request to send, or None when the turn is over."""
        if self.stop == "answered" or self.steps >= self.max_steps:
            return None
        self.steps += 1
        return ModelRequest(self.system, tuple(self.items), self.tools)

    def take(self, reply: ModelReply) -> tuple[ToolCall, ...]:
        """Record the model's reply; the tool calls it asks for (none: the turn is answered)."""
        self.text = reply.text
        self.items.append(ChatItem("assistant", reply.text, reply.tool_calls))
        if not reply.tool_calls:
            self.stop = "answered"
        elif reply.text:
            self.transcript.append(Message("assistant", text=reply.text))
        return reply.tool_calls

    def refusal(self, tool_call: ToolCall) -> ToolResult | None:
        """The answer to a call whose arguments could not be decoded, or None for a call to run."""
        if tool_call.arguments_error is not None:
            return ToolResult(error("invalid_arguments", f"{tool_call.name}: {tool_call.arguments_error}."))
        return None

    def answered(self, tool_call: ToolCall, result: ToolResult) -> None:
        answer = result.answer
        self.records.append(ToolCallRecord(tool_call.id, tool_call.name, tool_call.arguments, answer))
        self.transcript.append(_record(tool_call, answer))
        self.items.append(
            ChatItem(
                "tool",
                json.dumps(answer, ensure_ascii=False),
                tool_call_id=tool_call.id,
                is_error=answer.get("ok") is False,
                blocks=result.blocks,
            )
        )

    def finish(self) -> Turn:
        if self.text or self.stop != "model_error":
            self.transcript.append(Message("assistant", text=self.text))
        return Turn(
            self.text, tuple(self.transcript), tuple(self.records), self.steps, self.stop, self.system, self.blocks,
            self.error,
        )

    def failed(self, model: ModelClient, exc: Exception) -> tuple[Turn, ModelError]:
        """The partial turn after the model raised ``exc``, and the ``ModelError`` to raise with it.

        A client's own ``ModelError`` gives its reason; the cause stays the SDK's exception.
        """
        name = str(getattr(model, "name", "") or type(model).__name__)
        reason = exc.reason if isinstance(exc, ModelError) else f"{type(exc).__name__}: {exc}"
        self.stop, self.error, self.text = "model_error", reason, ""
        turn = self.finish()
        error = ModelError(name, reason, turn)
        error.__cause__ = (exc.__cause__ or exc) if isinstance(exc, ModelError) else exc
        return turn, error


def run_turn(
    model: ModelClient,
    runtime: Runtime,
    context: ToolContext,
    messages: Sequence[Message],
    *,
    instructions: str = DEFAULT_INSTRUCTIONS,
    max_steps: int = DEFAULT_MAX_STEPS,
    toolbox: Toolbox | None = None,
    conversation_kind: ConversationKind | None = None,
    clock: Callable[[], datetime] | None = None,
) -> Turn:
    """Answer the trailing user messages of ``messages``.

    Injects the runtime's ``prompt_context`` into the system prompt, offers
    ``model_tools(context)`` (or ``toolbox``'s tools), runs every tool call through the
    runtime in ``context.for_call(<the call's id>)`` until the model answers
    without calling a tool or ``max_steps`` model calls were made, then calls
    ``after_turn`` with this turn's messages. ``messages`` is the conversation so
    far; the user messages after the last assistant message are this turn's.

    The system prompt also says today's date (UTC, from ``clock``; default the runtime's, see
    ``Runtime.utcnow``) and what the
    conversation's kind means for memory: ``conversation_kind`` as the host knows it (a Slack channel shared with
    another organisation), else the kind ``context.conversation`` implies.

    When the model fails (unreachable, an HTTP error, an unreadable reply), ``after_turn`` still sees what
    happened and ``ModelError`` is raised naming the model, with the partial ``Turn`` as ``.turn``.
    """
    state = _TurnState(context, messages, max_steps, kind=conversation_kind, clock=clock or runtime.utcnow)
    tools = toolbox if toolbox is not None else RuntimeToolbox(runtime)
    # The host's lines (date, kind) go in the system prompt once, from state.host: the plugins' blocks only here.
    state.begin(instructions, runtime.prompt_context(context, state.user_text, host=False),
                tools.model_tools(context))
    while (request := state.next_request()) is not None:
        try:
            reply = model.complete(request)
        except Exception as exc:  # noqa: BLE001 - whatever the client raised, the turn ends as a ModelError
            turn, error = state.failed(model, exc)
            runtime.after_turn(context, turn.transcript)
            raise error  # noqa: B904 - failed() set the cause: the SDK's exception, not a client's wrapper
        for tool_call in state.take(reply):
            result = state.refusal(tool_call) or tools.call(
                tool_call.name, tool_call.arguments, context.for_call(tool_call.id)
            )
            state.answered(tool_call, result)
    turn = state.finish()
    runtime.after_turn(context, turn.transcript)
    return turn


async def arun_turn(
    model: ModelClient,
    runtime: Runtime,
    context: ToolContext,
    messages: Sequence[Message],
    *,
    instructions: str = DEFAULT_INSTRUCTIONS,
    max_steps: int = DEFAULT_MAX_STEPS,
    toolbox: Toolbox | None = None,
    conversation_kind: ConversationKind | None = None,
    clock: Callable[[], datetime] | None = None,
) -> Turn:
    """``run_turn`` for an event loop: nothing here blocks it.

    Hooks run on worker threads, tools through ``acall_model_tool`` (async
    handlers on their source's own loop, awaited from the caller's), and the model through its ``acomplete`` when
    it has one, otherwise its ``complete`` on a worker thread. A model failure is a ``ModelError``, as there.
    """
    state = _TurnState(context, messages, max_steps, kind=conversation_kind, clock=clock or runtime.utcnow)
    tools = toolbox if toolbox is not None else RuntimeToolbox(runtime)
    offered = await asyncio.to_thread(tools.model_tools, context)  # tool_visible hooks may take their time
    state.begin(instructions, await runtime.aprompt_context(context, state.user_text, host=False), offered)
    acomplete = getattr(model, "acomplete", None)
    while (request := state.next_request()) is not None:
        try:
            if acomplete is not None:
                reply = await acomplete(request)
            else:
                reply = await asyncio.to_thread(model.complete, request)
        except Exception as exc:  # noqa: BLE001 - whatever the client raised, the turn ends as a ModelError
            turn, error = state.failed(model, exc)
            await runtime.aafter_turn(context, turn.transcript)
            raise error  # noqa: B904 - failed() set the cause: the SDK's exception, not a client's wrapper
        for tool_call in state.take(reply):
            result = state.refusal(tool_call) or await tools.acall(
                tool_call.name, tool_call.arguments, context.for_call(tool_call.id)
            )
            state.answered(tool_call, result)
    turn = state.finish()
    await runtime.aafter_turn(context, turn.transcript)
    return turn
