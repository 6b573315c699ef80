"""The OpenAI Chat Completions wire format and its client (``pip install 'junior-core[openai]'``).

Its mapping functions are public and pure, and its SDK is imported when a client is built (see
``junior_core.llm``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import junior_core.llm.types as wire
from junior_core._base.errors import ModelError
from junior_core.llm.adapters import to_openai_tools
from junior_core.llm.types import ChatItem, ModelReply, ModelRequest, TextSink, ToolCall

__all__ = [
    "OpenAIChatModel",
    "collect_openai_stream",
    "openai_request",
    "openai_response",
    "openai_stream_chunks",
    "parse_openai_request",
    "parse_openai_response",
]


def openai_request(model: str, request: ModelRequest, **params: Any) -> dict[str, Any]:
    """The Chat Completions request body for ``request``; ``params`` are added as-is (``temperature``...)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for item in request.messages:
        if item.role == "user":
            messages.append({"role": "user", "content": item.text})
        elif item.role == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": item.text or None}
            if item.tool_calls:
                message["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": json.dumps(c.arguments if c.arguments is not None else {}),
                        },
                    }
                    for c in item.tool_calls
                ]
            messages.append(message)
        else:
            messages.append({"role": "tool", "tool_call_id": item.tool_call_id, "content": item.text})
    body: dict[str, Any] = {"model": model, "messages": messages}
    if request.tools:
        body["tools"] = to_openai_tools(request.tools)
        body["tool_choice"] = "auto"
    body.update({k: v for k, v in params.items() if v is not None})
    return body


def _content_text(content: Any) -> str:
    # Chat Completions content is a string or a list of parts; only text parts matter here.
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")


def collect_openai_stream(chunks: Iterable[Mapping[str, Any]], on_text: TextSink | None = None) -> dict[str, Any]:
    """The response body a Chat Completions stream's chunks add up to (the first choice); each piece of content
    goes to ``on_text`` as its chunk arrives."""
    deltas: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: Any = None
    last: Mapping[str, Any] = {}
    for chunk in chunks:
        last = chunk
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                deltas.append(str(delta["content"]))
                if on_text is not None:
                    on_text(deltas[-1])
            for raw in delta.get("tool_calls") or ():
                slot = calls.setdefault(int(raw.get("index") or 0), {"id": "", "name": "", "arguments": ""})
                function = raw.get("function") or {}
                slot["id"] = raw.get("id") or slot["id"]
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    if not last:
        raise ValueError("the stream had no chunks")
    message: dict[str, Any] = {"role": "assistant", "content": "".join(deltas) or None}
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(calls.items())
        ]
    return {"id": last.get("id"), "model": last.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def parse_openai_response(body: Mapping[str, Any]) -> ModelReply:
    """A ``ModelReply`` from a Chat Completions response body (the first choice)."""
    choices = body.get("choices") or []
    if not choices:
        raise ValueError("Chat Completions response has no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    calls = []
    for raw in message.get("tool_calls") or ():
        function = raw.get("function") or {}
        arguments, problem = wire.decode_arguments(function.get("arguments"))
        calls.append(ToolCall(str(raw.get("id") or ""), str(function.get("name") or ""), arguments, problem))
    return ModelReply(_content_text(message.get("content")), tuple(calls), choice.get("finish_reason"), dict(body))


def parse_openai_request(body: Mapping[str, Any]) -> ModelRequest:
    """The ``ModelRequest`` a Chat Completions request body carries (what a model sees)."""
    system: list[str] = []
    items: list[ChatItem] = []
    for message in body.get("messages", ()):
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_content_text(message.get("content")))
        elif role == "user":
            items.append(ChatItem("user", _content_text(message.get("content"))))
        elif role == "assistant":
            calls = []
            for raw in message.get("tool_calls") or ():
                arguments, problem = wire.decode_arguments(raw["function"].get("arguments"))
                calls.append(ToolCall(raw["id"], raw["function"]["name"], arguments, problem))
            items.append(ChatItem("assistant", _content_text(message.get("content")), tuple(calls)))
        elif role == "tool":
            items.append(
                ChatItem("tool", _content_text(message.get("content")), tool_call_id=message.get("tool_call_id"))
            )
    tools = tuple(
        {
            "name": t["function"]["name"],
            "description": t["function"].get("description", ""),
            "input_schema": t["function"].get("parameters", {}),
        }
        for t in body.get("tools") or ()
    )
    return ModelRequest("\n\n".join(system), tuple(items), tools)


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def openai_response(
    reply: ModelReply, model: str = "scripted", response_id: str = "chatcmpl-scripted"
) -> dict[str, Any]:
    """A Chat Completions response body carrying ``reply`` (for scripted models and test servers)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            # A string is sent as-is, so a script can reproduce a model's malformed arguments.
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments_text(c.arguments)}}
            for c in reply.tool_calls
        ]
    return {
        "id": response_id,
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def openai_stream_chunks(
    reply: ModelReply, model: str = "scripted", response_id: str = "chatcmpl-scripted", piece: int = 16
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects a streaming server sends for ``reply``: its text in pieces of
    ``piece`` characters, then each tool call, then the finish (for scripted models and test servers)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": response_id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": reply.text[i:i + piece]}) for i in range(0, len(reply.text), max(piece, 1))]
    for index, c in enumerate(reply.tool_calls):
        function = {"name": c.name, "arguments": _arguments_text(c.arguments)}
        chunks.append(chunk({"tool_calls": [{"index": index, "id": c.id, "type": "function", "function": function}]}))
    chunks.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    return chunks


class OpenAIChatModel:
    """Chat Completions through the official ``openai`` SDK: OpenAI, or any compatible server via ``base_url``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        name: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        **params: Any,
    ) -> None:
        """``max_retries``: how often the SDK tries a failed request again, waiting between tries (0: never)."""
        self.model = model
        self.name = name or f"openai:{model}"
        self.params = params
        if client is None:
            sdk = wire.import_sdk("openai", "openai")
            client = sdk.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=max_retries)
        self.client = client

    def complete(self, request: ModelRequest) -> ModelReply:
        body = openai_request(self.model, request, **self.params)
        try:
            response = self.client.chat.completions.create(**body)
        except Exception as exc:
            raise ModelError(self.name, self._reason(exc)) from exc
        try:
            return parse_openai_response(wire.dump_response(response))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise ModelError(self.name, f"the server's answer is not a Chat Completions response ({exc})") from exc

    def stream(self, request: ModelRequest, on_text: TextSink) -> ModelReply:
        """``complete`` with ``stream: true``: each piece of content goes to ``on_text`` as it arrives."""
        body = openai_request(self.model, request, **self.params)
        try:
            chunks = self.client.chat.completions.create(**body, stream=True)
            return parse_openai_response(collect_openai_stream((wire.dump_response(c) for c in chunks), on_text))
        except ModelError:
            raise
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise ModelError(self.name, f"the server's stream is not a Chat Completions stream ({exc})") from exc
        except Exception as exc:
            raise ModelError(self.name, self._reason(exc)) from exc

    def _reason(self, exc: Exception) -> str:
        """What went wrong, in words that say what to check (the SDK's own exception stays the cause)."""
        base_url = str(getattr(self.client, "base_url", "") or "").rstrip("/")
        status = getattr(exc, "status_code", None)
        if status == 404 and base_url and not base_url.endswith("/v1"):
            return (
                f"{base_url}/chat/completions answered 404 Not Found; an OpenAI-compatible base URL usually ends "
                f"in /v1, e.g. openai-compatible:{base_url}/v1#{self.model}"
            )
        if status is not None:
            return f"{base_url or 'the server'} answered HTTP {status}: {exc}"
        if type(exc).__name__ in ("APIConnectionError", "APITimeoutError"):
            cause = exc.__cause__ or exc.__context__
            detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
            return f"cannot reach {base_url or 'the server'}: {exc}{detail}"
        return f"{type(exc).__name__}: {exc}"
