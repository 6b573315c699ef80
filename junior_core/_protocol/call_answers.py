"""What a call answers: a result (clipped to its limit), and every error and refusal the model can get, each
saying what to do next (``unknown_tool``, ``invalid_arguments``, ``timeout``, ``tool_failed``, policy vetoes, ...)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from junior_core._protocol.limits import MAX_DEPTH
from junior_core._schemas.failures import failures
from junior_core._schemas.outline import compact_params as compact_params
from junior_core._schemas.outline import schema_omitted as schema_omitted
from junior_core._schemas.outline import schema_outline as schema_outline
from junior_core.text import clip as _clip

if TYPE_CHECKING:
    from junior_core._base.errors import ToolError

from junior_core._protocol.tools import MESSAGE_LIMIT, SEARCH_TOOLS


class Refusal(Exception):
    """Raised inside a call's preparation: ``answer`` is what the model receives instead of a tool's result."""

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer["error"]["code"] if "error" in answer else "refused")
        self.answer = answer


def error(code: str, message: str, tool_name: str | None = None, **details: Any) -> dict[str, Any]:
    """A model-facing failure: ``{"ok": false, ["tool_name",] "error": {code, message, ...}}``."""
    out: dict[str, Any] = {"ok": False}
    if tool_name is not None:
        out["tool_name"] = tool_name
    out["error"] = {"code": code, "message": message, **details}
    return out


def invalid_argument(message: str, path: str, problem: str, tool_name: str | None = None) -> dict[str, Any]:
    """``invalid_arguments`` with one detail: ``problem`` at ``path``."""
    return error("invalid_arguments", message, tool_name, details=[{"path": path, "message": problem}])


def _not_an_object(tool: str, example: str, arguments: Any) -> Refusal:
    return Refusal(invalid_argument(f"{tool} takes an object such as {example}.", "(root)",
                           f"expected an object, got {type(arguments).__name__}"))


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``junior_core.text.clip`` with the model-facing messages' limit by default."""
    return _clip(text, limit)


def validation_error(errors: list[Any], what: str, tool_name: str | None = None) -> dict[str, Any]:
    """An ``invalid_arguments`` error listing JSON Schema failures by path."""
    details = [{"path": path, "message": clip(reason)} for path, reason in failures(errors)]
    first = details[0]
    where = "" if first["path"] == "(root)" else f" at '{first['path']}'"
    return error(
        "invalid_arguments",
        clip(
            f"Invalid {what}{where}: {first['message']}. Fix the arguments to match the input_schema and call again."
        ),
        tool_name,
        details=details,
    )


def unknown_tool(tool_name: str, suggestions: Sequence[str]) -> dict[str, Any]:
    """``unknown_tool`` for a name the caller cannot reach, with close names it can."""
    hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
    return error(
        "unknown_tool",
        clip(f"No tool named {tool_name!r}.{hint}", 200)
        + " Use searchTools to find the exact tool_name, then call executeTool with it.",
        tool_name[:200],
        suggestions=list(suggestions),
        search_tool=SEARCH_TOOLS,
    )


def source_unavailable(tool_name: str, source_id: str, reason: str) -> dict[str, Any]:
    """``unavailable`` for a name whose source is down."""
    shown = tool_name[:200]
    return error(
        "unavailable",
        # The reason says whether trying again later can help: for a command that is not installed it cannot.
        clip(f"{shown} belongs to source {source_id!r}, which is unavailable right now ({reason}).", 240)
        + " Use searchTools to find a tool in another source meanwhile.",
        shown,
        source=source_id,
    )


def not_for_the_model(tool_name: str) -> dict[str, Any]:
    """``not_permitted`` for a tool whose exposure is ``hidden``."""
    return error(
        "not_permitted",
        f"{tool_name} is not available to the model. Use searchTools to find a tool you can call.",
        tool_name,
    )


def is_json(value: Any) -> bool:
    """Whether ``value`` survives ``json.dumps`` unchanged in meaning (no NaN, no arbitrary objects)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


# -- executeTool's answers -----------------------------------------------------------------------
def result(tool_name: str, value: Any) -> dict[str, Any]:
    """A tool's result, as the model receives it."""
    return {"ok": True, "tool_name": tool_name, "result": value}


def truncated(tool_name: str, text: str, limit: int) -> dict[str, Any]:
    """A result too long for the model: the start of its JSON ``text``, marked ``truncated`` with the full size."""
    return {
        "ok": True,
        "tool_name": tool_name,
        "result": text[:limit],
        "truncated": {
            "original_chars": len(text),
            "shown_chars": limit,
            "message": (
                f"The result was {len(text):,} characters of JSON, too long to show; 'result' is its first "
                f"{limit:,} characters, as text. Ask for less (a narrower query, a smaller limit, one page) "
                "if you need the rest."
            ),
        },
    }


def tool_error(tool_name: str, exc: ToolError) -> tuple[dict[str, Any], bool]:
    """The answer to a handler's ``ToolError``, and whether its details were dropped for not being JSON."""
    body = error(str(exc.code), str(exc.message), tool_name)
    details = {k: v for k, v in exc.details.items() if k not in body["error"]}
    if not is_json(details):
        return body, True
    body["error"].update(details)
    return body, False


def tool_failed(
    tool_name: str,
    why: str = "failed with an internal error (details are in the host's log)",
    next_step: str = "Try again once; if it fails again, tell the user the tool is failing.",
) -> dict[str, Any]:
    """``tool_failed`` for a handler that raised (the traceback goes to the host's log), or as ``why`` says."""
    return error("tool_failed", f"{tool_name} {why}. {next_step}", tool_name)


def not_json(tool_name: str) -> dict[str, Any]:
    """``tool_failed`` for a result that cannot be encoded as JSON."""
    return tool_failed(tool_name, "returned a result that could not be encoded as JSON (logged for the operator)",
                       "Try a different tool or report the problem.")


def timed_out(tool_name: str, seconds: float) -> dict[str, Any]:
    """``timeout`` for a call past its time limit."""
    return error(
        "timeout",
        f"{tool_name} did not finish within {seconds:g} s. Try again later, or with a smaller request.",
        tool_name,
    )


def source_busy(tool_name: str, source_id: str, hung: int) -> dict[str, Any]:
    """``unavailable`` for a source with too many calls still running past their time limit."""
    return error(
        "unavailable",
        f"Source {source_id!r} is not responding: {hung} of its calls are still running past "
        f"their time limit. Do not retry it now; use a tool of another source, or tell the user {source_id!r} "
        "is not responding.",
        tool_name,
    )


def runtime_closed(tool_name: str) -> dict[str, Any]:
    """``unavailable`` for a call made once the runtime is closing."""
    return error("unavailable", "The runtime is closed; no tools can run.", tool_name)


def nesting_error(tool_name: str | None = None) -> dict[str, Any]:
    """The ``invalid_arguments`` answer to arguments nested deeper than ``MAX_DEPTH``."""
    return invalid_argument(
        f"The arguments nest objects or arrays more than {MAX_DEPTH} levels deep. "
        "Send flatter arguments that match the tool's input_schema.",
        "(root)", f"nested more than {MAX_DEPTH} levels deep", tool_name,
    )


def not_an_object(tool_name: str) -> dict[str, Any]:
    """``invalid_arguments`` for a direct tool called with arguments that are not an object."""
    return error("invalid_arguments", f"{tool_name} takes an object of arguments.", tool_name)


POLICY_LATE = (
    "This call could not be cleared to run: a policy check did not answer in time. "
    "Try again in a minute; if it keeps failing, tell the user the tool is blocked."
)
"""A ``before_tool_execute`` veto for a policy past its deadline (fail closed)."""
POLICY_FAILED = (
    "This call could not be cleared to run: a policy check failed (details are in the host's log). "
    "Do not retry it; tell the user the tool is blocked."
)
"""A ``before_tool_execute`` veto for a policy that raised (fail closed)."""
NOT_PERMITTED = "This call was not permitted."
"""A veto's message when the policy gave no reason of its own."""


def broken_schema(tool_name: str) -> dict[str, Any]:
    """``tool_failed`` for a tool whose own input schema cannot be used to validate (a ``$ref`` to nowhere)."""
    return error(
        "tool_failed",
        f"{tool_name} cannot be called: its input schema is broken (logged for the operator). Use another tool.",
        tool_name,
    )


def internal_error(shown: str | None) -> dict[str, Any]:
    """``tool_failed`` for a call that could not be prepared because of junior's own error (logged)."""
    return error(
        "tool_failed",
        "The call could not be prepared because of an internal error (logged for the operator). "
        "Try again once; if it fails again, tell the user.",
        shown,
    )
