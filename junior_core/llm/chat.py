"""A chat with a model over the installed tools, turn after turn: what ``junior chat`` runs.

Each turn goes through ``run_turn`` (recall, searchTools/executeTool, ``after_turn``), as a bot's does; the
session's earlier questions and answers come before each new one. Every tool call is reported in one line as it
is answered, so a person sees what the model looked for and ran.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from junior_core._base.errors import ModelError
from junior_core.context import Message, ToolContext
from junior_core.llm.agent import DEFAULT_INSTRUCTIONS, RuntimeToolbox, ToolResult, Turn, run_turn

if TYPE_CHECKING:
    from junior_core._runtime.runtime import Runtime
    from junior_core.llm.types import ModelClient

__all__ = ["Chat", "describe_call"]

LINE = 100  # a tool call's line is shortened, at a word, past this many characters


def _short(text: str, width: int = LINE) -> str:
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder=" ...")


def describe_call(name: str, arguments: Any, answer: dict[str, Any]) -> str:
    """One line for a tool call: what was asked, and what came back (tools found, ok, or the error's code)."""
    args = arguments if isinstance(arguments, dict) else {}
    if answer.get("ok") is False:
        error = answer.get("error") or {}
        outcome = f"{error.get('code', 'error')}: {error.get('message', '')}"
    elif name == "searchTools":
        found = [str(tool.get("tool_name")) for tool in answer.get("tools") or ()]
        outcome = f"{len(found)} {'tool' if len(found) == 1 else 'tools'}: {', '.join(found)}" if found else "no match"
    else:
        outcome = "ok"
    if name == "searchTools":
        asked = json.dumps(args.get("query") or "", ensure_ascii=False)
        if args.get("source"):
            asked += f" in {args['source']}"
        return _short(f"searchTools {asked} → {outcome}")
    if name == "executeTool":
        return _short(f"executeTool {args.get('tool_name', '?')} → {outcome}")
    return _short(f"{name} → {outcome}")


@attrs.define
class _EchoToolbox(RuntimeToolbox):
    """The runtime's tools, each call reported through ``echo`` once answered."""

    echo: Callable[[str], None] = print

    def call(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        result = super().call(name, arguments, context)
        self.echo(describe_call(name, arguments, result.answer))
        return result

    async def acall(self, name: str, arguments: Any, context: ToolContext) -> ToolResult:
        result = await super().acall(name, arguments, context)
        self.echo(describe_call(name, arguments, result.answer))
        return result


class Chat:
    """One chat session: the model, the runtime's tools in ``context``, and the history so far."""

    def __init__(
        self,
        model: ModelClient,
        runtime: Runtime,
        context: ToolContext,
        *,
        instructions: str = DEFAULT_INSTRUCTIONS,
        echo: Callable[[str], None] = print,
    ) -> None:
        self.model = model
        self.runtime = runtime
        self.context = context
        self.instructions = instructions
        self.history: list[Message] = []
        self._toolbox = _EchoToolbox(runtime, echo)

    def ask(self, text: str) -> Turn:
        """One turn answering ``text`` after the session's history; a failing model raises ``ModelError``.

        A failed turn leaves the history as it was, so the question can be asked again.
        """
        question = Message("user", text)
        turn = run_turn(self.model, self.runtime, self.context, [*self.history, question],
                        instructions=self.instructions, toolbox=self._toolbox)
        self.history += [question, Message("assistant", turn.text)]
        return turn

    def run(self, questions: Iterable[str], answer: Callable[[str], None]) -> int:
        """Ask each question in turn and give each answer to ``answer``; the number of turns the model failed."""
        failed = 0
        for text in questions:
            if not text.strip():
                continue
            try:
                turn = self.ask(text)
            except ModelError as exc:
                failed += 1
                answer(f"error: {exc}")
                continue
            answer(turn.text.strip() or "(the model gave no answer)")
        return failed
