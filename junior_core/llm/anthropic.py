"""The Anthropic Messages wire format and its client (``pip install 'junior-core[anthropic]'``).

Its mapping functions are public and pure, and its SDK is imported when a client is built (see
``junior_core.llm``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from junior_core._protocol import EXECUTE_TOOL, SEARCH_TOOLS
from junior_core.context import ToolContext
from junior_core.llm.adapters import to_anthropic_tools
from junior_core.llm.agent import ToolResult
from junior_core.llm.types import (
    DEFAULT_MAX_TOKENS,
    ChatItem,
    ModelConfigError,
    ModelReply,
    ModelRequest,
    TextSink,
    ToolCall,
    decode_arguments,
    dump_response,
    import_sdk,
)

__all__ = [
    "NATIVE_LOADING_NOTE",
    "TOOL_SEARCH_BETA",
    "AnthropicModel",
    "AnthropicToolSearch",
    "anthropic_request",
    "anthropic_response",
    "collect_anthropic_stream",
    "parse_anthropic_request",
    "parse_anthropic_response",
]

if TYPE_CHECKING:
    from junior_core._catalog.catalog import CatalogTool
    from junior_core._runtime.runtime import Runtime

# The beta flag the Messages API has asked for with ``defer_loading`` and ``tool_reference``.
TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"
NATIVE_LOADING_NOTE = (
    "Tools this search returns are loaded for you: call them directly by their tool_name. executeTool also works."
)


def anthropic_request(
    model: str, request: ModelRequest, max_tokens: int = DEFAULT_MAX_TOKENS, **params: Any
) -> dict[str, Any]:
    """The Messages API request body for ``request``.

    Tool results travel in a user message, and consecutive user-side items are
    merged so roles alternate as the API requires.
    """
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for item in request.messages:
        if item.role == "user":
            add("user", [{"type": "text", "text": item.text}])
        elif item.role == "tool":
            content: Any = [dict(b) for b in item.blocks] if item.blocks else item.text
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": item.tool_call_id, "content": content}
            if item.is_error:
                block["is_error"] = True
            add("user", [block])
        else:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": item.text}] if item.text else []
            blocks += [
                {
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": c.arguments if c.arguments is not None else {},
                }
                for c in item.tool_calls
            ]
            add("assistant", blocks)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = to_anthropic_tools(request.tools)
    body.update({k: v for k, v in params.items() if v is not None})
    return body


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or () if isinstance(b, Mapping) and b.get("type") == "text")


def parse_anthropic_response(body: Mapping[str, Any]) -> ModelReply:
    """A ``ModelReply`` from a Messages API response body."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in body.get("content") or ():
        if block.get("type") == "text":
            texts.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            arguments, problem = decode_arguments(block.get("input"))
            calls.append(ToolCall(str(block.get("id") or ""), str(block.get("name") or ""), arguments, problem))
    return ModelReply("".join(texts), tuple(calls), body.get("stop_reason"), dict(body))


def collect_anthropic_stream(events: Iterable[Mapping[str, Any]], on_text: TextSink | None = None) -> dict[str, Any]:
    """The Messages API response body a stream's events add up to; each text delta goes to ``on_text`` as its
    event arrives (a tool_use block's input comes as JSON pieces, decoded once whole)."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, list[str]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
        elif kind == "content_block_start":
            index = int(event.get("index") or 0)
            blocks[index] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            index = int(event.get("index") or 0)
            delta = event.get("delta") or {}
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta" and delta.get("text"):
                block["text"] = str(block.get("text") or "") + str(delta["text"])
                if on_text is not None:
                    on_text(str(delta["text"]))
            elif delta.get("type") == "input_json_delta":
                inputs.setdefault(index, []).append(str(delta.get("partial_json") or ""))
        elif kind == "message_delta":
            message.update({k: v for k, v in (event.get("delta") or {}).items() if v is not None})
        elif kind == "error":
            raise ValueError(f"the stream ended with an error: {event.get('error')}")
    if not message:
        raise ValueError("the stream had no message_start")
    for index, pieces in inputs.items():
        blocks[index]["input"] = "".join(pieces) or "{}"  # decode_arguments decodes the JSON text
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def parse_anthropic_request(body: Mapping[str, Any]) -> ModelRequest:
    """The ``ModelRequest`` a Messages API request body carries (what a model sees)."""
    items: list[ChatItem] = []
    for message in body.get("messages", ()):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
        if message.get("role") == "assistant":
            calls = tuple(
                ToolCall(b["id"], b["name"], *decode_arguments(b.get("input")))
                for b in blocks
                if b.get("type") == "tool_use"
            )
            items.append(ChatItem("assistant", _blocks_text(blocks), calls))
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                result = b.get("content")
                others = () if isinstance(result, str) else tuple(r for r in result or () if r.get("type") != "text")
                items.append(
                    ChatItem(
                        "tool",
                        _blocks_text(result),
                        tool_call_id=b.get("tool_use_id"),
                        is_error=bool(b.get("is_error")),
                        blocks=others,
                    )
                )
            elif b.get("type") == "text":
                items.append(ChatItem("user", b.get("text", "")))
    system = body.get("system") or ""
    tools = tuple(
        {
            "name": t["name"],
            "description": t.get("description", ""),
            "input_schema": t.get("input_schema", {}),
            **({"defer_loading": True} if t.get("defer_loading") else {}),
        }
        for t in body.get("tools") or ()
    )
    return ModelRequest(_blocks_text(system), tuple(items), tools)


def anthropic_response(reply: ModelReply, model: str = "scripted", response_id: str = "msg_scripted") -> dict[str, Any]:
    """A Messages API response body carrying ``reply`` (for scripted models and test servers)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in reply.tool_calls]
    return {
        "id": response_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


class AnthropicModel:
    """Messages API through the official ``anthropic`` SDK."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        name: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float = 120.0,
        betas: Sequence[str] = (),
        **params: Any,
    ) -> None:
        if "thinking" in params:
            # The turn loop does not keep thinking blocks, which the API needs back beside tool_use blocks.
            raise ModelConfigError("extended thinking is not supported by junior's turn loop; leave out thinking=")
        self.model = model
        self.name = name or f"anthropic:{model}"
        self.max_tokens = max_tokens
        self.params = params
        self.betas = tuple(betas)
        if client is None:
            sdk = import_sdk("anthropic", "anthropic")
            client = sdk.Anthropic(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=2)
        self.client = client

    def complete(self, request: ModelRequest) -> ModelReply:
        body = anthropic_request(self.model, request, self.max_tokens, **self.params)
        headers = {"anthropic-beta": ",".join(self.betas)} if self.betas else None
        return parse_anthropic_response(dump_response(self.client.messages.create(**body, extra_headers=headers)))

    def stream(self, request: ModelRequest, on_text: TextSink) -> ModelReply:
        """``complete`` with ``stream: true``: each text delta goes to ``on_text`` as it arrives."""
        body = anthropic_request(self.model, request, self.max_tokens, **self.params)
        headers = {"anthropic-beta": ",".join(self.betas)} if self.betas else None
        events = self.client.messages.create(**body, stream=True, extra_headers=headers)
        return parse_anthropic_response(collect_anthropic_stream((dump_response(e) for e in events), on_text))


class AnthropicToolSearch:
    """Anthropic's native deferred loading over junior's catalog, as a ``Toolbox`` for ``run_turn``.

    The model is given every deferred catalog tool with ``defer_loading: true``
    (the API keeps them out of its context), searchTools as a custom tool-search
    tool whose results are ``tool_reference`` blocks (the API loads the tools found,
    and the model calls them by tool_name on its next step), executeTool as the
    fallback, and the direct tools. Hidden tools are never offered. Other models
    keep the plain ``model_tools()``; use this with ``AnthropicModel(...,
    betas=[TOOL_SEARCH_BETA])`` where the API still asks for the beta.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def _deferred(self, context: ToolContext | None) -> list[CatalogTool]:
        """The deferred tools (after the host's exposure rules) the model may reach in ``context``."""
        return self.runtime.visible_tools(context, "deferred")

    def deferred_names(self, context: ToolContext | None = None) -> set[str]:
        return {e.tool_name for e in self._deferred(context)}

    def model_tools(self, context: ToolContext | None = None) -> list[dict[str, Any]]:
        """``model_tools()`` with searchTools' description for native loading, then every deferred tool."""
        tools = [dict(t) for t in self.runtime.model_tools(context)]
        for tool in tools:
            if tool["name"] == SEARCH_TOOLS:
                tool["description"] = f"{tool['description']}\n\n{NATIVE_LOADING_NOTE}"
        for entry in self._deferred(context):
            tools.append(
                {
                    "name": entry.tool_name,
                    "description": entry.tool.description,
                    "input_schema": entry.tool.input_schema,
                    "defer_loading": True,
                }
            )
        return tools

    def tools(self, context: ToolContext | None = None) -> list[dict[str, Any]]:
        """The Messages API ``tools`` of ``model_tools(context)``, for a host that calls the API itself."""
        return to_anthropic_tools(self.model_tools(context))

    def call(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        """Answer one tool_use: a search with ``tool_reference`` blocks, a deferred tool as executeTool would."""
        if name in self.deferred_names(context):
            return ToolResult(self.runtime.call_model_tool(EXECUTE_TOOL, _wrap(name, arguments), context))
        answer = self.runtime.call_model_tool(name, arguments, context)
        return ToolResult(answer, self.tool_references(answer, context) if name == SEARCH_TOOLS else ())

    async def acall(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        """Async twin of ``call``."""
        if name in self.deferred_names(context):
            return ToolResult(await self.runtime.acall_model_tool(EXECUTE_TOOL, _wrap(name, arguments), context))
        answer = await self.runtime.acall_model_tool(name, arguments, context)
        return ToolResult(answer, self.tool_references(answer, context) if name == SEARCH_TOOLS else ())

    def tool_references(
        self, answer: Mapping[str, Any], context: ToolContext | None = None
    ) -> tuple[dict[str, Any], ...]:
        """``tool_reference`` blocks for the deferred tools a searchTools answer found (none: send the JSON).

        An answer with more to page through (``next_cursor``) goes back as JSON: references alone would drop
        the cursor, and the model could not list a source to the end; executeTool runs what it finds there.
        """
        if answer.get("next_cursor"):
            return ()
        deferred = self.deferred_names(context)
        # One search's tools, or those of every search of ``queries`` (each result holds its own).
        answers = [answer, *(r for r in answer.get("results") or () if isinstance(r, Mapping))]
        found = [t.get("tool_name") for a in answers for t in a.get("tools") or () if isinstance(t, Mapping)]
        found = list(dict.fromkeys(found))
        return tuple({"type": "tool_reference", "tool_name": n} for n in found if n in deferred)


def _wrap(tool_name: str, arguments: Any) -> Any:
    # A natively loaded tool is called with its own arguments; executeTool's checks and answers then apply as-is.
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            pass  # left as text: executeTool answers invalid_arguments asking for an object
    return {"tool_name": tool_name, "arguments": {} if arguments is None else arguments}
