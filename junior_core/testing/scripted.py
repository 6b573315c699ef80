"""A model whose answers are written in Python, speaking a real wire format."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Sequence
from typing import Any

import attrs

from junior_core.llm.anthropic import (
    anthropic_request,
    anthropic_response,
    parse_anthropic_request,
    parse_anthropic_response,
)
from junior_core.llm.openai import openai_request, openai_response, parse_openai_request, parse_openai_response
from junior_core.llm.types import ModelReply, ModelRequest, ToolCall, Wire, say

__all__ = ["Script", "ScriptView", "ScriptedModel"]


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
            if item.blocks and not item.text:  # e.g. tool_reference blocks
                out.append([dict(b) for b in item.blocks])
                continue
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
    of their results, in order. Conversations that overlap (a bot answering two threads at once) each run their
    own generator: a turn is known by the messages up to its user message.
    """

    def __init__(self, script: Script, *, wire: Wire = "openai", name: str = "scripted") -> None:
        if wire not in ("openai", "anthropic"):
            raise ValueError(f"wire must be 'openai' or 'anthropic', got {wire!r}")
        self.script = script
        self.wire = wire
        self.name = name
        self.requests: list[dict[str, Any]] = []
        # One generator per conversation turn, keyed by the messages up to its user message: two conversations
        # that overlap (a bot answering two threads at once) each get their own.
        self._generators: dict[str, Generator[Any, Any, Any]] = {}
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
        key = _turn_key(view.request)
        last = view.request.messages[-1].role if view.request.messages else "user"
        if last != "tool":
            self._generators.pop(key, None)
            result = self.script(view)
            if isinstance(result, Generator):
                self._generators[key] = result
                return self._advance(key, lambda g: next(g))
            return _as_reply(result)
        if key not in self._generators:
            return _as_reply(self.script(view))
        results = view.tool_results
        sent: Any = results[0] if len(results) == 1 else results
        return self._advance(key, lambda g: g.send(sent))

    def _advance(self, key: str, step: Callable[[Generator[Any, Any, Any]], Any]) -> ModelReply:
        try:
            return _as_reply(step(self._generators[key]))
        except StopIteration as stop:
            del self._generators[key]
            return _as_reply(stop.value if stop.value is not None else say(""))


def _turn_key(request: ModelRequest) -> str:
    """The system prompt and the messages up to the turn's last user message: the same for each step of a turn."""
    items = list(request.messages)
    end = len(items)
    while end > 0 and items[end - 1].role != "user":
        end -= 1
    head = [(item.role, item.text, [c.id for c in item.tool_calls], item.tool_call_id) for item in items[:end]]
    return json.dumps([request.system, head], default=str)


def _as_reply(value: Any) -> ModelReply:
    if isinstance(value, ModelReply):
        return value
    if isinstance(value, str):
        return say(value)
    if isinstance(value, Sequence) and all(isinstance(v, ModelReply) for v in value):
        calls = tuple(c for v in value for c in v.tool_calls)
        return ModelReply("".join(v.text for v in value), calls, "tool_calls" if calls else "stop")
    raise TypeError(f"a script must produce a ModelReply (say(...), call(...)), got {type(value).__name__}")
