"""Building blocks for scripted agents: the memory protocol, its misbehaviours, and scripted extraction.

Chat scripts are generator functions run by ``ScriptedModel``: ``result = yield call(...)`` receives
the decoded tool result the model would see. ``yield from use(...)`` runs the protocol step a
well-behaved agent takes: searchTools with source ``memory``, then executeTool with the tool_name found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator
from typing import Any

from junior_core.llm.types import ModelReply, call, say
from junior_core.testing import ScriptView

__all__ = [
    "ScriptError",
    "candidate",
    "cite",
    "direct",
    "extract",
    "reply",
    "use",
]

Steps = Generator[ModelReply, Any, Any]

QUERIES = {
    "remember": "remember a preference or fact",
    "forget": "forget a saved memory",
    "list": "list saved memories",
    "search": "search saved memories",
}


class ScriptError(Exception):
    """A scripted agent met a result its script did not expect (a product bug shows up as an ERROR row)."""


def pick(found: Any, action: str) -> str:
    """The tool_name for ``action`` among searchTools' results, as a model would read it."""
    for tool in (found or {}).get("tools", []):
        name = str(tool.get("tool_name", ""))
        if name.endswith(f"__{action}"):
            return name
    raise ScriptError(f"searchTools returned no tool for {action!r}: {found!r:.300}")


def use(action: str, arguments: dict[str, Any], *, query: str | None = None, source: str | None = "memory") -> Steps:
    """searchTools (source ``memory``) for ``action``, then executeTool; returns the executeTool result."""
    found = yield call("searchTools", {"query": query or QUERIES[action], "source": source})
    tool_name = pick(found, action)
    return (yield call("executeTool", {"tool_name": tool_name, "arguments": arguments}))


def direct(tool_name: str, arguments: dict[str, Any]) -> Steps:
    """executeTool without searching first (a shortcut some agents take)."""
    return (yield call("executeTool", {"tool_name": tool_name, "arguments": arguments}))


def result_of(executed: Any) -> Any:
    """The tool's result from an executeTool answer, or ScriptError when the call failed."""
    if not isinstance(executed, dict) or executed.get("ok") is not True:
        raise ScriptError(f"the tool call failed: {executed!r:.300}")
    return executed["result"]


def reply(text: str | Callable[[ScriptView], str]) -> Callable[[ScriptView], Steps]:
    """A turn that only answers, with fixed text or text built from the view (the recall block is in view.system)."""

    def turn(view: ScriptView) -> Steps:
        yield say(text(view) if callable(text) else text)

    return turn


# -- scripted extraction ---------------------------------------------------------------------------


def cite(view: ScriptView, needle: str) -> int:
    """The number of the transcript line containing ``needle`` (what an extractor cites)."""
    for line in view.user_text.splitlines():
        match = re.match(r"^\[(\d+)\] ", line)
        if match and needle.lower() in line.lower():
            return int(match.group(1))
    raise ScriptError(f"no transcript line contains {needle!r}: {view.user_text[:300]!r}")


def candidate(content: str, kind: str, cites: str, *, about_speaker: bool = False) -> tuple[str, str, str, bool]:
    """A candidate memory, citing the line that contains ``cites``."""
    return (content, kind, cites, about_speaker)


def extract(*candidates: tuple[str, str, str, bool], when: str | None = None) -> Callable[[ScriptView], ModelReply]:
    """An extractor script proposing ``candidates`` (when the transcript contains ``when``), else nothing."""

    def script(view: ScriptView) -> ModelReply:
        if when is not None and when.lower() not in view.user_text.lower():
            return say('{"memories": []}')
        memories = [
            {"content": content, "kind": kind, "cites": [cite(view, needle)], "about_speaker": about}
            for content, kind, needle, about in candidates
        ]
        return say(json.dumps({"memories": memories}))

    return script
