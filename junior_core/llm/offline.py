"""Models that need no key, no network and no SDK: ``echo``, and ``script:<file>`` (a file of turns).

Both are plain ``ModelClient``s (``name``, ``complete(ModelRequest) -> ModelReply``) that decide each reply from
the request alone, so one instance serves any number of turns and conversations. They let a newcomer run
``junior chat`` right after installing, and a test drive the whole loop — recall, searchTools, executeTool,
``after_turn`` — without a model server.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from junior_core._base.errors import ModelError
from junior_core.llm.types import ChatItem, ModelConfigError, ModelReply, ModelRequest, ToolCall, say

__all__ = ["EchoModel", "ScriptFileModel", "Step"]

SEARCH_TOOLS = "searchTools"
EXECUTE_TOOL = "executeTool"
SHOWN = 300  # characters of a tool's result the echo model repeats


def _this_turn(request: ModelRequest) -> tuple[list[ChatItem], list[ChatItem]]:
    """The trailing user messages, and the assistant and tool messages since them."""
    items = list(request.messages)
    end = len(items)
    while end > 0 and items[end - 1].role != "user":
        end -= 1
    start = end
    while start > 0 and items[start - 1].role == "user":
        start -= 1
    return items[start:end], items[end:]


def _turn_number(request: ModelRequest) -> int:
    """1 for the first user turn of the conversation: runs of user messages up to the last one."""
    number, previous = 0, ""
    for item in request.messages:
        if item.role == "user" and previous != "user":
            number += 1
        previous = item.role
    return number


def _decoded(item: ChatItem) -> Any:
    try:
        return json.loads(item.text)
    except ValueError:
        return {}


class EchoModel:
    """The ``echo`` model: searches the tools for each message and runs the best match when it safely can.

    For every user turn it calls searchTools with the message as the query. When the top tool's schema asks
    only for strings and enums, it runs that tool with executeTool: each required string gets the message (less a
    leading ``<tool's own name> that``, so "remember that I prefer tabs" saves "I prefer tabs"), each required
    enum its first value. It runs only tools annotated ``readOnlyHint`` or ``destructiveHint: false`` (by MCP's
    defaults any other tool may destroy something). Its answer repeats the message and
    says what it found or ran, and what came back. Deterministic, offline, and no SDK.
    """

    def __init__(self, name: str = "echo") -> None:
        self.name = name

    def complete(self, request: ModelRequest) -> ModelReply:
        users, since = _this_turn(request)
        text = "\n".join(item.text for item in users).strip()
        text = re.sub(r"^<@[^>]+>:\s*", "", text)  # the loop prefixes a known speaker
        calls = [call for item in since if item.role == "assistant" for call in item.tool_calls]
        results = [_decoded(item) for item in since if item.role == "tool"]
        if not calls:
            return _call(SEARCH_TOOLS, {"query": text}, len(calls))
        last, result = calls[-1], (results[-1] if results else {})
        if last.name == EXECUTE_TOOL:
            return say(f"echo: {text}\n{_outcome(last, result)}")
        if last.name != SEARCH_TOOLS or not isinstance(result, dict) or not result.get("tools"):
            hint = result.get("hint") if isinstance(result, dict) else None
            return say(f"echo: {text}\nsearchTools found no tool" + (f": {hint}" if hint else "."))
        top = result["tools"][0]
        name = str(top.get("tool_name", ""))
        if "input_schema" not in top:  # listed without its schema: asking for it by name returns it in full
            asked = [c.arguments.get("query") for c in calls if isinstance(c.arguments, dict)]
            if name not in asked:
                return _call(SEARCH_TOOLS, {"query": name}, len(calls))
            return say(f"echo: {text}\nfound {name}, without its input schema.")
        hints = top.get("annotations") or {}
        if hints.get("readOnlyHint") is not True and hints.get("destructiveHint") is not False:
            # MCP's defaults: a tool not marked read-only or non-destructive may destroy something.
            return say(f"echo: {text}\nfound {name}; echo runs only tools marked read-only or not destructive.")
        arguments, missing = _fill(top["input_schema"], text, name)
        if missing:
            return say(f"echo: {text}\nfound {name}; it needs {', '.join(missing)}, which echo cannot fill.")
        return _call(EXECUTE_TOOL, {"tool_name": name, "arguments": arguments}, len(calls))


def _call(name: str, arguments: dict[str, Any], made: int) -> ModelReply:
    return ModelReply(tool_calls=(ToolCall(f"echo_{made + 1}", name, arguments),), stop_reason="tool_calls")


def _fill(schema: Mapping[str, Any], text: str, tool_name: str) -> tuple[dict[str, Any], list[str]]:
    """Arguments for the schema's required properties from the message, and the ones that cannot be filled."""
    local = tool_name.rsplit("__", 1)[-1].replace("_", " ")
    value = re.sub(rf"^\s*{re.escape(local)}\s+(that\s+)?", "", text, flags=re.I) or text
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    missing: list[str] = []
    for key in schema.get("required") or ():
        spec = properties.get(key) or {}
        if spec.get("enum"):
            arguments[key] = spec["enum"][0]
        elif spec.get("type") == "string":
            arguments[key] = value
        else:
            missing.append(f"{key} ({spec.get('type', 'any')})")
    return arguments, missing


def _outcome(call: ToolCall, result: Any) -> str:
    name = call.arguments.get("tool_name", "?") if isinstance(call.arguments, dict) else "?"
    if isinstance(result, dict) and result.get("ok") is False:
        error = result.get("error") or {}
        return f"ran {name}: {error.get('code', 'error')}: {error.get('message', '')}"
    shown = json.dumps(result.get("result") if isinstance(result, dict) else result, ensure_ascii=False)
    return f"ran {name}: {shown if len(shown) <= SHOWN else shown[: SHOWN - 4] + ' ...'}"


@attrs.frozen
class Step:
    """One reply of a scripted turn: ``say`` a text, or ``call`` a tool with ``arguments`` (and optional ``say``)."""

    say: str = ""
    call: str | None = None
    arguments: Mapping[str, Any] = attrs.field(factory=dict)


def _steps(raw: Any, where: str) -> tuple[Step, ...]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("steps"), list) or not raw["steps"]:
        raise ModelConfigError(f"{where}: a turn is a table with a non-empty list `steps`")
    steps: list[Step] = []
    for number, step in enumerate(raw["steps"], 1):
        at = f"{where}, step {number}"
        if not isinstance(step, Mapping) or set(step) - {"say", "call", "arguments"}:
            raise ModelConfigError(f"{at}: a step has `say` (text) and/or `call` (a tool name) with `arguments`")
        said, called, arguments = step.get("say", ""), step.get("call"), step.get("arguments", {})
        if not isinstance(said, str) or (called is not None and not isinstance(called, str)):
            raise ModelConfigError(f"{at}: `say` and `call` are strings")
        if called is None and (not said or "arguments" in step):
            raise ModelConfigError(f"{at}: give `say` (text), or `call` (a tool name) with `arguments`")
        if not isinstance(arguments, Mapping):
            raise ModelConfigError(f"{at}: `arguments` is a table (JSON object), got {type(arguments).__name__}")
        steps.append(Step(said, called, dict(arguments)))
    if steps[-1].call is not None:
        raise ModelConfigError(f"{where}: its last step must `say` the answer, not call a tool")
    return tuple(steps)


class ScriptFileModel:
    """The ``script:<file>`` model: replies read from a JSON or TOML file of turns, one turn per user message.

    The file holds ``turns``, each a table whose ``steps`` are the model's replies in order: ``{"call": tool,
    "arguments": {...}}`` asks for a tool call (the next step comes once it is answered), ``{"say": text}`` answers
    and ends the turn. The n-th user turn of a conversation plays the n-th turn of the file.
    """

    def __init__(self, path: str | Path, *, name: str | None = None) -> None:
        self.path = Path(path).expanduser()
        self.name = name or f"script:{path}"
        self.turns = self._load()

    def _load(self) -> tuple[tuple[Step, ...], ...]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ModelConfigError(f"{self.name}: cannot read {self.path}: {exc.strerror or exc}") from exc
        try:
            data = tomllib.loads(text) if self.path.suffix == ".toml" else json.loads(text)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            kind = "TOML" if self.path.suffix == ".toml" else "JSON"
            raise ModelConfigError(f"{self.name}: {self.path} is not valid {kind}: {exc}") from exc
        turns = data.get("turns") if isinstance(data, Mapping) else None
        if not isinstance(turns, Sequence) or isinstance(turns, str) or not turns:
            raise ModelConfigError(f"{self.name}: {self.path} needs a non-empty list `turns`")
        return tuple(_steps(turn, f"{self.path}: turn {number}") for number, turn in enumerate(turns, 1))

    def complete(self, request: ModelRequest) -> ModelReply:
        number = _turn_number(request)
        if not 1 <= number <= len(self.turns):
            raise ModelError(
                self.name,
                f"{self.path} has {len(self.turns)} turn{'s' if len(self.turns) != 1 else ''}; "
                f"this conversation is at turn {number}"
            )
        _, since = _this_turn(request)
        made = sum(1 for item in since if item.role == "assistant")
        steps = self.turns[number - 1]
        step = steps[min(made, len(steps) - 1)]
        if step.call is None:
            return say(step.say)
        call = ToolCall(f"script_{number}_{made + 1}", step.call, dict(step.arguments))
        return ModelReply(text=step.say, tool_calls=(call,), stop_reason="tool_calls")


def offline_model(spec: str) -> EchoModel | ScriptFileModel | None:
    """The offline model ``spec`` names (``echo``, ``script:<file>``), or None for any other spec."""
    if spec == "echo":
        return EchoModel()
    if spec.startswith("script:"):
        path = spec.removeprefix("script:")
        if not path:
            raise ModelConfigError(f"invalid model {spec!r}: use script:<path to a .json or .toml file of turns>")
        return ScriptFileModel(path, name=spec)
    return None
