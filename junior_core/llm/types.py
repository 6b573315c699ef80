"""Model clients: one protocol, the OpenAI Chat Completions and Anthropic Messages wire formats, a scripted model.

A request is model-neutral (``ModelRequest``); each client maps it to its API's
wire format and maps the answer back to a ``ModelReply``. The mapping functions
are public and pure so that ``ScriptedModel`` can run every request and reply
through exactly the same code a live client uses.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from junior_core.adapters import to_anthropic_tools, to_openai_tools

__all__ = [
    "AnthropicModel",
    "ChatItem",
    "ModelClient",
    "ModelConfigError",
    "ModelReply",
    "ModelRequest",
    "OpenAIChatModel",
    "ScriptView",
    "ScriptedModel",
    "ToolCall",
    "anthropic_request",
    "anthropic_response",
    "call",
    "model_from_env",
    "model_from_spec",
    "openai_request",
    "openai_response",
    "parse_anthropic_request",
    "parse_anthropic_response",
    "parse_openai_request",
    "parse_openai_response",
    "say",
]

Wire = Literal["openai", "anthropic"]
DEFAULT_MAX_TOKENS = 1024


class ModelConfigError(Exception):
    """A model could not be configured: bad ``JUNIOR_MODEL`` spec, missing SDK or credentials."""


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
    result ``text`` of the call ``tool_call_id`` (``is_error`` when it failed).
    """

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False


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


def say(text: str) -> ModelReply:
    """A reply that answers with text and calls nothing."""
    return ModelReply(text=text, stop_reason="stop")


def call(name: str, arguments: Mapping[str, Any] | None = None, *, id: str = "", text: str = "") -> ModelReply:
    """A reply that calls one tool (``id`` is assigned by ``ScriptedModel`` when empty)."""
    return ModelReply(text=text, tool_calls=(ToolCall(id, name, dict(arguments or {})),), stop_reason="tool_calls")


def _decode_arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, Mapping):
        return dict(raw), None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if not isinstance(raw, str):
        return None, f"arguments must be a JSON object, got {type(raw).__name__}"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}); send a JSON object"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


# -- OpenAI Chat Completions -----------------------------------------------------------------------


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
        arguments, problem = _decode_arguments(function.get("arguments"))
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
                arguments, problem = _decode_arguments(raw["function"].get("arguments"))
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


# -- Anthropic Messages ----------------------------------------------------------------------------


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
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": item.tool_call_id, "content": item.text}
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
            arguments, problem = _decode_arguments(block.get("input"))
            calls.append(ToolCall(str(block.get("id") or ""), str(block.get("name") or ""), arguments, problem))
    return ModelReply("".join(texts), tuple(calls), body.get("stop_reason"), dict(body))


def parse_anthropic_request(body: Mapping[str, Any]) -> ModelRequest:
    """The ``ModelRequest`` a Messages API request body carries (what a model sees)."""
    items: list[ChatItem] = []
    for message in body.get("messages", ()):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
        if message.get("role") == "assistant":
            calls = tuple(
                ToolCall(b["id"], b["name"], *_decode_arguments(b.get("input")))
                for b in blocks
                if b.get("type") == "tool_use"
            )
            items.append(ChatItem("assistant", _blocks_text(blocks), calls))
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                items.append(
                    ChatItem(
                        "tool",
                        _blocks_text(b.get("content")),
                        tool_call_id=b.get("tool_use_id"),
                        is_error=bool(b.get("is_error")),
                    )
                )
            elif b.get("type") == "text":
                items.append(ChatItem("user", b.get("text", "")))
    system = body.get("system") or ""
    tools = tuple(
        {"name": t["name"], "description": t.get("description", ""), "input_schema": t.get("input_schema", {})}
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


# -- live clients ----------------------------------------------------------------------------------


def _import_sdk(module: str, extra: str) -> Any:
    # Imported by name: the SDKs are optional extras, and importing them costs
    # hundreds of milliseconds a runtime without a model should not pay.
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ModelConfigError(
            f"the {module!r} package is not installed; install it with: pip install 'junior-core[{extra}]'"
        ) from exc


def _dump(response: Any) -> dict[str, Any]:
    if isinstance(response, Mapping):
        return dict(response)
    dumped: dict[str, Any] = response.model_dump(mode="json")
    return dumped


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
        **params: Any,
    ) -> None:
        self.model = model
        self.name = name or f"openai:{model}"
        self.params = params
        if client is None:
            sdk = _import_sdk("openai", "openai")
            client = sdk.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=2)
        self.client = client

    def complete(self, request: ModelRequest) -> ModelReply:
        body = openai_request(self.model, request, **self.params)
        return parse_openai_response(_dump(self.client.chat.completions.create(**body)))


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
        **params: Any,
    ) -> None:
        self.model = model
        self.name = name or f"anthropic:{model}"
        self.max_tokens = max_tokens
        self.params = params
        if client is None:
            sdk = _import_sdk("anthropic", "anthropic")
            client = sdk.Anthropic(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=2)
        self.client = client

    def complete(self, request: ModelRequest) -> ModelReply:
        body = anthropic_request(self.model, request, self.max_tokens, **self.params)
        return parse_anthropic_response(_dump(self.client.messages.create(**body)))


def model_from_spec(spec: str, env: Mapping[str, str] | None = None) -> ModelClient:
    """A client for ``openai:<model>``, ``anthropic:<model>`` or ``openai-compatible:<base_url>#<model>``.

    Credentials come from the environment: ``OPENAI_API_KEY`` (and the SDK's own
    ``OPENAI_BASE_URL``), ``ANTHROPIC_API_KEY``; a compatible server takes
    ``JUNIOR_MODEL_API_KEY`` when it needs one. Raises ``ModelConfigError`` saying
    what is missing.
    """
    env = os.environ if env is None else env
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ModelConfigError(
            f"invalid model {spec!r}: use openai:<model>, anthropic:<model> or openai-compatible:<base_url>#<model>"
        )
    if kind == "openai":
        if not env.get("OPENAI_API_KEY"):
            raise ModelConfigError(f"{spec}: OPENAI_API_KEY is not set")
        return OpenAIChatModel(
            rest, api_key=env["OPENAI_API_KEY"], base_url=env.get("OPENAI_BASE_URL") or None, name=spec
        )
    if kind == "anthropic":
        if not env.get("ANTHROPIC_API_KEY"):
            raise ModelConfigError(f"{spec}: ANTHROPIC_API_KEY is not set")
        return AnthropicModel(
            rest, api_key=env["ANTHROPIC_API_KEY"], base_url=env.get("ANTHROPIC_BASE_URL") or None, name=spec
        )
    if kind == "openai-compatible":
        base_url, hash_, model = rest.rpartition("#")
        if not hash_ or not base_url or not model:
            raise ModelConfigError(f"invalid model {spec!r}: use openai-compatible:<base_url>#<model>")
        # Local servers (vLLM, llama.cpp, Ollama) ignore the key, but the SDK insists on one.
        api_key = env.get("JUNIOR_MODEL_API_KEY") or "not-needed"
        return OpenAIChatModel(model, base_url=base_url, api_key=api_key, name=spec)
    raise ModelConfigError(f"unknown model provider {kind!r} in {spec!r}: use openai, anthropic or openai-compatible")


def model_from_env(variable: str = "JUNIOR_MODEL", env: Mapping[str, str] | None = None) -> ModelClient | None:
    """The client ``$JUNIOR_MODEL`` names, or None when it is unset."""
    env = os.environ if env is None else env
    spec = (env.get(variable) or "").strip()
    return model_from_spec(spec, env) if spec else None


# -- scripted model --------------------------------------------------------------------------------


@attrs.frozen
class ScriptView:
    """What a scripted model sees at one step: the request decoded back from its wire format."""

    request: ModelRequest
    step: int

    @property
    def system(self) -> str:
        return self.request.system

    @property
    def user_text(self) -> str:
        """The user messages since the last assistant message, joined by newlines."""
        texts: list[str] = []
        for item in reversed(self.request.messages):
            if item.role != "user":
                break
            texts.append(item.text)
        return "\n".join(reversed(texts))

    @property
    def tool_results(self) -> list[Any]:
        """The results of the calls of the last assistant message, JSON-decoded where possible."""
        out: list[Any] = []
        for item in reversed(self.request.messages):
            if item.role != "tool":
                break
            try:
                out.append(json.loads(item.text))
            except ValueError:
                out.append(item.text)
        return list(reversed(out))

    @property
    def tool_names(self) -> list[str]:
        return [str(t["name"]) for t in self.request.tools]


Script = Callable[[ScriptView], Any]
"""A function of the view returning a ``ModelReply``, or a generator that yields replies and receives results."""


class ScriptedModel:
    """A model whose answers are written in Python, speaking a real wire format.

    Every request is encoded as the wire body a live client would send, decoded
    back into the ``ScriptView`` the script reads, and the script's reply is
    encoded as a wire response and parsed by the live parser: a scripted run
    exercises the same mapping code as a live one.

    ``script`` is either a function ``view -> ModelReply`` called at every step,
    or a generator function ``view -> Generator[ModelReply, results, None]``
    started at each new user turn: ``result = yield call(...)`` receives the
    decoded result of that call; a reply with several calls receives the list
    of their results, in order.
    """

    def __init__(self, script: Script, *, wire: Wire = "openai", name: str = "scripted") -> None:
        if wire not in ("openai", "anthropic"):
            raise ValueError(f"wire must be 'openai' or 'anthropic', got {wire!r}")
        self.script = script
        self.wire = wire
        self.name = name
        self.requests: list[dict[str, Any]] = []
        self._generator: Generator[Any, Any, Any] | None = None
        self._calls = 0
        self._step = 0

    def complete(self, request: ModelRequest) -> ModelReply:
        if self.wire == "openai":
            body = openai_request(self.name, request)
            view = ScriptView(parse_openai_request(json.loads(json.dumps(body))), self._step)
        else:
            body = anthropic_request(self.name, request)
            view = ScriptView(parse_anthropic_request(json.loads(json.dumps(body))), self._step)
        self.requests.append(body)
        self._step += 1
        reply = self._next(view)
        reply = attrs.evolve(reply, tool_calls=tuple(self._with_id(c) for c in reply.tool_calls))
        if self.wire == "openai":
            return parse_openai_response(json.loads(json.dumps(openai_response(reply, self.name))))
        return parse_anthropic_response(json.loads(json.dumps(anthropic_response(reply, self.name))))

    def _with_id(self, tool_call: ToolCall) -> ToolCall:
        if tool_call.id:
            return tool_call
        self._calls += 1
        prefix = "call" if self.wire == "openai" else "toolu"
        return attrs.evolve(tool_call, id=f"{prefix}_{self._calls:04d}")

    def _next(self, view: ScriptView) -> ModelReply:
        last = view.request.messages[-1].role if view.request.messages else "user"
        if last != "tool":
            self._generator = None
            result = self.script(view)
            if isinstance(result, Generator):
                self._generator = result
                return self._advance(lambda g: next(g))
            return _as_reply(result)
        if self._generator is None:
            return _as_reply(self.script(view))
        results = view.tool_results
        sent: Any = results[0] if len(results) == 1 else results
        return self._advance(lambda g: g.send(sent))

    def _advance(self, step: Callable[[Generator[Any, Any, Any]], Any]) -> ModelReply:
        assert self._generator is not None
        try:
            return _as_reply(step(self._generator))
        except StopIteration as stop:
            self._generator = None
            return _as_reply(stop.value if stop.value is not None else say(""))


def _as_reply(value: Any) -> ModelReply:
    if isinstance(value, ModelReply):
        return value
    if isinstance(value, str):
        return say(value)
    if isinstance(value, Sequence) and all(isinstance(v, ModelReply) for v in value):
        calls = tuple(c for v in value for c in v.tool_calls)
        return ModelReply("".join(v.text for v in value), calls, "tool_calls" if calls else "stop")
    raise TypeError(f"a script must produce a ModelReply (say(...), call(...)), got {type(value).__name__}")
