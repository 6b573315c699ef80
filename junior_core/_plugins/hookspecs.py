"""The hooks a junior plugin can implement (pluggy project ``junior``).

Each implementation is called on its own, in pluggy's order (``tryfirst``, plain, ``trylast``; registration
order inside each), with a deadline; hook wrappers are refused at registration (see ``docs/hooks.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:
    import asyncio

    import click

    from junior_core._catalog.catalog import Tool
    from junior_core._plugins.registry import Register
    from junior_core.context import Message, ToolContext

hookspec = pluggy.HookspecMarker("junior")
hookimpl = pluggy.HookimplMarker("junior")


class Host(Protocol):
    """The runtime ``startup`` and ``shutdown`` are given (a ``junior_core.Runtime``), named by what plugins read of
    it there, so the plugins layer never imports the facade above it."""

    @property
    def options(self) -> Any:
        """The runtime's ``RuntimeOptions``."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop for plugins' long-lived async I/O."""


@hookspec
def register_sources(register: Register) -> None:
    """Declare sources and their tools.

    :param register: call ``register(Source(...), tools=[Tool(...), ...])`` once per
        source; a source whose tools are discovered at run time passes
        ``provider=callable`` instead, returning its current tools. The core stamps
        each registration with the plugin that made it.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add click commands to the ``junior`` command line.

    :param cli: the top-level ``junior`` click group; add a group of your own,
        e.g. ``junior memory ...``.
    """


@hookspec
def prompt_context(context: ToolContext, user_text: str) -> str | Sequence[str] | None:
    """Return bounded text blocks to inject before a model turn (e.g. recalled memories).

    :param context: the live actor and conversation of the turn.
    :param user_text: what the user just said.
    :return: a block, a list of blocks, or None.
    """


@hookspec
def after_turn(context: ToolContext, transcript: Sequence[Message]) -> None:
    """Observe a finished turn (e.g. passive memory extraction).

    :param context: the live actor and conversation of the turn.
    :param transcript: the turn's messages: user messages with their actor,
        assistant replies, and tool calls with the results the model saw.
    """


@hookspec(firstresult=True)
def before_tool_execute(tool: Tool, arguments: dict[str, Any], context: ToolContext) -> str | None:
    """Veto or allow a tool call; the first veto stops the call and the remaining policies are not asked.

    A policy that raises or does not answer within the hook deadline denies the call.

    :param tool: the tool about to run.
    :param arguments: the validated arguments.
    :param context: the live context of the call.
    :return: None to allow; a string to veto, which the model receives as the
        message of a ``not_permitted`` error, so say what to do instead.
    """


@hookspec
def tool_visible(tool: Tool, tool_name: str, source: str, context: ToolContext) -> bool | None:
    """Hide a tool from one actor or conversation: return False, and the model there cannot tell it exists.

    A tool any plugin answers False for is hidden; the remaining plugins are not asked about it.

    Asked once per tool for each actor and conversation, and again only when the catalog or the host's
    exposure rules change; answers are cached, so decide from the context and the tool alone. A hook that
    raises, answers something other than True, False or None, or misses the hook deadline hides every tool
    for that call (fail closed), and is asked again next time.

    :param tool: a tool the model could otherwise reach (deferred or direct).
    :param tool_name: its model-facing name, e.g. ``mcp__git__git_status``.
    :param source: its source id, e.g. ``mcp:git``.
    :param context: the actor and conversation asking (``tool_call_id`` is always None here).
    :return: False to hide the tool; True or None to leave it visible.
    """


@hookspec
def config_files() -> Sequence[str] | None:
    """Name the configuration files this plugin reads besides junior.toml, for ``junior config path``.

    :return: paths of the files in effect (an environment variable may name them); None or ``[]`` for none.
    """


@hookspec
def startup(runtime: Host) -> None:
    """Open resources (database engines, MCP sessions) when a runtime starts.

    Runs after every plugin registered its sources and before run-time sources
    are listed, so a provider can use what was opened here.

    :param runtime: the starting runtime.
    """


@hookspec
def shutdown(runtime: Host) -> None:
    """Close what ``startup`` opened; runs once, on ``runtime.close()`` or at interpreter exit.

    :param runtime: the closing runtime.
    """


HOOK_NAMES = (
    "register_sources",
    "register_commands",
    "prompt_context",
    "after_turn",
    "before_tool_execute",
    "tool_visible",
    "config_files",
    "startup",
    "shutdown",
)
